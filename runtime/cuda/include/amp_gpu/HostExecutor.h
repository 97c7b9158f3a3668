//===- HostExecutor.h - an artifact's schedule run on the CPU -------------===//
//
// The CUDA emulation (amp-run --amp-cuda-emulate) runs the artifact the
// compiler built, not a CPU program that resembles it: every buffer at its
// planned arena offset (the arena is filled with NaN before each run, so a
// plan that lets two live buffers share bytes, or a step that reads a
// buffer before it is written, shows in the results), the weights blob,
// the GEMMs through planGemm and runGemmOnHost with the artifact's
// transposes, leading dimensions, batch strides, alpha and beta, the copies,
// and the kernels with the parameters the CUDA runtime packs for them. Only
// the kernels' code differs: the emulation compiles each kernel for the
// CPU as a function that loops over the grid and the block.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_GPU_HOSTEXECUTOR_H
#define AMP_GPU_HOSTEXECUTOR_H

#include "amp_gpu/Artifact.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace amp_gpu {

/// A kernel compiled for the host, called through MLIR's packed calling
/// convention: one pointer per parameter, the kernel's parameters as the
/// CUDA runtime packs them (a memref as allocated pointer, aligned pointer,
/// offset, sizes and strides; a scalar in a 64-bit slot), then the grid's
/// and the block's x, y and z sizes as 64-bit integers.
using HostKernel = void (*)(void **);

/// A kernel step's parameters as `cudaLaunchKernel` reads them, one 64-bit
/// slot each: a memref as allocated pointer, aligned pointer (both
/// `bases[buffer] + byteOffset`), offset, sizes and strides; a scalar as
/// its bit pattern.
std::vector<uint64_t> packKernelParams(const Step &step,
                                       const std::vector<char *> &bases);

/// Fills a Random buffer's `size` bytes as the runtime does when loading
/// (SplitMix64 from `seed`, uniform in [-scale, scale), rounded to the
/// buffer's type).
void fillRandomBuffer(const Buffer &buffer, char *out);

class HostProgram {
public:
  /// Validates `artifact` (validateArtifact and every GEMM's plan) and
  /// takes one host kernel per `artifact.kernels` entry. Null with `error`
  /// on failure.
  static std::unique_ptr<HostProgram> create(Artifact artifact,
                                             std::vector<HostKernel> kernels,
                                             std::string &error);
  ~HostProgram();

  const Artifact &getArtifact() const { return artifact; }

  /// Runs the schedule: `inputs[i]` holds input i's bytes
  /// (`TensorSignature::byteSize`), `outputs[i]` receives output i's.
  bool run(const std::vector<const void *> &inputs,
           const std::vector<void *> &outputs, std::string &error);

private:
  HostProgram() = default;
  char *address(const BufferRef &ref) const {
    return bases[ref.buffer] + ref.byteOffset;
  }

  Artifact artifact;
  std::vector<HostKernel> kernels;
  char *arena = nullptr, *weights = nullptr;
  std::vector<char *> bases;
  /// Per kernel step: the packed parameters (pointers into `storage`).
  std::vector<std::vector<uint64_t>> storage;
  std::vector<std::vector<void *>> params;
};

} // namespace amp_gpu

#endif // AMP_GPU_HOSTEXECUTOR_H
