//===- CudaGemm.h - which linalg GEMMs cuBLASLt runs, and how ---*- C++ -*-===//
//
// One answer for the CUDA lowering (which ops stay library calls) and the
// artifact writer (the cuBLASLt call it records): a GEMM's operands, types
// and row-major layouts, transposed views included.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_LINALGTOCUDA_CUDAGEMM_H
#define AMP_CONVERSION_LINALGTOCUDA_CUDAGEMM_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace mlir::amp::cuda {

/// Row-major C[m,n] = alpha * op(A) x op(B) + beta * C, `batch` times. A is
/// stored m x k (k x m when transA) with row stride lda; B is stored k x n
/// (n x k when transB). Offsets and strides count elements.
struct GemmLayout {
  Value a, b, c;
  Type aType, bType, cType;
  bool transA = false, transB = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  int64_t offsetA = 0, offsetB = 0, offsetC = 0;
  float beta = 1;
};

/// The attribute marking a GEMM whose output need not be read (the zero
/// fill before it was folded away).
constexpr const char *kBetaAttrName = "amp_cuda.beta";

/// The layout of a bufferized linalg.matmul, matmul_transpose_b,
/// batch_matmul or batch_matmul_transpose_b that cuBLASLt can run: fp32
/// output from f16, bf16 or f32 operands (fp32 compute), or f64 throughout;
/// static shapes; a unit stride in the last or second-to-last dimension of
/// each operand (the output: the last). Fails otherwise.
FailureOr<GemmLayout> getCudaGemm(Operation *op);

} // namespace mlir::amp::cuda

#endif // AMP_CONVERSION_LINALGTOCUDA_CUDAGEMM_H
