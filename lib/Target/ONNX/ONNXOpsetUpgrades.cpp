//===- ONNXOpsetUpgrades.cpp - older ONNX opsets to amp's op forms --------===//
//
// amp ops model the newest version of each ONNX operator. Nodes from older
// opsets are rewritten here, like onnx-mlir's version handling: each entry is
// (op types, first version with the new form, upgrade). Typical upgrades move
// an attribute into a constant input (Reduce* axes before 18, Squeeze and
// Split before 13) or rebuild old semantics (Softmax before 13).
//
//===----------------------------------------------------------------------===//

#include "ONNXImporterInternal.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Target/ONNX/ONNXImporter.h"

#include "llvm/ADT/StringSwitch.h"

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

/// Moves an INTS attribute into a constant i64 input at `operandIndex`.
static void attributeToInput(PendingOp &op, OpBuilder &builder, Location loc,
                             StringRef name, unsigned operandIndex) {
  auto values = dyn_cast_or_null<DenseI64ArrayAttr>(op.takeAttr(name));
  if (!values)
    return;
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder.getI64Type());
  Value constant = builder.create<ConstantOp>(
      loc, DenseElementsAttr::get(type, values.asArrayRef()));
  if (op.operands.size() <= operandIndex)
    op.operands.resize(operandIndex + 1, nullptr);
  op.operands[operandIndex] = constant;
}

/// Before opset 13, Softmax-like ops coerced the input to 2-d at `axis`
/// (default 1). Rebuild that: Flatten -> op(axis=1) -> Reshape to the input
/// shape. When axis is the last dimension both forms agree.
static LogicalResult upgradeCoercedSoftmax(PendingOp &op,
                                           const NodeContext &ctx,
                                           OpBuilder &builder) {
  Value input = op.operands.empty() ? Value() : op.operands[0];
  auto type = input ? dyn_cast<RankedTensorType>(input.getType()) : nullptr;
  if (!type)
    return ctx.fail("expects a ranked tensor input");
  int64_t rank = type.getRank();
  int64_t axis = 1;
  if (auto attr = dyn_cast_or_null<IntegerAttr>(op.getAttr("axis")))
    axis = attr.getInt();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.fail("axis is out of range");
  if (axis == rank - 1) {
    op.setAttr(builder, "axis", builder.getI64IntegerAttr(-1));
    return success();
  }
  Value flat = builder.create<FlattenOp>(ctx.loc, input, axis);
  op.operands[0] = flat;
  op.setAttr(builder, "axis", builder.getI64IntegerAttr(1));
  op.reshapeResultLike = input;
  return success();
}

LogicalResult onnx_import::upgradeToCurrentOpset(PendingOp &op,
                                                 const NodeContext &ctx,
                                                 OpBuilder &builder) {
  StringRef type = op.opType;
  int64_t opset = ctx.opset;
  bool isReduce = type.starts_with("Reduce");
  if ((isReduce && type != "ReduceSum" && opset < 18) ||
      (type == "ReduceSum" && opset < 13))
    attributeToInput(op, builder, ctx.loc, "axes", 1);
  if ((type == "Squeeze" || type == "Unsqueeze") && opset < 13)
    attributeToInput(op, builder, ctx.loc, "axes", 1);
  if (type == "Split") {
    if (opset < 13)
      attributeToInput(op, builder, ctx.loc, "split", 1);
    if (!op.getAttr("num_outputs"))
      op.setAttr(builder, "num_outputs",
                 builder.getI64IntegerAttr(op.numOutputs));
  }
  if (type == "Dropout" && opset < 12) {
    if (auto ratio = dyn_cast_or_null<FloatAttr>(op.takeAttr("ratio"))) {
      auto scalar = RankedTensorType::get({}, builder.getF32Type());
      Value constant = builder.create<ConstantOp>(
          ctx.loc, DenseElementsAttr::get(scalar, ratio.getValue()));
      op.operands.resize(std::max<size_t>(op.operands.size(), 2), nullptr);
      op.operands[1] = constant;
    }
  }
  if (type == "BatchNormalization" && opset < 14 && op.numOutputs > 1)
    return ctx.fail("training-mode BatchNormalization before opset 14 is not "
                    "supported");
  if (type == "GroupNormalization" && opset < 21)
    return ctx.fail("GroupNormalization before opset 21 (per-group scale) is "
                    "not supported");
  if (type == "GridSample" && opset < 20)
    if (auto mode = dyn_cast_or_null<StringAttr>(op.getAttr("mode"))) {
      // The interpolation modes were renamed at opset 20.
      if (mode.getValue() == "bilinear")
        op.setAttr(builder, "mode", builder.getStringAttr("linear"));
      else if (mode.getValue() == "bicubic")
        op.setAttr(builder, "mode", builder.getStringAttr("cubic"));
    }
  if ((type == "Softmax" || type == "LogSoftmax" || type == "Hardmax") &&
      opset < 13)
    return upgradeCoercedSoftmax(op, ctx, builder);
  return success();
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
      return ctx.fail("Loop body takes " + llvm::Twine(graph.input_size()) +
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
      return ctx.fail("Scan body inputs do not match the node's inputs"),
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
      int64_t axis = axes && scanIndex < axes.size() ? axes[scanIndex] : 0;
      if (axis < 0)
        axis += type.getRank();
      if (axis < 0 || axis >= type.getRank())
        return ctx.fail("scan_input_axes entry is out of range"), failure();
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + axis);
      types[i] = RankedTensorType::get(shape, type.getElementType());
    }
  } else if (graph.input_size() != 0) {
    return ctx.fail("If branches must not have inputs"), failure();
  }
  return types;
}
