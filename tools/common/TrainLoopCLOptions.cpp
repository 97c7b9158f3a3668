//===- TrainLoopCLOptions.cpp - amp-run's training flags ------------------===//

#include "common/TrainLoopCLOptions.h"

#include "common/AutocastCLOptions.h"
#include "common/ModelLimitsCLOptions.h"
#include "common/TrainCLOptions.h"

#include "amp/Support/BoundCLOptions.h"
#include "common/CudaTargetCLOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::execution;
namespace cl = llvm::cl;

namespace {
struct TrainLoopCLOptions {
  cl::OptionCategory category{"amp-run training loop (--train)"};
  /// TrainLoopOptions::bind's options as flags named like them.
  BoundCLOptions<TrainLoopOptions> flags{
      category, TrainLoopOptions(),
      [](TrainLoopOptions &o, OptionsBinder &b) { o.bind(b); },
      /*spellings=*/{}, /*prefix=*/""};
};
} // namespace

static llvm::ManagedStatic<TrainLoopCLOptions> loopFlags;

void mlir::amp::execution::registerTrainLoopCLOptions() {
  *loopFlags;
  training::registerTrainCLOptions();
  registerCudaTargetCLOptions();
}

cl::OptionCategory &mlir::amp::execution::getTrainLoopCLCategory() {
  return loopFlags->category;
}

llvm::Expected<TrainJobOptions> mlir::amp::execution::getTrainJobCLOptions() {
  TrainJobOptions job;
  job.loop = loopFlags->flags.get();
  job.loop.limits = getModelLimitsCLOptions();
  // --amp-cuda-emulate: the split step's CUDA artifacts, trained with
  // amp-train-gpu's loop.
  if (getCudaEmulationCLOption())
    job.loop.cudaArtifacts = getCudaTargetCLOptions();
  llvm::Expected<training::TrainStepOptions> step =
      training::getTrainCLOptions();
  if (!step)
    return step.takeError();
  job.step = std::move(*step);
  AmpAutocastOptions autocast = getAutocastCLOptions();
  job.step.frontEnd.runAutocast = !autocast.type.empty();
  job.step.frontEnd.foldConstants = getConstantFoldingCLOption();
  if (autocast.type.empty())
    autocast.type = "f16";
  job.step.frontEnd.autocast = autocast;
  // Under mpirun: data-parallel training, one rank per process.
  if (isLaunchedByMpi()) {
    llvm::Expected<std::unique_ptr<Communicator>> world =
        createMpiCommunicator();
    if (!world)
      return world.takeError();
    job.world = std::move(*world);
    job.loop.communicator = job.world.get();
  }
  return job;
}
