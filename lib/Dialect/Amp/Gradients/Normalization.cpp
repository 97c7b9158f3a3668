//===- Normalization.cpp - gradient rules of the normalisations -----------===//
//
// The statistics are recomputed in the backward pass from X (the forward
// ops do not expose them in every mode); with amp.accumulate = f32 the
// reductions accumulate in fp32 as the forward ones do.
//
//===----------------------------------------------------------------------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/Semantics/Indexing.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {
namespace {
/// `v` (shape (C)) reshaped to (1, C, 1, ...) to broadcast against X.
Value perChannel(GradientBuilder &gb, Value v, int64_t rank) {
  SmallVector<int64_t> axes{0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  return gb.create<UnsqueezeOp>({v, gb.i64s(axes)});
}
} // namespace

/// The running statistics are state, not parameters.
bool isDifferentiable(BatchNormalizationOp, unsigned index, Overload) {
  return index < 3;
}
void gradient(BatchNormalizationOp op, GradientBuilder &gb, In rg, Grads og) {
  Value x = op.getX(), g = rg[0];
  if (!g)
    return; // Only the running statistics are used: no gradient.
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> axes{0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  Value eps = gb.scalar(x, op.getEpsilon().convertToDouble());
  Value scale = perChannel(gb, gb.castLike(op.getScale(), x), rank);
  Value mean, var;
  if (op.getTrainingMode()) {
    mean = gb.reduceMean(x, axes, /*keepDims=*/true);
    Value centered = gb.sub(x, mean);
    var = gb.reduceMean(gb.mul(centered, centered), axes, true);
  } else {
    mean = perChannel(gb, gb.castLike(op.getInputMean(), x), rank);
    var = perChannel(gb, gb.castLike(op.getInputVar(), x), rank);
  }
  Value invStd = gb.create<ReciprocalOp>(
      {gb.create<SqrtOp>({gb.add(var, eps)})});
  Value xHat = gb.mul(gb.sub(x, mean), invStd);
  Value gBias = gb.reduceSum(g, axes, /*keepDims=*/true);
  Value gScale = gb.reduceSum(gb.mul(g, xHat), axes, true);
  if (op.getTrainingMode()) {
    // dX = scale invStd (g - mean(g) - xHat mean(g xHat)); with static
    // sizes the means are the sums above over the count (no second pass
    // over g and g xHat); fp16/bf16 keep the reductions (1/count would
    // round to a subnormal or zero).
    RankedTensorType xType = tensorType(x);
    int64_t count = xType.getElementType().isF32() ||
                            xType.getElementType().isF64()
                        ? 1
                        : -1;
    for (int64_t axis : axes)
      count = xType.isDynamicDim(axis) || count < 0
                  ? -1
                  : count * xType.getDimSize(axis);
    Value meanG, meanGx;
    if (count > 0) {
      meanG = gb.mulScalar(gBias, 1.0 / static_cast<double>(count));
      meanGx = gb.mulScalar(gScale, 1.0 / static_cast<double>(count));
    } else {
      meanG = gb.reduceMean(g, axes, true);
      meanGx = gb.reduceMean(gb.mul(g, xHat), axes, true);
    }
    og[0] = gb.mul(gb.mul(scale, invStd),
                   gb.sub(gb.sub(g, meanG), gb.mul(xHat, meanGx)));
  } else {
    og[0] = gb.mul(g, gb.mul(scale, invStd));
  }
  og[1] = gb.castLike(gb.reshapeLike(gScale, op.getScale()), op.getScale());
  og[2] = gb.castLike(gb.reshapeLike(gBias, op.getB()), op.getB());
}

void gradient(LayerNormalizationOp op, GradientBuilder &gb, In rg, Grads og) {
  Value x = op.getX(), g = rg[0];
  if (!g)
    return;
  RankedTensorType xType = tensorType(x);
  int64_t rank = xType.getRank();
  int64_t axis =
      semantics::normalizeAxis(static_cast<int64_t>(op.getAxis()), rank)
          .value_or(rank - 1);
  SmallVector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i)
    axes.push_back(i);
  Value eps = gb.scalar(x, op.getEpsilon().convertToDouble());
  Value mean = gb.reduceMean(x, axes, /*keepDims=*/true);
  Value centered = gb.sub(x, mean);
  Value var = gb.reduceMean(gb.mul(centered, centered), axes, true);
  Value invStd =
      gb.create<ReciprocalOp>({gb.create<SqrtOp>({gb.add(var, eps)})});
  Value xHat = gb.mul(centered, invStd);
  Value scale = gb.castLike(op.getScale(), x);
  Value gHat = gb.mul(g, scale);
  Value meanG = gb.reduceMean(gHat, axes, true);
  Value meanGx = gb.reduceMean(gb.mul(gHat, xHat), axes, true);
  og[0] = gb.mul(invStd, gb.sub(gb.sub(gHat, meanG), gb.mul(xHat, meanGx)));
  og[1] = gb.castLike(gb.sumToShape(gb.mul(g, xHat), op.getScale()),
                      op.getScale());
  if (!isa<NoneType>(op.getB().getType()))
    og[2] = gb.castLike(gb.sumToShape(g, op.getB()), op.getB());
}

void registerNormalizationGradients(MLIRContext *context) {
  attachGradientModels<BatchNormalizationOp, LayerNormalizationOp>(context);
}

} // namespace mlir::amp::gradients
