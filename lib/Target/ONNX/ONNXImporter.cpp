//===- ONNXImporter.cpp - ONNX model to amp dialect -----------------------===//
//
// Builds `func.func @main` from an ONNX graph:
//   * nodes are visited in a stable topological order (exporters do not
//     always sort them); cycles, undefined and duplicate names are errors;
//   * each node becomes the amp op whose `getOnnxName()` is its op type,
//     built generically from ONNX inputs/attributes after the version rules
//     of ONNXVersionRules.cpp; result types come from the op's inference;
//   * ops with constant inputs are folded on the spot, so exporter shape
//     arithmetic disappears for static models;
//   * If/Loop/Scan bodies become regions that may use outer values.
//
//===----------------------------------------------------------------------===//

#include "amp/Target/ONNX/ONNXImporter.h"

#include "ONNXImporterInternal.h"
#include "ONNXOpsetUpgrade.h"
#include "ONNXTensors.h"
#include "ONNXVersionRules.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <cstdint>
#include <optional>
#include <queue>
#include <utility>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::onnx_import;
using llvm::SmallVector;
using llvm::StringRef;

bool mlir::amp::isONNXFile(StringRef path) {
  return path.ends_with(".onnx") || path.ends_with(".pb");
}

//===----------------------------------------------------------------------===//
// Op registry: ONNX op type -> amp op name, from the ops' getOnnxName().
//===----------------------------------------------------------------------===//

static const llvm::StringMap<StringRef> &getOnnxOpTable() {
  static const llvm::StringMap<StringRef> table = [] {
    llvm::StringMap<StringRef> map;
    for (const OnnxOpName &entry : getOnnxOpNames())
      map.try_emplace(entry.onnxName, entry.operationName);
    return map;
  }();
  return table;
}

std::optional<StringRef> onnx_import::lookupAmpOpName(StringRef onnxOpType) {
  auto it = getOnnxOpTable().find(onnxOpType);
  if (it == getOnnxOpTable().end())
    return std::nullopt;
  return it->second;
}

/// The N in [2, 2 + sizeof...(I)) for which `n` has NOperands<N>.
template <size_t... I>
static std::optional<unsigned> findNOperands(RegisteredOperationName n,
                                             std::index_sequence<I...>) {
  std::optional<unsigned> count;
  ((n.hasTrait<OpTrait::NOperands<I + 2>::template Impl>()
        ? (void)(count = I + 2)
        : (void)0),
   ...);
  return count;
}

/// Number of operands of an op with a fixed operand list (from its traits),
/// or std::nullopt when the op is variadic.
static std::optional<unsigned> getFixedOperandCount(RegisteredOperationName n) {
  if (n.hasTrait<OpTrait::ZeroOperands>())
    return 0;
  if (n.hasTrait<OpTrait::OneOperand>())
    return 1;
  // Up to 15 operands: more than any ONNX operator takes.
  return findNOperands(n, std::make_index_sequence<14>{});
}

//===----------------------------------------------------------------------===//
// Importer
//===----------------------------------------------------------------------===//

namespace {
/// ONNX value names visible in one graph; subgraphs chain to their parent.
class Scope {
public:
  explicit Scope(Scope *parent = nullptr) : parent(parent) {}
  Value lookup(StringRef name) const {
    for (const Scope *s = this; s; s = s->parent)
      if (auto it = s->values.find(name); it != s->values.end())
        return it->second;
    return nullptr;
  }
  bool define(StringRef name, Value value) {
    if (lookup(name))
      return false;
    values[name] = value;
    return true;
  }

private:
  Scope *parent;
  llvm::StringMap<Value> values;
};

/// Collects the diagnostics emitted while one node is being built.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error) {
            if (!messages.empty())
              messages += "; ";
            messages += diag.str();
          }
          return success();
        }) {}
  const std::string &str() const { return messages; }

private:
  std::string messages;
  ScopedDiagnosticHandler handler;
};

/// Where a control-flow op's loop-carried values sit among its body's
/// arguments and yielded values (count 0: none, or not a loop).
struct CarriedValues {
  int64_t count = 0;
  size_t firstArgument = 0, firstYield = 0;
};

CarriedValues getCarriedValues(const onnx_import::PendingOp &op) {
  CarriedValues carried;
  if (op.opType == "Loop" && op.operands.size() >= 2) {
    // (iteration, condition, carried...) -> (condition, carried, scans...)
    carried.count = static_cast<int64_t>(op.operands.size()) - 2;
    carried.firstArgument = 2;
    carried.firstYield = 1;
  } else if (op.opType == "Scan") {
    auto numScanInputs =
        dyn_cast_or_null<IntegerAttr>(op.getAttr("num_scan_inputs"));
    if (numScanInputs)
      carried.count = std::max<int64_t>(
          0, static_cast<int64_t>(op.operands.size()) - numScanInputs.getInt());
  }
  return carried;
}

/// A tensor type of `type`'s rank and element type with every size dynamic.
Type anyShapeLike(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(
      SmallVector<int64_t>(tensor.getRank(), ShapedType::kDynamic),
      tensor.getElementType());
}

} // namespace

static const onnx::NodeProto *walkNodes(const onnx::GraphProto &graph,
                                        int64_t depth, int64_t maxDepth,
                                        int64_t maxNodes, int64_t &nodes);

namespace {

class ONNXImporter {
public:
  ONNXImporter(MLIRContext *context, StringRef path,
               const ONNXImportOptions &options)
      : context(context), path(path.str()), options(options),
        fileLoc(FileLineColLoc::get(context, path, 0, 0)) {
    modelDir = llvm::sys::path::parent_path(path).str();
    if (modelDir.empty())
      modelDir = ".";
  }

  OwningOpRef<ModuleOp> importModel(onnx::ModelProto &model);

private:
  LogicalResult modelError(const llvm::Twine &message) {
    emitError(fileLoc) << path << ": " << message;
    return failure();
  }

  LogicalResult importGraph(onnx::GraphProto &graph, Block &block,
                            Scope &scope, StringRef graphPath,
                            ArrayRef<Type> argumentTypes, bool isMain,
                            SmallVectorImpl<Value> &outputs);
  LogicalResult importInitializers(onnx::GraphProto &graph, OpBuilder &builder,
                                   Scope &scope);
  FailureOr<SmallVector<int>> sortNodes(onnx::GraphProto &graph, Scope &scope,
                                        StringRef graphPath);
  LogicalResult importNode(onnx::NodeProto &node, NodeContext &ctx,
                           OpBuilder &builder, Scope &scope);
  LogicalResult importConstantNode(onnx::NodeProto &node, NodeContext &ctx,
                                   OpBuilder &builder, Scope &scope);
  FailureOr<Type> convertValueInfoType(const onnx::ValueInfoProto &info,
                                       StringRef what);
  FailureOr<Attribute> convertAttribute(onnx::AttributeProto &attr,
                                        NodeContext &ctx);

  /// Adds a converted tensor's bytes to the model's total; failure once the
  /// total passes the cap.
  LogicalResult countInitializerBytes(ElementsAttr value) {
    auto type = cast<ShapedType>(value.getType());
    initializerBytes += static_cast<uint64_t>(type.getNumElements()) *
                        storageBytes(type.getElementType());
    return success(initializerBytes <=
                   static_cast<uint64_t>(options.limits.maxInitializerBytes));
  }
  std::string initializerBytesMessage() const {
    return "the model's initializers and constants take more than " +
           std::to_string(options.limits.maxInitializerBytes) +
           " bytes together (" + std::to_string(initializerBytes) +
           " so far; --amp-max-initializer-bytes)";
  }
  LogicalResult checkModelSize(const onnx::ModelProto &model);
  /// Why result types inferred for a node break the size caps (the
  /// static dimensions of a dynamic result count too), or nothing.
  std::optional<std::string> checkResultSizes(ArrayRef<Type> types) const;

  MLIRContext *context;
  std::string path;
  std::string modelDir;
  ONNXImportOptions options;
  uint64_t initializerBytes = 0;
  /// Nodes of loop bodies imported again (see importNode).
  int64_t reimportedNodes = 0;
  Location fileLoc;
  int64_t opset = 0;
  llvm::StringMap<int64_t> domainOpsets;
};
} // namespace

LogicalResult NodeContext::fail(const llvm::Twine &message) const {
  emitError(loc) << file << ": node '" << name << "' (#" << index << " in "
                 << graphPath << ", op " << opType << ", domain '"
                 << (domain.empty() ? "ai.onnx" : domain) << "', opset "
                 << opset << "): " << message;
  return failure();
}

FailureOr<Type>
ONNXImporter::convertValueInfoType(const onnx::ValueInfoProto &info,
                                   StringRef what) {
  if (!info.has_type() || !info.type().has_tensor_type())
    return (void)modelError(what + " '" + info.name() +
                      "' is not a tensor (sequences, maps and optionals are "
                      "not supported)"),
           failure();
  const auto &tensorType = info.type().tensor_type();
  Type elementType = convertElementType(context, tensorType.elem_type());
  if (!elementType)
    return (void)modelError(what + " '" + info.name() + "' has unsupported type " +
                      dataTypeName(tensorType.elem_type())),
           failure();
  if (!tensorType.has_shape())
    return (void)modelError(what + " '" + info.name() +
                      "' has no shape; amp needs the rank of every graph "
                      "input and output"),
           failure();
  SmallVector<int64_t> dims;
  for (const auto &dim : tensorType.shape().dim())
    dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                       ? dim.dim_value()
                       : ShapedType::kDynamic);
  // A declared shape is a size from the file too: amp-run allocates inputs
  // and outputs of it, and shape inference propagates it into every node.
  // The static dimensions' product (saturating; 0 if any is 0) is held to
  // the largest-tensor caps.
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      continue;
    uint64_t size = static_cast<uint64_t>(d);
    if (size == 0) {
      count = 0;
      break;
    }
    count = count > UINT64_MAX / size ? UINT64_MAX : count * size;
  }
  if (llvm::Error err =
          checkTensorSize((what + " '" + info.name() + "'").str(), count,
                          storageBytes(elementType), options.limits))
    return (void)modelError(llvm::toString(std::move(err))), failure();
  return Type(RankedTensorType::get(dims, elementType));
}

FailureOr<Attribute> ONNXImporter::convertAttribute(onnx::AttributeProto &attr,
                                                    NodeContext &ctx) {
  Builder b(context);
  switch (attr.type()) {
  case onnx::AttributeProto::INT:
    // output_dtype 0 (Quantize/DequantizeLinear) means "not given".
    if (attr.name() == "output_dtype" && attr.i() == 0)
      return Attribute();
    if (attr.name() == "to" || attr.name() == "dtype" ||
        attr.name() == "output_dtype") {
      Type type = convertElementType(context, static_cast<int32_t>(attr.i()));
      if (!type)
        return (void)ctx.fail("attribute '" + attr.name() + "' names unsupported "
                        "type " + dataTypeName(static_cast<int32_t>(attr.i()))),
               failure();
      return Attribute(TypeAttr::get(type));
    }
    return Attribute(b.getI64IntegerAttr(attr.i()));
  case onnx::AttributeProto::FLOAT:
    return Attribute(b.getF32FloatAttr(attr.f()));
  case onnx::AttributeProto::STRING:
    return Attribute(b.getStringAttr(attr.s()));
  case onnx::AttributeProto::INTS:
    return Attribute(b.getDenseI64ArrayAttr(
        SmallVector<int64_t>(attr.ints().begin(), attr.ints().end())));
  case onnx::AttributeProto::FLOATS:
    return Attribute(b.getDenseF32ArrayAttr(
        SmallVector<float>(attr.floats().begin(), attr.floats().end())));
  case onnx::AttributeProto::STRINGS: {
    SmallVector<Attribute> strings;
    for (const std::string &s : attr.strings())
      strings.push_back(b.getStringAttr(s));
    return Attribute(b.getArrayAttr(strings));
  }
  case onnx::AttributeProto::TENSOR: {
    auto value = convertTensor(context, *attr.mutable_t(), modelDir,
                               options.constantDenseElementsLimit,
                               options.limits, /*inlineSplats=*/true);
    if (!value)
      return (void)ctx.fail("attribute '" + attr.name() +
                      "': " + llvm::toString(value.takeError())),
             failure();
    if (failed(countInitializerBytes(*value)))
      return (void)ctx.fail("attribute '" + attr.name() + "': " +
                      initializerBytesMessage()),
             failure();
    return Attribute(*value);
  }
  default:
    return (void)ctx.fail("attribute '" + attr.name() + "' has unsupported kind " +
                    onnx::AttributeProto_AttributeType_Name(attr.type())),
           failure();
  }
}

LogicalResult ONNXImporter::importInitializers(onnx::GraphProto &graph,
                                               OpBuilder &builder,
                                               Scope &scope) {
  if (graph.sparse_initializer_size() > 0)
    return modelError("sparse initializers are not supported");
  for (onnx::TensorProto &tensor : *graph.mutable_initializer()) {
    auto value = convertTensor(context, tensor, modelDir,
                               options.denseElementsLimit, options.limits);
    if (!value)
      return modelError("initializer: " + llvm::toString(value.takeError()));
    if (failed(countInitializerBytes(*value)))
      return modelError("initializer '" + tensor.name() +
                        "': " + initializerBytesMessage());
    Location loc = NameLoc::get(builder.getStringAttr(tensor.name()), fileLoc);
    auto constant = builder.create<ConstantOp>(loc, *value);
    if (options.markInitializers)
      constant->setAttr(kInitializerAttrName, builder.getUnitAttr());
    if (tensor.name().empty() || !scope.define(tensor.name(), constant))
      return modelError("initializer name '" + tensor.name() +
                        "' is empty or defined twice");
  }
  return success();
}

/// Names that nodes of `graph` (and of its nested subgraphs) use but that
/// the graph does not define.
static void collectFreeNames(const onnx::GraphProto &graph,
                             llvm::StringSet<> &free) {
  llvm::StringSet<> defined;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());
  for (const auto &node : graph.node())
    for (const auto &output : node.output())
      defined.insert(output);
  auto use = [&](StringRef name) {
    if (!name.empty() && !defined.contains(name))
      free.insert(name);
  };
  for (const auto &node : graph.node()) {
    for (const auto &input : node.input())
      use(input);
    for (const auto &attr : node.attribute())
      if (attr.has_g()) {
        llvm::StringSet<> inner;
        collectFreeNames(attr.g(), inner);
        for (const auto &name : inner)
          use(name.getKey());
      }
  }
  for (const auto &output : graph.output())
    use(output.name());
}

FailureOr<SmallVector<int>> ONNXImporter::sortNodes(onnx::GraphProto &graph,
                                                    Scope &scope,
                                                    StringRef graphPath) {
  int numNodes = graph.node_size();
  llvm::StringMap<int> producer;
  for (int i = 0; i < numNodes; ++i)
    for (const std::string &output : graph.node(i).output()) {
      if (output.empty())
        continue;
      if (!producer.try_emplace(output, i).second || scope.lookup(output))
        return (void)modelError("value '" + output + "' in " + graphPath +
                          " is defined twice (second time by node '" +
                          graph.node(i).name() + "', #" + llvm::Twine(i) +
                          ")"),
               failure();
    }
  // Edges producer -> consumer, including uses inside subgraphs.
  SmallVector<SmallVector<int>> users(numNodes);
  SmallVector<int> pending(numNodes, 0);
  for (int i = 0; i < numNodes; ++i) {
    llvm::StringSet<> used;
    for (const std::string &input : graph.node(i).input())
      if (!input.empty())
        used.insert(input);
    for (const auto &attr : graph.node(i).attribute())
      if (attr.has_g())
        collectFreeNames(attr.g(), used);
    for (const auto &name : used) {
      auto it = producer.find(name.getKey());
      if (it == producer.end())
        continue;
      if (it->second == i)
        return (void)modelError("node '" + graph.node(i).name() + "' (#" +
                          llvm::Twine(i) + " in " + graphPath +
                          ") uses its own output '" + name.getKey() + "'"),
               failure();
      users[it->second].push_back(i);
      ++pending[i];
    }
  }
  // Kahn's algorithm, preferring the file order among ready nodes.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < numNodes; ++i)
    if (pending[i] == 0)
      ready.push(i);
  SmallVector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int user : users[i])
      if (--pending[user] == 0)
        ready.push(user);
  }
  if (static_cast<int>(order.size()) != numNodes) {
    for (int i = 0; i < numNodes; ++i)
      if (pending[i] > 0)
        return (void)modelError("graph " + graphPath + " has a cycle through node '" +
                          graph.node(i).name() + "' (#" + llvm::Twine(i) +
                          ", " + graph.node(i).op_type() + ")"),
               failure();
  }
  return order;
}

LogicalResult ONNXImporter::importGraph(onnx::GraphProto &graph, Block &block,
                                        Scope &scope, StringRef graphPath,
                                        ArrayRef<Type> argumentTypes,
                                        bool isMain,
                                        SmallVectorImpl<Value> &outputs) {
  // Subgraph blocks are not attached to an op yet: give the context
  // explicitly.
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(&block);
  if (failed(importInitializers(graph, builder, scope)))
    return failure();

  // Graph inputs become block arguments (initializers listed as inputs, as
  // in IR version < 4, stay constants).
  llvm::StringSet<> initializerNames;
  for (const onnx::TensorProto &tensor : graph.initializer())
    initializerNames.insert(tensor.name());
  unsigned argIndex = 0;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (isMain && initializerNames.erase(input.name()))
      continue;
    Type type;
    if (argIndex < argumentTypes.size() && argumentTypes[argIndex]) {
      type = argumentTypes[argIndex];
    } else {
      auto converted = convertValueInfoType(input, "input");
      if (failed(converted))
        return failure();
      type = *converted;
    }
    ++argIndex;
    BlockArgument arg = block.addArgument(
        type, NameLoc::get(builder.getStringAttr(input.name()), fileLoc));
    if (input.name().empty() || !scope.define(input.name(), arg))
      return modelError("input name '" + input.name() + "' in " + graphPath +
                        " is empty or defined twice");
  }

  auto order = sortNodes(graph, scope, graphPath);
  if (failed(order))
    return failure();
  for (int index : *order) {
    onnx::NodeProto &node = *graph.mutable_node(index);
    std::string name = node.name().empty()
                           ? node.op_type() + "_" + std::to_string(index)
                           : node.name();
    NodeContext ctx(NameLoc::get(builder.getStringAttr(name), fileLoc));
    ctx.file = path;
    ctx.graphPath = graphPath.str();
    ctx.name = std::move(name);
    ctx.index = index;
    ctx.opType = node.op_type();
    ctx.domain = node.domain();
    ctx.opset = domainOpsets.lookup(
        node.domain().empty() ? StringRef("ai.onnx") : StringRef(node.domain()));
    if (failed(importNode(node, ctx, builder, scope)))
      return failure();
  }

  if (graph.output_size() == 0)
    return modelError("graph " + graphPath + " has no outputs");
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = scope.lookup(output.name());
    if (!value)
      return modelError("graph output '" + output.name() + "' of " +
                        graphPath + " is not produced by any node, input or "
                        "initializer");
    if (output.has_type() && output.type().has_tensor_type()) {
      Type declared = convertElementType(
          context, output.type().tensor_type().elem_type());
      auto actual = dyn_cast<RankedTensorType>(value.getType());
      if (declared && actual && declared != actual.getElementType())
        return modelError("graph output '" + output.name() + "' is declared " +
                          dataTypeName(output.type().tensor_type().elem_type()) +
                          " but its producer computes a different type");
      const auto &tensorType = output.type().tensor_type();
      if (actual && tensorType.has_shape()) {
        const auto &dims = tensorType.shape().dim();
        bool conflict = dims.size() != actual.getRank();
        for (int i = 0; !conflict && i < dims.size(); ++i)
          conflict = dims[i].has_dim_value() && !actual.isDynamicDim(i) &&
                     dims[i].dim_value() != actual.getDimSize(i);
        if (conflict) {
          std::string computed;
          llvm::raw_string_ostream os(computed);
          os << actual;
          return modelError("graph output '" + output.name() + "' of " +
                            graphPath + " is declared with a shape that "
                            "contradicts the computed type " + computed);
        }
      }
    }
    outputs.push_back(value);
  }
  return success();
}

LogicalResult ONNXImporter::importConstantNode(onnx::NodeProto &node,
                                               NodeContext &ctx,
                                               OpBuilder &builder,
                                               Scope &scope) {
  if (node.attribute_size() != 1 || node.output_size() != 1)
    return ctx.fail("Constant needs exactly one value attribute and one "
                    "output");
  onnx::AttributeProto &attr = *node.mutable_attribute(0);
  Builder b(context);
  ElementsAttr value;
  StringRef name = attr.name();
  static const std::pair<StringRef, onnx::AttributeProto::AttributeType>
      expectedKinds[] = {{"value", onnx::AttributeProto::TENSOR},
                         {"value_float", onnx::AttributeProto::FLOAT},
                         {"value_floats", onnx::AttributeProto::FLOATS},
                         {"value_int", onnx::AttributeProto::INT},
                         {"value_ints", onnx::AttributeProto::INTS}};
  for (const auto &[expectedName, kind] : expectedKinds)
    if (name == expectedName && attr.type() != kind)
      return ctx.fail("Constant attribute '" + name + "' has kind " +
                      onnx::AttributeProto_AttributeType_Name(attr.type()) +
                      ", expected " +
                      onnx::AttributeProto_AttributeType_Name(kind));
  if (name == "value") {
    if (attr.t().name().empty())
      attr.mutable_t()->set_name(node.output(0));
    auto converted = convertAttribute(attr, ctx);
    if (failed(converted))
      return failure();
    value = cast<ElementsAttr>(*converted);
  } else if (name == "value_float") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   attr.f());
  } else if (name == "value_floats") {
    SmallVector<float> values(attr.floats().begin(), attr.floats().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(values.size())},
                              b.getF32Type()),
        ArrayRef<float>(values));
  } else if (name == "value_int") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   static_cast<int64_t>(attr.i()));
  } else if (name == "value_ints") {
    SmallVector<int64_t> values(attr.ints().begin(), attr.ints().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(values.size())},
                              b.getI64Type()),
        ArrayRef<int64_t>(values));
  } else {
    return ctx.fail("Constant attribute '" + name + "' is not supported "
                    "(strings and sparse tensors are not)");
  }
  auto constant = builder.create<ConstantOp>(ctx.loc, value);
  if (!scope.define(node.output(0), constant))
    return ctx.fail("output '" + node.output(0) + "' is defined twice");
  return success();
}

LogicalResult ONNXImporter::importNode(onnx::NodeProto &node, NodeContext &ctx,
                                       OpBuilder &builder, Scope &scope) {
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return ctx.fail("unsupported operator domain '" + node.domain() +
                    "'; amp supports the default ONNX domain only");
  if (node.op_type() == "Constant")
    return importConstantNode(node, ctx, builder, scope);

  std::optional<StringRef> ampName = lookupAmpOpName(node.op_type());
  if (!ampName)
    return ctx.fail("unsupported operator; amp supports " +
                    llvm::Twine(getOnnxOpTable().size()) +
                    " ONNX operators (see docs/OnnxOperators.md)");
  std::optional<int64_t> version = getSelectedOpVersion(node.op_type(), opset);
  std::optional<int64_t> supported = getSupportedOpVersion(node.op_type());
  if (version && supported && *version > *supported)
    return ctx.fail("opset " + llvm::Twine(opset) + " selects version " +
                    llvm::Twine(*version) + " of " + node.op_type() +
                    ", newer than version " + llvm::Twine(*supported) +
                    ", the one amp models");
  std::optional<RegisteredOperationName> opName =
      RegisteredOperationName::lookup(*ampName, context);
  assert(opName && "amp op must be registered");

  PendingOp pending;
  pending.opType = node.op_type();
  for (const std::string &input : node.input()) {
    if (input.empty()) {
      pending.operands.push_back(nullptr);
      continue;
    }
    Value value = scope.lookup(input);
    if (!value)
      return ctx.fail("uses undefined value '" + input + "'");
    pending.operands.push_back(value);
  }
  llvm::StringSet<> attributeNames;
  for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
    if (!attributeNames.insert(attr.name()).second)
      return ctx.fail("attribute '" + attr.name() + "' appears twice");
    if (attr.type() == onnx::AttributeProto::GRAPH)
      continue;
    auto converted = convertAttribute(attr, ctx);
    if (failed(converted))
      return failure();
    if (!*converted)
      continue; // an attribute's "not given" value
    pending.attributes.emplace_back(builder.getStringAttr(attr.name()),
                                    *converted);
  }
  pending.numOutputs = node.output_size();

  if (failed(onnx_versions::upgradeNode(pending, ctx, builder)))
    return failure();

  // Absent optional inputs are `none` values; trailing ones are appended.
  std::optional<unsigned> fixedCount = getFixedOperandCount(*opName);
  if (fixedCount) {
    if (pending.operands.size() > *fixedCount)
      return ctx.fail("has " + llvm::Twine(pending.operands.size()) +
                      " inputs but the operator takes at most " +
                      llvm::Twine(*fixedCount));
    pending.operands.resize(*fixedCount, nullptr);
  }
  Value none;
  for (Value &operand : pending.operands)
    if (!operand) {
      if (!none)
        none = builder.create<NoneOp>(ctx.loc);
      operand = none;
    }

  // Attributes must be ones the op declares.
  llvm::SmallDenseSet<StringAttr> known(opName->getAttributeNames().begin(),
                                        opName->getAttributeNames().end());
  for (const NamedAttribute &attr : pending.attributes)
    if (!known.contains(attr.getName()))
      return ctx.fail("unknown attribute '" + attr.getName().getValue() + "'");
  // ... and of the kind the op declares: shape inference reads them before
  // the verifier would look (an INTS `group` was a null dereference).
  {
    NamedAttrList attributes(pending.attributes);
    DiagnosticCollector diagnostics(context);
    if (failed(opName->verifyInherentAttrs(
            attributes, [&] { return emitError(ctx.loc); })))
      return ctx.fail(diagnostics.str());
  }

  // Subgraphs become regions, in the order the op declares them.
  OperationState state(ctx.loc, *opName);
  ArrayRef<StringRef> regionNames = getRegionAttributeNames(node.op_type());
  for (StringRef regionName : regionNames) {
    onnx::AttributeProto *graphAttr = nullptr;
    for (onnx::AttributeProto &attr : *node.mutable_attribute())
      if (attr.name() == regionName && attr.type() == onnx::AttributeProto::GRAPH)
        graphAttr = &attr;
    if (!graphAttr)
      return ctx.fail("missing subgraph attribute '" + regionName + "'");
    auto argumentTypes =
        getSubgraphArgumentTypes(pending, ctx, graphAttr->g());
    if (failed(argumentTypes))
      return failure();
    // Loop-carried values (Loop, Scan states) may change shape between
    // iterations: the body is imported with the initial values' types and,
    // when it yields another shape for one, imported again with the two
    // joined (dynamic where they differ), from a copy of the subgraph (an
    // import moves tensor data out of the proto). From the second round on
    // a widened value is fully dynamic, so the third import is the last.
    CarriedValues carried = getCarriedValues(pending);
    std::optional<onnx::GraphProto> pristine;
    if (carried.count > 0)
      pristine = graphAttr->g();
    uint64_t bytesBefore = initializerBytes;
    Region *region = state.addRegion();
    std::string innerPath = ctx.graphPath + "/" + ctx.name + "." +
                            regionName.str();
    for (int round = 0;; ++round) {
      Block *body = new Block();
      region->push_back(body);
      Scope inner(&scope);
      SmallVector<Value> yielded;
      if (failed(importGraph(*graphAttr->mutable_g(), *body, inner, innerPath,
                             *argumentTypes, /*isMain=*/false, yielded)))
        return failure();
      OpBuilder bodyBuilder(context);
      bodyBuilder.setInsertionPointToEnd(body);
      bodyBuilder.create<YieldOp>(ctx.loc, yielded);
      bool widened = false;
      for (int64_t i = 0; i < carried.count; ++i) {
        size_t argument = carried.firstArgument + i;
        size_t output = carried.firstYield + i;
        if (argument >= argumentTypes->size() || output >= yielded.size())
          break;
        Type &type = (*argumentTypes)[argument];
        Type joined = shape::joinTensorTypes(type, yielded[output].getType());
        if (!joined || joined == type)
          continue;
        type = round > 0 ? anyShapeLike(joined) : joined;
        widened = true;
      }
      if (!widened)
        break;
      // Every import again counts against the node limit (nested loops
      // would otherwise multiply their imports).
      int64_t nodes = 0;
      walkNodes(*pristine, 0, options.limits.maxSubgraphDepth,
                options.limits.maxNodes, nodes);
      reimportedNodes += nodes;
      if (reimportedNodes > options.limits.maxNodes)
        return ctx.fail("importing again the bodies of loops whose carried "
                        "values change shape passes " +
                        llvm::Twine(options.limits.maxNodes) +
                        " nodes (--amp-max-nodes)");
      body->dropAllReferences();
      region->getBlocks().clear();
      *graphAttr->mutable_g() = *pristine;
      initializerBytes = bytesBefore;
    }
  }
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.type() == onnx::AttributeProto::GRAPH &&
        !llvm::is_contained(regionNames, StringRef(attr.name())))
      return ctx.fail("unexpected subgraph attribute '" + attr.name() + "'");

  state.addOperands(pending.operands);
  state.addAttributes(pending.attributes);

  // Diagnostics from type inference and verification are collected and
  // re-emitted with the node's context once the collector is gone.
  Operation *op = nullptr;
  std::string problem;
  {
    DiagnosticCollector diagnostics(context);
    SmallVector<Type> resultTypes;
    auto *inference = opName->getInterface<InferTypeOpInterface>();
    SmallVector<Region *> regions;
    for (auto &region : state.regions)
      regions.push_back(region.get());
    if (!inference ||
        failed(inference->inferReturnTypes(
            context, ctx.loc, pending.operands,
            state.attributes.getDictionary(context), OpaqueProperties(nullptr),
            regions, resultTypes))) {
      problem = diagnostics.str().empty() ? "cannot infer the result types"
                                          : diagnostics.str();
    } else if (std::optional<std::string> tooLarge =
                   checkResultSizes(resultTypes)) {
      problem = *tooLarge;
    } else {
      state.addTypes(resultTypes);
      op = builder.create(state);
      // The op's own invariants and its regions'. Nested ops were verified
      // when their own nodes were built; dominance is the scopes' business
      // and is checked once the module is whole: here it would walk up
      // through enclosing subgraphs whose ops do not exist yet (a crash for
      // an outer value used two subgraphs down).
      OperationName name = op->getName();
      if (failed(name.verifyInvariants(op)) ||
          failed(name.verifyRegionInvariants(op))) {
        problem = diagnostics.str();
        op->erase();
        op = nullptr;
      }
    }
  }
  if (!op)
    return ctx.fail(problem);

  if (node.output_size() > static_cast<int>(op->getNumResults()))
    return ctx.fail("has " + llvm::Twine(node.output_size()) +
                    " outputs but the operator produces " +
                    llvm::Twine(op->getNumResults()));

  SmallVector<Value> results(op->getResults());
  // A marked initializer is a parameter to train: an op that reads it
  // (PyTorch's GroupNorm exports Unsqueeze(weight)) is kept, not folded
  // into a new constant that the train-step builder would not see.
  bool readsParameter =
      options.markInitializers &&
      llvm::any_of(op->getOperands(), [](Value operand) {
        Operation *def = operand.getDefiningOp();
        return def && def->hasAttr(kInitializerAttrName);
      });
  if (options.foldConstants && !readsParameter) {
    SmallVector<Value> folded;
    if (succeeded(builder.tryFold(op, folded)) && !folded.empty()) {
      op->erase();
      results = folded;
    }
  }
  if (pending.reshapeResultLike) {
    // Back to the input's shape, whose type is known: nothing to infer.
    // With a 0 dimension, allowzero: a 0 in the shape is then a zero-size
    // dimension, not "copy that dimension" (which made inference fail, an
    // abort; fuzz finding regression-d7d1c0fbedba). Otherwise the default,
    // which every opset's Reshape has.
    auto like = cast<RankedTensorType>(pending.reshapeResultLike.getType());
    auto resultType = like.clone(getElementTypeOrSelf(results[0].getType()));
    uint64_t allowZero = llvm::is_contained(like.getShape(), 0) ? 1 : 0;
    Value shape = builder.createOrFold<ShapeOp>(
        ctx.loc, ValueRange{pending.reshapeResultLike},
        ArrayRef<NamedAttribute>{});
    results[0] = builder.createOrFold<ReshapeOp>(ctx.loc, resultType,
                                                 results[0], shape, allowZero);
  }
  for (auto [i, output] : llvm::enumerate(node.output())) {
    if (output.empty())
      continue;
    if (!scope.define(output, results[i]))
      return ctx.fail("output '" + output + "' is defined twice");
  }
  return success();
}

/// The first node of `graph` (in file order) whose subgraphs nest deeper
/// than `maxDepth` levels, counting `graph` at `depth`; and the number of
/// nodes seen, stopping once the count passes `maxNodes`.
/// Protobuf's recursion limit (see importONNXFile) bounds the recursion.
static const onnx::NodeProto *walkNodes(const onnx::GraphProto &graph,
                                        int64_t depth, int64_t maxDepth,
                                        int64_t maxNodes, int64_t &nodes) {
  for (const onnx::NodeProto &node : graph.node()) {
    if (++nodes > maxNodes)
      return nullptr;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      auto visit = [&](const onnx::GraphProto &g) -> const onnx::NodeProto * {
        if (depth + 1 > maxDepth ||
            walkNodes(g, depth + 1, maxDepth, maxNodes, nodes))
          return &node;
        return nullptr;
      };
      if (attr.has_g())
        if (const onnx::NodeProto *deep = visit(attr.g()))
          return deep;
      for (const onnx::GraphProto &g : attr.graphs())
        if (const onnx::NodeProto *deep = visit(g))
          return deep;
      if (nodes > maxNodes)
        return nullptr;
    }
  }
  return nullptr;
}

LogicalResult ONNXImporter::checkModelSize(const onnx::ModelProto &model) {
  const ModelLimits &limits = options.limits;
  int64_t nodes = 0;
  const onnx::NodeProto *deep = walkNodes(
      model.graph(), 0, limits.maxSubgraphDepth, limits.maxNodes, nodes);
  if (deep)
    return modelError("node '" + deep->name() + "' (op " + deep->op_type() +
                      ") nests subgraphs more than " +
                      llvm::Twine(limits.maxSubgraphDepth) +
                      " levels deep (--amp-max-subgraph-depth)");
  if (nodes > limits.maxNodes)
    return modelError("the model has more than " + llvm::Twine(limits.maxNodes) +
                      " nodes, counting those in subgraphs (--amp-max-nodes)");
  return success();
}

std::optional<std::string>
ONNXImporter::checkResultSizes(ArrayRef<Type> types) const {
  for (auto [i, type] : llvm::enumerate(types)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      continue;
    // The dimensions come from the file: multiply without overflow.
    uint64_t count = 1;
    bool overflow = false;
    for (int64_t d : tensor.getShape()) {
      if (ShapedType::isDynamic(d))
        continue;
      if (d < 0)
        return "result " + std::to_string(i) + " has the invalid dimension " +
               std::to_string(d);
      if (d != 0 && count > UINT64_MAX / static_cast<uint64_t>(d))
        overflow = true;
      count *= static_cast<uint64_t>(d);
    }
    if (overflow)
      count = UINT64_MAX;
    if (llvm::Error err = checkTensorSize(
            "result " + std::to_string(i), count,
            storageBytes(tensor.getElementType()), options.limits))
      return llvm::toString(std::move(err));
  }
  return std::nullopt;
}

OwningOpRef<ModuleOp> ONNXImporter::importModel(onnx::ModelProto &model) {
  if (model.ir_version() <= 0)
    return (void)modelError("missing ir_version: this file is not an ONNX model"),
           nullptr;
  if (!model.has_graph())
    return (void)modelError("the model has no graph"), nullptr;
  bool hasDefaultDomain = false;
  llvm::StringSet<> domains;
  for (const auto &entry : model.opset_import()) {
    StringRef domain = entry.domain().empty() ? StringRef("ai.onnx")
                                              : StringRef(entry.domain());
    if (!domains.insert(domain).second)
      return (void)modelError("opset_import lists domain '" + domain + "' twice"),
             nullptr;
    domainOpsets[domain] = entry.version();
    if (domain == "ai.onnx") {
      hasDefaultDomain = true;
      opset = entry.version();
    }
  }
  if (!hasDefaultDomain)
    return (void)modelError("the model imports no default-domain (ai.onnx) opset"),
           nullptr;
  if (opset < kMinUpgradableOpset || opset > getLatestKnownOpset())
    return (void)modelError("default-domain opset " + llvm::Twine(opset) +
                      " is not supported (amp supports " +
                      llvm::Twine(kMinUpgradableOpset) + " to " +
                      llvm::Twine(getLatestKnownOpset()) + ")"),
           nullptr;
  if (opset < kMinSupportedOpset) {
    // Opsets 1-10: ONNX's version converter brings the model to the oldest
    // opset amp's own version rules start from.
    if (llvm::Error error = onnx_upgrade::upgradeToOpset(model, opset,
                                                         kMinSupportedOpset))
      return (void)modelError(llvm::toString(std::move(error))), nullptr;
    opset = kMinSupportedOpset;
    domainOpsets.clear();
    for (const auto &entry : model.opset_import())
      domainOpsets[entry.domain().empty() ? StringRef("ai.onnx")
                                          : StringRef(entry.domain())] =
          entry.version();
    domainOpsets["ai.onnx"] = opset;
  }
  if (model.functions_size() > 0)
    return (void)modelError("model-local functions are not supported"), nullptr;
  if (failed(checkModelSize(model)))
    return nullptr;

  context->loadDialect<AmpDialect, func::FuncDialect>();
  OpBuilder builder(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);

  // Model-level facts the exporter will need later.
  SmallVector<NamedAttribute> opsets;
  for (const auto &entry : model.opset_import())
    opsets.emplace_back(
        builder.getStringAttr(entry.domain().empty() ? "ai.onnx"
                                                     : entry.domain()),
        builder.getI64IntegerAttr(entry.version()));
  (*module)->setAttr("amp.opset_import", builder.getDictionaryAttr(opsets));
  // At least the IR version the opset needs (an opset-11 file of IR version
  // 5, or one upgraded from opset 3, is written as IR version 6): the IR
  // describes a file that can exist, and export -> import keeps it.
  (*module)->setAttr("amp.ir_version",
                     builder.getI64IntegerAttr(std::max<int64_t>(
                         model.ir_version(), getMinIrVersion(opset))));
  SmallVector<NamedAttribute> metadata;
  auto addMeta = [&](StringRef key, const std::string &value) {
    if (!value.empty())
      metadata.emplace_back(builder.getStringAttr(key),
                            builder.getStringAttr(value));
  };
  addMeta("producer_name", model.producer_name());
  addMeta("producer_version", model.producer_version());
  addMeta("domain", model.domain());
  addMeta("graph_name", model.graph().name());
  for (const auto &prop : model.metadata_props())
    addMeta(prop.key(), prop.value());
  if (!metadata.empty())
    (*module)->setAttr("amp.metadata", builder.getDictionaryAttr(metadata));

  auto func = func::FuncOp::create(fileLoc, "main",
                                   builder.getFunctionType({}, {}));
  module->push_back(func);
  Block *entry = func.addEntryBlock();
  Scope scope;
  SmallVector<Value> outputs;
  if (failed(importGraph(*model.mutable_graph(), *entry, scope, "main",
                         /*argumentTypes=*/{}, /*isMain=*/true, outputs)))
    return nullptr;
  OpBuilder::atBlockEnd(entry).create<func::ReturnOp>(fileLoc, outputs);
  func.setFunctionType(builder.getFunctionType(
      entry->getArgumentTypes(), ValueRange(outputs).getTypes()));

  // Keep the ONNX names of inputs and outputs for export and reports.
  unsigned argIndex = 0;
  for (const auto &input : model.graph().input()) {
    if (argIndex >= entry->getNumArguments())
      break;
    auto loc = dyn_cast<NameLoc>(entry->getArgument(argIndex).getLoc());
    if (loc && loc.getName() == input.name())
      func.setArgAttr(argIndex++, "amp.name",
                      builder.getStringAttr(input.name()));
  }
  for (auto [i, output] : llvm::enumerate(model.graph().output()))
    func.setResultAttr(i, "amp.name", builder.getStringAttr(output.name()));

  if (failed(verify(*module)))
    return (void)modelError("the imported program does not verify (see above)"),
           nullptr;
  return module;
}

OwningOpRef<ModuleOp>
onnx_import::importModelProto(onnx::ModelProto &model, StringRef path,
                              MLIRContext *context,
                              const ONNXImportOptions &options) {
  ONNXImporter importer(context, path, options);
  return importer.importModel(model);
}
