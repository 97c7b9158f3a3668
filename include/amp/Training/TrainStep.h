//===- TrainStep.h - mixed-precision train steps as amp functions -*- C++ -*-===//
//
// Turns an imported model (func @main with its initializers as constants
// marked `amp.initializer`) into a training program:
//
//   @train_step(params..., buffers..., optimizer state..., scaler state...,
//               step, inputs..., labels)
//     -> (loss, new params..., new buffers..., new optimizer state...,
//         new scaler state..., new step, found_inf, nonfinite, lr)
//   @initial_state() -> (params..., buffers..., optimizer state...,
//                        scaler state..., step)
//   @main(params..., buffers..., inputs...) -> outputs   (eval mode)
//
// and, with `splitStep`, @compute_gradients / @apply_gradients. Every
// argument and result carries `amp.name` (e.g. "fc.weight.exp_avg") and
// `amp.role`. Parameters and optimizer state stay fp32; the forward and
// backward passes run at the autocast policy's precision.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRAINING_TRAINSTEP_H
#define AMP_TRAINING_TRAINSTEP_H

#include "amp/Pipelines/Pipelines.h"
#include "amp/Support/OptionsBinder.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>

namespace mlir::amp::training {

enum class LossKind { CrossEntropy, MeanSquaredError, Output };
enum class OptimizerKind { SGD, Momentum, AdamW };
enum class ScheduleKind { Constant, Linear, Cosine, Step };
enum class LossScaleMode { Default, None, Static, Dynamic };

struct TrainStepOptions {
  LossKind loss = LossKind::CrossEntropy;

  OptimizerKind optimizer = OptimizerKind::SGD;
  double lr = 1e-3;
  /// Default: 0 for sgd, 0.9 for momentum.
  std::optional<double> momentum;
  bool nesterov = false;
  /// Default: 0 for sgd/momentum, 0.01 for adamw (PyTorch's defaults).
  std::optional<double> weightDecay;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;

  ScheduleKind schedule = ScheduleKind::Constant;
  int64_t warmupSteps = 0;
  /// Linear and cosine decay reach 0 at this step.
  int64_t totalSteps = 0;
  /// Step schedule: multiply by `gamma` every `stepSize` steps.
  int64_t stepSize = 0;
  double gamma = 0.1;

  /// Clip the global L2 norm of the (unscaled) gradients; 0 = off.
  double clipGradNorm = 0;
  /// Initializers whose name matches are not trained.
  std::string frozen;

  LossScaleMode lossScale = LossScaleMode::Default;
  double staticScale = 1.0;
  double scaleInit = 65536.0, scaleGrowth = 2.0, scaleBackoff = 0.5;
  int64_t scaleInterval = 2000;
  int64_t hysteresis = 1;
  double scaleMin = 0.0;
  double scaleMax = 3.4028234663852886e38;

  /// > 0: the train step's inputs and labels get this static batch size
  /// (dimension 0), so every shape in the step is static (the weight
  /// gradient of a convolution needs it). @main keeps its shapes.
  int64_t batchSize = 0;

  /// Also emit @compute_gradients and @apply_gradients.
  bool splitStep = false;


  /// Import cleanup and autocast of the forward pass (opt level 0 gives a
  /// pure fp32 step).
  FrontEndOptions frontEnd;

  /// A `loss-scale` spelling that did not parse (reported by validate()).
  std::string invalidLossScale;

  /// The options above but frontEnd, for the tools' flags (`--loss`,
  /// `--lr`, ...) and textual options. The loss-scale mode and static
  /// scale are one option, `loss-scale` = dynamic|none|static:S.
  void bind(OptionsBinder &binder);
  /// Checks the values (ranges, combinations); the message names the flag.
  llvm::Error validate() const;

  /// The `loss-scale` spelling of lossScale/staticScale, and its parser
  /// (an error goes to invalidLossScale).
  std::string formatLossScale() const;
  void parseLossScale(llvm::StringRef spelling);
};

/// The loss-scale mode `options` resolve to for low-precision type
/// `lowType` ("f16", "bf16" or "" for fp32): dynamic for f16, none else.
LossScaleMode resolveLossScaleMode(const TrainStepOptions &options);

/// Runs a pass manager on the module (a pass gives its runPipeline).
using PipelineRunner = std::function<LogicalResult(OpPassManager &, ModuleOp)>;

/// Builds the training program in `module` (see above). `module` must come
/// straight from the importer (run with markInitializers), before any
/// cleanup. The cleanup, autocast and loss-scaling passes run through
/// `runner` (default: a PassManager of their own, with the tools'
/// pass-manager flags). Errors are reported as diagnostics.
LogicalResult buildTrainStep(ModuleOp module, const TrainStepOptions &options,
                             const PipelineRunner &runner = {});

/// Registers `amp-train-step{...}`: buildTrainStep as a named pipeline,
/// with TrainStepOptions::bind's options and the front end's (loss=mse
/// optimizer=adamw type=bf16 ...), the same options as amp-opt --train.
void registerAmpTrainStepPipeline();

/// Adds loss scaling in `mode` (static or dynamic) to the unscaled training
/// program in `module`, as the amp-loss-scale pass does: the scaler state
/// (arguments and results with role "scaler", before "step"), the reverse
/// pass seeded with the loss scale (instead of amp.gradient_seed),
/// the unscale by 1/scale in the multi-tensor check, every state update
/// skipped when it finds an Inf/NaN, and the scale update (LossScale.cpp).
LogicalResult applyLossScaling(ModuleOp module,
                               const TrainStepOptions &options,
                               LossScaleMode mode);

/// Names of the module-level attributes describing the program.
constexpr llvm::StringLiteral kTrainAttrName = "amp.train";
constexpr llvm::StringLiteral kRoleAttrName = "amp.role";

} // namespace mlir::amp::training

#endif // AMP_TRAINING_TRAINSTEP_H
