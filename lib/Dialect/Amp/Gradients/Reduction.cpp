//===- Reduction.cpp - gradient rules of reductions, softmax and losses ---===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include "amp/Dialect/Amp/Semantics/Reduction.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {
namespace {
/// The axes a Reduce* op reduces (std::nullopt for a no-op reduction);
/// failure after reporting an error.
template <typename ReduceOpT>
FailureOr<std::optional<SmallVector<int64_t>>> reducedAxes(ReduceOpT op,
                                                           GradientBuilder &gb) {
  int64_t rank = tensorType(op.getData()).getRank();
  SmallVector<int64_t> given;
  if (!isa<NoneType>(op.getAxes().getType())) {
    auto constant = getConstantIntValues(op.getAxes());
    if (!constant) {
      gb.fail("needs constant axes");
      return failure();
    }
    given = *constant;
  }
  auto axes = semantics::resolveReduceAxes(
      rank, given, semantics::ReduceAttrs::get(op),
      [&](const Twine &message) { gb.fail(message); });
  if (failed(axes))
    gb.fail("invalid axes");
  return axes;
}

/// `v` (the reduced result or its gradient) with the reduced axes kept as
/// size 1, so that it broadcasts against the input.
template <typename ReduceOpT>
Value keepReduced(ReduceOpT op, GradientBuilder &gb, Value v,
                  ArrayRef<int64_t> axes) {
  if (!op.getKeepdims() && !axes.empty())
    return gb.create<UnsqueezeOp>({v, gb.i64s(axes)});
  return v;
}

/// The gradient of a ReduceSum/ReduceMean, broadcast back to the input.
template <typename ReduceOpT>
Value broadcastBack(ReduceOpT op, GradientBuilder &gb, Value g) {
  auto axes = reducedAxes(op, gb);
  if (failed(axes))
    return Value();
  if (!*axes)
    return g; // A no-op reduction.
  return gb.create<ExpandOp>(
      {keepReduced(op, gb, g, **axes), gb.shapeOf(op.getData())});
}

/// The rules of the other reductions: `rule(gKept, yKept, axes)` gives the
/// input's gradient from the incoming gradient and the result with the
/// reduced axes kept (both broadcast against the input), expanded to the
/// input's shape when it has the kept shape. A no-op reduction passes the
/// gradient through.
template <typename ReduceOpT, typename RuleT>
void reductionGradient(ReduceOpT op, GradientBuilder &gb, Value g, Grads og,
                       RuleT rule) {
  auto axes = reducedAxes(op, gb);
  if (failed(axes))
    return;
  if (!*axes) {
    og[0] = g;
    return;
  }
  Value grad = rule(keepReduced(op, gb, g, **axes),
                    keepReduced(op, gb, op.getReduced(), **axes), **axes);
  // A rule that reads only the kept values broadcasts back to the input.
  if (grad && grad.getType() != op.getData().getType())
    grad = gb.create<ExpandOp>({grad, gb.shapeOf(op.getData())});
  og[0] = grad;
}

/// ReduceMax/ReduceMin: the gradient goes to the elements equal to the
/// result, split evenly between ties (as PyTorch's amax/amin do).
template <typename ReduceOpT>
void selectionGradient(ReduceOpT op, GradientBuilder &gb, Value g, Grads og) {
  Value x = op.getData();
  reductionGradient(op, gb, g, og,
                    [&](Value gKept, Value yKept, ArrayRef<int64_t> axes) {
                      Value hit = gb.castLike(
                          gb.create<EqualOp>({x, yKept}), gKept);
                      Value count = gb.reduceSum(hit, axes, /*keepDims=*/true);
                      return gb.mul(gb.div(gKept, count), hit);
                    });
}

/// The element count of `x` over that of `y`, as `like`'s float type.
Value countRatio(GradientBuilder &gb, Value x, Value y, Value like) {
  return gb.castLike(
      gb.div(gb.create<SizeOp>({x}), gb.create<SizeOp>({y})), like);
}

/// one_hot(labels) along axis 1 of `scores` (N, C, d...), in its type.
Value oneHot(GradientBuilder &gb, Value labels, Value scores) {
  RankedTensorType type = tensorType(scores);
  int64_t classes = type.getDimSize(1);
  if (ShapedType::isDynamic(classes))
    return gb.fail("needs a static number of classes");
  SmallVector<int64_t> ids(classes);
  for (int64_t i = 0; i < classes; ++i)
    ids[i] = i;
  // (C, 1, ..., 1) against labels (N, 1, d...).
  SmallVector<int64_t> idShape{classes};
  for (int64_t i = 2; i < type.getRank(); ++i)
    idShape.push_back(1);
  Value range = gb.create<ReshapeOp>({gb.i64s(ids), gb.i64s(idShape)});
  Value wide = gb.castTo(gb.create<UnsqueezeOp>({labels, gb.i64s({1})}),
                         gb.getBuilder().getI64Type());
  return gb.castLike(gb.create<EqualOp>({wide, range}), scores);
}

/// Fails for the loss options the rules do not cover.
template <typename LossOpT>
bool checkLossOptions(LossOpT op, GradientBuilder &gb) {
  if (!isa<NoneType>(op.getWeights().getType()) || op.getIgnoreIndex()) {
    gb.fail("class weights and ignore_index are not supported yet");
    return false;
  }
  return true;
}
} // namespace

void gradient(ReduceSumOp op, GradientBuilder &gb, In rg, Grads og) {
  og[0] = broadcastBack(op, gb, rg[0]);
}
void gradient(ReduceMeanOp op, GradientBuilder &gb, In rg, Grads og) {
  Value x = op.getData();
  og[0] = broadcastBack(
      op, gb, gb.div(rg[0], countRatio(gb, x, op.getReduced(), rg[0])));
}
void gradient(SoftmaxOp op, GradientBuilder &gb, In rg, Grads og) {
  // dX = Y (g - sum(g Y)).
  Value y = op.getOutput(), g = rg[0];
  Value dot = gb.reduceSum(gb.mul(g, y), {static_cast<int64_t>(op.getAxis())}, /*keepDims=*/true);
  og[0] = gb.mul(y, gb.sub(g, dot));
}
void gradient(LogSoftmaxOp op, GradientBuilder &gb, In rg, Grads og) {
  // dX = g - exp(Y) sum(g).
  Value y = op.getOutput(), g = rg[0];
  Value total = gb.reduceSum(g, {static_cast<int64_t>(op.getAxis())}, /*keepDims=*/true);
  og[0] = gb.sub(g, gb.mul(gb.create<ExpOp>({y}), total));
}

void gradient(ReduceMaxOp op, GradientBuilder &gb, In rg, Grads og) {
  selectionGradient(op, gb, rg[0], og);
}
void gradient(ReduceMinOp op, GradientBuilder &gb, In rg, Grads og) {
  selectionGradient(op, gb, rg[0], og);
}
void gradient(ReduceL1Op op, GradientBuilder &gb, In rg, Grads og) {
  Value x = op.getData();
  reductionGradient(op, gb, rg[0], og, [&](Value g, Value, ArrayRef<int64_t>) {
    return gb.mul(g, gb.create<SignOp>({x}));
  });
}
void gradient(ReduceL2Op op, GradientBuilder &gb, In rg, Grads og) {
  // x / ||x||, and zero where the norm is zero (as PyTorch's norm).
  Value x = op.getData();
  reductionGradient(op, gb, rg[0], og, [&](Value g, Value y, ArrayRef<int64_t>) {
    Value zero = gb.scalar(y, 0.0);
    Value isZero = gb.create<EqualOp>({y, zero});
    Value safe = gb.create<WhereOp>({isZero, gb.scalar(y, 1.0), y});
    Value share = gb.create<WhereOp>({isZero, zero, gb.div(g, safe)});
    return gb.mul(share, x);
  });
}
void gradient(ReduceSumSquareOp op, GradientBuilder &gb, In rg, Grads og) {
  Value x = op.getData();
  reductionGradient(op, gb, rg[0], og, [&](Value g, Value, ArrayRef<int64_t>) {
    return gb.mul(g, gb.mulScalar(x, 2.0));
  });
}
void gradient(ReduceLogSumOp op, GradientBuilder &gb, In rg, Grads og) {
  // y = log(sum x): dx = g / sum x = g exp(-y).
  reductionGradient(op, gb, rg[0], og, [&](Value g, Value y, ArrayRef<int64_t>) {
    return gb.mul(g, gb.create<ExpOp>({gb.neg(y)}));
  });
}
void gradient(ReduceLogSumExpOp op, GradientBuilder &gb, In rg, Grads og) {
  // dx = g exp(x - y) (softmax over the reduced axes).
  Value x = op.getData();
  reductionGradient(op, gb, rg[0], og, [&](Value g, Value y, ArrayRef<int64_t>) {
    return gb.mul(g, gb.create<ExpOp>({gb.sub(x, y)}));
  });
}
void gradient(ReduceProdOp op, GradientBuilder &gb, In rg, Grads og) {
  // dx_i = the product of the others: y / x_i without zeros; with one
  // zero, the product of the non-zeros at the zero and 0 elsewhere; with
  // more, 0 everywhere (PyTorch's prod_backward).
  Value x = op.getData();
  reductionGradient(op, gb, rg[0], og, [&](Value g, Value, ArrayRef<int64_t> axes) {
    Value zero = gb.scalar(x, 0.0), one = gb.scalar(x, 1.0);
    Value isZero = gb.create<EqualOp>({x, zero});
    Value nonZero = gb.create<WhereOp>({isZero, one, x});
    Value product = gb.create<ReduceProdOp>(
        {nonZero, gb.i64s(axes)}, {gb.attr("keepdims", int64_t{1})});
    Value zeros = gb.reduceSum(gb.castLike(isZero, x), axes, /*keepDims=*/true);
    Value others = gb.create<WhereOp>(
        {isZero,
         gb.create<WhereOp>({gb.create<EqualOp>({zeros, one}), product, zero}),
         gb.create<WhereOp>({gb.create<EqualOp>({zeros, zero}),
                             gb.div(product, nonZero), zero})});
    return gb.mul(g, others);
  });
}

bool isDifferentiable(SoftmaxCrossEntropyLossOp, unsigned index, Overload) {
  return index == 0;
}
void gradient(SoftmaxCrossEntropyLossOp op, GradientBuilder &gb, In rg,
              Grads og) {
  if (!checkLossOptions(op, gb))
    return;
  Value scores = op.getScores(), logProb = op.getLogProb();
  // Through the loss: (softmax - one_hot) scaled by the reduction.
  Value g;
  if (Value gLoss = rg[0]) {
    Value prob = gb.create<ExpOp>({logProb});
    Value diff = gb.sub(prob, oneHot(gb, op.getLabels(), scores));
    StringRef reduction = op.getReduction();
    if (reduction == "none")
      gLoss = gb.create<UnsqueezeOp>({gLoss, gb.i64s({1})});
    else if (reduction == "mean")
      gLoss = gb.div(gLoss, gb.castLike(gb.create<SizeOp>({op.getLabels()}),
                                        gLoss));
    g = gb.mul(diff, gb.castLike(gLoss, diff));
  }
  // Through log_prob (LogSoftmax along axis 1).
  if (Value gLog = rg[1]) {
    Value total = gb.reduceSum(gLog, {1}, /*keepDims=*/true);
    Value through =
        gb.sub(gLog, gb.mul(gb.create<ExpOp>({logProb}), total));
    through = gb.castLike(through, scores);
    g = g ? gb.add(g, through) : through;
  }
  og[0] = gb.castLike(g, scores);
}

bool isDifferentiable(NegativeLogLikelihoodLossOp, unsigned index, Overload) {
  return index == 0;
}
void gradient(NegativeLogLikelihoodLossOp op, GradientBuilder &gb, In rg,
              Grads og) {
  if (!isa<NoneType>(op.getWeight().getType()) || op.getIgnoreIndex()) {
    gb.fail("class weights and ignore_index are not supported yet");
    return;
  }
  Value input = op.getInput(), gLoss = rg[0];
  StringRef reduction = op.getReduction();
  if (reduction == "none")
    gLoss = gb.create<UnsqueezeOp>({gLoss, gb.i64s({1})});
  else if (reduction == "mean")
    gLoss = gb.div(gLoss,
                   gb.castLike(gb.create<SizeOp>({op.getTarget()}), gLoss));
  Value picked = oneHot(gb, op.getTarget(), input);
  og[0] = gb.neg(gb.mul(picked, gb.castLike(gLoss, input)));
}

void registerReductionGradients(MLIRContext *context) {
  attachGradientModels<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
                       ReduceL1Op, ReduceL2Op, ReduceSumSquareOp,
                       ReduceLogSumOp, ReduceLogSumExpOp, ReduceProdOp,
                       SoftmaxOp, LogSoftmaxOp,
                       SoftmaxCrossEntropyLossOp,
                       NegativeLogLikelihoodLossOp>(context);
}

} // namespace mlir::amp::gradients
