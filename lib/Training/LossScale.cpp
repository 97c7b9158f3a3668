//===- LossScale.cpp - the loss-scale state machine -----------------------===//
//
// Dynamic loss scaling as torch.amp.GradScaler does it
// (_amp_update_scale_), plus DeepSpeed-style hysteresis and min/max clamps:
//
//   overflow:  hysteresis_left <= 1 ? scale = max(scale * backoff, min)
//                                   : keep the scale;
//              hysteresis_left = max(hysteresis_left - 1, 1);
//              growth_tracker = 0
//   clean:     hysteresis_left = H; growth_tracker += 1;
//              when it reaches the interval: growth_tracker = 0 and
//              scale = min(scale * growth, max) if scale * growth is finite
//
// With H = 1 (the default) and no clamps this is GradScaler exactly.
//
//===----------------------------------------------------------------------===//

#include "TrainStepInternal.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;

SmallVector<ScalarState>
mlir::amp::training::getScalerState(const TrainStepOptions &options,
                                    LossScaleMode mode) {
  switch (mode) {
  case LossScaleMode::Static:
    return {{"loss_scale", false, options.staticScale}};
  case LossScaleMode::Dynamic: {
    SmallVector<ScalarState> state{{"loss_scale", false, options.scaleInit},
                                   {"growth_tracker", true, 0.0}};
    if (options.hysteresis > 1)
      state.push_back({"hysteresis_left", true,
                       static_cast<double>(options.hysteresis)});
    return state;
  }
  default:
    return {};
  }
}

void mlir::amp::training::buildScaleUpdate(GradientBuilder &gb,
                                           const TrainStepOptions &options,
                                           LossScaleMode mode,
                                           ArrayRef<Value> state,
                                           Value foundInf,
                                           SmallVectorImpl<Value> &updated) {
  if (mode == LossScaleMode::Static) {
    updated.push_back(state[0]);
    return;
  }
  if (mode != LossScaleMode::Dynamic)
    return;
  Value scale = state[0], tracker = state[1];
  auto f = [&](double v) { return gb.scalar(scale, v); };
  auto i = [&](int64_t v) { return gb.scalar(tracker, static_cast<double>(v)); };
  Value overflow = gb.create<GreaterOp>({foundInf, gb.scalar(foundInf, 0.0)});

  // A clean step: grow after `interval` clean steps in a row.
  Value next = gb.add(tracker, i(1));
  Value grow = gb.create<EqualOp>({next, i(options.scaleInterval)});
  Value grown = gb.mulScalar(scale, options.scaleGrowth);
  Value finite = gb.create<NotOp>({gb.create<IsInfOp>({grown})});
  Value growOk = gb.create<AndOp>({grow, finite});
  Value cleanScale = gb.create<WhereOp>(
      {growOk, gb.create<MinOp>({grown, f(options.scaleMax)}), scale});
  Value cleanTracker = gb.create<WhereOp>({grow, i(0), next});

  // An overflow: back off (after H overflows in a row).
  Value backedOff = gb.create<MaxOp>(
      {gb.mulScalar(scale, options.scaleBackoff), f(options.scaleMin)});
  Value backOffNow = overflow;
  Value newHysteresis;
  if (options.hysteresis > 1) {
    Value left = state[2];
    backOffNow = gb.create<AndOp>(
        {overflow, gb.create<LessOrEqualOp>({left, i(1)})});
    newHysteresis = gb.create<WhereOp>(
        {overflow, gb.create<MaxOp>({gb.sub(left, i(1)), i(1)}),
         i(options.hysteresis)});
  }
  Value overflowScale =
      gb.create<WhereOp>({backOffNow, backedOff, scale});
  updated.push_back(
      gb.create<WhereOp>({overflow, overflowScale, cleanScale}));
  updated.push_back(gb.create<WhereOp>({overflow, i(0), cleanTracker}));
  if (newHysteresis)
    updated.push_back(newHysteresis);
}
