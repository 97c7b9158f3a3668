//===- LaunchLoops.h - a launch's blocks and threads as loops ---*- C++ -*-===//
//
// The CUDA emulation runs a kernel's body once per block and thread on one
// CPU thread: amp-gpu-launches-to-loops for gpu.launch (training's
// emulation) and the artifact emulation for outlined kernels
// (lib/Execution/CudaEmulation.cpp) build the same loops.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_LINALGTOCUDA_LAUNCHLOOPS_H
#define AMP_CONVERSION_LINALGTOCUDA_LAUNCHLOOPS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::amp::cuda {

/// Loops over blocks z, y, x, then threads z, y, x (threadIdx.x innermost),
/// each from 0 to its bound in `bounds` (grid x, y, z, block x, y, z: six
/// index values). Returns the outermost loop; `ids` gets the induction
/// variables in the order of `bounds`, and the builder is left at the start
/// of the innermost body.
scf::ForOp buildLaunchLoops(OpBuilder &b, Location loc, ArrayRef<Value> bounds,
                            SmallVectorImpl<Value> &ids);

} // namespace mlir::amp::cuda

#endif // AMP_CONVERSION_LINALGTOCUDA_LAUNCHLOOPS_H
