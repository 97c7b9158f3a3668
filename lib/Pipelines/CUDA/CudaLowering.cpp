//===- CudaLowering.cpp - amp -> GPU kernels (PTX) + host schedule --------===//
//
// The CUDA pipeline shares the CPU pipeline's front half (amp -> linalg,
// elementwise fusion, bufferization), so both backends compute the same
// loops. It then maps linalg onto launches (amp-linalg-to-gpu), outlines
// the kernels and compiles them through NVVM to PTX for `chip`. The host
// function is left as a list of allocations, views, GEMMs and launches,
// which lib/Target/CUDA turns into an artifact's schedule.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Pipelines/Pipelines.h"

#include "amp/Pipelines/BoundPipelineOptions.h"
#include "amp/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::amp;

/// amp -> linalg -> buffers -> launches and library GEMMs.
static void buildCudaLaunchPipeline(OpPassManager &pm,
                                    const CudaLoweringOptions &options) {
  ConvertAmpToLinalgOptions lowering;
  lowering.parallelUnscale = true; // loss scaling's check, in parallel
  // The artifact's schedule has no host calls: indices are clamped but
  // not reported (docs/CudaBackend.md).
  lowering.runtimeChecks = false;
  // No host-side loops in the artifact's schedule yet: If/Loop/Scan and the
  // recurrent ops are refused by name.
  lowering.hostLoops = false;
  lowering.targetName = "the CUDA target";
  pm.addPass(createAmpDecompose()); // function ops (Attention)
  pm.addPass(createConvertAmpToLinalg(lowering));
  pm.addPass(createCanonicalizerPass());
  // Before fusion, while the widening generics are still separate.
  pm.addPass(createAmpPrepareCudaGemms());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createAmpFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildBufferizationPipeline(pm);
  AmpLinalgToGpuOptions mapping;
  mapping.blockSize = options.blockSize;
  pm.addPass(createAmpLinalgToGpu(mapping));
}

void mlir::amp::buildCudaEmulationPipeline(OpPassManager &pm,
                                           const CudaLoweringOptions &options) {
  buildCudaLaunchPipeline(pm, options);
  pm.addPass(createAmpGpuLaunchesToLoops());
  pm.addPass(createCanonicalizerPass());
  buildCpuBuffersToLLVMPipeline(pm);
}

void mlir::amp::buildCudaKernelPipeline(OpPassManager &pm,
                                        const CudaLoweringOptions &options) {
  buildCudaLaunchPipeline(pm, options);
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createAmpCollectKernels());
}

void mlir::amp::buildCudaLoweringPipeline(OpPassManager &pm,
                                          const CudaLoweringOptions &options) {
  buildCudaKernelPipeline(pm, options);

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // Only the kernels are lowered; the host function keeps its memrefs.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertSCFToCFPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkitPath;
  binary.compilationTarget = "isa"; // PTX; ptxas makes the cubins
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::amp::registerAmpCudaDialects(DialectRegistry &registry) {
  registerAmpCpuDialects(registry);
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void CudaLoweringOptions::bind(OptionsBinder &binder) {
  binder.bind({"chip", "GPU architecture of the cubin and PTX (sm_90)"}, chip);
  binder.bind({"toolkit", "CUDA toolkit with ptxas and libdevice (default: "
                          "$CUDA_HOME, $CUDA_PATH, $CUDA_ROOT or "
                          "/usr/local/cuda)"},
              toolkitPath);
  binder.bind({"block-size", "Threads per block of the generated kernels"},
              blockSize);
}

void mlir::amp::registerAmpCudaPipeline() {
  // The upstream GPU passes the pipeline uses (outlining, NVVM target,
  // serialisation), for textual pipelines and tests.
  registerGPUPasses();
  PassPipelineRegistration<BoundPipelineOptions<CudaLoweringOptions>>(
      "amp-lower-to-cuda",
      "Lower an amp module to GPU kernels (PTX) and a host schedule of "
      "launches and cuBLASLt GEMMs (what amp-opt --amp-target=cuda runs "
      "before writing the artifact)",
      [](OpPassManager &pm,
         const BoundPipelineOptions<CudaLoweringOptions> &options) {
        CudaLoweringOptions lowering = options.get();
        if (lowering.toolkitPath.empty())
          lowering.toolkitPath = findCudaToolkit();
        buildCudaLoweringPipeline(pm, lowering);
      });
}

std::string mlir::amp::findCudaToolkit() {
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *value = std::getenv(variable); value && *value)
      return value;
  return "/usr/local/cuda";
}
