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
/// The axes of the per-channel sums of (N, C, d...): all but 1.
SmallVector<int64_t> allButChannel(int64_t rank) {
  SmallVector<int64_t> axes{0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

/// `v` (shape (C)) reshaped to (1, C, 1, ...) to broadcast against X.
Value perChannel(GradientBuilder &gb, Value v, int64_t rank) {
  return gb.create<UnsqueezeOp>({v, gb.i64s(allButChannel(rank))});
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
  SmallVector<int64_t> axes = allButChannel(rank);
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

namespace {
/// The normalised input of a normalisation over `axes`: xHat = (x - mean)
/// invStd (centred) or x invStd (RMS), invStd = 1 / sqrt(E[.^2] + eps).
struct Normalized {
  Value xHat, invStd;
};
Normalized normalize(GradientBuilder &gb, Value x, ArrayRef<int64_t> axes,
                     double epsilon, bool centered) {
  Value centeredX = centered ? gb.sub(x, gb.reduceMean(x, axes, true)) : x;
  Value second = gb.reduceMean(gb.mul(centeredX, centeredX), axes, true);
  Value invStd = gb.create<ReciprocalOp>(
      {gb.create<SqrtOp>({gb.add(second, gb.scalar(x, epsilon))})});
  return {gb.mul(centeredX, invStd), invStd};
}

/// dX of a normalisation over `axes` from gHat = g scale (the gradient of
/// xHat): invStd (gHat - mean(gHat) - xHat mean(gHat xHat)), without the
/// mean(gHat) term for RMS.
Value normalizedInputGrad(GradientBuilder &gb, Value gHat, Normalized n,
                          ArrayRef<int64_t> axes, bool centered) {
  Value meanGx = gb.reduceMean(gb.mul(gHat, n.xHat), axes, true);
  Value d = gb.sub(gHat, gb.mul(n.xHat, meanGx));
  if (centered)
    d = gb.sub(d, gb.reduceMean(gHat, axes, true));
  return gb.mul(n.invStd, d);
}

/// The axes from `first` to the last of a rank-`rank` tensor.
SmallVector<int64_t> trailingAxes(int64_t first, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t i = first; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

/// LayerNormalization and RMSNormalization: over the axes from `axis` on,
/// with a scale (and bias) broadcast against the normalised axes.
void lastAxesGradient(GradientBuilder &gb, Value x, Value g, Value scale,
                      Value bias, int64_t rawAxis, double epsilon,
                      bool centered, Grads og) {
  int64_t rank = tensorType(x).getRank();
  int64_t axis = semantics::normalizeAxis(rawAxis, rank).value_or(rank - 1);
  SmallVector<int64_t> axes = trailingAxes(axis, rank);
  Normalized n = normalize(gb, x, axes, epsilon, centered);
  og[0] = normalizedInputGrad(gb, gb.mul(g, gb.castLike(scale, x)), n, axes,
                              centered);
  og[1] = gb.castLike(gb.sumToShape(gb.mul(g, n.xHat), scale), scale);
  if (bias && !isa<NoneType>(bias.getType()))
    og[2] = gb.castLike(gb.sumToShape(g, bias), bias);
}
} // namespace

void gradient(LayerNormalizationOp op, GradientBuilder &gb, In rg, Grads og) {
  if (!rg[0])
    return;
  lastAxesGradient(gb, op.getX(), rg[0], op.getScale(), op.getB(),
                   op.getAxis(), op.getEpsilon().convertToDouble(),
                   /*centered=*/true, og);
}

void gradient(RMSNormalizationOp op, GradientBuilder &gb, In rg, Grads og) {
  lastAxesGradient(gb, op.getX(), rg[0], op.getScale(), Value(), op.getAxis(),
                   op.getEpsilon().convertToDouble(), /*centered=*/false, og);
}

void gradient(InstanceNormalizationOp op, GradientBuilder &gb, In rg,
              Grads og) {
  // Per (sample, channel) over the spatial axes; scale and bias per channel.
  Value x = op.getInput(), g = rg[0];
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> axes = trailingAxes(2, rank);
  Normalized n =
      normalize(gb, x, axes, op.getEpsilon().convertToDouble(), true);
  Value scale = perChannel(gb, gb.castLike(op.getScale(), x), rank);
  og[0] = normalizedInputGrad(gb, gb.mul(g, scale), n, axes, true);
  SmallVector<int64_t> sumAxes = allButChannel(rank);
  og[1] = gb.castLike(
      gb.reshapeLike(gb.reduceSum(gb.mul(g, n.xHat), sumAxes, true),
                     op.getScale()),
      op.getScale());
  og[2] = gb.castLike(
      gb.reshapeLike(gb.reduceSum(g, sumAxes, true), op.getB()), op.getB());
}

void gradient(GroupNormalizationOp op, GradientBuilder &gb, In rg, Grads og) {
  // X (N, C, d...) normalised as (N, G, C/G d...); scale and bias per
  // channel (opset 21) or per group (opset 18: C/G channels share one).
  Value x = op.getX(), g = rg[0];
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank(), groups = op.getNumGroups();
  int64_t channels = type.getDimSize(1);
  if (rank < 2 || groups <= 0 || ShapedType::isDynamic(channels) ||
      channels % groups) {
    gb.fail("needs a static channel count divisible by num_groups");
    return;
  }
  int64_t inner = channels / groups;
  for (int64_t i = 2; i < rank; ++i) {
    if (type.isDynamicDim(i)) {
      gb.fail("needs static spatial sizes");
      return;
    }
    inner *= type.getDimSize(i);
  }
  Value grouped = gb.i64s({0, groups, inner}); // Reshape: 0 keeps N.
  Normalized n = normalize(gb, gb.create<ReshapeOp>({x, grouped}), {2},
                           op.getEpsilon().convertToDouble(), true);
  Value scale = gb.castLike(op.getScale(), x);
  int64_t scaleSize = tensorType(op.getScale()).getDimSize(0);
  bool perGroup = scaleSize == groups && groups != channels;
  // Per channel: a per-group scale repeated C/G times.
  auto toChannels = [&](Value v) {
    if (!perGroup)
      return v;
    Value column = gb.create<ReshapeOp>({v, gb.i64s({groups, 1})});
    Value wide =
        gb.create<ExpandOp>({column, gb.i64s({groups, channels / groups})});
    return gb.create<ReshapeOp>({wide, gb.i64s({channels})});
  };
  Value gHat = gb.mul(g, perChannel(gb, toChannels(scale), rank));
  Value dx = normalizedInputGrad(gb, gb.create<ReshapeOp>({gHat, grouped}), n,
                                 {2}, true);
  og[0] = gb.reshapeLike(dx, x);
  // Parameter gradients per channel, then per group where shared.
  Value xHat = gb.reshapeLike(n.xHat, x);
  SmallVector<int64_t> sumAxes = allButChannel(rank);
  auto toParam = [&](Value perChannelSum, Value param) {
    Value v = gb.create<ReshapeOp>({perChannelSum, gb.i64s({channels})});
    if (perGroup)
      v = gb.reduceSum(
          gb.create<ReshapeOp>({v, gb.i64s({groups, channels / groups})}),
          {1}, /*keepDims=*/false);
    return gb.castLike(v, param);
  };
  og[1] = toParam(gb.reduceSum(gb.mul(g, xHat), sumAxes, true),
                  op.getScale());
  og[2] = toParam(gb.reduceSum(g, sumAxes, true), op.getBias());
}

void registerNormalizationGradients(MLIRContext *context) {
  attachGradientModels<BatchNormalizationOp, LayerNormalizationOp,
                       RMSNormalizationOp, InstanceNormalizationOp,
                       GroupNormalizationOp>(context);
}

} // namespace mlir::amp::gradients
