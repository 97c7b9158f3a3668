//===- CudaArtifact.h - amp modules -> .ampgpu artifacts --------*- C++ -*-===//
//
// `amp-opt --amp-target=cuda` compiles an amp module ahead of time for a
// GPU machine: the amp-lower-to-cuda pipeline, then this writer, which
// turns the host function into the artifact's schedule (launches, cuBLASLt
// GEMMs, copies), plans the device arena by liveness, stores the weights
// in their storage precision and the kernels as PTX and (through ptxas)
// cubin. The format is runtime/cuda/include/amp_gpu/Artifact.h.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_CUDA_CUDAARTIFACT_H
#define AMP_TARGET_CUDA_CUDAARTIFACT_H

#include "amp/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <string>

namespace amp_gpu {
struct Artifact;
} // namespace amp_gpu

namespace mlir::amp {

struct CudaArtifactOptions {
  CudaLoweringOptions lowering;
  /// The function to compile.
  std::string entry = "main";
  /// Compile the PTX to a cubin for `lowering.chip` with the toolkit's
  /// ptxas (if it is found; the runtime JIT-compiles the PTX otherwise).
  bool cubin = true;
  /// Recorded in the artifact.
  std::string source;
  /// Leave float weights of 4096 elements or more out of the file: the
  /// runtime generates seeded uniform values with the same root mean
  /// square when loading. For benchmarks (small files); results differ.
  bool randomWeights = false;
  /// Stop before NVVM: the outlined kernels stay in the module as
  /// gpu.funcs and the artifact's kernels refer to one Host module (the
  /// CUDA emulation compiles them for the CPU). Not a tool flag.
  bool hostKernels = false;

  /// The lowering's options, then entry, no-cubin and random-weights (the
  /// tools' --amp-cuda-* flags).
  void bind(OptionsBinder &binder);
};

/// Lowers `module` (amp dialect, static shapes) with the CUDA pipeline and
/// writes the artifact to `path` (atomically). Errors are emitted on the
/// module or the offending op.
LogicalResult compileToCudaArtifact(ModuleOp module, StringRef path,
                                    const CudaArtifactOptions &options);

/// The same, building the artifact in memory (validated) instead of
/// writing it.
LogicalResult buildCudaArtifact(ModuleOp module,
                                const CudaArtifactOptions &options,
                                amp_gpu::Artifact &artifact);

} // namespace mlir::amp

#endif // AMP_TARGET_CUDA_CUDAARTIFACT_H
