//===- TrainSession.h - a compiled training program and its state -*- C++
//-*-===//
//
// A training program (amp/Training/TrainStep.h: @train_step, @initial_state,
// @main, and with --split-step @compute_gradients/@apply_gradients),
// JIT-compiled, with its state (parameters, buffers, optimizer and scaler
// state, step count): one optimizer step on a batch, the state by name
// (the .npz names), prediction with the current weights, and the ONNX
// model written with them. The training loop (TrainLoop.h) and the Python
// Trainer are drivers over this, so both take the same steps bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_EXECUTION_TRAINSESSION_H
#define AMP_EXECUTION_TRAINSESSION_H

#include "amp/Execution/Communicator.h"
#include "amp/Execution/CpuProgram.h"
#include "amp/Runtime/Npz.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace mlir::amp::execution {

/// Roles and names of a function's arguments and results.
struct TrainSignature {
  SmallVector<std::pair<std::string, std::string>> args, results;
};

/// The training program's signature, read from the roles before lowering.
struct TrainLayout {
  /// @compute_gradients and @apply_gradients (with --split-step).
  std::optional<TrainSignature> compute, apply;
  SmallVector<std::string> argRoles, resultRoles;
  SmallVector<std::string> argNames, resultNames;
  SmallVector<unsigned> stateArgs, stateResults, inputArgs;
  int64_t labelsArg = -1;
  /// The replica index of the Dropout masks (programs with Dropout).
  int64_t replicaArg = -1;
  int64_t lossResult = -1, foundInfResult = -1, nonfiniteResult = -1,
          lrResult = -1, scaleArg = -1;
  SmallVector<std::string> paramNames;
  SmallVector<unsigned> mainState, mainInputs;
  double scaleMin = 0;
  /// Whether the program has loss scaling (it skips overflowing steps).
  bool scaled = false;

  /// Reads the layout of a program built by amp; errors are diagnostics.
  static FailureOr<TrainLayout> read(ModuleOp module);
};

/// What one optimizer step did.
struct StepOutcome {
  double loss = 0;
  /// The loss scale the step ran with (1 without scaling).
  double lossScale = 1;
  double lr = 0;
  /// Non-finite gradients: the step was skipped (with loss scaling).
  bool overflow = false;
};

class TrainSession {
public:
  struct Options {
    /// Also compile @compute_gradients and @apply_gradients.
    bool split = false;
    /// The Dropout masks' replica index (0: a single process's masks).
    int64_t replicaIndex = 0;
    /// Data parallelism: the ranks whose gradients each accumulatedStep
    /// sums (null or one rank: this process alone).
    Communicator *communicator = nullptr;
    /// Another pipeline to the LLVM dialect than the CPU one.
    std::function<void(OpPassManager &)> lowering;
  };

  /// Compiles the training program in `module` (lowered in place) and runs
  /// @initial_state. Errors are diagnostics.
  static FailureOr<std::unique_ptr<TrainSession>>
  create(ModuleOp module, const Options &options);
  ~TrainSession();

  const TrainLayout &getLayout() const { return layout; }
  const CpuFunction &getStep() const { return *stepFn; }
  const CpuFunction &getMain() const { return *mainFn; }
  const CpuFunction *getFunction(StringRef name) const {
    return program->getFunction(name);
  }
  /// Classes of a classifier (integer labels, static class dimension of
  /// @main's first output), else 0.
  int64_t getNumClasses() const { return numClasses; }

  /// The state, in @train_step's state-argument order.
  std::vector<Tensor> &getState() { return state; }
  const std::vector<Tensor> &getState() const { return state; }
  /// The index in the state of train-step argument `arg`.
  unsigned stateIndex(unsigned arg) const;
  /// The current loss scale (1 without loss scaling).
  double getLossScale() const;
  /// The Dropout replica index argument.
  Tensor replicaTensor() const;

  /// One optimizer step through @train_step on a batch (input and labels
  /// checked by the caller, see checkBatch); the state is updated and
  /// `results` is @train_step's results.
  /// Fails when a run-time check fails (a label or index out of range).
  llvm::Expected<StepOutcome> step(Tensor input, Tensor labels,
                                   std::vector<Tensor> &results);
  /// Whether the program has @compute_gradients and @apply_gradients and
  /// the session compiled them (Options::split).
  bool canAccumulate() const;
  /// One optimizer step over `count` micro-batches (`microBatch(k)` gives
  /// micro-batch k's input and labels) through @compute_gradients and
  /// @apply_gradients: the gradients are pre-divided by `count`, the loss is
  /// the micro-batches' mean, one skip decision for the whole step, and
  /// Dropout's counter for micro-batch k is step * count + k. `results`
  /// is in @train_step's layout. Needs canAccumulate(). With a communicator
  /// of N ranks, each rank runs its micro-batches with the gradients
  /// pre-divided by count * N, then one all-reduce (one flat buffer) sums
  /// the gradients, averages the float buffers (BatchNorm's running
  /// statistics) and the loss, and every rank applies the same update: a
  /// non-finite gradient on one rank is non-finite in the sum, so every
  /// rank skips that step.
  llvm::Expected<StepOutcome> accumulatedStep(
      llvm::function_ref<std::pair<Tensor, Tensor>(int64_t)> microBatch,
      int64_t count, std::vector<Tensor> &results);
  /// Checks a batch against @train_step's input and labels (`inputName`,
  /// `labelsName` name them in the message).
  llvm::Error checkBatch(const Tensor &input, const Tensor &labels,
                         StringRef inputName, StringRef labelsName) const;
  /// The outcome of @train_step's (or an accumulated step's) results.
  StepOutcome outcomeOf(const std::vector<Tensor> &results,
                        double lossScale) const;
  /// An error when a step's overflow stops training: without loss scaling
  /// (nothing is skipped), or with the scale at its minimum. `stepNumber`
  /// (from 1) names the step.
  llvm::Error checkOverflow(const StepOutcome &outcome,
                            const std::vector<Tensor> &results,
                            int64_t stepNumber) const;

  /// The state by name (the .npz names).
  amp_runtime::NamedTensors getNamedState() const;
  /// Replaces the state with `arrays` (every name, matching types and
  /// shapes; `source` names them in errors). A `amp_run.batches_done` entry
  /// goes to `batchesDone` if given, else is an error.
  llvm::Error setNamedState(const amp_runtime::NamedTensors &arrays,
                            StringRef source, int64_t *batchesDone = nullptr);

  /// @main on `input` with the current parameters and buffers.
  llvm::Error predict(Tensor input, std::vector<Tensor> &results) const;

  /// Writes the ONNX model the program was built from (`sourceModel`, a
  /// file, or `sourceModelBytes` when given) with the trained parameters
  /// and running statistics to `path`.
  llvm::Error exportOnnx(StringRef path, StringRef sourceModel,
                         StringRef sourceModelBytes = "") const;

  /// Data parallelism: the all-reduces so far (count, seconds spent in
  /// them, including the wait for the slowest rank, and the bytes of the
  /// last one).
  struct AllReduceStats {
    int64_t calls = 0;
    double seconds = 0;
    size_t bytes = 0;
  };
  const AllReduceStats &getAllReduceStats() const { return allReduceStats; }

private:
  TrainSession() = default;
  /// Sums the gradients over the ranks, averages the float buffers and
  /// `loss` (one all-reduce).
  llvm::Error allReduceStep(llvm::StringMap<Tensor> &grads,
                            const llvm::StringMap<unsigned> &byName,
                            double &loss);
  TrainLayout layout;
  std::unique_ptr<CpuProgram> program;
  const CpuFunction *stepFn = nullptr, *mainFn = nullptr;
  std::vector<Tensor> state;
  int64_t numClasses = 0;
  int64_t replicaIndex = 0;
  Communicator *communicator = nullptr;
  AllReduceStats allReduceStats;
};

/// Whether a role of a training program's argument or result is part of
/// the state (param, buffer, optimizer, scaler, step).
bool isStateRole(StringRef role);
/// The role of an argument or result ("input" without one), and its name
/// (amp.name, else value_<i>).
StringRef getTrainRole(DictionaryAttr attrs);
std::string getTrainName(DictionaryAttr attrs, unsigned i);

/// A rank-0 f32 or i64 tensor.
Tensor scalarTensor(float value);
Tensor scalarTensor(int64_t value);
/// The first element of a tensor as a double (0 if empty).
double scalarOf(const Tensor &tensor);

} // namespace mlir::amp::execution

#endif // AMP_EXECUTION_TRAINSESSION_H
