//===- CudaTargetCLOptions.cpp - --amp-target and --amp-cuda-* ------------===//

#include "common/CudaTargetCLOptions.h"

#include "amp/Support/BoundCLOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;
using namespace mlir::amp;
namespace cl = llvm::cl;

namespace {
struct CudaTargetCLOptions {
  cl::OptionCategory category{"amp CUDA target options"};
  cl::opt<std::string> target{
      "amp-target",
      cl::desc("cpu (default: write MLIR or ONNX) or cuda (compile a .ampgpu "
               "artifact for amp-run-gpu)"),
      cl::init("cpu"), cl::cat(category)};
  /// CudaArtifactOptions::bind's options as --amp-cuda-<name>.
  BoundCLOptions<CudaArtifactOptions> artifact{
      category, CudaArtifactOptions(),
      [](CudaArtifactOptions &o, OptionsBinder &b) { o.bind(b); },
      /*spellings=*/{}, /*prefix=*/"amp-cuda-"};
  cl::opt<bool> emulate{
      "amp-cuda-emulate",
      cl::desc("amp-run: run the CUDA artifact on the CPU (its memory plan, "
               "GEMM settings, copies and kernel parameters; the kernels "
               "compiled for the CPU as loops over their blocks and "
               "threads), to test the CUDA backend on a machine without a "
               "GPU (--train: the kernels as loops in the CPU program)"),
      cl::init(false), cl::cat(category)};
};
} // namespace

static llvm::ManagedStatic<CudaTargetCLOptions> clOptions;

void mlir::amp::registerCudaTargetCLOptions() { *clOptions; }

FailureOr<bool> mlir::amp::isCudaTargetRequested() {
  const std::string &target = clOptions->target;
  if (target != "cpu" && target != "cuda") {
    llvm::errs() << "error: unknown --amp-target '" << target
                 << "' (expected cpu or cuda)\n";
    return failure();
  }
  return target == "cuda";
}

CudaArtifactOptions mlir::amp::getCudaTargetCLOptions() {
  CudaArtifactOptions options = clOptions->artifact.get();
  if (options.lowering.toolkitPath.empty())
    options.lowering.toolkitPath = findCudaToolkit();
  return options;
}

std::function<void(OpPassManager &)> mlir::amp::getCudaEmulationCLOption() {
  if (!clOptions->emulate)
    return {};
  CudaLoweringOptions options = getCudaTargetCLOptions().lowering;
  return
      [options](OpPassManager &pm) { buildCudaEmulationPipeline(pm, options); };
}
