//===- TrainCLOptions.cpp - the tools' training flags ---------------------===//

#include "amp/Training/TrainCLOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;
namespace cl = llvm::cl;

namespace {
struct TrainCLOptions {
  cl::OptionCategory category{"amp training options (--train)"};
  cl::opt<LossKind> loss{
      "loss", cl::desc("Loss appended to the model's first output"),
      cl::values(clEnumValN(LossKind::CrossEntropy, "cross-entropy",
                            "softmax cross-entropy against integer class "
                            "labels, mean over the batch (default)"),
                 clEnumValN(LossKind::MeanSquaredError, "mse",
                            "mean squared error against float targets"),
                 clEnumValN(LossKind::Output, "output",
                            "the first output already is the loss")),
      cl::init(LossKind::CrossEntropy), cl::cat(category)};
  cl::opt<OptimizerKind> optimizer{
      "optimizer", cl::desc("Optimizer (PyTorch's update formulas)"),
      cl::values(clEnumValN(OptimizerKind::SGD, "sgd", "torch.optim.SGD"),
                 clEnumValN(OptimizerKind::Momentum, "momentum",
                            "torch.optim.SGD with momentum (default 0.9)"),
                 clEnumValN(OptimizerKind::AdamW, "adamw",
                            "torch.optim.AdamW")),
      cl::init(OptimizerKind::SGD), cl::cat(category)};
  cl::opt<double> lr{"lr", cl::desc("Learning rate (default 0.001)"),
                     cl::init(1e-3), cl::cat(category)};
  cl::opt<double> momentum{"momentum",
                           cl::desc("Momentum (sgd: 0, momentum: 0.9)"),
                           cl::cat(category)};
  cl::opt<bool> nesterov{"nesterov", cl::desc("Nesterov momentum"),
                         cl::cat(category)};
  cl::opt<double> weightDecay{
      "weight-decay",
      cl::desc("Weight decay (sgd/momentum: 0, adamw: 0.01, decoupled)"),
      cl::cat(category)};
  cl::opt<double> beta1{"beta1", cl::desc("AdamW beta1"), cl::init(0.9),
                        cl::cat(category)};
  cl::opt<double> beta2{"beta2", cl::desc("AdamW beta2"), cl::init(0.999),
                        cl::cat(category)};
  cl::opt<double> eps{"eps", cl::desc("AdamW epsilon"), cl::init(1e-8),
                      cl::cat(category)};
  cl::opt<ScheduleKind> schedule{
      "lr-schedule", cl::desc("Learning-rate schedule over optimizer steps"),
      cl::values(clEnumValN(ScheduleKind::Constant, "constant", "constant"),
                 clEnumValN(ScheduleKind::Linear, "linear",
                            "linear decay to 0 at --total-steps"),
                 clEnumValN(ScheduleKind::Cosine, "cosine",
                            "cosine decay to 0 at --total-steps"),
                 clEnumValN(ScheduleKind::Step, "step",
                            "multiply by --lr-gamma every --lr-step-size")),
      cl::init(ScheduleKind::Constant), cl::cat(category)};
  cl::opt<int64_t> warmupSteps{"warmup-steps",
                               cl::desc("Linear warm-up from 0 over N steps"),
                               cl::init(0), cl::cat(category)};
  cl::opt<int64_t> totalSteps{
      "total-steps", cl::desc("Steps of the linear/cosine schedule"),
      cl::init(0), cl::cat(category)};
  cl::opt<int64_t> stepSize{"lr-step-size",
                            cl::desc("Step schedule: steps between decays"),
                            cl::init(0), cl::cat(category)};
  cl::opt<double> gamma{"lr-gamma", cl::desc("Step schedule: decay factor"),
                        cl::init(0.1), cl::cat(category)};
  cl::opt<double> clipGradNorm{
      "clip-grad-norm",
      cl::desc("Clip the global L2 norm of the unscaled gradients"),
      cl::init(0.0), cl::cat(category)};
  cl::opt<std::string> frozen{
      "frozen", cl::desc("Do not train initializers whose name matches"),
      cl::value_desc("regex"), cl::cat(category)};
  cl::opt<std::string> lossScale{
      "loss-scale",
      cl::desc("dynamic (default for f16), static:S, or none (default for "
               "bf16 and fp32)"),
      cl::cat(category)};
  cl::opt<double> scaleInit{"loss-scale-init",
                            cl::desc("Initial dynamic scale (65536)"),
                            cl::init(65536.0), cl::cat(category)};
  cl::opt<double> scaleGrowth{"loss-scale-growth",
                              cl::desc("Growth factor (2)"), cl::init(2.0),
                              cl::cat(category)};
  cl::opt<double> scaleBackoff{"loss-scale-backoff",
                               cl::desc("Backoff factor (0.5)"),
                               cl::init(0.5), cl::cat(category)};
  cl::opt<int64_t> scaleInterval{
      "loss-scale-interval",
      cl::desc("Clean steps in a row before growing (2000)"), cl::init(2000),
      cl::cat(category)};
  cl::opt<double> scaleMin{"loss-scale-min",
                           cl::desc("Smallest scale (default: none)"),
                           cl::init(0.0), cl::cat(category)};
  cl::opt<double> scaleMax{"loss-scale-max",
                           cl::desc("Largest scale (default: FLT_MAX)"),
                           cl::init(3.4028234663852886e38),
                           cl::cat(category)};
  cl::opt<int64_t> hysteresis{
      "loss-scale-hysteresis",
      cl::desc("Back off only after H overflows in a row (1)"), cl::init(1),
      cl::cat(category)};
  cl::opt<int64_t> staticBatch{
      "static-batch",
      cl::desc("Give the train step this static batch size (amp-run sets "
               "it to --batch-size); convolution weight gradients need it"),
      cl::init(0), cl::cat(category)};
  cl::opt<bool> splitStep{
      "split-step",
      cl::desc("Also emit @compute_gradients and @apply_gradients"),
      cl::cat(category)};
};
} // namespace

static llvm::ManagedStatic<TrainCLOptions> clOptions;

void mlir::amp::training::registerTrainCLOptions() { *clOptions; }

cl::OptionCategory &mlir::amp::training::getTrainCLCategory() {
  return clOptions->category;
}

static llvm::Error badValue(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<TrainStepOptions> mlir::amp::training::getTrainCLOptions() {
  const TrainCLOptions &o = *clOptions;
  TrainStepOptions options;
  options.loss = o.loss;
  options.optimizer = o.optimizer;
  options.lr = o.lr;
  if (o.momentum.getNumOccurrences())
    options.momentum = o.momentum;
  options.nesterov = o.nesterov;
  if (o.weightDecay.getNumOccurrences())
    options.weightDecay = o.weightDecay;
  options.beta1 = o.beta1;
  options.beta2 = o.beta2;
  options.eps = o.eps;
  options.schedule = o.schedule;
  options.warmupSteps = o.warmupSteps;
  options.totalSteps = o.totalSteps;
  options.stepSize = o.stepSize;
  options.gamma = o.gamma;
  options.clipGradNorm = o.clipGradNorm;
  options.frozen = o.frozen;
  options.scaleInit = o.scaleInit;
  options.scaleGrowth = o.scaleGrowth;
  options.scaleBackoff = o.scaleBackoff;
  options.scaleInterval = o.scaleInterval;
  options.scaleMin = o.scaleMin;
  options.scaleMax = o.scaleMax;
  options.hysteresis = o.hysteresis;
  options.splitStep = o.splitStep;
  options.batchSize = o.staticBatch;
  if (options.batchSize < 0)
    return badValue("--static-batch must be >= 0");

  if (!(options.lr >= 0))
    return badValue("--lr must be >= 0");
  if (options.nesterov && options.optimizer == OptimizerKind::AdamW)
    return badValue("--nesterov applies to sgd/momentum, not adamw");
  if (options.nesterov && options.momentum.value_or(
                              options.optimizer == OptimizerKind::Momentum
                                  ? 0.9
                                  : 0.0) == 0.0)
    return badValue("--nesterov needs a non-zero --momentum");
  if ((options.schedule == ScheduleKind::Linear ||
       options.schedule == ScheduleKind::Cosine) &&
      options.totalSteps <= options.warmupSteps)
    return badValue("--lr-schedule=linear/cosine needs --total-steps "
                    "greater than --warmup-steps");
  if (options.schedule == ScheduleKind::Step && options.stepSize <= 0)
    return badValue("--lr-schedule=step needs --lr-step-size > 0");
  if (options.warmupSteps < 0)
    return badValue("--warmup-steps must be >= 0");
  if (options.clipGradNorm < 0)
    return badValue("--clip-grad-norm must be >= 0");
  if (!(options.scaleInit > 0) || !(options.scaleGrowth >= 1) ||
      !(options.scaleBackoff > 0 && options.scaleBackoff <= 1) ||
      options.scaleInterval < 1 || options.hysteresis < 1 ||
      !(options.scaleMin >= 0) || !(options.scaleMax >= options.scaleMin))
    return badValue("invalid loss-scale options: need init > 0, growth >= 1, "
                    "0 < backoff <= 1, interval >= 1, hysteresis >= 1 and "
                    "0 <= min <= max");

  StringRef mode = o.lossScale;
  if (mode.empty()) {
    options.lossScale = LossScaleMode::Default;
  } else if (mode == "dynamic") {
    options.lossScale = LossScaleMode::Dynamic;
  } else if (mode == "none") {
    options.lossScale = LossScaleMode::None;
  } else if (mode.consume_front("static:")) {
    options.lossScale = LossScaleMode::Static;
    if (mode.getAsDouble(options.staticScale) || !(options.staticScale > 0))
      return badValue("--loss-scale=static:S needs a number S > 0, got '" +
                      o.lossScale + "'");
  } else {
    return badValue("--loss-scale must be dynamic, none or static:S, got '" +
                    o.lossScale + "'");
  }
  return options;
}
