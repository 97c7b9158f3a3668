//===- GemmPlan.h - an artifact's GEMM as cuBLASLt is asked to run it -----===//
//
// Artifacts describe GEMMs row-major (C = op(A) op(B), as the compiler sees
// them). cuBLASLt is column-major: the runtime passes row-major C = A B as
// column-major C^T = B^T A^T, B's memory first and A's second, so that no
// data moves. planGemm is that translation, used by the CUDA runtime to
// build its cuBLASLt layouts and by the CUDA emulation, whose reference
// GEMM (runGemmOnHost) computes what cuBLASLt is asked for from the same
// plan: a wrong transpose, leading dimension or batch stride in an
// artifact changes the emulation's result as it would the GPU's.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_GPU_GEMMPLAN_H
#define AMP_GPU_GEMMPLAN_H

#include "amp_gpu/Artifact.h"

#include <cstdint>
#include <string>

namespace amp_gpu {

/// A matrix as cuBLASLt sees it: column-major, `rows` x `cols`, column `j`
/// at `j * ld` elements, batch `b` at `b * batchStride` elements.
struct MatrixLayout {
  DType type = DType::F32;
  int64_t rows = 0, cols = 0, ld = 0, batchStride = 0;
};

/// out = alpha * op(x) * op(y) + beta * out, column-major, `batch` times.
struct ColumnMajorGemm {
  bool transX = false, transY = false;
  MatrixLayout x, y, out;
  BufferRef xRef, yRef, outRef;
  int64_t batch = 1;
  float alpha = 1, beta = 1;
};

/// The translation of an artifact's GEMM (x is B, y is A, out is C^T).
ColumnMajorGemm planGemm(const Gemm &gemm);

/// The checks cuBLASLt makes of the layouts (leading dimensions at least
/// the rows, the inner dimensions agreeing, positive sizes); false with
/// `error` on failure.
bool checkGemmPlan(const ColumnMajorGemm &plan, std::string &error);

/// Runs `plan` on the host: products accumulated in float (double for
/// f64), alpha and beta applied in the accumulator's precision, `out` not
/// read when beta is 0, the result rounded to out's type (f16/bf16:
/// nearest even). Supports f32, f16, bf16 and f64 operands.
void runGemmOnHost(const ColumnMajorGemm &plan, const void *x, const void *y,
                   void *out);

} // namespace amp_gpu

#endif // AMP_GPU_GEMMPLAN_H
