//===- CudaEmulation.h - the CUDA artifact run on the CPU -------*- C++ -*-===//
//
// `amp-run --amp-cuda-emulate` compiles a model as `amp-opt --amp-target=
// cuda` does, up to the outlined kernels, builds the same artifact in
// memory (schedule, buffers, memory plan, GEMM settings, kernel
// parameters), compiles each kernel for the CPU as a function looping over
// its grid and block, and runs the artifact with amp_gpu::HostProgram. So
// everything the GPU runs but the kernels' machine code and cuBLASLt itself
// is exercised without a GPU: a wrong transpose, leading dimension, batch
// stride, beta, arena offset, copy or kernel argument changes the result.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_EXECUTION_CUDAEMULATION_H
#define AMP_EXECUTION_CUDAEMULATION_H

#include "amp/Execution/CpuProgram.h"
#include "amp/Target/CUDA/CudaArtifact.h"

namespace amp_gpu {
class HostProgram;
} // namespace amp_gpu

namespace mlir::amp::execution {

/// An artifact built in memory with its kernels compiled for the CPU: the
/// schedule runs with amp_gpu::HostProgram.
struct EmulatedArtifact {
  std::unique_ptr<JitCode> jit;
  std::unique_ptr<amp_gpu::HostProgram> host;
  ~EmulatedArtifact();
};

/// Lowers `module` (in place) with the CUDA pipeline for entry
/// `options.entry` and builds its emulated artifact.
FailureOr<std::shared_ptr<EmulatedArtifact>>
compileEmulatedArtifact(ModuleOp module, CudaArtifactOptions options);

/// Compiles `module` (amp dialect, static shapes; lowered in place) into an
/// emulated CUDA artifact whose entry `options.entry` runs as a CpuProgram
/// function (same signature and calls as the CPU backend's).
FailureOr<std::unique_ptr<CpuProgram>>
compileCudaEmulation(ModuleOp module, CudaArtifactOptions options);

/// The artifact's kernels (the gpu.funcs of the module's gpu.modules) as
/// host functions in a new module: each takes the kernel's parameters, then
/// the grid's and the block's x, y, z sizes, and runs the body once per
/// block and thread (blocks z, y, x, then threads z, y, x, threadIdx.x
/// innermost). Fails on what a sequential loop cannot run (shared memory,
/// barriers, any other GPU operation).
FailureOr<OwningOpRef<ModuleOp>> extractHostKernels(ModuleOp module);

} // namespace mlir::amp::execution

#endif // AMP_EXECUTION_CUDAEMULATION_H
