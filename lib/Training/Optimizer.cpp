//===- Optimizer.cpp - schedules, clipping and optimizer updates ----------===//
//
// The formulas are PyTorch's (torch.optim.SGD and AdamW, single-tensor
// path), so results compare with PyTorch step by step. Everything is fp32.
//
//===----------------------------------------------------------------------===//

#include "TrainStepInternal.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;

SmallVector<StringRef>
mlir::amp::training::getOptimizerStateNames(const TrainStepOptions &options) {
  switch (options.optimizer) {
  case OptimizerKind::SGD:
    if (options.momentum.value_or(0.0) != 0.0)
      return {"momentum_buffer"};
    return {};
  case OptimizerKind::Momentum:
    return {"momentum_buffer"};
  case OptimizerKind::AdamW:
    return {"exp_avg", "exp_avg_sq"};
  }
  return {};
}

Value mlir::amp::training::buildLearningRate(GradientBuilder &gb,
                                             const TrainStepOptions &options,
                                             Value t) {
  auto c = [&](double v) { return gb.scalar(t, v); };
  double warmup = static_cast<double>(options.warmupSteps);
  double decaySteps =
      std::max(1.0, static_cast<double>(options.totalSteps) - warmup);
  Value factor;
  switch (options.schedule) {
  case ScheduleKind::Constant:
    factor = c(1.0);
    break;
  case ScheduleKind::Linear:
    // max(0, (total - t) / (total - warmup)).
    factor = gb.create<MaxOp>(
        {gb.div(gb.sub(c(options.totalSteps), t), c(decaySteps)), c(0.0)});
    break;
  case ScheduleKind::Cosine: {
    // 0.5 (1 + cos(pi min(1, (t - warmup) / (total - warmup)))).
    Value progress = gb.create<MinOp>(
        {gb.div(gb.sub(t, c(warmup)), c(decaySteps)), c(1.0)});
    factor = gb.mulScalar(
        gb.add(c(1.0), gb.create<CosOp>({gb.mulScalar(progress, M_PI)})), 0.5);
    break;
  }
  case ScheduleKind::Step:
    // gamma ^ floor(t / step_size) (torch.optim.lr_scheduler.StepLR).
    factor = gb.create<PowOp>(
        {c(options.gamma),
         gb.create<FloorOp>({gb.div(t, c(std::max<int64_t>(
                                               1, options.stepSize)))})});
    break;
  }
  if (options.warmupSteps > 0)
    factor = gb.create<WhereOp>(
        {gb.create<LessOp>({t, c(warmup)}), gb.div(t, c(warmup)), factor});
  return gb.mulScalar(factor, options.lr);
}

void mlir::amp::training::clipGradNorm(GradientBuilder &gb, double maxNorm,
                                       MutableArrayRef<Value> grads) {
  Value sumSquares;
  for (Value grad : grads) {
    Value part = gb.create<ReduceSumSquareOp>(
        {grad, gb.none()}, {gb.attr("keepdims", int64_t(0))});
    sumSquares = sumSquares ? gb.add(sumSquares, part) : part;
  }
  Value total = gb.create<SqrtOp>({sumSquares});
  Value coef = gb.div(gb.scalar(total, maxNorm),
                      gb.add(total, gb.scalar(total, 1e-6)));
  coef = gb.create<MinOp>({coef, gb.scalar(total, 1.0)});
  for (Value &grad : grads)
    grad = gb.mul(grad, coef);
}

void mlir::amp::training::buildOptimizerUpdate(
    GradientBuilder &gb, const TrainStepOptions &options, Value lr,
    Value stepF, Value param, Value grad, ArrayRef<Value> state,
    SmallVectorImpl<Value> &updated) {
  auto c = [&](double v) { return gb.scalar(param, v); };
  // The update computes in the parameter's type (fp32 master weights).
  lr = gb.castLike(lr, param);
  stepF = gb.castLike(stepF, param);
  grad = gb.castLike(grad, param);
  if (options.optimizer == OptimizerKind::AdamW) {
    double wd = options.weightDecay.value_or(0.01);
    double b1 = options.beta1, b2 = options.beta2;
    Value p = param;
    if (wd != 0.0)
      p = gb.mul(p, gb.sub(c(1.0), gb.mulScalar(lr, wd)));
    // exp_avg.lerp_(grad, 1 - beta1); exp_avg_sq = b2 v + (1 - b2) g^2.
    Value m = gb.add(state[0], gb.mulScalar(gb.sub(grad, state[0]), 1.0 - b1));
    Value v = gb.add(gb.mulScalar(state[1], b2),
                     gb.mulScalar(gb.mul(grad, grad), 1.0 - b2));
    Value t1 = gb.add(stepF, c(1.0));
    Value bc1 = gb.sub(c(1.0), gb.create<PowOp>({c(b1), t1}));
    Value bc2 = gb.sub(c(1.0), gb.create<PowOp>({c(b2), t1}));
    Value stepSize = gb.div(lr, bc1);
    Value denom = gb.add(
        gb.div(gb.create<SqrtOp>({v}), gb.create<SqrtOp>({bc2})),
        c(options.eps));
    updated.push_back(gb.sub(p, gb.mul(stepSize, gb.div(m, denom))));
    updated.push_back(m);
    updated.push_back(v);
    return;
  }
  double momentum = options.momentum.value_or(
      options.optimizer == OptimizerKind::Momentum ? 0.9 : 0.0);
  double wd = options.weightDecay.value_or(0.0);
  Value g = grad;
  if (wd != 0.0)
    g = gb.add(g, gb.mulScalar(param, wd));
  Value buffer;
  if (!state.empty()) {
    // buf = momentum buf + g (the zero initial buffer makes step 0 buf = g).
    buffer = gb.add(gb.mulScalar(state[0], momentum), g);
    g = options.nesterov ? gb.add(g, gb.mulScalar(buffer, momentum)) : buffer;
  }
  updated.push_back(gb.sub(param, gb.mul(lr, g)));
  if (buffer)
    updated.push_back(buffer);
}
