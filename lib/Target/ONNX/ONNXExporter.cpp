//===- ONNXExporter.cpp - amp dialect to ONNX -----------------------------===//
//
// A general writer: every amp op that models an ONNX operator becomes one
// node of that type, with the op's attributes (named as in ONNX) and its
// operands in order (`amp.none` -> empty input name). Constants become
// initializers; If/Loop/Scan regions become GRAPH attributes. Value names
// are unique across the model (ONNX forbids shadowing in subgraphs).
//
//===----------------------------------------------------------------------===//

#include "amp/Target/ONNX/ONNXExporter.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Target/ONNX/ONNXImporter.h"

#include "ONNXImporterInternal.h"
#include "ONNXTensors.h"
#include "ONNXVersionRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <ostream>
#include <streambuf>

using namespace mlir;
using namespace mlir::amp;
using onnx_versions::findAttribute;
using llvm::SmallVector;
using llvm::StringRef;

/// MLIR element type -> ONNX TensorProto.DataType (0 if none).
static int32_t toOnnxDataType(Type type) {
  return onnx_import::toOnnxDataType(type);
}

namespace {

/// A std::streambuf over an llvm::raw_ostream, for protobuf's
/// SerializeToOstream.
class RawOstreamBuffer : public std::streambuf {
public:
  explicit RawOstreamBuffer(llvm::raw_ostream &os) : os(os) {}

protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof())
      os << static_cast<char>(c);
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char *data, std::streamsize size) override {
    os.write(data, size);
    return size;
  }

private:
  llvm::raw_ostream &os;
};

/// First operator versions admitting float16 and bfloat16 (0: none).
struct FloatTypeSupport {
  const char *name;
  int64_t f16Since;
  int64_t bf16Since;
};

#define AMP_ONNX_FLOAT_TYPES(name, f16, bf16) {name, f16, bf16},
const FloatTypeSupport kFloatTypeSupport[] = {
#include "OnnxFloatTypes.inc"
};
#undef AMP_ONNX_FLOAT_TYPES

const FloatTypeSupport *lookupFloatTypeSupport(StringRef opType) {
  const FloatTypeSupport *entry = std::lower_bound(
      std::begin(kFloatTypeSupport), std::end(kFloatTypeSupport), opType,
      [](const FloatTypeSupport &e, StringRef name) {
        return StringRef(e.name) < name;
      });
  if (entry == std::end(kFloatTypeSupport) || StringRef(entry->name) != opType)
    return nullptr;
  return entry;
}

/// How an attribute stands in one operator version (OnnxAttributes.inc).
enum class AttributeState { ABSENT, REQUIRED, OPTIONAL, DEFAULT };

struct AttributeVersion {
  const char *opType;
  const char *name;
  /// The operator version from which this state holds.
  int64_t since;
  AttributeState state;
  /// The default in the canonical text form of canonicalAttributeText.
  const char *defaultText;
};

#define AMP_ONNX_ATTR(op, attr, since, state, text)                           \
  {op, attr, since, AttributeState::state, text},
const AttributeVersion kAttributeVersions[] = {
#include "OnnxAttributes.inc"
};
#undef AMP_ONNX_ATTR

/// The entries of `name` of `opType`, oldest first (empty: no version of
/// the operator has the attribute).
ArrayRef<AttributeVersion> lookupAttributeHistory(StringRef opType,
                                                  StringRef name) {
  auto key = [](const AttributeVersion &e) {
    return std::make_pair(StringRef(e.opType), StringRef(e.name));
  };
  auto wanted = std::make_pair(opType, name);
  auto [first, last] = std::equal_range(
      std::begin(kAttributeVersions), std::end(kAttributeVersions), wanted,
      [&](const auto &a, const auto &b) {
        if constexpr (std::is_same_v<std::decay_t<decltype(a)>,
                                     AttributeVersion>)
          return key(a) < b;
        else
          return a < key(b);
      });
  return ArrayRef<AttributeVersion>(first, last);
}

/// The state of an attribute at operator version `version` (ABSENT before
/// its first entry).
AttributeVersion stateAt(ArrayRef<AttributeVersion> history,
                         int64_t version) {
  AttributeVersion result{"", "", 0, AttributeState::ABSENT, ""};
  for (const AttributeVersion &entry : history)
    if (entry.since <= version)
      result = entry;
  return result;
}

/// An attribute value as text, in the form the generator writes defaults
/// (scripts/gen-onnx-op-versions.py: default_text); nullopt for kinds that
/// have no defaults (tensors, graphs).
std::optional<std::string>
canonicalAttributeText(const onnx::AttributeProto &attr) {
  auto real = [](float value) {
    char buffer[32];
    snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(value));
    return std::string(buffer);
  };
  std::string text;
  auto join = [&](const auto &values, auto render) {
    for (int i = 0; i < values.size(); ++i) {
      if (i)
        text += ",";
      text += render(values.Get(i));
    }
  };
  switch (attr.type()) {
  case onnx::AttributeProto::INT:
    return std::to_string(attr.i());
  case onnx::AttributeProto::FLOAT:
    return real(attr.f());
  case onnx::AttributeProto::STRING:
    return attr.s();
  case onnx::AttributeProto::INTS:
    join(attr.ints(), [](int64_t v) { return std::to_string(v); });
    return text;
  case onnx::AttributeProto::FLOATS:
    join(attr.floats(), real);
    return text;
  case onnx::AttributeProto::STRINGS:
    join(attr.strings(), [](const std::string &v) { return v; });
    return text;
  default:
    return std::nullopt;
  }
}

class ExporterNodeWriter;

class ONNXExporter {
public:
  ONNXExporter(ModuleOp module, const ONNXExportOptions &options)
      : module(module), options(options) {}

  /// Writes the model (and its external data, if any) to `path`.
  LogicalResult run(StringRef path);
  /// Serialises the model into `bytes`, every weight inline.
  LogicalResult runToBuffer(std::string &bytes);

private:
  /// The ModelProto of the module; weights of resources stay deferred (in
  /// `initializers`) until the caller places them.
  LogicalResult buildModel(onnx::ModelProto &model);

public:
  int64_t getOpset() const { return opset; }

private:
  friend class ExporterNodeWriter;
  LogicalResult exportFunction(func::FuncOp func, onnx::GraphProto &graph);
  LogicalResult exportBlock(Block &block, onnx::GraphProto &graph,
                            ValueRange outputs,
                            ArrayRef<std::string> outputNames);
  LogicalResult exportOp(Operation *op, onnx::GraphProto &graph);
  LogicalResult exportConstant(ConstantOp op, onnx::GraphProto &graph);
  LogicalResult convertAttribute(Operation *op, StringRef name, Attribute attr,
                                 onnx::AttributeProto &proto);
  /// Fills `tensor` from `attr`. With `deferred`, the bytes of a
  /// dense_resource weight are not copied into the proto but returned there,
  /// to be written once: inline or straight into the external-data file.
  LogicalResult fillTensor(Operation *op, ElementsAttr attr,
                           onnx::TensorProto &tensor,
                           std::optional<ArrayRef<char>> *deferred = nullptr);
  LogicalResult downgradeForOpset(Operation *op, onnx::NodeProto &node,
                                  onnx::GraphProto &graph);
  /// Removes input `index` (a constant 1-D integer tensor) of `node` and
  /// returns its values, for ops whose input was an attribute in older
  /// opsets.
  FailureOr<SmallVector<int64_t>> takeConstantInput(Operation *op,
                                                    onnx::NodeProto &node,
                                                    unsigned index,
                                                    StringRef what);
  /// Records that input `index` of `op` is written as an attribute: its
  /// initializer goes when nothing else reads it.
  void inputBecameAttribute(Operation *op, unsigned index);
  void removeUnusedInitializers();
  LogicalResult writeAttributes(Operation *op, onnx::NodeProto &node,
                                int64_t version,
                                SmallVectorImpl<std::string> &absent);
  void setValueInfo(onnx::ValueInfoProto &info, StringRef name, Type type);
  LogicalResult
  placeInitializerData(StringRef modelPath,
                       std::unique_ptr<llvm::ToolOutputFile> &data);

  std::string uniqueValueName(StringRef base);
  std::string uniqueNodeName(StringRef base);
  std::string nameOf(Value value);

  ModuleOp module;
  const ONNXExportOptions &options;
  int64_t opset = 0;
  DenseMap<Value, std::string> names;
  llvm::StringSet<> valueNames;
  llvm::StringSet<> nodeNames;
  struct Initializer {
    onnx::TensorProto *tensor;
    onnx::GraphProto *graph;
    /// The weight's bytes when not yet in `tensor` (see fillTensor).
    std::optional<ArrayRef<char>> deferred;
  };
  SmallVector<Initializer> initializers;
  /// The graphs that have Constant nodes (see exportConstant).
  llvm::SmallPtrSet<onnx::GraphProto *, 4> constantNodeGraphs;
  /// Per constant, how many of its uses were written as an attribute.
  DenseMap<Value, unsigned> attributeUses;
};


/// The writer's side of the version rules (ONNXVersionRules.h).
class ExporterNodeWriter : public onnx_versions::NodeWriter {
public:
  ExporterNodeWriter(ONNXExporter &exporter, Operation *op,
                     onnx::NodeProto &node, onnx::GraphProto &graph)
      : NodeWriter(op, node, graph, exporter.getOpset()), exporter(exporter) {}

  FailureOr<SmallVector<int64_t>>
  takeConstantInput(unsigned index, StringRef what) override {
    return exporter.takeConstantInput(op, node, index, what);
  }
  void inputBecameAttribute(unsigned index) override {
    exporter.inputBecameAttribute(op, index);
  }
  std::string uniqueValueName(StringRef base) override {
    return exporter.uniqueValueName(base);
  }
  std::string uniqueNodeName(StringRef base) override {
    return exporter.uniqueNodeName(base);
  }

private:
  ONNXExporter &exporter;
};

} // namespace

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static std::string uniqueIn(llvm::StringSet<> &used, StringRef base) {
  std::string name = base.empty() ? "amp" : base.str();
  if (used.insert(name).second)
    return name;
  for (unsigned i = 1;; ++i) {
    std::string candidate = name + "_" + std::to_string(i);
    if (used.insert(candidate).second)
      return candidate;
  }
}

std::string ONNXExporter::uniqueValueName(StringRef base) {
  return uniqueIn(valueNames, base);
}

std::string ONNXExporter::uniqueNodeName(StringRef base) {
  return uniqueIn(nodeNames, base);
}

std::string ONNXExporter::nameOf(Value value) {
  if (isa_and_nonnull<NoneOp>(value.getDefiningOp()))
    return "";
  auto it = names.find(value);
  if (it != names.end())
    return it->second;
  // Results are named when their op is exported, before any use.
  std::string base;
  if (Operation *def = value.getDefiningOp()) {
    if (auto constant = dyn_cast<ConstantOp>(def))
      base = getConstantName(constant);
    else
      base = getNodeName(def->getLoc()).str();
    if (base.empty())
      base = def->getName().stripDialect().str();
    if (!isa<ConstantOp>(def))
      base +=
          "_output_" + std::to_string(cast<OpResult>(value).getResultNumber());
  } else {
    base = getNodeName(value.getLoc()).str();
    if (base.empty())
      base = "input";
  }
  return names[value] = uniqueValueName(base);
}

//===----------------------------------------------------------------------===//
// Tensors and attributes
//===----------------------------------------------------------------------===//

void ONNXExporter::setValueInfo(onnx::ValueInfoProto &info, StringRef name,
                                Type type) {
  info.set_name(name.str());
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return;
  auto *tensorType = info.mutable_type()->mutable_tensor_type();
  tensorType->set_elem_type(toOnnxDataType(tensor.getElementType()));
  auto *shape = tensorType->mutable_shape();
  for (int64_t dim : tensor.getShape()) {
    auto *entry = shape->add_dim();
    if (!ShapedType::isDynamic(dim))
      entry->set_dim_value(dim);
  }
}

LogicalResult
ONNXExporter::fillTensor(Operation *op, ElementsAttr attr,
                         onnx::TensorProto &tensor,
                         std::optional<ArrayRef<char>> *deferred) {
  auto type = cast<ShapedType>(attr.getType());
  Type elementType = type.getElementType();
  int32_t dataType = toOnnxDataType(elementType);
  if (!dataType)
    return op->emitError("cannot export a constant of element type ")
           << elementType;
  tensor.set_data_type(dataType);
  for (int64_t dim : type.getShape())
    tensor.add_dims(dim);
  int64_t count = type.getNumElements();
  // 4- and 2-bit integers: amp holds one per byte, ONNX packs them.
  unsigned packBits = elementType.isIntOrFloat() &&
                              elementType.getIntOrFloatBitWidth() < 8 &&
                              !elementType.isInteger(1)
                          ? elementType.getIntOrFloatBitWidth()
                          : 0;
  auto pack = [&](ArrayRef<char> bytes, bool splat) {
    std::string packed((count * packBits + 7) / 8, '\0');
    unsigned perByte = 8 / packBits, mask = (1u << packBits) - 1;
    for (int64_t i = 0; i < count; ++i)
      packed[i / perByte] |=
          static_cast<char>((static_cast<uint8_t>(bytes[splat ? 0 : i]) & mask)
                            << (packBits * (i % perByte)));
    tensor.set_raw_data(std::move(packed));
  };
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op->emitError("the data of constant '")
             << resource.getRawHandle().getKey()
             << "' is missing (elided resource)";
    ArrayRef<char> data = blob->getData();
    if (packBits)
      pack(data, /*splat=*/false);
    else if (deferred)
      *deferred = data;
    else
      tensor.set_raw_data(data.data(), data.size());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return op->emitError("cannot export constant attribute ") << attr;
  if (packBits) {
    pack(dense.getRawData(), dense.isSplat());
    return success();
  }
  std::string raw;
  if (elementType.isInteger(1)) {
    raw.reserve(count);
    for (bool value : dense.getValues<bool>())
      raw.push_back(value ? 1 : 0);
  } else {
    ArrayRef<char> data = dense.getRawData();
    if (dense.isSplat()) {
      raw.reserve(data.size() * count);
      for (int64_t i = 0; i < count; ++i)
        raw.append(data.data(), data.size());
    } else {
      raw.assign(data.data(), data.size());
    }
  }
  tensor.set_raw_data(std::move(raw));
  return success();
}

LogicalResult ONNXExporter::convertAttribute(Operation *op, StringRef name,
                                             Attribute attr,
                                             onnx::AttributeProto &proto) {
  proto.set_name(name.str());
  if (auto integer = dyn_cast<IntegerAttr>(attr)) {
    proto.set_type(onnx::AttributeProto::INT);
    proto.set_i(integer.getInt());
  } else if (auto real = dyn_cast<FloatAttr>(attr)) {
    proto.set_type(onnx::AttributeProto::FLOAT);
    proto.set_f(real.getValueAsDouble());
  } else if (auto string = dyn_cast<StringAttr>(attr)) {
    proto.set_type(onnx::AttributeProto::STRING);
    proto.set_s(string.getValue().str());
  } else if (auto ints = dyn_cast<DenseI64ArrayAttr>(attr)) {
    proto.set_type(onnx::AttributeProto::INTS);
    for (int64_t value : ints.asArrayRef())
      proto.add_ints(value);
  } else if (auto floats = dyn_cast<DenseF32ArrayAttr>(attr)) {
    proto.set_type(onnx::AttributeProto::FLOATS);
    for (float value : floats.asArrayRef())
      proto.add_floats(value);
  } else if (auto type = dyn_cast<TypeAttr>(attr)) {
    int32_t dataType = toOnnxDataType(type.getValue());
    if (!dataType)
      return op->emitError("attribute '")
             << name << "' names a type ONNX cannot hold: " << type;
    proto.set_type(onnx::AttributeProto::INT);
    proto.set_i(dataType);
  } else if (auto elements = dyn_cast<ElementsAttr>(attr)) {
    proto.set_type(onnx::AttributeProto::TENSOR);
    return fillTensor(op, elements, *proto.mutable_t());
  } else if (auto array = dyn_cast<ArrayAttr>(attr)) {
    if (llvm::all_of(array, [](Attribute a) { return isa<StringAttr>(a); })) {
      proto.set_type(onnx::AttributeProto::STRINGS);
      for (Attribute value : array)
        proto.add_strings(cast<StringAttr>(value).getValue().str());
    } else if (llvm::all_of(array,
                            [](Attribute a) { return isa<IntegerAttr>(a); })) {
      proto.set_type(onnx::AttributeProto::INTS);
      for (Attribute value : array)
        proto.add_ints(cast<IntegerAttr>(value).getInt());
    } else if (llvm::all_of(array,
                            [](Attribute a) { return isa<FloatAttr>(a); })) {
      proto.set_type(onnx::AttributeProto::FLOATS);
      for (Attribute value : array)
        proto.add_floats(cast<FloatAttr>(value).getValueAsDouble());
    } else {
      return op->emitError("cannot export array attribute '") << name << "'";
    }
  } else {
    return op->emitError("cannot export attribute '") << name << "' = " << attr;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Older opsets
//===----------------------------------------------------------------------===//

/// Removes input `index` (a constant 1-D integer tensor) of `node` and
/// returns its values, for ops whose input was an attribute in older
/// opsets.
FailureOr<SmallVector<int64_t>>
ONNXExporter::takeConstantInput(Operation *op, onnx::NodeProto &node,
                                unsigned index, StringRef what) {
  if (index >= op->getNumOperands() ||
      isa_and_nonnull<NoneOp>(op->getOperand(index).getDefiningOp()))
    return SmallVector<int64_t>();
  DenseIntElementsAttr values;
  if (!matchPattern(op->getOperand(index), m_Constant(&values)))
    return op->emitError() << "cannot export: input '" << what
                           << "' must be a constant at this opset (it was an "
                              "attribute before)",
           failure();
  SmallVector<int64_t> result;
  for (const APInt &value : values)
    result.push_back(value.getSExtValue());
  if (index < static_cast<unsigned>(node.input_size()))
    node.mutable_input(index)->clear();
  inputBecameAttribute(op, index);
  return result;
}

void ONNXExporter::inputBecameAttribute(Operation *op, unsigned index) {
  Value input = op->getOperand(index);
  if (isa_and_nonnull<ConstantOp>(input.getDefiningOp()))
    ++attributeUses[input];
}

void ONNXExporter::removeUnusedInitializers() {
  // An initializer (or Constant node) goes when every reader took it as an
  // attribute.
  llvm::StringSet<> unused;
  for (auto [value, count] : attributeUses)
    if (count == static_cast<unsigned>(
                     std::distance(value.use_begin(), value.use_end())))
      unused.insert(nameOf(value));
  if (unused.empty())
    return;
  for (onnx::GraphProto *graph : constantNodeGraphs) {
    auto *nodes = graph->mutable_node();
    for (int i = nodes->size() - 1; i >= 0; --i)
      if (nodes->Get(i).op_type() == "Constant" &&
          nodes->Get(i).output_size() == 1 &&
          unused.contains(nodes->Get(i).output(0)))
        nodes->DeleteSubrange(i, 1);
  }
  llvm::SmallPtrSet<onnx::GraphProto *, 4> graphs;
  for (const Initializer &init : initializers)
    graphs.insert(init.graph);
  // Forget them before the protos are deleted.
  llvm::erase_if(initializers, [&](const Initializer &init) {
    return unused.contains(init.tensor->name());
  });
  for (onnx::GraphProto *graph : graphs) {
    auto *list = graph->mutable_initializer();
    for (int i = list->size() - 1; i >= 0; --i)
      if (unused.contains(list->Get(i).name()))
        list->DeleteSubrange(i, 1);
  }
}

LogicalResult ONNXExporter::downgradeForOpset(Operation *op,
                                              onnx::NodeProto &node,
                                              onnx::GraphProto &graph) {
  StringRef type = node.op_type();
  std::optional<int64_t> version =
      onnx_import::getSelectedOpVersion(type, opset);
  assert(version && "checked by exportOp");
  // 16-bit floats must be allowed by the operator version the opset selects
  // (bfloat16 came to many operators only recently: Conv at 22, TopK at 24).
  if (const FloatTypeSupport *support = lookupFloatTypeSupport(type)) {
    auto check = [&](Type elementType) -> LogicalResult {
      bool isF16 = elementType.isF16(), isBF16 = elementType.isBF16();
      if (!isF16 && !isBF16)
        return success();
      int64_t since = isF16 ? support->f16Since : support->bf16Since;
      if (since != 0 && *version >= since)
        return success();
      InFlightDiagnostic diag = op->emitError()
                                << "cannot export: ONNX " << type
                                << " at opset " << opset << " does not accept "
                                << (isF16 ? "float16" : "bfloat16");
      if (since != 0)
        diag << " (it does from opset " << since
             << ": use --amp-export-opset=" << since << " or newer";
      else
        diag << " (at any opset";
      diag << ", or keep " << type << " in fp32 with --amp-deny=" << type
           << ")";
      return failure();
    };
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type t : types)
      if (auto tensor = dyn_cast<RankedTensorType>(t))
        if (failed(check(tensor.getElementType())))
          return failure();
  }
  // The storage types came to ONNX late: 8-bit floats at 19, 4-bit
  // integers at 21, 2-bit integers at 25.
  SmallVector<Type> ioTypes(op->getOperandTypes());
  llvm::append_range(ioTypes, op->getResultTypes());
  for (Type t : ioTypes) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      continue;
    Type element = tensor.getElementType();
    int64_t since = 0;
    if (isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
            Float8E5M2FNUZType>(element))
      since = 19;
    else if (element.isInteger(4))
      since = 21;
    else if (element.isInteger(2))
      since = 25;
    if (opset < since)
      return op->emitError()
             << "cannot export: element type " << element << " needs opset "
             << since << " (use --amp-export-opset=" << since << " or newer)";
  }
  // Forms of older operator versions: the version rules the importer
  // upgrades with.
  ExporterNodeWriter writer(*this, op, node, graph);
  if (failed(onnx_versions::downgradeNode(writer)))
    return failure();
  // Trailing absent inputs are left out.
  while (node.input_size() > 0 && node.input(node.input_size() - 1).empty())
    node.mutable_input()->RemoveLast();
  return success();
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

/// Splat constants above this size are written as ConstantOfShape nodes:
/// as initializers every element would be materialised, and a few bytes of
/// ConstantOfShape or Expand in a model can make a splat of gigabytes.
constexpr int64_t kSplatAsNodeBytes = int64_t(1) << 20;

LogicalResult ONNXExporter::exportConstant(ConstantOp op,
                                           onnx::GraphProto &graph) {
  auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
  auto type = cast<ShapedType>(op.getValue().getType());
  Type elementType = type.getElementType();
  // ConstantOfShape takes bf16 values from opset 20 on, the other types
  // amp has from opset 9 on.
  // So is a splat of no elements, whose value an initializer could not
  // carry (a re-import would read `dense<>`).
  if (splat && (!elementType.isBF16() || opset >= 20) &&
      (type.getNumElements() == 0 ||
       type.getNumElements() >
           kSplatAsNodeBytes /
               std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8))) {
    std::string name = nameOf(op.getResult());
    onnx::TensorProto *shape = graph.add_initializer();
    shape->set_name(uniqueValueName(name + "_shape"));
    shape->set_data_type(onnx::TensorProto::INT64);
    shape->add_dims(type.getRank());
    for (int64_t dim : type.getShape())
      shape->add_int64_data(dim);
    onnx::NodeProto &node = *graph.add_node();
    node.set_op_type("ConstantOfShape");
    node.set_name(uniqueNodeName(name));
    node.add_input(shape->name());
    node.add_output(name);
    onnx::AttributeProto &value = *node.add_attribute();
    value.set_name("value");
    value.set_type(onnx::AttributeProto::TENSOR);
    auto one = RankedTensorType::get({1}, elementType);
    return fillTensor(op, DenseElementsAttr::get(one, splat.getSplatValue<Attribute>()),
                      *value.mutable_t());
  }
  // An inline constant of more elements than the importer reads inline
  // from an initializer was not one (a folded value, a Constant node's):
  // it goes back as a Constant node, whose value the importer reads inline
  // (ONNXImportOptions::constantDenseElementsLimit), so that a re-import
  // gives the same IR. Constant takes every element type from opset 13.
  if (isa<DenseElementsAttr>(op.getValue()) && opset >= 13 &&
      type.getNumElements() > ONNXImportOptions().denseElementsLimit) {
    std::string name = nameOf(op.getResult());
    onnx::NodeProto &node = *graph.add_node();
    node.set_op_type("Constant");
    node.set_name(uniqueNodeName(name));
    node.add_output(name);
    onnx::AttributeProto &value = *node.add_attribute();
    value.set_name("value");
    value.set_type(onnx::AttributeProto::TENSOR);
    constantNodeGraphs.insert(&graph);
    return fillTensor(op, op.getValue(), *value.mutable_t());
  }
  onnx::TensorProto *tensor = graph.add_initializer();
  tensor->set_name(nameOf(op.getResult()));
  Initializer initializer{tensor, &graph, std::nullopt};
  if (failed(fillTensor(op, op.getValue(), *tensor, &initializer.deferred)))
    return failure();
  initializers.push_back(initializer);
  return success();
}

LogicalResult ONNXExporter::exportOp(Operation *op, onnx::GraphProto &graph) {
  auto precision = dyn_cast<PrecisionOpInterface>(op);
  if (!precision || precision.getOnnxOpType().empty())
    return op->emitError("cannot export: not an ONNX operator");
  onnx::NodeProto &node = *graph.add_node();
  StringRef opType = precision.getOnnxOpType();
  node.set_op_type(opType.str());
  StringRef nodeName = getNodeName(op->getLoc());
  node.set_name(uniqueNodeName(nodeName.empty() ? opType : nodeName));
  for (Value operand : op->getOperands())
    node.add_input(nameOf(operand));
  // Optional outputs nobody uses are left out (they cost work, and some
  // combinations are invalid, e.g. Attention's caches with
  // nonpad_kv_seqlen). Only these ops have optional outputs after the
  // first.
  static const llvm::StringSet<> optionalOutputs = {"Attention",
                                                    "BatchNormalization",
                                                    "Dropout",
                                                    "GRU",
                                                    "LayerNormalization",
                                                    "LSTM",
                                                    "MaxPool",
                                                    "RNN",
                                                    "SoftmaxCrossEntropyLoss"};
  bool dropUnused = optionalOutputs.contains(opType);
  for (OpResult result : op->getResults())
    node.add_output(dropUnused && result.getResultNumber() > 0 &&
                            result.use_empty()
                        ? std::string()
                        : nameOf(result));
  while (node.output_size() > 1 && node.output(node.output_size() - 1).empty())
    node.mutable_output()->RemoveLast();
  std::optional<int64_t> version =
      onnx_import::getSelectedOpVersion(opType, opset);
  if (!version) {
    InFlightDiagnostic diag = op->emitError()
                              << "cannot export: ONNX " << opType
                              << " does not exist at opset " << opset;
    if (std::optional<int64_t> first = onnx_import::getFirstOpVersion(opType))
      diag << " (it does from opset " << *first
           << ": use --amp-export-opset=" << *first << " or newer)";
    return diag;
  }
  SmallVector<std::string> absent;
  if (failed(writeAttributes(op, node, *version, absent)))
    return failure();
  ArrayRef<StringRef> regionNames =
      onnx_import::getRegionAttributeNames(opType);
  for (auto [region, attrName] : llvm::zip(op->getRegions(), regionNames)) {
    auto *attr = node.add_attribute();
    attr->set_name(attrName.str());
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto &body = *attr->mutable_g();
    body.set_name(node.name() + "_" + attrName.str());
    Block &block = region.front();
    for (BlockArgument arg : block.getArguments()) {
      std::string name = nameOf(arg);
      setValueInfo(*body.add_input(), name, arg.getType());
    }
    Operation *terminator = block.getTerminator();
    if (failed(exportBlock(block, body, terminator->getOperands(), {})))
      return failure();
  }
  if (failed(downgradeForOpset(op, node, graph)))
    return failure();
  // Attributes that the selected operator version does not have, with a
  // value other than the one older versions implied, cannot be written.
  for (const std::string &name : absent) {
    if (!findAttribute(node, name))
      continue;
    ArrayRef<AttributeVersion> history = lookupAttributeHistory(opType, name);
    const AttributeVersion *since = nullptr;
    for (const AttributeVersion &entry : history)
      if (entry.since > *version && entry.state != AttributeState::ABSENT) {
        since = &entry;
        break;
      }
    InFlightDiagnostic diag = op->emitError()
                              << "cannot export: attribute '" << name
                              << "' of ONNX " << opType
                              << " does not exist at opset " << opset;
    if (since)
      diag << " (it does from opset " << since->since
           << ": use --amp-export-opset=" << since->since << " or newer)";
    return failure();
  }
  return success();
}

/// Writes the op's attributes that the selected operator version needs:
/// those whose value differs from that version's default (which is not
/// always the newest one: Softmax's axis was 1 before opset 13). Attributes
/// the version does not have are left out when they hold the value older
/// versions implied (the ODS default); otherwise they are written and their
/// names returned in `absent`, for downgradeForOpset to rewrite or for an
/// error.
LogicalResult ONNXExporter::writeAttributes(Operation *op,
                                            onnx::NodeProto &node,
                                            int64_t version,
                                            SmallVectorImpl<std::string> &absent) {
  StringRef opType = node.op_type();
  NamedAttrList defaults;
  op->getName().populateDefaultAttrs(defaults);
  for (NamedAttribute attr : op->getAttrs()) {
    StringRef name = attr.getName().getValue();
    if (name.starts_with("amp."))
      continue;
    bool isOdsDefault = defaults.get(attr.getName()) == attr.getValue();
    ArrayRef<AttributeVersion> history = lookupAttributeHistory(opType, name);
    AttributeVersion state = stateAt(history, version);
    if (state.state == AttributeState::ABSENT && isOdsDefault)
      continue;
    onnx::AttributeProto proto;
    if (failed(convertAttribute(op, name, attr.getValue(), proto)))
      return failure();
    if (state.state == AttributeState::DEFAULT &&
        canonicalAttributeText(proto) == std::string(state.defaultText))
      continue;
    // An attribute no ONNX version knows (none so far) is written as is.
    if (state.state == AttributeState::ABSENT && !history.empty())
      absent.push_back(name.str());
    *node.add_attribute() = std::move(proto);
  }
  return success();
}

LogicalResult ONNXExporter::exportBlock(Block &block, onnx::GraphProto &graph,
                                        ValueRange outputs,
                                        ArrayRef<std::string> outputNames) {
  // Graph outputs take their ONNX names directly when the value is made by
  // a node of this graph and returned once.
  llvm::DenseMap<Value, unsigned> returnCount;
  for (Value output : outputs)
    ++returnCount[output];
  if (!outputNames.empty())
    for (auto [output, name] : llvm::zip(outputs, outputNames)) {
      Operation *def = output.getDefiningOp();
      if (def && def->getBlock() == &block && !isa<ConstantOp, NoneOp>(def) &&
          returnCount[output] == 1 && !names.count(output) &&
          valueNames.insert(name).second)
        names[output] = name;
    }
  for (Operation &op : block.without_terminator()) {
    if (isa<NoneOp>(op))
      continue;
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (failed(exportConstant(constant, graph)))
        return failure();
      continue;
    }
    if (failed(exportOp(&op, graph)))
      return failure();
  }
  llvm::StringSet<> emitted;
  for (auto [i, output] : llvm::enumerate(outputs)) {
    std::string name = nameOf(output);
    Operation *def = output.getDefiningOp();
    bool madeHere =
        def && def->getBlock() == &block && !isa<ConstantOp, NoneOp>(def);
    std::string wanted = outputNames.empty() ? name : outputNames[i];
    if (!madeHere || name != wanted || !emitted.insert(name).second) {
      // An input, an outer value, a constant or a repeated output: copy it.
      std::string copy =
          outputNames.empty() || name == wanted
              ? uniqueValueName(name + "_copy")
              : (valueNames.insert(wanted).second ? wanted
                                                  : uniqueValueName(wanted));
      onnx::NodeProto &identity = *graph.add_node();
      identity.set_op_type("Identity");
      identity.set_name(uniqueNodeName(copy));
      identity.add_input(name);
      identity.add_output(copy);
      name = copy;
      emitted.insert(name);
    }
    setValueInfo(*graph.add_output(), name, output.getType());
  }
  return success();
}

LogicalResult ONNXExporter::exportFunction(func::FuncOp func,
                                           onnx::GraphProto &graph) {
  Block &entry = func.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    auto name =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "amp.name");
    std::string wanted = name ? name.getValue().str()
                              : "input_" + std::to_string(arg.getArgNumber());
    if (!valueNames.insert(wanted).second)
      return func.emitError("two graph inputs are named '") << wanted << "'";
    names[arg] = wanted;
    setValueInfo(*graph.add_input(), wanted, arg.getType());
  }
  auto returnOp = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<std::string> outputNames;
  for (unsigned i = 0; i < returnOp.getNumOperands(); ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, "amp.name");
    outputNames.push_back(name ? name.getValue().str()
                               : "output_" + std::to_string(i));
  }
  llvm::StringSet<> seen;
  for (const std::string &name : outputNames)
    if (!seen.insert(name).second)
      return func.emitError("two graph outputs are named '") << name << "'";
  return exportBlock(entry, graph, returnOp.getOperands(), outputNames);
}

LogicalResult ONNXExporter::placeInitializerData(
    StringRef modelPath, std::unique_ptr<llvm::ToolOutputFile> &data) {
  auto bytesOf = [](const Initializer &init) -> ArrayRef<char> {
    if (init.deferred)
      return *init.deferred;
    const std::string &raw = init.tensor->raw_data();
    return ArrayRef<char>(raw.data(), raw.size());
  };
  int64_t total = 0;
  for (const Initializer &init : initializers)
    total += bytesOf(init).size();
  bool external = options.externalData || total > 1800LL * 1000 * 1000;
  std::string location;
  if (external) {
    std::string dataPath = (modelPath + ".data").str();
    location = llvm::sys::path::filename(dataPath).str();
    std::string error;
    data = openOutputFile(dataPath, &error);
    if (!data)
      return module.emitError("cannot write '") << dataPath << "': " << error;
  }
  int64_t offset = 0;
  for (Initializer &init : initializers) {
    ArrayRef<char> bytes = bytesOf(init);
    onnx::TensorProto *tensor = init.tensor;
    int64_t size = bytes.size();
    if (!external || size < options.externalDataMinBytes) {
      if (init.deferred)
        tensor->set_raw_data(bytes.data(), bytes.size());
      continue;
    }
    // Page-align each tensor so that readers can map it.
    int64_t aligned = (offset + 4095) / 4096 * 4096;
    data->os().write_zeros(aligned - offset);
    data->os().write(bytes.data(), bytes.size());
    tensor->clear_raw_data();
    tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    auto addEntry = [&](StringRef key, const std::string &value) {
      auto *entry = tensor->add_external_data();
      entry->set_key(key.str());
      entry->set_value(value);
    };
    addEntry("location", location);
    addEntry("offset", std::to_string(aligned));
    addEntry("length", std::to_string(size));
    offset = aligned + size;
  }
  return success();
}

LogicalResult ONNXExporter::buildModel(onnx::ModelProto &model) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return module.emitError("cannot export: expected one function (the "
                            "graph), found ")
           << funcs.size();

  int64_t irVersion = 0;
  if (auto ir = module->getAttrOfType<IntegerAttr>("amp.ir_version"))
    irVersion = ir.getInt();
  auto opsets = module->getAttrOfType<DictionaryAttr>("amp.opset_import");
  int64_t imported = 0;
  if (opsets)
    if (auto version = opsets.getAs<IntegerAttr>("ai.onnx"))
      imported = version.getInt();
  // Without a recorded opset (a program written by hand), 21: every amp
  // op's form exists there and current onnxruntime releases run it.
  opset = options.opset ? options.opset : (imported ? imported : 21);
  // An imported opset newer than the one amp models, where some op (one amp
  // inserted: a Cast) would select a version newer than amp's, is written
  // at the modelled opset: the importer accepted each original op only
  // where the newer opset selects the version amp models, so the older one
  // selects the same (fuzzing: a Cast at opset 28 could not be re-imported).
  if (!options.opset && opset > kMaxSupportedOpset) {
    bool newer = false;
    module.walk([&](PrecisionOpInterface op) {
      StringRef type = op.getOnnxOpType();
      std::optional<int64_t> selected =
          type.empty() ? std::nullopt
                       : onnx_import::getSelectedOpVersion(type, opset);
      std::optional<int64_t> modelled = getSupportedOpVersion(type);
      if (selected && modelled && *selected > *modelled)
        newer = true;
    });
    if (newer)
      opset = kMaxSupportedOpset;
  }
  if (opset < kMinSupportedOpset || opset > getLatestKnownOpset())
    return module.emitError("cannot export at opset ")
           << opset << " (amp supports " << kMinSupportedOpset << " to "
           << getLatestKnownOpset() << ")";
  model.set_ir_version(std::max(irVersion, getMinIrVersion(opset)));
  auto *defaultOpset = model.add_opset_import();
  defaultOpset->set_domain("");
  defaultOpset->set_version(opset);
  if (opsets)
    for (NamedAttribute entry : opsets)
      if (entry.getName() != "ai.onnx")
        if (auto version = dyn_cast<IntegerAttr>(entry.getValue())) {
          auto *other = model.add_opset_import();
          other->set_domain(entry.getName().str());
          other->set_version(version.getInt());
        }
  std::string graphName = "main";
  if (auto metadata = module->getAttrOfType<DictionaryAttr>("amp.metadata"))
    for (NamedAttribute entry : metadata) {
      auto value = dyn_cast<StringAttr>(entry.getValue());
      if (!value)
        continue;
      StringRef key = entry.getName();
      if (key == "producer_name")
        model.set_producer_name(value.str());
      else if (key == "producer_version")
        model.set_producer_version(value.str());
      else if (key == "domain")
        model.set_domain(value.str());
      else if (key == "graph_name")
        graphName = value.str();
      else {
        auto *prop = model.add_metadata_props();
        prop->set_key(key.str());
        prop->set_value(value.str());
      }
    }
  onnx::GraphProto &graph = *model.mutable_graph();
  graph.set_name(graphName);
  if (failed(exportFunction(funcs.front(), graph)))
    return failure();
  removeUnusedInitializers();
  return success();
}

LogicalResult ONNXExporter::runToBuffer(std::string &bytes) {
  onnx::ModelProto model;
  if (failed(buildModel(model)))
    return failure();
  int64_t total = 0;
  for (Initializer &init : initializers) {
    if (init.deferred) {
      init.tensor->set_raw_data(init.deferred->data(), init.deferred->size());
      init.deferred.reset();
    }
    total += init.tensor->raw_data().size();
  }
  if (options.externalData || total > 1800LL * 1000 * 1000)
    return module.emitError("cannot export to memory: the weights need "
                            "external data (write a file instead)");
  bytes.clear();
  if (!model.SerializeToString(&bytes))
    return module.emitError("cannot serialise the model");
  return success();
}

LogicalResult ONNXExporter::run(StringRef path) {
  onnx::ModelProto model;
  if (failed(buildModel(model)))
    return failure();

  std::unique_ptr<llvm::ToolOutputFile> data;
  if (failed(placeInitializerData(path, data)))
    return failure();
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(path, &error);
  if (!output)
    return module.emitError("cannot write '") << path << "': " << error;
  // Serialised straight into the file, without a copy of the whole model
  // in memory.
  RawOstreamBuffer buffer(output->os());
  std::ostream stream(&buffer);
  if (!model.SerializeToOstream(&stream))
    return module.emitError("cannot serialise the model (over 2 GiB without "
                            "external data?)");
  output->os().flush();
  if (output->os().has_error() || (data && data->os().has_error()))
    return module.emitError("cannot write '") << path << "'";
  output->keep();
  if (data)
    data->keep();
  return success();
}

LogicalResult mlir::amp::exportToONNXFile(ModuleOp module, StringRef path,
                                          const ONNXExportOptions &options) {
  return ONNXExporter(module, options).run(path);
}

LogicalResult mlir::amp::exportToONNXBuffer(ModuleOp module, std::string &bytes,
                                            const ONNXExportOptions &options) {
  return ONNXExporter(module, options).runToBuffer(bytes);
}
