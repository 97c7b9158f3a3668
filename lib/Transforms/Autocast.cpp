//===- Autocast.cpp - policy-driven mixed-precision rewrite ---------------===//
//
// amp-autocast in four stages:
//   1. collect the ops that compute on fp32 data and link them producer ->
//      consumer through their precision operands (PrecisionOpInterface);
//   2. classify each op with the policy (node rules, op lists, fp32
//      accumulation requirement, constant range);
//   3. propagate: deny forward, allow between allow ops, allow through
//      clear ops, infer follows low-precision inputs;
//   4. rewrite types, convert constants at compile time, insert one cast per
//      (value, type) at precision boundaries; then report.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/AutocastPolicy.h"
#include "amp/Runtime/FloatConversion.h"
#include "amp/Transforms/Passes.h"

#include "OpCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <memory>
#include <optional>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPAUTOCAST
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using amp_runtime::ConversionStats;
using amp_runtime::convertFloats;
using amp_runtime::LowFloatKind;
using namespace mlir::amp;

/// The reason recorded for ops autocast leaves alone.
constexpr llvm::StringLiteral kNoFp32DataReason =
    "no fp32 data (integer, bool or fixed-type operands only)";

namespace {

/// One op that computes on fp32 data.
struct Node {
  Operation *op;
  PrecisionOpInterface precision;
  std::string name;
  PrecisionClass cls = PrecisionClass::Unlisted;
  /// The class the policy gave (cls becomes Unlisted for an op pinned to
  /// fp32 by a constant that does not fit).
  PrecisionClass policyClass = PrecisionClass::Unlisted;
  std::string reason;
  bool allow = false;
  bool deny = false;
  SmallVector<unsigned, 4> preds;
  SmallVector<unsigned, 4> succs;
};

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

RankedTensorType withElementType(Type type, Type elementType) {
  return cast<RankedTensorType>(type).clone(elementType);
}

/// The op defining `value` if it is an fp32 tensor constant autocast can
/// convert at compile time: an amp.constant, or a ConstantLike op of
/// another dialect (arith.constant, tosa.const) holding dense or
/// dense_resource fp32 data. Its value goes to `*attr`.
Operation *getF32Constant(Value value, ElementsAttr *attr = nullptr) {
  Operation *def = value.getDefiningOp();
  if (!def || !isF32Tensor(value.getType()))
    return nullptr;
  ElementsAttr elements;
  if (auto constant = dyn_cast<ConstantOp>(def))
    elements = constant.getValue();
  else if (!def->hasTrait<OpTrait::ConstantLike>() ||
           !matchPattern(value, m_Constant(&elements)))
    return nullptr;
  if (!isa<DenseElementsAttr, DenseF32ResourceElementsAttr>(elements))
    return nullptr;
  if (attr)
    *attr = elements;
  return def;
}

/// "input from DequantizeLinear 'name'" or "output to QuantizeLinear
/// 'name'" when `op` is next to a quantized region's boundary.
std::optional<std::string> findQuantizationBoundary(Operation *op) {
  auto describe = [](Operation *other,
                     bool isOutput) -> std::optional<std::string> {
    auto precision = dyn_cast_or_null<PrecisionOpInterface>(other);
    if (!precision || !AutocastPolicy::isQuantizationBoundary(
                          precision.getOnnxOpType(), isOutput))
      return std::nullopt;
    return (isOutput ? "output to " : "input from ") +
           precision.getOnnxOpType().str() + " '" +
           getNodeName(other->getLoc()).str() + "'";
  };
  for (Value operand : op->getOperands())
    if (auto found = describe(operand.getDefiningOp(), false))
      return found;
  for (Operation *user : op->getUsers())
    if (auto found = describe(user, true))
      return found;
  return std::nullopt;
}

/// Constants of at most this many elements are scalar-like (an epsilon, a
/// scale) for the constant range rule.
constexpr int64_t kScalarLikeConstantElements = 16;

/// Whether `value` is a single number (rank 0, or every size 1): a scale
/// or an epsilon computed at run time. Such an operand does not decide an
/// op's precision (see propagate()). Per-row statistics (a LayerNorm
/// variance of shape [B, S, 1]) are not: casting them would add a rounding
/// inside a normalisation.
bool isScalarOperand(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1;
}

/// Name used for a value in cast names and reports.
std::string valueName(Value value) {
  if (Operation *def = value.getDefiningOp()) {
    std::string name = isa<ConstantOp>(def)
                           ? getConstantName(cast<ConstantOp>(def))
                           : getNodeName(def->getLoc()).str();
    if (name.empty())
      name = def->getName().stripDialect().str();
    if (def->getNumResults() > 1)
      name += ":" + std::to_string(cast<OpResult>(value).getResultNumber());
    return name;
  }
  auto arg = cast<BlockArgument>(value);
  if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
    if (auto name =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "amp.name"))
      return name.getValue().str();
  return getNodeName(arg.getLoc()).str();
}

/// An fp32 constant converted to the low-precision type (once, whether or
/// not its consumers end up in low precision: the statistics decide that).
struct ConstantConversion {
  ConversionStats stats;
  /// The converted data of a dense_resource weight, moved into the
  /// resource manager when first used.
  std::optional<AsmResourceBlob> blob;
  /// The converted bits of a small dense constant.
  SmallVector<uint16_t> bits;
};

class AutocastPass : public amp::impl::AmpAutocastBase<AutocastPass> {
public:
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult buildPolicy(AutocastPolicy &policy);
  void collectNodes();
  void classifyNodes(const AutocastPolicy &policy);
  void propagate();
  void rewrite();
  Value getCast(Value value, Type elementType, Operation *consumer);
  Value getConvertedConstant(Operation *constant);
  ConstantConversion &convertConstant(Operation *constant);
  void writeOutputs();

  Type lowType;
  LowFloatKind lowKind = LowFloatKind::F16;
  std::vector<Node> nodes;
  DenseMap<Operation *, unsigned> nodeIndex;
  SmallVector<Operation *> allOps;
  DenseSet<Value> lowValues;
  DenseMap<std::pair<Value, Type>, Value> casts;
  DenseMap<Operation *, Value> convertedConstants;
  DenseMap<Operation *, std::shared_ptr<ConstantConversion>> conversions;
  /// Ops a precision model rebuilt, erased once the report is written.
  SmallVector<Operation *> replacedOps;
  int64_t numCasts = 0;
  int64_t numConvertedConstants = 0;
  int64_t numClampedConstants = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// Policy and classification
//===----------------------------------------------------------------------===//

/// The policy the options describe: the default lists, the opt level, the
/// policy file, the op lists, the node rules (lowest to highest).
static llvm::Expected<AutocastPolicy>
buildPolicy(unsigned optLevel, StringRef policyFile,
            ArrayRef<std::pair<PrecisionClass, ArrayRef<std::string>>> lists,
            ArrayRef<std::string> nodeRules) {
  AutocastPolicy policy = AutocastPolicy::getDefault();
  policy.applyOptLevel(optLevel);
  if (!policyFile.empty())
    if (llvm::Error err = policy.loadPresetOrFile(policyFile))
      return std::move(err);
  for (auto [cls, names] : lists) {
    std::string option = cls == PrecisionClass::Unlisted
                             ? "unlist"
                             : stringifyPrecisionClass(cls).str();
    for (const std::string &name : names)
      if (llvm::Error err = policy.setClass(name, cls, option + " option"))
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "option '" + option + "': " + llvm::toString(std::move(err)));
  }
  for (const std::string &rule : nodeRules)
    if (llvm::Error err = policy.addNodeRuleSpec(rule, "node-rules option"))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "option 'node-rules': " +
                                         llvm::toString(std::move(err)));
  return policy;
}

std::optional<amp_runtime::LowFloatKind>
mlir::amp::parseAutocastType(StringRef spelling) {
  if (spelling == "f16" || spelling == "fp16" || spelling == "float16")
    return amp_runtime::LowFloatKind::F16;
  if (spelling == "bf16" || spelling == "bfloat16")
    return amp_runtime::LowFloatKind::BF16;
  return std::nullopt;
}

static llvm::Error checkTypeAndLevel(StringRef type, unsigned optLevel) {
  if (!parseAutocastType(type))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown type '" + type +
                                       "' (expected f16 or bf16)");
  if (optLevel > 3)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "opt-level " + std::to_string(optLevel) +
                                       " does not exist (expected 0 to 3)");
  return llvm::Error::success();
}

llvm::Error mlir::amp::checkAutocastOptions(const AmpAutocastOptions &options) {
  if (llvm::Error err = checkTypeAndLevel(options.type, options.optLevel))
    return err;
  std::pair<PrecisionClass, ArrayRef<std::string>> lists[] = {
      {PrecisionClass::Allow, options.allowOps},
      {PrecisionClass::Deny, options.denyOps},
      {PrecisionClass::Infer, options.inferOps},
      {PrecisionClass::Clear, options.clearOps},
      {PrecisionClass::Promote, options.promoteOps},
      {PrecisionClass::Unlisted, options.unlistOps}};
  llvm::Expected<AutocastPolicy> policy = buildPolicy(
      options.optLevel, options.policyFile, lists, options.nodeRules);
  if (!policy)
    return policy.takeError();
  return llvm::Error::success();
}

LogicalResult AutocastPass::buildPolicy(AutocastPolicy &policy) {
  std::vector<std::string> names[6] = {{allowOps.begin(), allowOps.end()},
                                       {denyOps.begin(), denyOps.end()},
                                       {inferOps.begin(), inferOps.end()},
                                       {clearOps.begin(), clearOps.end()},
                                       {promoteOps.begin(), promoteOps.end()},
                                       {unlistOps.begin(), unlistOps.end()}};
  std::pair<PrecisionClass, ArrayRef<std::string>> lists[] = {
      {PrecisionClass::Allow, names[0]},
      {PrecisionClass::Deny, names[1]},
      {PrecisionClass::Infer, names[2]},
      {PrecisionClass::Clear, names[3]},
      {PrecisionClass::Promote, names[4]},
      {PrecisionClass::Unlisted, names[5]}};
  std::vector<std::string> rules(nodeRules.begin(), nodeRules.end());
  llvm::Expected<AutocastPolicy> built =
      ::buildPolicy(optLevel, policyFile, lists, rules);
  if (!built)
    return getOperation().emitError()
           << "amp-autocast: " << llvm::toString(built.takeError());
  policy = std::move(*built);
  return success();
}

void AutocastPass::collectNodes() {
  getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
    allOps.push_back(op);
    auto precision = dyn_cast<PrecisionOpInterface>(op);
    if (!precision || isa<ConstantOp>(op))
      return WalkResult::advance();
    // A payload (linalg's scalar body) belongs to its op: decided with it,
    // never on its own. Other regions (If, Loop) are left alone.
    bool payload = op->getNumRegions() != 0 && precision.hasPayloadRegions();
    WalkResult next = payload ? WalkResult::skip() : WalkResult::advance();
    if (op->getNumRegions() != 0 && !payload)
      return next;
    bool hasF32 = false;
    for (OpOperand &operand : op->getOpOperands())
      hasF32 |= precision.isPrecisionOperand(operand.getOperandNumber()) &&
                isF32Tensor(operand.get().getType());
    for (OpResult result : op->getResults())
      hasF32 |= precision.isPrecisionResult(result.getResultNumber()) &&
                isF32Tensor(result.getType());
    if (!hasF32)
      return next;
    nodeIndex[op] = nodes.size();
    Node node;
    node.op = op;
    node.precision = precision;
    node.name = getNodeName(op->getLoc()).str();
    if (node.name.empty())
      node.name = (precision.getOnnxOpType() + "#" + Twine(nodes.size())).str();
    nodes.push_back(std::move(node));
    return next;
  });
  for (unsigned i = 0; i < nodes.size(); ++i) {
    Node &node = nodes[i];
    for (OpOperand &operand : node.op->getOpOperands()) {
      if (!node.precision.isPrecisionOperand(operand.getOperandNumber()) ||
          !isF32Tensor(operand.get().getType()))
        continue;
      auto it = nodeIndex.find(operand.get().getDefiningOp());
      if (it == nodeIndex.end())
        continue;
      if (!llvm::is_contained(node.preds, it->second)) {
        node.preds.push_back(it->second);
        nodes[it->second].succs.push_back(i);
      }
    }
  }
}

ConstantConversion &AutocastPass::convertConstant(Operation *constant) {
  std::shared_ptr<ConstantConversion> &slot = conversions[constant];
  if (slot)
    return *slot;
  slot = std::make_shared<ConstantConversion>();
  ElementsAttr value;
  getF32Constant(constant->getResult(0), &value);
  std::vector<float> denseValues;
  ArrayRef<float> input;
  MutableArrayRef<uint16_t> output;
  if (auto resource = dyn_cast<DenseF32ResourceElementsAttr>(value)) {
    // Read the weight in place and convert straight into the new blob.
    if (std::optional<ArrayRef<float>> data = resource.tryGetAsArrayRef())
      input = *data;
    slot->blob = HeapAsmResourceBlob::allocate(input.size() * sizeof(uint16_t),
                                               alignof(uint64_t));
    output = MutableArrayRef<uint16_t>(
        reinterpret_cast<uint16_t *>(slot->blob->getMutableData().data()),
        input.size());
  } else {
    for (float element : cast<DenseElementsAttr>(value).getValues<float>())
      denseValues.push_back(element);
    input = denseValues;
    slot->bits.resize(input.size());
    output = slot->bits;
  }
  slot->stats = convertFloats(input.data(), output.data(), input.size(),
                              lowKind, clampConstants);
  return *slot;
}

/// Whether converting a constant with these statistics loses it: any value
/// overflows; or, for a scalar-like constant of at most 16 elements (an
/// epsilon, a scale), any non-zero value flushes to zero; or, for a weight,
/// most (at least half) of its non-zero values flush to zero. A weight that
/// loses only its tiniest values keeps its op in low precision: those values
/// are below the resolution of the fp16 result anyway (torchvision's ViT
/// initialises biases with std 1e-6, of which a few percent flush).
static bool losesValues(const ConversionStats &stats, int64_t numElements,
                        bool clamp) {
  if (stats.overflowed && !clamp)
    return true;
  if (!stats.flushedToZero)
    return false;
  if (numElements <= kScalarLikeConstantElements)
    return true;
  return stats.flushedToZero * 2 >= stats.nonZero;
}

void AutocastPass::classifyNodes(const AutocastPolicy &policy) {
  for (Node &node : nodes) {
    StringRef onnxType = node.precision.getOnnxOpType();
    AutocastPolicy::Decision decision = policy.classify(onnxType, node.name);
    node.cls = node.policyClass = decision.cls;
    node.reason = std::move(decision.reason);
    bool wantsLow = node.cls == PrecisionClass::Allow ||
                    node.cls == PrecisionClass::Infer ||
                    node.cls == PrecisionClass::Clear ||
                    node.cls == PrecisionClass::Promote;
    if (wantsLow && policy.needsF32Accumulation(onnxType) &&
        !(fp32Accumulate && node.precision.supportsF32Accumulation())) {
      node.cls = PrecisionClass::Deny;
      node.reason = fp32Accumulate
                        ? "needs fp32 accumulation, which this op cannot do"
                        : "needs fp32 accumulation, which "
                          "fp32-accumulate=false turns off";
      continue;
    }
    if (node.cls == PrecisionClass::Deny ||
        node.cls == PrecisionClass::Unlisted)
      continue;
    // Quantized regions (QDQ models, as onnxruntime's quantizer writes
    // them): an op reading a DequantizeLinear result or feeding a
    // QuantizeLinear stands for an integer kernel that the consumer fuses
    // from exactly that pattern; a cast in between would break it.
    if (std::optional<std::string> boundary =
            findQuantizationBoundary(node.op)) {
      node.cls = PrecisionClass::Unlisted;
      node.reason = "quantized region: " + *boundary;
      continue;
    }
    // A constant operand that does not fit the low-precision type keeps the
    // op in fp32 (it does not spread: the op's other inputs are fine).
    for (OpOperand &operand : node.op->getOpOperands()) {
      Operation *constant = getF32Constant(operand.get());
      if (!constant ||
          !node.precision.isPrecisionOperand(operand.getOperandNumber()))
        continue;
      const ConversionStats &stats = convertConstant(constant).stats;
      int64_t numElements = getStaticElementCount(operand.get().getType());
      if (!losesValues(stats, numElements, clampConstants))
        continue;
      std::string constantName = valueName(operand.get());
      node.cls = PrecisionClass::Unlisted;
      node.reason = llvm::formatv(
          "constant '{0}' does not fit {1}: {2} of {3} values overflow, {4} "
          "flush to zero (max |x| = {5})",
          constantName, lowType, stats.overflowed, numElements,
          stats.flushedToZero, stats.maxAbs);
      break;
    }
  }
}

//===----------------------------------------------------------------------===//
// Propagation
//===----------------------------------------------------------------------===//

void AutocastPass::propagate() {
  const unsigned n = nodes.size();
  for (Node &node : nodes) {
    node.allow = node.cls == PrecisionClass::Allow;
    node.deny = node.cls == PrecisionClass::Deny;
  }
  auto isInferOrClear = [&](unsigned i) {
    return nodes[i].cls == PrecisionClass::Infer ||
           nodes[i].cls == PrecisionClass::Clear;
  };

  // A scalar fp32 operand (one element: an attention scale computed at
  // run time, an epsilon) of an op that also has a larger float operand
  // does not decide the op's precision: it is
  // cast to the low type instead of pulling the op into fp32 (a Mul by
  // Reciprocal(Sqrt(d)) and the Softmax after it stay low). smallFrom[j]
  // names the denied producer whose small result node j ignored.
  std::vector<std::string> smallFrom(n);
  auto isSmallEdge = [&](unsigned from, unsigned to) {
    bool feeds = false, large = false;
    for (OpOperand &operand : nodes[to].op->getOpOperands()) {
      Value value = operand.get();
      if (!nodes[to].precision.isPrecisionOperand(operand.getOperandNumber()) ||
          !isa<FloatType>(getElementTypeOrSelf(value.getType())))
        continue;
      bool small = isScalarOperand(value);
      if (value.getDefiningOp() == nodes[from].op) {
        if (!small)
          return false;
        feeds = true;
      } else if (!small) {
        large = true;
      }
    }
    return feeds && large;
  };

  // Breadth-first search from the nodes where `isSeed` holds, forwards
  // and/or backwards, into nodes `canEnter` accepts. Returns, per node, the
  // seed it was reached from (-1: not reached; a seed maps to itself).
  auto spread = [&](auto isSeed, bool forward, bool backward, auto canEnter,
                    auto canCross) {
    std::vector<int> source(n, -1);
    std::deque<unsigned> work;
    for (unsigned i = 0; i < n; ++i)
      if (isSeed(i)) {
        source[i] = i;
        work.push_back(i);
      }
    auto visit = [&](unsigned from, unsigned to) {
      if (source[to] >= 0 || !canEnter(to) || !canCross(from, to))
        return;
      source[to] = source[from];
      work.push_back(to);
    };
    while (!work.empty()) {
      unsigned i = work.front();
      work.pop_front();
      if (forward)
        for (unsigned j : nodes[i].succs)
          visit(i, j);
      if (backward)
        for (unsigned j : nodes[i].preds)
          visit(i, j);
    }
    return source;
  };
  auto isAllow = [&](unsigned i) { return nodes[i].allow; };
  auto anyEdge = [](unsigned, unsigned) { return true; };

  // 1. Deny spreads forward through infer and clear ops. Every infer op
  //    reached is denied; a clear op reached is denied only if it leads on
  //    to a denied op or a reached infer op (otherwise it can still go low
  //    next to an allow op).
  {
    std::vector<int> denySource =
        spread([&](unsigned i) { return nodes[i].deny; }, /*forward=*/true,
               /*backward=*/false, isInferOrClear,
               [&](unsigned from, unsigned to) {
                 if (!isSmallEdge(from, to))
                   return true;
                 smallFrom[to] = nodes[from].name;
                 return false;
               });
    // Node indices follow a pre-order walk, a topological order: visit
    // consumers before producers.
    for (unsigned i = n; i-- > 0;) {
      Node &node = nodes[i];
      if (node.deny || denySource[i] < 0)
        continue;
      bool deny = node.cls == PrecisionClass::Infer;
      for (unsigned s : node.succs)
        deny |= nodes[s].deny;
      if (!deny)
        continue;
      node.deny = true;
      node.reason = "fp32 spread from '" + nodes[denySource[i]].name + "' (" +
                    stringifyPrecisionClass(node.cls).str() + " op)";
    }
  }

  // 2. Infer and clear ops on a path between two allow ops become allow.
  {
    auto canEnter = [&](unsigned j) {
      return isInferOrClear(j) && !nodes[j].deny;
    };
    std::vector<int> fromAllow =
        spread(isAllow, true, false, canEnter, anyEdge);
    std::vector<int> toAllow = spread(isAllow, false, true, canEnter, anyEdge);
    for (unsigned i = 0; i < n; ++i) {
      Node &node = nodes[i];
      if (node.allow || node.deny || fromAllow[i] < 0 || toAllow[i] < 0)
        continue;
      node.allow = true;
      node.reason = "between allow ops '" + nodes[fromAllow[i]].name +
                    "' and '" + nodes[toAllow[i]].name + "'";
    }
  }

  // 3. Allow spreads through clear ops, in both directions.
  {
    std::vector<int> source = spread(
        isAllow, true, true,
        [&](unsigned j) {
          return nodes[j].cls == PrecisionClass::Clear && !nodes[j].deny;
        },
        anyEdge);
    for (unsigned i = 0; i < n; ++i) {
      Node &node = nodes[i];
      if (node.allow || source[i] < 0)
        continue;
      node.allow = true;
      node.reason =
          "clear op connected to allow op '" + nodes[source[i]].name + "'";
    }
  }

  // 3b. A subgraph computed from weights only (every float input is a
  //     constant or the output of such an op) runs in the precision of the
  //     allow op it feeds: GPT-2's token-embedding Gather, position Add and
  //     first LayerNorm go low with the MatMul after them, and the embedding
  //     table is stored in fp16.
  {
    std::vector<bool> fromWeights(n, false);
    for (unsigned i = 0; i < n; ++i) {
      Node &node = nodes[i];
      if (node.allow || node.deny || !isInferOrClear(i))
        continue;
      bool any = false, all = true;
      for (OpOperand &operand : node.op->getOpOperands()) {
        Value value = operand.get();
        if (!node.precision.isPrecisionOperand(operand.getOperandNumber()) ||
            !isF32Tensor(value.getType()))
          continue;
        any = true;
        if (getF32Constant(value))
          continue;
        auto it = nodeIndex.find(value.getDefiningOp());
        all &= it != nodeIndex.end() && fromWeights[it->second];
      }
      fromWeights[i] = any && all;
    }
    std::vector<int> source = spread(
        isAllow, /*forward=*/false,
        /*backward=*/true,
        [&](unsigned j) { return fromWeights[j] && !nodes[j].allow; }, anyEdge);
    for (unsigned i = 0; i < n; ++i) {
      Node &node = nodes[i];
      if (node.allow || source[i] < 0)
        continue;
      node.allow = true;
      node.reason = "computed from weights only, feeds allow op '" +
                    nodes[source[i]].name + "'";
    }
  }

  // 4. In one pass in topological order (node indices follow a pre-order
  //    walk), so that each op sees the decisions of its producers:
  //    - an infer or clear op with a low-precision input and no input from a
  //      denied op follows its low-precision inputs (TF's rule in bf16 mode;
  //      amp applies it to fp16 too). Its other fp32 inputs (graph inputs,
  //      outputs of unlisted ops) are cast; constants are converted.
  //    - a promote op runs in the widest type of its float inputs, as
  //      PyTorch's type promotion does for the ops on none of autocast's
  //      lists: low precision only when every input is low. Graph inputs,
  //      weights and the results of fp32 ops are fp32. Rank-0 inputs (Python
  //      numbers in a torch graph, scalar constants) do not promote the
  //      others, as 0-d tensors do not in PyTorch.
  auto producer = [&](Value value) -> Node * {
    auto it = nodeIndex.find(value.getDefiningOp());
    return it == nodeIndex.end() ? nullptr : &nodes[it->second];
  };
  auto producerIsLow = [&](Value value) {
    if (lowValues.contains(value) ||
        getElementTypeOrSelf(value.getType()) == lowType)
      return true;
    Node *from = producer(value);
    return from && from->allow;
  };
  for (unsigned i = 0; i < n; ++i) {
    Node &node = nodes[i];
    if (node.allow || node.deny)
      continue;
    if (node.cls == PrecisionClass::Promote) {
      SmallVector<Value> inputs, ranked;
      for (OpOperand &operand : node.op->getOpOperands()) {
        Value value = operand.get();
        if (!node.precision.isPrecisionOperand(operand.getOperandNumber()) ||
            !isa<FloatType>(getElementTypeOrSelf(value.getType())))
          continue;
        inputs.push_back(value);
        auto shaped = dyn_cast<ShapedType>(value.getType());
        if (!shaped || !shaped.hasRank() || shaped.getRank() != 0)
          ranked.push_back(value);
      }
      if (!ranked.empty())
        inputs = std::move(ranked);
      std::optional<Value> low, wide;
      for (Value value : inputs) {
        if (producerIsLow(value))
          low = value;
        else if (!wide)
          wide = value;
      }
      if (!low || wide) {
        std::string name = wide ? valueName(*wide) : "";
        if (wide && name.empty())
          name = "argument " +
                 std::to_string(cast<BlockArgument>(*wide).getArgNumber());
        node.reason = wide ? "promote: fp32 input '" + name + "'"
                           : "promote: no low-precision input";
        continue;
      }
      std::string from = valueName(*low);
      node.allow = true;
      node.reason =
          "promote: every float input is low precision (from '" + from + "')";
      continue;
    }
    if (!isInferOrClear(i))
      continue;
    std::string from;
    bool anyLow = false, anyDenied = false;
    for (OpOperand &operand : node.op->getOpOperands()) {
      Value value = operand.get();
      if (!node.precision.isPrecisionOperand(operand.getOperandNumber()))
        continue;
      if (lowValues.contains(value)) {
        from = valueName(value);
        anyLow = true;
        continue;
      }
      Node *input = producer(value);
      if (!input)
        continue;
      if (input->allow) {
        from = input->name;
        anyLow = true;
      } else if (input->deny && !isSmallEdge(nodeIndex.lookup(input->op), i)) {
        anyDenied = true;
      }
    }
    if (!anyLow || anyDenied)
      continue;
    node.allow = true;
    node.reason = "follows low-precision input from '" + from + "'";
  }

  // The report says where a scalar fp32 operand was cast rather than
  // followed.
  std::string lowName;
  llvm::raw_string_ostream(lowName) << lowType;
  for (unsigned i = 0; i < n; ++i) {
    Node &node = nodes[i];
    if (node.allow && !smallFrom[i].empty())
      node.reason += "; scalar fp32 operand from '" + smallFrom[i] +
                     "' cast to " + lowName;
  }

  for (Node &node : nodes) {
    if (node.allow || node.deny)
      continue;
    if (node.cls == PrecisionClass::Infer || node.cls == PrecisionClass::Clear)
      node.reason = "fp32 inputs: " + node.reason;
  }
}

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

Value AutocastPass::getCast(Value value, Type elementType,
                            Operation *consumer) {
  auto key = std::make_pair(value, elementType);
  auto it = casts.find(key);
  if (it != casts.end())
    return it->second;
  OpBuilder builder(value.getContext());
  if (auto arg = dyn_cast<BlockArgument>(value))
    builder.setInsertionPointToStart(arg.getOwner());
  else
    builder.setInsertionPointAfter(value.getDefiningOp());
  std::string typeName;
  llvm::raw_string_ostream(typeName) << elementType;
  Location loc = NameLoc::get(
      builder.getStringAttr(valueName(value) + "/amp_cast_" + typeName),
      value.getLoc());
  // The conversion op of the consumer's dialect, else of the producer's
  // (a value returned from a linalg program is extended by arith.extf),
  // else amp.cast.
  Value cast;
  for (Operation *op : {consumer, value.getDefiningOp()})
    if (auto precision = dyn_cast_or_null<PrecisionOpInterface>(op))
      if ((cast = precision.buildCast(builder, loc, value, elementType)))
        break;
  if (!cast)
    cast =
        builder
            .create<CastOp>(
                loc, TypeRange{withElementType(value.getType(), elementType)},
                ValueRange{value},
                ArrayRef<NamedAttribute>{
                    builder.getNamedAttr("to", TypeAttr::get(elementType))})
            .getResult();
  ++numCasts;
  return casts[key] = cast;
}

Value AutocastPass::getConvertedConstant(Operation *constant) {
  auto it = convertedConstants.find(constant);
  if (it != convertedConstants.end())
    return it->second;
  OpBuilder builder(constant);
  builder.setInsertionPointAfter(constant);
  Value original = constant->getResult(0);
  auto type = withElementType(original.getType(), lowType);
  ConstantConversion &conversion = convertConstant(constant);
  const ConversionStats &stats = conversion.stats;
  if (stats.overflowed) {
    ++numClampedConstants;
    constant->emitWarning() << "amp-autocast: clamped " << stats.overflowed
                            << " values of constant '" << valueName(original)
                            << "' to the largest finite " << lowType
                            << " (max |x| = " << stats.maxAbs << ")";
  }
  ElementsAttr converted;
  if (conversion.blob) {
    ElementsAttr value;
    getF32Constant(original, &value);
    auto resource = cast<DenseResourceElementsAttr>(value);
    auto &manager = DenseResourceElementsHandle::getManagerInterface(
        constant->getContext());
    std::string typeName;
    llvm::raw_string_ostream(typeName) << lowType;
    DenseResourceElementsHandle handle = manager.insert(
        (resource.getRawHandle().getKey() + "_" + typeName).str(),
        std::move(*conversion.blob));
    conversion.blob.reset();
    converted = DenseResourceElementsAttr::get(type, handle);
  } else {
    const llvm::fltSemantics &semantics = lowKind == LowFloatKind::F16
                                              ? llvm::APFloat::IEEEhalf()
                                              : llvm::APFloat::BFloat();
    SmallVector<APFloat> values;
    for (uint16_t element : conversion.bits)
      values.emplace_back(semantics, APInt(16, element));
    converted = DenseElementsAttr::get(type, values);
  }
  // The converted constant keeps the original's location: the weight's name
  // lives on in its resource key (`<name>_f16`), which reports and the ONNX
  // writer use; a new NameLoc per weight is measurable on 100k-op graphs.
  Location loc = constant->getLoc();
  Value result;
  if (isa<ConstantOp>(constant)) {
    result = builder.create<ConstantOp>(loc, type, converted).getResult();
  } else if (Operation *materialized =
                 constant->getDialect()->materializeConstant(builder, converted,
                                                             type, loc)) {
    // arith.constant, tosa.const, ...: the constant's own dialect.
    result = materialized->getResult(0);
  } else {
    return {};
  }
  ++numConvertedConstants;
  return convertedConstants[constant] = result;
}

void AutocastPass::rewrite() {
  Type f32 = Float32Type::get(&getContext());
  bool accumulate = fp32Accumulate && optLevel < 3;
  for (Operation *&op : allOps) {
    auto it = nodeIndex.find(op);
    Node *node = it == nodeIndex.end() ? nullptr : &nodes[it->second];
    bool isLow = node && node->allow;
    auto precision = dyn_cast<PrecisionOpInterface>(op);
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      unsigned index = operand.getOperandNumber();
      if (isLow && precision.isPrecisionOperand(index)) {
        if (!isF32Tensor(value.getType()))
          continue;
        Value converted;
        if (Operation *constant = getF32Constant(value))
          converted = getConvertedConstant(constant);
        operand.set(converted ? converted : getCast(value, lowType, op));
        continue;
      }
      if (!lowValues.contains(value))
        continue;
      if (precision && precision.acceptsAnyFloatOperand(index))
        continue;
      if (isa<func::ReturnOp>(op) && !keepIOTypes)
        continue;
      operand.set(getCast(value, f32, op));
    }
    if (!isLow)
      continue;
    for (OpResult result : op->getResults()) {
      if (!precision.isPrecisionResult(result.getResultNumber()) ||
          !isF32Tensor(result.getType()))
        continue;
      result.setType(withElementType(result.getType(), lowType));
      lowValues.insert(result);
    }
    if (accumulate && precision.supportsF32Accumulation() &&
        isa<AmpDialect>(op->getDialect()))
      op->setAttr(kAccumulateAttrName, TypeAttr::get(f32));
    // An op of another dialect makes itself consistent again (its payload)
    // or is rebuilt; the report and later ops see the new one.
    OpBuilder builder(op);
    SmallVector<Value> replacements =
        precision.finishInPrecision(builder, lowType);
    if (replacements.empty())
      continue;
    for (auto [result, replacement] :
         llvm::zip_equal(op->getResults(), replacements)) {
      if (lowValues.contains(result))
        lowValues.insert(replacement);
      result.replaceAllUsesWith(replacement);
    }
    unsigned index = it->second;
    replacedOps.push_back(op);
    op = node->op = replacements.front().getDefiningOp();
    node->precision = cast<PrecisionOpInterface>(op);
    nodeIndex[op] = index;
  }
  if (!keepIOTypes) {
    getOperation().walk([](func::FuncOp func) {
      Block &entry = func.getBody().front();
      auto returnOp = cast<func::ReturnOp>(entry.getParent()->back().back());
      func.setType(FunctionType::get(func.getContext(),
                                     entry.getArgumentTypes(),
                                     returnOp.getOperandTypes()));
    });
  }
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

void AutocastPass::writeOutputs() {
  if (!printSummary && reportFile.empty() && reportHtmlFile.empty() &&
      dotFile.empty() && !annotate)
    return;
  std::string lowName;
  llvm::raw_string_ostream(lowName) << lowType;
  // Per-op records: every amp op except structural ones.
  int64_t numLow = 0, numF32 = 0, numUnchanged = 0;
  double lowFlops = 0, totalFlops = 0, savedBytes = 0;
  auto flopsOf = [](Operation *op) {
    auto precision = dyn_cast<PrecisionOpInterface>(op);
    double flops = precision ? precision.estimateFlops() : -1.0;
    return flops >= 0 ? flops : estimateFlops(op);
  };
  for (const Node &node : nodes) {
    double flops = flopsOf(node.op);
    totalFlops += flops;
    if (node.allow) {
      ++numLow;
      lowFlops += flops;
      for (OpResult result : node.op->getResults())
        if (lowValues.contains(result))
          savedBytes += 2.0 * getStaticElementCount(result.getType());
    } else {
      ++numF32;
    }
  }
  auto isRecorded = [&](Operation *op) {
    return isa<PrecisionOpInterface>(op) && !isa<ConstantOp>(op);
  };
  for (Operation *op : allOps)
    if (isRecorded(op) && !nodeIndex.count(op))
      ++numUnchanged;
  if (annotate)
    for (Operation *op : allOps) {
      if (!isRecorded(op))
        continue;
      auto it = nodeIndex.find(op);
      op->setAttr(kReasonAttrName,
                  StringAttr::get(op->getContext(),
                                  it == nodeIndex.end()
                                      ? StringRef(kNoFp32DataReason)
                                      : StringRef(nodes[it->second].reason)));
    }
  double lowShare = totalFlops > 0 ? 100.0 * lowFlops / totalFlops : 0.0;

  if (printSummary)
    llvm::errs() << llvm::formatv(
        "amp-autocast: {0} ops: {1} {2}, {3} f32, {4} without fp32 data; {5} "
        "casts, {6} constants converted; {7:F1}% of FLOPs in {2}; {8:F1} KiB "
        "of activations saved\n",
        numLow + numF32 + numUnchanged, numLow, lowName, numF32, numUnchanged,
        numCasts, numConvertedConstants, lowShare, savedBytes / 1024.0);

  auto openFile = [&](StringRef path) -> std::unique_ptr<llvm::ToolOutputFile> {
    std::error_code error;
    auto file = std::make_unique<llvm::ToolOutputFile>(path, error,
                                                       llvm::sys::fs::OF_Text);
    if (error) {
      getOperation().emitError()
          << "amp-autocast: cannot write '" << path << "': " << error.message();
      return nullptr;
    }
    return file;
  };

  if (!reportFile.empty() || !reportHtmlFile.empty()) {
    // Each recorded op's index, for the records' `inputs` (the recorded
    // ops whose results it reads, through the casts autocast inserted).
    DenseMap<Operation *, int64_t> recordIndex;
    for (Operation *op : allOps)
      if (isRecorded(op))
        recordIndex.try_emplace(op, recordIndex.size());
    auto producerOf = [&](Value value) -> int64_t {
      while (Operation *def = value.getDefiningOp()) {
        auto it = recordIndex.find(def);
        if (it != recordIndex.end())
          return it->second;
        if (!isa<CastOp>(def))
          break;
        value = def->getOperand(0);
      }
      return -1;
    };
    std::string text;
    llvm::raw_string_ostream stream(text);
    {
      llvm::json::OStream json(stream, /*IndentSize=*/1);
      json.object([&] {
        json.attribute("type", lowName);
        json.attribute("opt_level", static_cast<int64_t>(optLevel));
        json.attributeObject("summary", [&] {
          json.attributeObject("ops", [&] {
            json.attribute(lowName, numLow);
            json.attribute("f32", numF32);
            json.attribute("without_fp32_data", numUnchanged);
          });
          json.attribute("casts", numCasts);
          json.attribute("constants_converted", numConvertedConstants);
          json.attribute("constants_clamped", numClampedConstants);
          json.attribute("flops_total", totalFlops);
          json.attribute("flops_low_precision_share", lowShare / 100.0);
          json.attribute("activation_bytes_saved", savedBytes);
        });
        json.attributeArray("ops", [&] {
          for (Operation *op : allOps) {
            if (!isRecorded(op))
              continue;
            auto it = nodeIndex.find(op);
            const Node *node =
                it == nodeIndex.end() ? nullptr : &nodes[it->second];
            auto inputs = [&] {
              SmallVector<int64_t> producers;
              for (Value operand : op->getOperands()) {
                int64_t producer = producerOf(operand);
                if (producer >= 0 && !llvm::is_contained(producers, producer))
                  producers.push_back(producer);
              }
              json.attributeArray("inputs", [&] {
                for (int64_t producer : producers)
                  json.value(producer);
              });
            };
            json.object([&] {
              json.attribute("node", getNodeName(op->getLoc()));
              json.attribute("op",
                             cast<PrecisionOpInterface>(op).getOnnxOpType());
              if (!node) {
                json.attribute("precision", "unchanged");
                json.attribute("reason", kNoFp32DataReason);
                inputs();
                return;
              }
              json.attribute("precision", node->allow ? lowName : "f32");
              json.attribute("class",
                             stringifyPrecisionClass(node->policyClass));
              json.attribute("reason", node->reason);
              if (op->hasAttr(kAccumulateAttrName))
                json.attribute("accumulate", "f32");
              json.attribute("flops", flopsOf(op));
              inputs();
            });
          }
        });
      });
    }
    stream << "\n";
    stream.flush();
    if (!reportFile.empty()) {
      auto file = openFile(reportFile);
      if (!file)
        return signalPassFailure();
      file->os() << text;
      file->keep();
    }
    if (!reportHtmlFile.empty()) {
      auto file = openFile(reportHtmlFile);
      if (!file)
        return signalPassFailure();
      file->os() << renderAutocastReportHtml(text);
      file->keep();
    }
  }

  if (!dotFile.empty()) {
    auto file = openFile(dotFile);
    if (!file)
      return signalPassFailure();
    raw_ostream &os = file->os();
    os << "digraph amp {\n  node [shape=box, style=filled, "
          "fontname=\"sans\"];\n"
       << "  // green: " << lowName
       << ", orange: f32, yellow: cast, grey: no fp32 data\n";
    DenseMap<Operation *, unsigned> ids;
    auto escape = [](StringRef text) {
      std::string escaped;
      for (char c : text) {
        if (c == '"' || c == '\\')
          escaped += '\\';
        escaped += c;
      }
      return escaped;
    };
    getOperation().walk([&](Operation *op) {
      if (!isRecorded(op))
        return;
      unsigned id = ids.size();
      ids[op] = id;
      StringRef color = "#dddddd";
      if (isa<CastOp>(op) && !nodeIndex.count(op))
        color = "#ffd92f";
      auto it = nodeIndex.find(op);
      if (it != nodeIndex.end())
        color = nodes[it->second].allow ? "#8fd18f" : "#f4a582";
      os << "  n" << id << " [label=\""
         << escape(cast<PrecisionOpInterface>(op).getOnnxOpType()) << "\\n"
         << escape(getNodeName(op->getLoc())) << "\", fillcolor=\"" << color
         << "\"];\n";
      for (Value operand : op->getOperands()) {
        auto def = ids.find(operand.getDefiningOp());
        if (def != ids.end())
          os << "  n" << def->second << " -> n" << id << ";\n";
      }
    });
    os << "}\n";
    file->keep();
  }
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

void AutocastPass::runOnOperation() {
  MLIRContext *context = &getContext();
  // A pass instance may run more than once: start from a clean state.
  nodes.clear();
  nodeIndex.clear();
  allOps.clear();
  lowValues.clear();
  casts.clear();
  convertedConstants.clear();
  conversions.clear();
  numCasts = numConvertedConstants = numClampedConstants = 0;
  if (llvm::Error err = checkTypeAndLevel(type, optLevel)) {
    getOperation().emitError()
        << "amp-autocast: " << llvm::toString(std::move(err));
    return signalPassFailure();
  }
  bool isBF16 = *parseAutocastType(type) == LowFloatKind::BF16;
  lowType = isBF16 ? Type(BFloat16Type::get(context))
                   : Type(Float16Type::get(context));
  lowKind = isBF16 ? LowFloatKind::BF16 : LowFloatKind::F16;
  AutocastPolicy policy = AutocastPolicy::getEmpty();
  if (failed(buildPolicy(policy)))
    return signalPassFailure();

  collectNodes();
  if (optLevel == 0) {
    for (Node &node : nodes)
      node.reason = "opt level 0: no change";
    return writeOutputs();
  }
  if (!keepIOTypes) {
    getOperation().walk([&](func::FuncOp func) {
      for (BlockArgument arg : func.getArguments())
        if (isF32Tensor(arg.getType())) {
          arg.setType(withElementType(arg.getType(), lowType));
          lowValues.insert(arg);
        }
    });
  }
  classifyNodes(policy);
  propagate();
  rewrite();
  writeOutputs();
  for (Operation *op : replacedOps)
    op->erase();
  replacedOps.clear();
}
