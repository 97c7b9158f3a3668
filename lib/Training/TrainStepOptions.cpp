//===- TrainStepOptions.cpp - the train step's options, declared once -----===//
//
// TrainStepOptions::bind lists every option of the train-step builder once
// (name, description; defaults are the struct's initialisers); the tools'
// flags (TrainCLOptions.cpp) are bound from it. validate() holds the checks
// every front end shares.
//
//===----------------------------------------------------------------------===//

#include "amp/Training/TrainStep.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;

void TrainStepOptions::bind(OptionsBinder &b) {
  bindEnum(b, {"loss", "Loss appended to the model's first output"}, loss,
           {{int(LossKind::CrossEntropy), "cross-entropy",
             "softmax cross-entropy against integer class labels, mean over "
             "the batch (default)"},
            {int(LossKind::MeanSquaredError), "mse",
             "mean squared error against float targets"},
            {int(LossKind::Output), "output",
             "the first output already is the loss"}});
  bindEnum(b, {"optimizer", "Optimizer (PyTorch's update formulas)"},
           optimizer,
           {{int(OptimizerKind::SGD), "sgd", "torch.optim.SGD"},
            {int(OptimizerKind::Momentum), "momentum",
             "torch.optim.SGD with momentum (default 0.9)"},
            {int(OptimizerKind::AdamW), "adamw", "torch.optim.AdamW"}});
  b.bind({"lr", "Learning rate (default 0.001)"}, lr);
  b.bind({"momentum", "Momentum (sgd: 0, momentum: 0.9)"}, momentum);
  b.bind({"nesterov", "Nesterov momentum"}, nesterov);
  b.bind({"weight-decay",
          "Weight decay (sgd/momentum: 0, adamw: 0.01, decoupled)"},
         weightDecay);
  b.bind({"beta1", "AdamW beta1"}, beta1);
  b.bind({"beta2", "AdamW beta2"}, beta2);
  b.bind({"eps", "AdamW epsilon"}, eps);
  bindEnum(b, {"lr-schedule", "Learning-rate schedule over optimizer steps"},
           schedule,
           {{int(ScheduleKind::Constant), "constant", "constant"},
            {int(ScheduleKind::Linear), "linear",
             "linear decay to 0 at --total-steps"},
            {int(ScheduleKind::Cosine), "cosine",
             "cosine decay to 0 at --total-steps"},
            {int(ScheduleKind::Step), "step",
             "multiply by --lr-gamma every --lr-step-size"}});
  b.bind({"warmup-steps", "Linear warm-up from 0 over N steps"}, warmupSteps);
  b.bind({"total-steps", "Steps of the linear/cosine schedule"}, totalSteps);
  b.bind({"lr-step-size", "Step schedule: steps between decays"}, stepSize);
  b.bind({"lr-gamma", "Step schedule: decay factor"}, gamma);
  b.bind({"clip-grad-norm",
          "Clip the global L2 norm of the unscaled gradients"},
         clipGradNorm);
  b.bind({"frozen", "Do not train initializers whose name matches (regex)"},
         frozen);
  // One spelling for two fields; parsed only when a binder changed it (a
  // binder that only reads must not clear a recorded error).
  std::string scaling = formatLossScale(), before = scaling;
  b.bind({"loss-scale", "dynamic (default for f16), static:S, or none "
                        "(default for bf16 and fp32)"},
         scaling);
  if (scaling != before)
    parseLossScale(scaling);
  b.bind({"loss-scale-init", "Initial dynamic scale (65536)"}, scaleInit);
  b.bind({"loss-scale-growth", "Growth factor (2)"}, scaleGrowth);
  b.bind({"loss-scale-backoff", "Backoff factor (0.5)"}, scaleBackoff);
  b.bind({"loss-scale-interval",
          "Clean steps in a row before growing (2000)"},
         scaleInterval);
  b.bind({"loss-scale-min", "Smallest scale (default: none)"}, scaleMin);
  b.bind({"loss-scale-max", "Largest scale (default: FLT_MAX)"}, scaleMax);
  b.bind({"loss-scale-hysteresis",
          "Back off only after H overflows in a row (1)"},
         hysteresis);
  b.bind({"static-batch",
          "Give the train step this static batch size (amp-run sets it to "
          "--batch-size); convolution weight gradients need it"},
         batchSize);
  b.bind({"split-step", "Also emit @compute_gradients and @apply_gradients"},
         splitStep);
}

std::string TrainStepOptions::formatLossScale() const {
  switch (lossScale) {
  case LossScaleMode::Default:
    return "";
  case LossScaleMode::None:
    return "none";
  case LossScaleMode::Dynamic:
    return "dynamic";
  case LossScaleMode::Static:
    return "static:" + std::to_string(staticScale);
  }
  return "";
}

void TrainStepOptions::parseLossScale(StringRef spelling) {
  invalidLossScale.clear();
  StringRef mode = spelling;
  if (mode.empty()) {
    lossScale = LossScaleMode::Default;
  } else if (mode == "dynamic") {
    lossScale = LossScaleMode::Dynamic;
  } else if (mode == "none") {
    lossScale = LossScaleMode::None;
  } else if (mode.consume_front("static:")) {
    lossScale = LossScaleMode::Static;
    if (mode.getAsDouble(staticScale) || !(staticScale > 0))
      invalidLossScale = ("--loss-scale=static:S needs a number S > 0, got '" +
                          spelling + "'")
                             .str();
  } else {
    invalidLossScale = ("--loss-scale must be dynamic, none or static:S, got '" +
                        spelling + "'")
                           .str();
  }
}

static llvm::Error badValue(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error TrainStepOptions::validate() const {
  if (!invalidLossScale.empty())
    return badValue(invalidLossScale);
  if (batchSize < 0)
    return badValue("--static-batch must be >= 0");
  if (!(lr >= 0))
    return badValue("--lr must be >= 0");
  if (nesterov && optimizer == OptimizerKind::AdamW)
    return badValue("--nesterov applies to sgd/momentum, not adamw");
  if (nesterov &&
      momentum.value_or(optimizer == OptimizerKind::Momentum ? 0.9 : 0.0) ==
          0.0)
    return badValue("--nesterov needs a non-zero --momentum");
  if ((schedule == ScheduleKind::Linear || schedule == ScheduleKind::Cosine) &&
      totalSteps <= warmupSteps)
    return badValue("--lr-schedule=linear/cosine needs --total-steps "
                    "greater than --warmup-steps");
  if (schedule == ScheduleKind::Step && stepSize <= 0)
    return badValue("--lr-schedule=step needs --lr-step-size > 0");
  if (warmupSteps < 0)
    return badValue("--warmup-steps must be >= 0");
  if (clipGradNorm < 0)
    return badValue("--clip-grad-norm must be >= 0");
  if (!(scaleInit > 0) || !(scaleGrowth >= 1) ||
      !(scaleBackoff > 0 && scaleBackoff <= 1) || scaleInterval < 1 ||
      hysteresis < 1 || !(scaleMin >= 0) || !(scaleMax >= scaleMin))
    return badValue("invalid loss-scale options: need init > 0, growth >= 1, "
                    "0 < backoff <= 1, interval >= 1, hysteresis >= 1 and "
                    "0 <= min <= max");
  if (lossScale == LossScaleMode::Static && !(staticScale > 0))
    return badValue("--loss-scale=static:S needs a number S > 0");
  return llvm::Error::success();
}
