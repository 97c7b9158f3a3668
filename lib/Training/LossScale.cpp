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
// applyLossScaling (the amp-loss-scale pass) adds all of it to an unscaled
// training program; see TrainStep.h.
//
//===----------------------------------------------------------------------===//

#include "TrainStepInternal.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Training/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

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

//===----------------------------------------------------------------------===//
// amp-loss-scale: loss scaling added to an unscaled training program
//===----------------------------------------------------------------------===//

namespace {
StringRef roleOf(func::FuncOp func, unsigned index, bool result) {
  DictionaryAttr attrs =
      result ? func.getResultAttrDict(index) : func.getArgAttrDict(index);
  auto role = attrs ? attrs.getAs<StringAttr>(kRoleAttrName) : StringAttr();
  return role ? role.getValue() : StringRef();
}
StringRef nameOf(func::FuncOp func, unsigned index, bool result) {
  DictionaryAttr attrs =
      result ? func.getResultAttrDict(index) : func.getArgAttrDict(index);
  auto name = attrs ? attrs.getAs<StringAttr>("amp.name") : StringAttr();
  return name ? name.getValue() : StringRef();
}
bool isSkippedRole(StringRef role) {
  return role == "param" || role == "buffer" || role == "optimizer" ||
         role == "step";
}
} // namespace

/// Scales one optimizer step (@train_step or @apply_gradients): the
/// function that holds the multi-tensor check.
static LogicalResult scaleStep(func::FuncOp func, MultiTensorUnscaleCheckOp check,
                               const TrainStepOptions &options,
                               LossScaleMode mode) {
  MLIRContext *context = func.getContext();
  unsigned stepArg = func.getNumArguments();
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (roleOf(func, i, false) == "step")
      stepArg = i;
  if (stepArg == func.getNumArguments())
    return func.emitError("amp-loss-scale: @")
           << func.getSymName() << " has no argument with amp.role \"step\"";
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (roleOf(func, i, false) == "scaler")
      return func.emitError("amp-loss-scale: @")
             << func.getSymName() << " already has loss scaling";
  auto invScale = check.getInvScale().getDefiningOp<ConstantOp>();
  auto value = invScale ? dyn_cast<DenseFPElementsAttr>(invScale.getValue())
                        : DenseFPElementsAttr();
  if (!value || value.getNumElements() != 1 ||
      !(*value.getValues<APFloat>().begin()).isExactlyValue(1.0))
    return check.emitOpError("amp-loss-scale: the check's scale is not the "
                             "constant 1 of an unscaled step");

  // The scaler state, before `step`.
  Type f32 = Float32Type::get(context), i64 = IntegerType::get(context, 64);
  SmallVector<ScalarState> specs = getScalerState(options, mode);
  SmallVector<Value> state;
  for (auto [k, spec] : llvm::enumerate(specs))
    state.push_back(insertStateArgument(
        func, stepArg + k, RankedTensorType::get({}, spec.isInteger ? i64 : f32),
        spec.name, "scaler"));
  Value scale = state[0];

  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder builder(check);
  GradientBuilder gb(builder, check.getLoc());
  // The seed of the reverse pass becomes the scale.
  SmallVector<GradientSeedOp> seeds;
  func.walk([&](GradientSeedOp seed) { seeds.push_back(seed); });
  for (GradientSeedOp seed : seeds) {
    OpBuilder seedBuilder(seed);
    GradientBuilder sgb(seedBuilder, seed.getLoc());
    seed.getResult().replaceAllUsesWith(sgb.castLike(scale, seed));
    seed.erase();
  }
  // Unscale by 1/scale.
  check.getInvScaleMutable().assign(gb.create<ReciprocalOp>({scale}));

  // On overflow every parameter, buffer, optimizer-state value and the
  // step keep their input values (the schedule, a function of `step`, does
  // not advance); the scale updates.
  builder.setInsertionPoint(ret);
  // The step's `found_inf` result: the check's, or'ed with the caller's
  // flag where the function takes one (@apply_gradients).
  Value foundInf = check.getFoundInf();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (roleOf(func, i, true) == "found_inf")
      foundInf = ret.getOperand(i);
  Value skip = gb.create<GreaterOp>({foundInf, gb.scalar(f32, 0.0)});
  llvm::StringMap<Value> inputs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (isSkippedRole(roleOf(func, i, false)))
      inputs[(roleOf(func, i, false) + ":" + nameOf(func, i, false)).str()] =
          func.getArgument(i);
  SmallVector<Value> results;
  SmallVector<std::pair<std::string, StringRef>> names;
  SmallVector<Value> newState;
  buildScaleUpdate(gb, options, mode, state, foundInf, newState);
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    StringRef role = roleOf(func, i, true), name = nameOf(func, i, true);
    Value value = ret.getOperand(i);
    if (role == "step")
      for (auto [k, spec] : llvm::enumerate(specs)) {
        results.push_back(newState[k]);
        names.push_back({spec.name, "scaler"});
      }
    if (isSkippedRole(role)) {
      Value old = inputs.lookup((role + ":" + name).str());
      if (!old)
        return func.emitError("amp-loss-scale: result '")
               << name << "' (" << role << ") of @" << func.getSymName()
               << " has no argument of the same name";
      value = gb.create<WhereOp>({skip, old, value});
    }
    results.push_back(value);
    names.push_back({name.str(), role});
  }
  if (gb.hasFailed() || llvm::any_of(results, [](Value v) { return !v; }))
    return failure();
  setResults(func, results, names);
  return success();
}

LogicalResult mlir::amp::training::applyLossScaling(
    ModuleOp module, const TrainStepOptions &options, LossScaleMode mode) {
  if (mode != LossScaleMode::Static && mode != LossScaleMode::Dynamic)
    return module.emitError("amp-loss-scale: the mode must be static or "
                            "dynamic");
  auto info = module->getAttrOfType<DictionaryAttr>(kTrainAttrName);
  if (!info)
    return module.emitError("amp-loss-scale: the module holds no training "
                            "program (amp-opt --train builds one)");
  auto current = info.getAs<StringAttr>("loss_scale");
  if (current && current.getValue() != "none")
    return module.emitError("amp-loss-scale: the training program already "
                            "has loss scaling (")
           << current.getValue() << ")";
  SmallVector<std::pair<func::FuncOp, MultiTensorUnscaleCheckOp>> steps;
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<MultiTensorUnscaleCheckOp> checks;
    func.walk([&](MultiTensorUnscaleCheckOp op) { checks.push_back(op); });
    if (checks.size() > 1)
      return checks[1].emitOpError("amp-loss-scale: @")
             << func.getSymName() << " has more than one gradient check";
    if (!checks.empty())
      steps.push_back({func, checks.front()});
  }
  if (steps.empty())
    return module.emitError("amp-loss-scale: no function holds an "
                            "amp.multi_tensor_unscale_check");
  for (auto [func, check] : steps)
    if (failed(scaleStep(func, check, options, mode)))
      return failure();

  // The initial values, before `step`.
  if (auto init = module.lookupSymbol<func::FuncOp>("initial_state")) {
    auto ret = cast<func::ReturnOp>(init.getBody().front().getTerminator());
    OpBuilder builder(ret);
    SmallVector<Value> results;
    SmallVector<std::pair<std::string, StringRef>> names;
    for (unsigned i = 0; i < init.getNumResults(); ++i) {
      StringRef role = roleOf(init, i, true);
      if (role == "step")
        for (const ScalarState &spec : getScalerState(options, mode)) {
          Type element = spec.isInteger ? Type(builder.getIntegerType(64))
                                        : Type(builder.getF32Type());
          auto type = RankedTensorType::get({}, element);
          Attribute value =
              spec.isInteger
                  ? Attribute(builder.getIntegerAttr(
                        element, static_cast<int64_t>(spec.init)))
                  : Attribute(builder.getFloatAttr(element, spec.init));
          results.push_back(builder.create<ConstantOp>(
              init.getLoc(), DenseElementsAttr::get(type, value)));
          names.push_back({spec.name, "scaler"});
        }
      results.push_back(ret.getOperand(i));
      names.push_back({nameOf(init, i, true).str(), role});
    }
    setResults(init, results, names);
  }
  NamedAttrList attrs(info);
  attrs.set("loss_scale",
            StringAttr::get(module.getContext(),
                            mode == LossScaleMode::Dynamic ? "dynamic"
                                                           : "static"));
  attrs.set("loss_scale_min",
            FloatAttr::get(Float32Type::get(module.getContext()),
                           options.scaleMin));
  module->setAttr(kTrainAttrName, attrs.getDictionary(module.getContext()));
  return success();
}

namespace mlir::amp::training {
#define GEN_PASS_DEF_AMPLOSSSCALE
#include "amp/Training/Passes.h.inc"
} // namespace mlir::amp::training

namespace {
struct AmpLossScalePass
    : public training::impl::AmpLossScaleBase<AmpLossScalePass> {
  using AmpLossScaleBase::AmpLossScaleBase;

  void runOnOperation() override {
    TrainStepOptions options;
    LossScaleMode lossMode;
    if (mode == "dynamic") {
      lossMode = LossScaleMode::Dynamic;
    } else if (mode == "static") {
      lossMode = LossScaleMode::Static;
    } else {
      getOperation().emitError("amp-loss-scale: mode must be 'dynamic' or "
                               "'static', not '")
          << mode << "'";
      return signalPassFailure();
    }
    options.staticScale = options.scaleInit = scale;
    options.scaleGrowth = growth;
    options.scaleBackoff = backoff;
    options.scaleInterval = interval;
    options.hysteresis = hysteresis;
    options.scaleMin = minScale;
    options.scaleMax = maxScale;
    if (!(scale > 0) || !(growth >= 1) || !(backoff > 0 && backoff <= 1) ||
        interval < 1 || hysteresis < 1 || !(minScale >= 0) ||
        !(maxScale >= minScale)) {
      getOperation().emitError(
          "amp-loss-scale: invalid options (scale > 0, growth >= 1, "
          "0 < backoff <= 1, interval >= 1, hysteresis >= 1, "
          "0 <= min <= max)");
      return signalPassFailure();
    }
    if (failed(applyLossScaling(getOperation(), options, lossMode)))
      signalPassFailure();
  }
};
} // namespace

AmpLossScaleOptions
mlir::amp::training::getLossScalePassOptions(const TrainStepOptions &options,
                                             LossScaleMode mode) {
  AmpLossScaleOptions pass;
  pass.mode = mode == LossScaleMode::Static ? "static" : "dynamic";
  pass.scale = mode == LossScaleMode::Static ? options.staticScale
                                             : options.scaleInit;
  pass.growth = options.scaleGrowth;
  pass.backoff = options.scaleBackoff;
  pass.interval = options.scaleInterval;
  pass.hysteresis = options.hysteresis;
  pass.minScale = options.scaleMin;
  pass.maxScale = options.scaleMax;
  return pass;
}
