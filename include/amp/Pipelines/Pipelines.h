//===- Pipelines.h - amp's named pass pipelines -----------------*- C++ -*-===//
//
// Every pipeline amp runs is built here, once, and registered by name so
// that textual pass pipelines (`amp-opt --pass-pipeline=...`, or another
// compiler that links the library) get the same passes as the tools:
//
//   amp-import-cleanup  canonicalize + CSE of an imported graph
//   amp-front-end       import cleanup -> [constant folding] -> amp-autocast
//                       -> amp-cast-cleanup -> [constant folding], with
//                       amp-autocast's options (type=bf16, ...)
//   amp-lower-to-llvm   amp -> linalg -> LLVM dialect for the CPU JIT
//   amp-lower-to-cuda   amp -> linalg -> GPU launches (PTX) + host
//                       schedule, for the CUDA artifact writer
//   amp-train-step      the training program (lib/Training, registered by
//                       registerAmpTrainStepPipeline)
//
// Their options are the option structs' bind() (amp/Support/
// OptionsBinder.h), the same the tools' flags are made from.
//
// amp-opt, amp-run (and the Python package) build their pipelines through
// these functions.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_PIPELINES_H
#define AMP_PIPELINES_PIPELINES_H

#include "amp/Target/ONNX/ModelLimits.h"
#include "amp/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <memory>
#include <string>

namespace mlir::amp {

/// Options of the front end: what runs between import and lowering.
struct FrontEndOptions {
  /// Canonicalize + CSE first (what every imported graph needs).
  bool importCleanup = true;
  /// Run amp-autocast (and amp-cast-cleanup) with `autocast`.
  bool runAutocast = true;
  AmpAutocastOptions autocast;
  /// amp-cast-cleanup's release-weights: drop fp32 weights that autocast
  /// replaced (off when the fp32 module is still needed).
  bool releaseWeights = true;
  /// Run the registered constant folder (setConstantFolder) after the
  /// import cleanup and after autocast.
  bool foldConstants = true;
  /// The bytes each run of the constant folder may materialise.
  int64_t foldMaxBytes = ModelLimits().maxFoldBytes;

  /// The options (amp-autocast's from Passes.td, then the front end's), for
  /// the `amp-front-end{...}` pipeline options and the tools' flags.
  void bind(OptionsBinder &binder);
};

/// The constant folder of the front end: a pass factory, given the bytes
/// the pass may materialise, that a library above this one registers
/// (lib/Execution's amp-fold-constants evaluates with the CPU backend).
/// Without one, only the ops' folders fold.
void setConstantFolder(
    std::function<std::unique_ptr<Pass>(int64_t maxBytes)> factory);

/// Canonicalize + CSE of an imported graph (no region simplification:
/// graphs have no control flow between blocks).
void buildImportCleanupPipeline(OpPassManager &pm);

/// Import cleanup -> amp-autocast -> amp-cast-cleanup, as `options` say.
void buildFrontEndPipeline(OpPassManager &pm, const FrontEndOptions &options);

/// amp -> linalg -> bufferized loops and oneDNN calls -> LLVM dialect, for
/// the CPU JIT.
void buildCpuLoweringPipeline(OpPassManager &pm);
/// Its parts: one-shot bufferization (identity layouts at function
/// boundaries), shared with the CUDA pipeline; and bufferized linalg ->
/// oneDNN calls and loops -> LLVM dialect. `callerOwnsArguments`: the
/// functions are called by amp_runtime::callPacked, which knows results
/// that are its input buffers, so returned arguments are not cloned (see
/// amp-return-arguments-uncloned).
void buildBufferizationPipeline(OpPassManager &pm);
void buildCpuBuffersToLLVMPipeline(OpPassManager &pm,
                                   bool callerOwnsArguments = false);

/// Options of the CUDA lowering.
struct CudaLoweringOptions {
  /// The GPU architecture the PTX is generated for.
  std::string chip = "sm_90";
  /// The CUDA toolkit (libdevice for the math functions).
  std::string toolkitPath;
  /// Threads per block of the generated kernels.
  unsigned blockSize = 256;

  /// chip, toolkit (empty: findCudaToolkit()), block-size: the
  /// `amp-lower-to-cuda{...}` options and the tools' --amp-cuda-* flags.
  void bind(OptionsBinder &binder);
};

/// amp -> linalg -> bufferized buffers; linalg ops -> gpu.launch or
/// cuBLASLt GEMMs -> kernels outlined into one gpu.module (@amp_kernels) of
/// gpu.funcs: the first half of buildCudaLoweringPipeline, where the CUDA
/// emulation (amp-run --amp-cuda-emulate) compiles the kernels for the CPU.
void buildCudaKernelPipeline(OpPassManager &pm,
                             const CudaLoweringOptions &options);

/// amp -> linalg -> bufferized buffers; linalg ops -> gpu.launch (one
/// thread per point of the parallel iteration space) or cuBLASLt GEMMs ->
/// outlined kernels -> NVVM -> PTX in gpu.binary ops. The host function
/// stays in memref form for lib/Target/CUDA.
void buildCudaLoweringPipeline(OpPassManager &pm,
                               const CudaLoweringOptions &options);

/// The CUDA lowering's emulation on the CPU: the same front half and
/// launches (amp-linalg-to-gpu), then each launch as loops over its blocks
/// and threads (amp-gpu-launches-to-loops) through the CPU back end, so
/// that the CPU JIT runs what the kernels compute.
void buildCudaEmulationPipeline(OpPassManager &pm,
                                const CudaLoweringOptions &options);

/// Registers every dialect, interface and translation the CUDA pipeline
/// needs (a superset of registerAmpCpuDialects').
void registerAmpCudaDialects(DialectRegistry &registry);

/// $CUDA_HOME, $CUDA_PATH or $CUDA_ROOT, else /usr/local/cuda.
std::string findCudaToolkit();

/// Registers amp-lower-to-cuda and the upstream GPU passes. It lives in its own library
/// (AmpCudaPipeline, with the NVPTX back end), which only the tools that
/// compile for CUDA link.
void registerAmpCudaPipeline();

/// Registers the pipelines above under their names (see the file comment).
void registerAmpPipelines();

/// Registers every dialect and interface the CPU pipeline needs.
void registerAmpCpuDialects(DialectRegistry &registry);

} // namespace mlir::amp

#endif // AMP_PIPELINES_PIPELINES_H
