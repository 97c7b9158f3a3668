//===- CudaTargetCLOptions.cpp - amp-opt's --amp-target and --amp-cuda-* --===//

#include "amp/Target/CUDA/CudaArtifact.h"

#include "llvm/Support/CommandLine.h"

using namespace llvm;

static cl::OptionCategory cudaCategory("amp CUDA target options");
static cl::opt<std::string>
    target("amp-target",
           cl::desc("cpu (default: write MLIR or ONNX) or cuda (compile a "
                    ".ampgpu artifact for amp-run-gpu)"),
           cl::init("cpu"), cl::cat(cudaCategory));
static cl::opt<std::string>
    chip("amp-cuda-chip", cl::desc("GPU architecture of the cubin and PTX"),
         cl::init("sm_90"), cl::cat(cudaCategory));
static cl::opt<std::string>
    toolkit("amp-cuda-toolkit",
            cl::desc("CUDA toolkit with ptxas and libdevice (default: "
                     "$CUDA_HOME, $CUDA_PATH, $CUDA_ROOT or /usr/local/cuda)"),
            cl::cat(cudaCategory));
static cl::opt<std::string> entry("amp-cuda-entry",
                                  cl::desc("The function to compile"),
                                  cl::init("main"), cl::cat(cudaCategory));
static cl::opt<unsigned>
    blockSize("amp-cuda-block-size",
              cl::desc("Threads per block of the generated kernels"),
              cl::init(256), cl::cat(cudaCategory));
static cl::opt<bool>
    noCubin("amp-cuda-no-cubin",
            cl::desc("Store only PTX (the runtime JIT-compiles it on load)"),
            cl::init(false), cl::cat(cudaCategory));

static cl::opt<bool> randomWeights(
    "amp-cuda-random-weights",
    cl::desc("Leave float weights (>= 4096 elements) out of the artifact; "
             "the runtime generates seeded random values with the same "
             "RMS when loading (small files for benchmarks)"),
    cl::init(false), cl::cat(cudaCategory));
static cl::opt<bool> emulate(
    "amp-cuda-emulate",
    cl::desc("amp-run: run the CUDA lowering's kernels as CPU loops (each "
             "launch's blocks and threads), to test the CUDA backend on a "
             "machine without a GPU"),
    cl::init(false), cl::cat(cudaCategory));

std::function<void(mlir::OpPassManager &)>
mlir::amp::getCudaEmulationCLOption() {
  if (!emulate)
    return {};
  CudaLoweringOptions options = getCudaTargetCLOptions().lowering;
  return
      [options](OpPassManager &pm) { buildCudaEmulationPipeline(pm, options); };
}

mlir::FailureOr<bool> mlir::amp::isCudaTargetRequested() {
  if (target != "cpu" && target != "cuda") {
    errs() << "error: unknown --amp-target '" << target
           << "' (expected cpu or cuda)\n";
    return failure();
  }
  return target == "cuda";
}

mlir::amp::CudaArtifactOptions mlir::amp::getCudaTargetCLOptions() {
  CudaArtifactOptions options;
  options.lowering.chip = chip;
  options.lowering.toolkitPath =
      toolkit.empty() ? findCudaToolkit() : std::string(toolkit);
  options.lowering.blockSize = blockSize;
  options.entry = entry;
  options.cubin = !noCubin;
  options.randomWeights = randomWeights;
  return options;
}
