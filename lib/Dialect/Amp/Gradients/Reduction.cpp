//===- Reduction.cpp - gradient rules of reductions, softmax and losses ---===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include "amp/Dialect/Amp/Semantics/Reduction.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {
namespace {
/// The gradient of a ReduceSum/ReduceMean, broadcast back to the input.
template <typename ReduceOpT>
Value broadcastBack(ReduceOpT op, GradientBuilder &gb, Value g) {
  Value x = op.getData();
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> given;
  if (!isa<NoneType>(op.getAxes().getType())) {
    auto constant = getConstantIntValues(op.getAxes());
    if (!constant)
      return gb.fail("needs constant axes");
    given = *constant;
  }
  auto axes = semantics::resolveReduceAxes(
      rank, given, semantics::ReduceAttrs::get(op),
      [&](const Twine &message) { gb.fail(message); });
  if (failed(axes))
    return gb.fail("invalid axes");
  if (!*axes)
    return g; // A no-op reduction.
  if (!op.getKeepdims() && !(*axes)->empty())
    g = gb.create<UnsqueezeOp>({g, gb.i64s(**axes)});
  return gb.create<ExpandOp>({g, gb.shapeOf(x)});
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
  attachGradientModels<ReduceSumOp, ReduceMeanOp, SoftmaxOp, LogSoftmaxOp,
                       SoftmaxCrossEntropyLossOp,
                       NegativeLogLikelihoodLossOp>(context);
}

} // namespace mlir::amp::gradients
