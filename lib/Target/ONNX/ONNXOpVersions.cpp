//===- ONNXOpVersions.cpp - ONNX operator versions and node helpers -------===//
//
// Which version of an operator an opset selects (from the table generated
// from onnx, OnnxOpVersions.inc), the importer's pending-node helpers and
// the subgraph conventions of control-flow ops. The rules that rewrite one
// version's form into another are in ONNXVersionRules.cpp.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporterInternal.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Target/ONNX/ONNXImporter.h"


using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::onnx_import;
using llvm::SmallVector;
using llvm::StringRef;

namespace {
#define AMP_ONNX_LATEST_OPSET(n) constexpr int64_t kLatestKnownOpset = n;
#define AMP_ONNX_VERSION_SLOTS(n) constexpr int kVersionSlots = n;
#define AMP_ONNX_OP(name, ...)
#include "OnnxOpVersions.inc"
#undef AMP_ONNX_LATEST_OPSET
#undef AMP_ONNX_VERSION_SLOTS
#undef AMP_ONNX_OP

/// The opset versions that changed one ONNX operator.
struct OpVersions {
  const char *name;
  int versions[kVersionSlots];
};

#define AMP_ONNX_LATEST_OPSET(n)
#define AMP_ONNX_VERSION_SLOTS(n)
#define AMP_ONNX_OP(name, ...) {name, {__VA_ARGS__}},
const OpVersions kOpVersions[] = {
#include "OnnxOpVersions.inc"
};
#undef AMP_ONNX_LATEST_OPSET
#undef AMP_ONNX_VERSION_SLOTS
#undef AMP_ONNX_OP
} // namespace

int64_t mlir::amp::getLatestKnownOpset() { return kLatestKnownOpset; }

std::optional<int64_t> onnx_import::getSelectedOpVersion(StringRef opType,
                                                         int64_t opset) {
  const OpVersions *entry =
      std::lower_bound(std::begin(kOpVersions), std::end(kOpVersions), opType,
                       [](const OpVersions &e, StringRef name) {
                         return StringRef(e.name) < name;
                       });
  if (entry == std::end(kOpVersions) || StringRef(entry->name) != opType)
    return std::nullopt;
  int64_t selected = 0;
  for (int v : entry->versions)
    if (v > 0 && v <= opset)
      selected = std::max<int64_t>(selected, v);
  if (selected == 0)
    return std::nullopt;
  return selected;
}

std::optional<int64_t> onnx_import::getFirstOpVersion(StringRef opType) {
  return getSelectedOpVersion(opType, kLatestKnownOpset).has_value()
             ? std::optional<int64_t>([&] {
                 int64_t first = kLatestKnownOpset;
                 for (int64_t opset = 1; opset <= kLatestKnownOpset; ++opset)
                   if (getSelectedOpVersion(opType, opset)) {
                     first = opset;
                     break;
                   }
                 return first;
               }())
             : std::nullopt;
}

Attribute PendingOp::getAttr(StringRef name) const {
  for (const NamedAttribute &attr : attributes)
    if (attr.getName() == name)
      return attr.getValue();
  return nullptr;
}

void PendingOp::setAttr(OpBuilder &builder, StringRef name, Attribute value) {
  for (NamedAttribute &attr : attributes)
    if (attr.getName() == name) {
      attr.setValue(value);
      return;
    }
  attributes.emplace_back(builder.getStringAttr(name), value);
}

Attribute PendingOp::takeAttr(StringRef name) {
  for (auto *it = attributes.begin(); it != attributes.end(); ++it)
    if (it->getName() == name) {
      Attribute value = it->getValue();
      attributes.erase(it);
      return value;
    }
  return nullptr;
}

ArrayRef<StringRef> onnx_import::getRegionAttributeNames(StringRef opType) {
  static const StringRef ifRegions[] = {"then_branch", "else_branch"};
  static const StringRef bodyRegion[] = {"body"};
  if (opType == "If")
    return ifRegions;
  if (opType == "Loop" || opType == "Scan")
    return bodyRegion;
  return {};
}

FailureOr<SmallVector<Type>>
onnx_import::getSubgraphArgumentTypes(const PendingOp &op,
                                      const NodeContext &ctx,
                                      const onnx::GraphProto &graph) {
  SmallVector<Type> types(graph.input_size(), nullptr);
  auto tensorType = [](Value v) -> RankedTensorType {
    return v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
  };
  if (op.opType == "Loop") {
    // (iteration number, condition, loop-carried values...)
    if (graph.input_size() != static_cast<int>(op.operands.size()))
      return (void)ctx.fail("Loop body takes " + llvm::Twine(graph.input_size()) +
                      " inputs but the node passes " +
                      llvm::Twine(op.operands.size() - 2) +
                      " loop-carried values (plus iteration and condition)"),
             failure();
    MLIRContext *context = ctx.loc.getContext();
    types[0] = RankedTensorType::get({}, IntegerType::get(context, 64));
    types[1] = RankedTensorType::get({}, IntegerType::get(context, 1));
    for (size_t i = 2; i < op.operands.size(); ++i)
      types[i] = tensorType(op.operands[i]);
  } else if (op.opType == "Scan") {
    auto numScanInputs =
        dyn_cast_or_null<IntegerAttr>(op.getAttr("num_scan_inputs"));
    if (!numScanInputs ||
        graph.input_size() != static_cast<int>(op.operands.size()))
      return (void)ctx.fail("Scan body inputs do not match the node's inputs"),
             failure();
    size_t numStates = op.operands.size() - numScanInputs.getInt();
    auto axes = dyn_cast_or_null<DenseI64ArrayAttr>(
        op.getAttr("scan_input_axes"));
    for (size_t i = 0; i < op.operands.size(); ++i) {
      RankedTensorType type = tensorType(op.operands[i]);
      if (!type || i < numStates) {
        types[i] = type;
        continue;
      }
      size_t scanIndex = i - numStates;
      int64_t axis = axes && static_cast<int64_t>(scanIndex) < axes.size()
                         ? axes[scanIndex]
                         : 0;
      if (axis < 0)
        axis += type.getRank();
      if (axis < 0 || axis >= type.getRank())
        return (void)ctx.fail("scan_input_axes entry is out of range"), failure();
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + axis);
      types[i] = RankedTensorType::get(shape, type.getElementType());
    }
  } else if (graph.input_size() != 0) {
    return (void)ctx.fail("If branches must not have inputs"), failure();
  }
  return types;
}

int64_t mlir::amp::getMinIrVersion(int64_t opset) {
  if (opset <= 11)
    return 6;
  if (opset <= 14)
    return 7;
  if (opset <= 18)
    return 8;
  if (opset <= 20)
    return 9;
  if (opset <= 22)
    return 10;
  if (opset <= 24)
    return 11;
  return 12;
}
