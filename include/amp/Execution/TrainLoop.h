//===- TrainLoop.h - training on the CPU ------------------------*- C++ -*-===//
//
// Runs a training program (see amp/Training/TrainStep.h) over a data set
// of .npy/.pb arrays: batching, shuffling, progress lines, evaluation,
// .npz state files and a CSV log. amp-run --train is a driver over this.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_EXECUTION_TRAINLOOP_H
#define AMP_EXECUTION_TRAINLOOP_H

#include "amp/Execution/Communicator.h"
#include "amp/Support/OptionsBinder.h"
#include "amp/Target/CUDA/CudaArtifact.h"
#include "amp/Target/ONNX/ModelLimits.h"
#include "amp/Training/TrainStep.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::amp::execution {

struct TrainLoopOptions {
  std::string data, labels, evalData, evalLabels;
  int64_t batchSize = 32;
  /// Exactly one of them is set (> 0).
  int64_t epochs = 0, steps = 0;
  uint64_t shuffleSeed = 0;
  bool shuffle = true;
  int64_t logEvery = 10;
  /// Micro-batches of `batchSize` per optimizer step (through
  /// @compute_gradients and @apply_gradients).
  int64_t accumulate = 1;
  /// This process's replica index among data-parallel replicas: the
  /// Dropout masks' generator key includes it (0 draws a single process's
  /// masks).
  int64_t replicaIndex = 0;
  /// Data parallelism: a rank that sees no step finish for this many
  /// seconds ends the job (another rank hung or died); 0: never.
  int64_t rankTimeout = 1800;
  std::string loadState, saveState, logCsv;
  /// Caps on the model and the data files.
  ModelLimits limits;
  /// --export-onnx: write `sourceModel` (the ONNX model trained) with the
  /// trained parameters and running statistics.
  std::string exportOnnx, sourceModel;
  /// The ONNX model itself where a built program carries it
  /// (amp.onnx_source); `sourceModel` then names the program.
  std::string sourceModelBytes;
  /// Another pipeline to the LLVM dialect than the CPU one (the CUDA
  /// lowering's kernels as CPU loops).
  std::function<void(OpPassManager &)> lowering;
  /// amp-run --train --amp-cuda-emulate: train the split step's CUDA
  /// artifacts, built in memory with their kernels compiled for the CPU,
  /// with amp-train-gpu's loop (see CudaTrainEmulation.h).
  std::optional<CudaArtifactOptions> cudaArtifacts;
  /// Data parallelism (amp-run under mpirun): `batchSize` is the global
  /// batch, split evenly over the ranks; rank r takes rows [r B/N,
  /// (r+1) B/N) of each global batch, its Dropout replica index is r, and
  /// rank 0 alone writes the progress, the CSV log, the state and the ONNX
  /// export. A rank's error ends every rank (Communicator::abort). Null or
  /// one rank: a single process.
  Communicator *communicator = nullptr;

  /// The options a user gives (--data, --labels, --batch-size, ...; not
  /// the limits, the source model or the lowering), declared once for the
  /// tools' flags and other front ends.
  void bind(OptionsBinder &binder);
  /// Checks the values; the message names the flag.
  llvm::Error validate() const;
};

/// Compiles the training program in `module` (@train_step, @initial_state,
/// @main) and trains. Progress goes to `log`; errors are diagnostics or
/// "error: ..." lines on llvm::errs(). Writes no partial files.
LogicalResult runTrainLoop(ModuleOp module, const TrainLoopOptions &options,
                           llvm::raw_ostream &log);

/// amp-run --train's job: loads `path` (an ONNX model, whose train step is
/// built with `step`, or a training program in .mlir, for which `step` is
/// not used) and trains it with `loop`. The step's batch size defaults to
/// the loop's, --accumulate > 1 splits the step, and the front end's
/// folding budget is the loop's limit. Errors are diagnostics or "error:"
/// lines on llvm::errs().
LogicalResult trainModel(StringRef path, MLIRContext &context,
                         llvm::SourceMgr &sourceMgr, llvm::raw_ostream &log,
                         TrainLoopOptions loop,
                         training::TrainStepOptions step);

/// Stores the ONNX model at `onnxPath`, which the train step in `module`
/// was built from, in the program (amp.onnx_source, without the data of
/// what it trains: @initial_state's params and buffers), so that
/// `amp-run program --train --export-onnx` can write it with the trained
/// weights. Reports an error at the module on failure.
LogicalResult storeONNXSource(ModuleOp module, llvm::StringRef onnxPath);

} // namespace mlir::amp::execution

#endif // AMP_EXECUTION_TRAINLOOP_H
