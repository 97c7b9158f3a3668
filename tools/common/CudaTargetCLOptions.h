//===- CudaTargetCLOptions.h - --amp-target and --amp-cuda-* ----*- C++ -*-===//
//
// amp-opt's CUDA target flags: --amp-target=cpu|cuda and the artifact's
// options (CudaArtifactOptions::bind, as --amp-cuda-chip, --amp-cuda-
// toolkit, --amp-cuda-block-size, --amp-cuda-entry, --amp-cuda-no-cubin,
// --amp-cuda-random-weights); amp-run's --amp-cuda-emulate.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TOOLS_COMMON_CUDATARGETCLOPTIONS_H
#define AMP_TOOLS_COMMON_CUDATARGETCLOPTIONS_H

#include "amp/Target/CUDA/CudaArtifact.h"

#include <functional>

namespace mlir::amp {

/// Registers the flags (before the command line is parsed).
void registerCudaTargetCLOptions();

/// Whether --amp-target=cuda was given (an error for another value).
FailureOr<bool> isCudaTargetRequested();
/// The artifact's options (the toolkit found if not given).
CudaArtifactOptions getCudaTargetCLOptions();
/// With --amp-cuda-emulate, the CUDA emulation pipeline for the CPU JIT
/// (see buildCudaEmulationPipeline); else an empty function.
std::function<void(OpPassManager &)> getCudaEmulationCLOption();

} // namespace mlir::amp

#endif // AMP_TOOLS_COMMON_CUDATARGETCLOPTIONS_H
