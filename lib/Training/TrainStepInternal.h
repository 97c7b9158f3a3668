//===- TrainStepInternal.h - pieces of the train step -----------*- C++ -*-===//
//
// Shared by TrainStep.cpp (assembly), Optimizer.cpp (schedule, clipping and
// update rules) and LossScale.cpp (the loss-scale state machine).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TRAINING_TRAINSTEPINTERNAL_H
#define AMP_LIB_TRAINING_TRAINSTEPINTERNAL_H

#include "amp/Dialect/Amp/Gradients/GradientBuilder.h"
#include "amp/Training/TrainStep.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::amp::training {

using gradients::GradientBuilder;

/// A state value that is not a parameter: its name suffix or name, element
/// type (f32 or i64, rank 0 unless per-parameter) and initial value.
struct ScalarState {
  std::string name;
  bool isInteger;
  double init;
};

// Optimizer.cpp
/// The per-parameter optimizer state, as suffixes of the parameter's name
/// (PyTorch's state names: momentum_buffer, exp_avg, exp_avg_sq).
SmallVector<StringRef> getOptimizerStateNames(const TrainStepOptions &options);
/// The learning rate of optimizer step `stepF` (f32, steps taken so far).
Value buildLearningRate(GradientBuilder &gb, const TrainStepOptions &options,
                        Value stepF);
/// Scales `grads` so that their global L2 norm is at most `maxNorm`
/// (torch.nn.utils.clip_grad_norm_).
void clipGradNorm(GradientBuilder &gb, double maxNorm,
                  MutableArrayRef<Value> grads);
/// One parameter's update: appends the new parameter, then its new state
/// (in getOptimizerStateNames order), to `updated`.
void buildOptimizerUpdate(GradientBuilder &gb, const TrainStepOptions &options,
                          Value lr, Value stepF, Value param, Value grad,
                          ArrayRef<Value> state,
                          SmallVectorImpl<Value> &updated);

// LossScale.cpp
/// The loss scaler's state for `mode`: loss_scale, growth_tracker and, with
/// hysteresis, hysteresis_left.
SmallVector<ScalarState> getScalerState(const TrainStepOptions &options,
                                        LossScaleMode mode);
/// The scaler's next state after a step with `foundInf` (f32 0/1).
void buildScaleUpdate(GradientBuilder &gb, const TrainStepOptions &options,
                      LossScaleMode mode, ArrayRef<Value> state, Value foundInf,
                      SmallVectorImpl<Value> &updated);

// TrainStep.cpp
/// Inserts argument `index` of `func` with `amp.name` and `amp.role`.
Value insertStateArgument(func::FuncOp func, unsigned index, Type type,
                          StringRef name, StringRef role);
/// Replaces the return of `func` with `results` named `names` (name, role).
void setResults(func::FuncOp func, ArrayRef<Value> results,
                ArrayRef<std::pair<std::string, StringRef>> names);

// Dropout.cpp
/// Replaces each training-mode Dropout of `func` by a keep-mask drawn with
/// `getCounter()` (called once per Dropout) as the generator's counter.
LogicalResult lowerTrainingDropouts(func::FuncOp func,
                                    function_ref<Value()> getCounter);
/// Turns the training-mode Dropouts of `func` into eval-mode ones.
LogicalResult makeDropoutsIdentity(func::FuncOp func);

} // namespace mlir::amp::training

#endif // AMP_LIB_TRAINING_TRAINSTEPINTERNAL_H
