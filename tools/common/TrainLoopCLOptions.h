//===- TrainLoopCLOptions.h - amp-run's training flags ----------*- C++ -*-===//
//
// The flags of amp-run --train: the loop's (--data, --labels, --epochs, ...:
// TrainLoopOptions::bind), and the whole job as the tool's flags give it
// (loop, train step, autocast and caps), so that amp-run stays a driver.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TOOLS_COMMON_TRAINLOOPCLOPTIONS_H
#define AMP_TOOLS_COMMON_TRAINLOOPCLOPTIONS_H

#include "amp/Execution/TrainLoop.h"

#include <memory>

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace mlir::amp::execution {

/// Registers the loop flags, and the training and CUDA target flags the
/// job reads (before the command line is parsed).
void registerTrainLoopCLOptions();
llvm::cl::OptionCategory &getTrainLoopCLCategory();

/// What amp-run --train runs, as the flags give it.
struct TrainJobOptions {
  TrainLoopOptions loop;
  training::TrainStepOptions step;
  /// Under an MPI launcher: the ranks of a data-parallel job
  /// (`loop.communicator` points to it).
  std::unique_ptr<Communicator> world;
};

/// The loop flags, the training flags (common/TrainCLOptions.h), the
/// autocast flags (no --amp-type: an fp32 step), the caps and
/// --amp-cuda-emulate; under mpirun, the MPI world. Fails on a bad
/// training flag or when MPI cannot start.
llvm::Expected<TrainJobOptions> getTrainJobCLOptions();

} // namespace mlir::amp::execution

#endif // AMP_TOOLS_COMMON_TRAINLOOPCLOPTIONS_H
