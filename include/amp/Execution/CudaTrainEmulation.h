//===- CudaTrainEmulation.h - amp-train-gpu's loop on the CPU ---*- C++ -*-===//
//
// amp-run --train --amp-cuda-emulate: the split train step compiled into
// its three CUDA artifacts (in memory, kernels compiled for the CPU) and
// trained with the GPU driver's loop (amp_gpu::runTraining); under mpirun
// the ranks exchange the flat buffer over MPI where the GPUs use NCCL.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_EXECUTION_CUDATRAINEMULATION_H
#define AMP_EXECUTION_CUDATRAINEMULATION_H

#include "amp/Execution/TrainLoop.h"
#include "amp/Target/CUDA/CudaArtifact.h"

namespace mlir::amp::execution {

/// Trains the training program in `module` (with @initial_state,
/// @compute_gradients and @apply_gradients) as amp-train-gpu would, with
/// the emulated artifacts. Errors are "error: ..." lines or diagnostics; a
/// failed rank ends the job (Communicator::abort).
LogicalResult trainCudaArtifactsEmulated(ModuleOp module,
                                         const TrainLoopOptions &options,
                                         const CudaArtifactOptions &cuda,
                                         llvm::raw_ostream &log);

} // namespace mlir::amp::execution

#endif // AMP_EXECUTION_CUDATRAINEMULATION_H
