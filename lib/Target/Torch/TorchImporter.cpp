//===- TorchImporter.cpp - a torch.export graph into the amp dialect ------===//
//
// The driver: reads the graph JSON, makes the function's arguments (user
// inputs) and the weights (parameters, buffers, constants), translates the
// nodes in order through the rule tables, and returns the user outputs.
//
//===----------------------------------------------------------------------===//

#include "amp/Target/Torch/TorchImporter.h"

#include "AtenCall.h"

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::torch_import;

namespace {

/// Every rule, by target.
const llvm::StringMap<const AtenRule *> &getRuleMap() {
  static const llvm::StringMap<const AtenRule *> map = [] {
    llvm::StringMap<const AtenRule *> result;
    for (auto rules : {getElementwiseRules(), getLinearAlgebraRules(),
                       getNormalizationRules(), getShapeRules()})
      for (const AtenRule &rule : rules)
        result[rule.target] = &rule;
    return result;
  }();
  return map;
}


class TorchImporter {
public:
  TorchImporter(MLIRContext *context, ArrayRef<TorchWeight> weights,
                const TorchImportOptions &options)
      : context(context), builder(context), weights(weights),
        options(options), unknownLoc(UnknownLoc::get(context)) {}

  OwningOpRef<ModuleOp> import(StringRef json);

private:
  LogicalResult error(const Twine &message) {
    return emitError(graphLoc) << graphName << ": " << message;
  }
  LogicalResult importInputs(const llvm::json::Array &inputs,
                             func::FuncOp &func);
  FailureOr<Value> importWeight(const llvm::json::Object &input,
                                StringRef target, const TensorMeta &meta);
  LogicalResult importNode(const llvm::json::Object &node);
  LogicalResult importOutputs(const llvm::json::Array &outputs,
                              func::FuncOp func);
  Location nodeLoc(const llvm::json::Object &node, std::string &name,
                   std::string &describe);

  MLIRContext *context;
  OpBuilder builder;
  ArrayRef<TorchWeight> weights;
  TorchImportOptions options;
  Location unknownLoc, graphLoc = unknownLoc;
  std::string graphName;
  llvm::StringMap<GraphValue> values;
  llvm::StringMap<const TorchWeight *> weightsByName;
};

} // namespace

OwningOpRef<ModuleOp> TorchImporter::import(StringRef json) {
  context->loadDialect<AmpDialect, func::FuncDialect>();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed) {
    emitError(unknownLoc) << "the torch graph is not valid JSON: "
                          << llvm::toString(parsed.takeError());
    return nullptr;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != "amp-torch-graph" ||
      root->getInteger("version") != 1) {
    emitError(unknownLoc)
        << "not an amp torch graph (format amp-torch-graph, version 1)";
    return nullptr;
  }
  graphName = root->getString("name").value_or("torch").str();
  graphLoc = FileLineColLoc::get(context, graphName, 0, 0);
  const llvm::json::Array *inputs = root->getArray("inputs");
  const llvm::json::Array *nodes = root->getArray("nodes");
  const llvm::json::Array *outputs = root->getArray("outputs");
  if (!inputs || !nodes || !outputs) {
    (void)error("the graph lacks its inputs, nodes or outputs");
    return nullptr;
  }
  for (const TorchWeight &weight : weights)
    if (!weightsByName.try_emplace(weight.name, &weight).second) {
      (void)error("the weight '" + weight.name + "' is given twice");
      return nullptr;
    }

  OwningOpRef<ModuleOp> module = ModuleOp::create(graphLoc);
  (*module)->setAttr("amp.metadata",
                     builder.getDictionaryAttr(builder.getNamedAttr(
                         "graph_name", builder.getStringAttr(graphName))));
  builder.setInsertionPointToEnd(module->getBody());
  func::FuncOp func;
  if (failed(importInputs(*inputs, func)))
    return nullptr;
  for (const llvm::json::Value &node : *nodes) {
    const llvm::json::Object *object = node.getAsObject();
    if (!object) {
      (void)error("a node is not a JSON object");
      return nullptr;
    }
    if (failed(importNode(*object)))
      return nullptr;
  }
  if (failed(importOutputs(*outputs, func)))
    return nullptr;
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

LogicalResult TorchImporter::importInputs(const llvm::json::Array &inputs,
                                          func::FuncOp &func) {
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  SmallVector<const llvm::json::Object *> weightInputs;
  for (const llvm::json::Value &value : inputs) {
    const llvm::json::Object *input = value.getAsObject();
    if (!input)
      return error("an input is not a JSON object");
    StringRef name = input->getString("name").value_or("");
    StringRef kind = input->getString("kind").value_or("");
    if (kind == "parameter" || kind == "buffer" || kind == "constant_tensor") {
      weightInputs.push_back(input);
      continue;
    }
    if (kind != "user_input")
      return error("input '" + name + "' is a " + kind +
                   " input, which amp does not import (tensor inputs, "
                   "parameters, buffers and constant tensors only)");
    std::optional<TensorMeta> meta =
        parseTensorMeta(context, input->get("meta"));
    if (!meta)
      return error("input '" + name +
                   "' is not a tensor of a dtype amp supports");
    argTypes.push_back(RankedTensorType::get(meta->shape, meta->elementType));
    argNames.push_back(name.str());
  }
  func = builder.create<func::FuncOp>(
      graphLoc, "main", builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "amp.name", builder.getStringAttr(name));
    BlockArgument arg = entry->getArgument(i);
    arg.setLoc(NameLoc::get(builder.getStringAttr(name), graphLoc));
    values[name] = GraphValue{GraphValue::Kind::Tensor, arg, {}};
  }
  builder.setInsertionPointToStart(entry);
  llvm::StringSet<> used;
  for (const llvm::json::Object *input : weightInputs) {
    StringRef name = input->getString("name").value_or("");
    StringRef target = input->getString("target").value_or("");
    std::optional<TensorMeta> meta =
        parseTensorMeta(context, input->get("meta"));
    if (!meta)
      return error("weight '" + target +
                   "' is not a tensor of a dtype amp supports");
    FailureOr<Value> weight = importWeight(*input, target, *meta);
    if (failed(weight))
      return failure();
    used.insert(target);
    values[name] = GraphValue{GraphValue::Kind::Tensor, *weight, {}};
  }
  for (const TorchWeight &weight : weights)
    if (!used.contains(weight.name))
      return error("the weight '" + weight.name +
                   "' is not an input of the graph");
  return success();
}

FailureOr<Value> TorchImporter::importWeight(const llvm::json::Object &input,
                                             StringRef target,
                                             const TensorMeta &meta) {
  auto it = weightsByName.find(target);
  if (it == weightsByName.end())
    return error("no value was given for the weight '" + target + "'");
  const TorchWeight &weight = *it->second;
  uint64_t count = 1;
  for (int64_t size : meta.shape) {
    if (ShapedType::isDynamic(size))
      return error("weight '" + target + "' has a dynamic size");
    count *= static_cast<uint64_t>(size);
  }
  unsigned bits = meta.elementType.getIntOrFloatBitWidth();
  uint64_t byteSize = count * (bits == 1 ? 1 : bits / 8);
  if (weight.bytes.size() != byteSize)
    return error(llvm::formatv("weight '{0}' holds {1} bytes but its dtype "
                               "and shape need {2}",
                               target, weight.bytes.size(), byteSize)
                     .str());
  auto type = RankedTensorType::get(meta.shape, meta.elementType);
  Location loc = NameLoc::get(builder.getStringAttr(target), graphLoc);
  ElementsAttr attr;
  if (meta.elementType.isInteger(1)) {
    // i1 data cannot be a resource blob: one bool per byte, copied.
    SmallVector<bool> flags;
    for (char c : weight.bytes)
      flags.push_back(c != 0);
    attr = DenseElementsAttr::get(type, flags);
  } else {
    constexpr size_t kAlign = alignof(uint64_t);
    std::optional<AsmResourceBlob> blob;
    if (reinterpret_cast<uintptr_t>(weight.bytes.data()) % kAlign == 0) {
      // The caller's memory, kept alive by its owner: no copy.
      std::shared_ptr<const void> owner = weight.owner;
      blob = AsmResourceBlob(
          weight.bytes, kAlign,
          [owner](void *, size_t, size_t) mutable { owner.reset(); },
          /*dataIsMutable=*/false);
    } else {
      blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(weight.bytes,
                                                           kAlign);
    }
    auto &manager = DenseResourceElementsHandle::getManagerInterface(context);
    DenseResourceElementsHandle handle =
        manager.insert(getWeightResourceKey(target), std::move(*blob));
    attr = DenseResourceElementsAttr::get(type, handle);
  }
  auto constant = builder.create<ConstantOp>(loc, attr);
  if (options.markInitializers)
    constant->setAttr(kInitializerAttrName, builder.getUnitAttr());
  return constant.getResult();
}

Location TorchImporter::nodeLoc(const llvm::json::Object &node,
                                std::string &name, std::string &describe) {
  StringRef nodeName = node.getString("name").value_or("");
  StringRef module = node.getString("module").value_or("");
  StringRef target = node.getString("target").value_or("");
  name = module.empty() ? nodeName.str() : (module + "/" + nodeName).str();
  describe = llvm::formatv("node '{0}' ({1})", name, target).str();
  Location child = graphLoc;
  if (std::optional<StringRef> file = node.getString("file")) {
    int64_t line = node.getInteger("line").value_or(0);
    child = FileLineColLoc::get(context, *file, line, 0);
    describe += llvm::formatv(" at {0}:{1}", *file, line).str();
    if (std::optional<StringRef> code = node.getString("code"))
      if (!code->empty())
        describe += " `" + code->str() + "`";
  }
  return NameLoc::get(builder.getStringAttr(name), child);
}

LogicalResult TorchImporter::importNode(const llvm::json::Object &node) {
  std::string name, describe;
  Location loc = nodeLoc(node, name, describe);
  StringRef nodeName = node.getString("name").value_or("");
  StringRef target = node.getString("target").value_or("");
  if (nodeName.empty() || values.count(nodeName))
    return emitError(loc) << describe << ": the node has no name or a name "
                          << "used before";
  AtenCall call(builder, loc, node, values, describe);

  // getitem picks one result of a multi-result op.
  if (target == "operator.getitem") {
    const llvm::json::Value *source = call.arg(0, "");
    const llvm::json::Object *ref = source ? source->getAsObject() : nullptr;
    auto it = ref && ref->getString("node")
                  ? values.find(*ref->getString("node"))
                  : values.end();
    FailureOr<int64_t> index = call.integer(1, "");
    if (failed(index))
      return failure();
    if (it == values.end() || it->second.kind != GraphValue::Kind::Tuple)
      return call.fail("getitem of something that is not a tuple");
    const GraphValue &tuple = it->second;
    if (*index < 0 || *index >= static_cast<int64_t>(tuple.elements.size()) ||
        !tuple.elements[*index])
      return call.fail(llvm::formatv("result #{0} of '{1}' is not translated "
                                     "(amp does not compute it)",
                                     *index, *ref->getString("node"))
                           .str());
    values[nodeName] =
        GraphValue{GraphValue::Kind::Tensor, tuple.elements[*index], {}};
    return success();
  }

  // Training-mode ops are for the train step only: an inference import of
  // a module in training mode says why it fails.
  static const llvm::StringMap<StringRef> trainingOnly = {
      {"aten._native_batch_norm_legit_functional.default",
       "batch norm in training mode updates its running statistics in "
       "forward; put the module in eval mode (module.eval()) to import it "
       "for inference"},
      {"aten._native_batch_norm_legit.default",
       "batch norm in training mode updates its running statistics in "
       "forward; put the module in eval mode (module.eval()) to import it "
       "for inference"},
      {"aten.native_dropout.default",
       "dropout in training mode; put the module in eval mode "
       "(module.eval()) to import it for inference"},
  };
  if (auto it = trainingOnly.find(target);
      it != trainingOnly.end() && !options.training)
    return call.fail(it->second);
  const auto &rules = getRuleMap();
  auto rule = rules.find(target);
  if (rule == rules.end())
    return call.fail("amp has no translation of " + target +
                     " (the supported ATen ops are listed in "
                     "docs/TorchOps.md)");
  if (failed(rule->second->translate(call)))
    return failure();

  ArrayRef<Value> results = call.getResults();
  const llvm::json::Value *meta = node.get("meta");
  if (call.isSymIntResult()) {
    values[nodeName] = GraphValue{GraphValue::Kind::SymInt, results[0], {}};
    return success();
  }
  if (meta && meta->getAsArray()) {
    GraphValue tuple{GraphValue::Kind::Tuple, Value(), {}};
    for (auto [k, value] : llvm::enumerate(results)) {
      Value converted = value;
      Type expected = call.resultElementType(k);
      if (value && expected && AtenCall::elementTypeOf(value) != expected) {
        FailureOr<Value> cast = call.castTo(value, expected);
        if (failed(cast))
          return failure();
        converted = *cast;
      }
      tuple.elements.push_back(converted);
    }
    values[nodeName] = std::move(tuple);
    return success();
  }
  if (results.empty()) {
    // An assertion or another op without a tensor result.
    return success();
  }
  Value result = results[0];
  Type expected = call.resultElementType(0);
  if (expected && AtenCall::elementTypeOf(result) != expected) {
    FailureOr<Value> cast = call.castTo(result, expected);
    if (failed(cast))
      return failure();
    result = *cast;
  }
  values[nodeName] = GraphValue{GraphValue::Kind::Tensor, result, {}};
  return success();
}

LogicalResult TorchImporter::importOutputs(const llvm::json::Array &outputs,
                                           func::FuncOp func) {
  SmallVector<Value> results;
  for (auto [i, value] : llvm::enumerate(outputs)) {
    const llvm::json::Object *output = value.getAsObject();
    StringRef kind = output ? output->getString("kind").value_or("") : "";
    // A training import: the train step updates the buffers itself (the
    // BatchNormalization in training mode computes them).
    if (kind == "buffer_mutation" && options.training)
      continue;
    if (kind != "user_output")
      return error(llvm::formatv("output #{0} is a {1} output: the module "
                                 "changes its buffers in forward (put it in "
                                 "eval mode to import it for inference)",
                                 i, kind)
                       .str());
    const llvm::json::Object *ref =
        output->get("value") ? output->get("value")->getAsObject() : nullptr;
    std::optional<StringRef> name =
        ref ? ref->getString("node") : std::nullopt;
    auto it = name ? values.find(*name) : values.end();
    if (it == values.end() || it->second.kind != GraphValue::Kind::Tensor)
      return error(llvm::formatv("output #{0} is not a tensor", i).str());
    results.push_back(it->second.value);
  }
  builder.create<func::ReturnOp>(graphLoc, results);
  func.setFunctionType(builder.getFunctionType(
      func.getArgumentTypes(), ValueRange(results).getTypes()));
  for (unsigned i = 0; i < results.size(); ++i)
    func.setResultAttr(
        i, "amp.name",
        builder.getStringAttr(results.size() == 1
                                  ? std::string("output")
                                  : llvm::formatv("output_{0}", i).str()));
  return success();
}

OwningOpRef<ModuleOp>
mlir::amp::importTorchGraph(StringRef graphJson, ArrayRef<TorchWeight> weights,
                            MLIRContext *context,
                            const TorchImportOptions &options) {
  return TorchImporter(context, weights, options).import(graphJson);
}

std::vector<AtenOpInfo> mlir::amp::getSupportedAtenOps() {
  std::vector<AtenOpInfo> result;
  for (const auto &entry : getRuleMap())
    result.push_back({entry.second->target, entry.second->ampOps});
  llvm::sort(result, [](const AtenOpInfo &a, const AtenOpInfo &b) {
    return a.target < b.target;
  });
  return result;
}
