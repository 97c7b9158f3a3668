//===- OpCost.h - rough cost model for autocast reports ---------*- C++ -*-===//

#ifndef AMP_LIB_TRANSFORMS_OPCOST_H
#define AMP_LIB_TRANSFORMS_OPCOST_H

#include "mlir/IR/Operation.h"

namespace mlir::amp {

/// Floating-point operations of one execution of `op` (multiply-add = 2):
/// exact for MatMul, Gemm, Conv, ConvTranspose, Einsum and Attention with
/// static shapes; one per output element for everything else. Dynamic
/// dimensions count as 1.
double estimateFlops(Operation *op);

/// Number of elements of a tensor type (dynamic dimensions count as 1).
int64_t getStaticElementCount(Type type);

} // namespace mlir::amp

#endif // AMP_LIB_TRANSFORMS_OPCOST_H
