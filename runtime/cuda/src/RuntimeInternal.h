//===- RuntimeInternal.h - what the runtime's sources share -----*- C++ -*-===//
//
// The context (one device, one stream) and the per-thread error of the C
// ABI, shared by Runtime.cpp (programs) and Collective.cpp (NCCL).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_GPU_SRC_RUNTIMEINTERNAL_H
#define AMP_GPU_SRC_RUNTIMEINTERNAL_H

#include "amp_gpu/amp_gpu.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

struct AmpContext {
  int device = 0;
  std::string arch;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t cublas = nullptr;
  void *workspace = nullptr;
};

namespace amp_gpu::detail {

/// This thread's last error (ampGetLastError).
extern thread_local std::string lastError;
/// Sets the last error and returns `status`.
AmpStatus fail(const std::string &message, AmpStatus status = AMP_ERROR);
/// True on success; else sets the last error to `what` and CUDA's message.
bool cudaOk(cudaError_t status, const std::string &what);

} // namespace amp_gpu::detail

#endif // AMP_GPU_SRC_RUNTIMEINTERNAL_H
