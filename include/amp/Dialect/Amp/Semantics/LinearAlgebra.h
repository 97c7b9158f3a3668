//===- LinearAlgebra.h - dimensions of MatMul and Gemm ----------*- C++ -*-===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_LINEARALGEBRA_H
#define AMP_DIALECT_AMP_SEMANTICS_LINEARALGEBRA_H

#include "amp/Dialect/Amp/Semantics/Common.h"

namespace mlir::amp::semantics {

/// alpha, beta, transA and transB of Gemm.
struct GemmAttrs {
  double alpha = 1.0, beta = 1.0;
  bool transA = false, transB = false;

  template <typename GemmLike> static GemmAttrs get(GemmLike op) {
    return {op.getAlpha().convertToDouble(), op.getBeta().convertToDouble(),
            op.getTransA() != 0, op.getTransB() != 0};
  }
};

/// Y[M, N] = alpha * op(A)[M, K] * op(B)[K, N] + beta * C.
struct GemmDims {
  int64_t m, n, k;
};
/// The dimensions of a Gemm of 2-d `a` and `b`; fails when the contracted
/// sizes differ.
FailureOr<GemmDims> resolveGemmDims(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                                    const GemmAttrs &attrs, ErrorFn error);

/// numpy matmul of `a` and `b` (rank >= 1): a 1-d lhs is a row vector and a
/// 1-d rhs a column vector, whose unit dimension the result drops; the
/// batch dimensions broadcast.
struct MatMulDims {
  SmallVector<int64_t> batch;
  int64_t m, n, k;
  bool lhsIsVector, rhsIsVector;
  /// batch..., [m], [n]: the result shape.
  SmallVector<int64_t> getResultShape() const;
};
FailureOr<MatMulDims> resolveMatMulDims(ArrayRef<int64_t> a,
                                        ArrayRef<int64_t> b, ErrorFn error);

/// Fails with "contracting dimensions differ" when static `lhs` and `rhs`
/// differ.
LogicalResult checkContraction(int64_t lhs, int64_t rhs, ErrorFn error);

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_LINEARALGEBRA_H
