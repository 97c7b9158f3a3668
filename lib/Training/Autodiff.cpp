//===- Autodiff.cpp - reverse-mode differentiation of amp graphs ----------===//

#include "amp/Training/Autodiff.h"

#include "amp/Dialect/Amp/IR/AmpGradientInterface.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Training/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;

static bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

Activity::Activity(Block &block, Value target, ArrayRef<Value> wrt) {
  // Forward: values that vary with `wrt`.
  llvm::DenseSet<Value> varied(wrt.begin(), wrt.end());
  for (Operation &op : block.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return varied.contains(v); }))
      for (Value result : op.getResults())
        if (isFloatTensor(result))
          varied.insert(result);
  // Backward: values `target` depends on through differentiable operands.
  llvm::DenseSet<Value> useful{target};
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value v) { return useful.contains(v); }))
      continue;
    auto rule = dyn_cast<GradientOpInterface>(&op);
    for (auto [i, operand] : llvm::enumerate(op.getOperands()))
      if (isFloatTensor(operand) && (!rule || rule.isDifferentiableOperand(i)))
        useful.insert(operand);
  }
  for (Value v : varied)
    if (useful.contains(v))
      active.insert(v);
}

namespace {
/// Collects the ops a gradient rule creates.
struct CreatedOps : public OpBuilder::Listener {
  SmallVector<Operation *> ops;
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
};
} // namespace

FailureOr<SmallVector<Value>>
mlir::amp::training::buildGradients(Block &block, Value target, Value seed,
                                    ArrayRef<Value> wrt) {
  Activity activity(block, target, wrt);
  llvm::DenseMap<Value, Value> grads;
  CreatedOps created;
  OpBuilder builder(block.getTerminator());
  builder.setListener(&created);
  // The seed (an fp32 loss scale) in the target's type.
  auto targetType = cast<RankedTensorType>(target.getType());
  if (cast<RankedTensorType>(seed.getType()).getElementType() !=
      targetType.getElementType())
    seed = builder.create<CastOp>(
        seed.getLoc(), ValueRange{seed},
        ArrayRef<NamedAttribute>{builder.getNamedAttr(
            "to", TypeAttr::get(targetType.getElementType()))});
  grads[target] = seed;

  auto accumulate = [&](Value value, Value grad) -> LogicalResult {
    if (grad.getType() != value.getType()) {
      auto want = cast<RankedTensorType>(value.getType());
      auto got = cast<RankedTensorType>(grad.getType());
      if (want.getElementType() != got.getElementType() ||
          want.getRank() != got.getRank())
        return failure();
    }
    auto [it, inserted] = grads.try_emplace(value, grad);
    if (!inserted)
      it->second = builder.create<AddOp>(grad.getLoc(),
                                         ValueRange{it->second, grad},
                                         ArrayRef<NamedAttribute>{});
    return success();
  };

  SmallVector<Operation *> forward;
  for (Operation &op : block.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value result : op->getResults()) {
      Value g = activity.isActive(result) || result == target
                    ? grads.lookup(result)
                    : Value();
      resultGrads.push_back(g);
      any |= static_cast<bool>(g);
    }
    if (!any)
      continue;
    bool activeOperand = llvm::any_of(
        op->getOperands(), [&](Value v) { return activity.isActive(v); });
    if (!activeOperand)
      continue;
    auto rule = dyn_cast<GradientOpInterface>(op);
    if (!rule) {
      // Name what a user can find in a 2,000-node model: the node, its ONNX
      // op type and the inputs the loss depends on.
      InFlightDiagnostic diag = op->emitError();
      StringRef node = getNodeName(op->getLoc());
      if (!node.empty())
        diag << "node '" << node << "' ";
      auto precision = dyn_cast<PrecisionOpInterface>(op);
      if (precision && !precision.getOnnxOpType().empty())
        diag << "(" << precision.getOnnxOpType() << ")";
      else
        diag << "('" << op->getName() << "')";
      SmallVector<unsigned> inputs;
      for (auto [index, operand] : llvm::enumerate(op->getOperands()))
        if (activity.isActive(operand))
          inputs.push_back(index);
      diag << ": no gradient rule for input" << (inputs.size() > 1 ? "s " : " ");
      llvm::interleaveComma(inputs, diag);
      diag << ", but the loss depends on trainable values through "
           << (inputs.size() > 1 ? "them" : "it")
           << " (freeze what feeds it with --frozen, or file the missing rule)";
      return failure();
    }
    SmallVector<Value> operandGrads(op->getNumOperands());
    created.ops.clear();
    if (failed(rule.buildGradients(builder, resultGrads, operandGrads)))
      return failure();
    // Backward ops compute with fp32 accumulators where the forward op does.
    if (auto accumulate = op->getAttr(kAccumulateAttrName))
      for (Operation *newOp : created.ops)
        if (auto precision = dyn_cast<PrecisionOpInterface>(newOp))
          if (precision.supportsF32Accumulation())
            newOp->setAttr(kAccumulateAttrName, accumulate);
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      if (!operandGrads[i] || !activity.isActive(operand))
        continue;
      if (failed(accumulate(operand, operandGrads[i])))
        return op->emitOpError("gradient rule produced ")
                   << operandGrads[i].getType() << " for operand #" << i
                   << " of type " << operand.getType(),
               failure();
    }
  }

  SmallVector<Value> result;
  for (Value value : wrt) {
    if (Value g = grads.lookup(value)) {
      // Give the gradient its value's exact (static) type.
      auto type = cast<RankedTensorType>(value.getType());
      if (g.getType() != type && type.hasStaticShape()) {
        auto shapeType = RankedTensorType::get({type.getRank()},
                                               builder.getI64Type());
        Value shape = builder.create<ConstantOp>(
            value.getLoc(), DenseElementsAttr::get(shapeType, type.getShape()));
        g = builder.create<ReshapeOp>(value.getLoc(), TypeRange{type},
                                      ValueRange{g, shape},
                                      ArrayRef<NamedAttribute>{});
      }
      result.push_back(g);
      continue;
    }
    auto type = cast<RankedTensorType>(value.getType());
    if (!type.hasStaticShape())
      return emitError(value.getLoc(), "no gradient reaches a value of "
                                       "dynamic shape"),
             failure();
    result.push_back(builder.create<ConstantOp>(
        value.getLoc(),
        DenseElementsAttr::get(type, builder.getZeroAttr(type.getElementType()))));
  }
  return result;
}

//===----------------------------------------------------------------------===//
// amp-autodiff
//===----------------------------------------------------------------------===//

namespace mlir::amp::training {
#define GEN_PASS_DEF_AMPAUTODIFF
#include "amp/Training/Passes.h.inc"
} // namespace mlir::amp::training

namespace {
struct AmpAutodiffPass
    : public training::impl::AmpAutodiffBase<AmpAutodiffPass> {
  using AmpAutodiffBase::AmpAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func || func.getBody().empty()) {
      module.emitError("amp-autodiff: no function @") << function;
      return signalPassFailure();
    }
    std::string name = function + "_grad";
    if (module.lookupSymbol(name)) {
      func.emitError("amp-autodiff: @") << name << " already exists";
      return signalPassFailure();
    }
    auto type = func.getNumResults() > 0
                    ? dyn_cast<RankedTensorType>(func.getResultTypes()[0])
                    : RankedTensorType();
    if (!type || !isa<FloatType>(type.getElementType()) ||
        !type.hasStaticShape() || type.getNumElements() != 1) {
      func.emitError("amp-autodiff: the first result of @")
          << function << " must be a scalar float tensor to differentiate";
      return signalPassFailure();
    }
    auto grad = cast<func::FuncOp>(func->clone());
    grad.setSymName(name);
    module.insert(std::next(Block::iterator(func)), grad);
    Block &body = grad.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Value> wrt;
    SmallVector<unsigned> wrtIndex;
    for (BlockArgument arg : grad.getArguments())
      if (isFloatTensor(arg)) {
        wrt.push_back(arg);
        wrtIndex.push_back(arg.getArgNumber());
      }
    if (wrt.empty()) {
      grad.erase();
      func.emitError("amp-autodiff: @") << function
                                        << " has no float argument";
      return signalPassFailure();
    }
    Value target = ret.getOperand(0);
    OpBuilder builder(ret);
    auto seedType = RankedTensorType::get({}, builder.getF32Type());
    Value seed = builder.create<ConstantOp>(
        grad.getLoc(),
        DenseElementsAttr::get(seedType, builder.getF32FloatAttr(1.0f)));
    FailureOr<SmallVector<Value>> grads =
        buildGradients(body, target, seed, wrt);
    if (failed(grads)) {
      grad.erase();
      return signalPassFailure();
    }
    SmallVector<Value> results{target};
    results.append(grads->begin(), grads->end());
    builder.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    MLIRContext *context = module.getContext();
    grad.setType(FunctionType::get(context, grad.getArgumentTypes(),
                                   TypeRange(ValueRange(results))));
    SmallVector<DictionaryAttr> resultAttrs{func.getResultAttrDict(0)
                                                ? func.getResultAttrDict(0)
                                                : DictionaryAttr::get(context)};
    for (unsigned index : wrtIndex) {
      auto argName = func.getArgAttrOfType<StringAttr>(index, "amp.name");
      std::string gradName =
          (argName ? argName.getValue().str() : "arg" + std::to_string(index)) +
          ".grad";
      NamedAttrList attrs;
      attrs.set("amp.name", StringAttr::get(context, gradName));
      resultAttrs.push_back(attrs.getDictionary(context));
    }
    grad.setAllResultAttrs(resultAttrs);
  }
};
} // namespace
