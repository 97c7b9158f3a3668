//===- GemmPlan.cpp - an artifact's GEMM as cuBLASLt is asked to run it ---===//

#include "amp_gpu/GemmPlan.h"

#include "amp/Runtime/FloatConversion.h"

#include <cstring>
#include <vector>

using namespace amp_gpu;

ColumnMajorGemm amp_gpu::planGemm(const Gemm &g) {
  ColumnMajorGemm plan;
  plan.transX = g.transB;
  plan.transY = g.transA;
  // Column-major shapes of the stored matrices: B^T is n x k, A^T is k x m.
  plan.x = {g.bType, g.transB ? g.k : g.n, g.transB ? g.n : g.k, g.ldb,
            g.strideB};
  plan.y = {g.aType, g.transA ? g.m : g.k, g.transA ? g.k : g.m, g.lda,
            g.strideA};
  plan.out = {g.cType, g.n, g.m, g.ldc, g.strideC};
  plan.xRef = g.b;
  plan.yRef = g.a;
  plan.outRef = g.c;
  plan.batch = g.batch;
  plan.alpha = g.alpha;
  plan.beta = g.beta;
  return plan;
}

bool amp_gpu::checkGemmPlan(const ColumnMajorGemm &plan, std::string &error) {
  auto layout = [&](const MatrixLayout &l, const char *name) {
    if (l.rows <= 0 || l.cols <= 0) {
      error = std::string(name) + " is " + std::to_string(l.rows) + " x " +
              std::to_string(l.cols);
      return false;
    }
    if (l.ld < l.rows) {
      error = std::string(name) + ": leading dimension " +
              std::to_string(l.ld) + " is below its " + std::to_string(l.rows) +
              " rows";
      return false;
    }
    if (plan.batch > 1 && l.batchStride < 0) {
      error = std::string(name) + ": negative batch stride";
      return false;
    }
    return true;
  };
  if (!layout(plan.x, "the first operand (B)") ||
      !layout(plan.y, "the second operand (A)") ||
      !layout(plan.out, "the result (C)"))
    return false;
  if (plan.batch < 1) {
    error = "batch count " + std::to_string(plan.batch);
    return false;
  }
  int64_t xRows = plan.transX ? plan.x.cols : plan.x.rows;
  int64_t xCols = plan.transX ? plan.x.rows : plan.x.cols;
  int64_t yRows = plan.transY ? plan.y.cols : plan.y.rows;
  int64_t yCols = plan.transY ? plan.y.rows : plan.y.cols;
  if (xCols != yRows || plan.out.rows != xRows || plan.out.cols != yCols) {
    error = "op(B) is " + std::to_string(xRows) + " x " +
            std::to_string(xCols) + ", op(A) " + std::to_string(yRows) + " x " +
            std::to_string(yCols) + ", C " + std::to_string(plan.out.rows) +
            " x " + std::to_string(plan.out.cols);
    return false;
  }
  return true;
}

namespace {

double load(DType type, const void *base, int64_t index) {
  const char *p = static_cast<const char *>(base);
  switch (type) {
  case DType::F64: {
    double v;
    std::memcpy(&v, p + 8 * index, 8);
    return v;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, p + 2 * index, 2);
    return type == DType::F16 ? amp_runtime::halfBitsToFloat(bits)
                              : amp_runtime::bfloat16BitsToFloat(bits);
  }
  default: {
    float v;
    std::memcpy(&v, p + 4 * index, 4);
    return v;
  }
  }
}

void store(DType type, void *base, int64_t index, double value) {
  char *p = static_cast<char *>(base);
  switch (type) {
  case DType::F64:
    std::memcpy(p + 8 * index, &value, 8);
    return;
  case DType::F16:
  case DType::BF16: {
    uint16_t bits = type == DType::F16
                        ? amp_runtime::floatToHalfBits(float(value))
                        : amp_runtime::floatToBFloat16Bits(float(value));
    std::memcpy(p + 2 * index, &bits, 2);
    return;
  }
  default: {
    float v = float(value);
    std::memcpy(p + 4 * index, &v, 4);
    return;
  }
  }
}

} // namespace

void amp_gpu::runGemmOnHost(const ColumnMajorGemm &plan, const void *x,
                            const void *y, void *out) {
  const bool f64 = plan.out.type == DType::F64;
  const int64_t rows = plan.out.rows, cols = plan.out.cols;
  const int64_t inner = plan.transX ? plan.x.rows : plan.x.cols;
  std::vector<double> yColumn(inner), acc(rows);
  for (int64_t b = 0; b < plan.batch; ++b) {
    const int64_t xBase = b * plan.x.batchStride;
    const int64_t yBase = b * plan.y.batchStride;
    const int64_t outBase = b * plan.out.batchStride;
    for (int64_t j = 0; j < cols; ++j) {
      // op(y)(:, j), then each row i of op(x) against it.
      for (int64_t l = 0; l < inner; ++l)
        yColumn[l] =
            load(plan.y.type, y,
                 yBase + (plan.transY ? j + l * plan.y.ld : l + j * plan.y.ld));
      for (int64_t i = 0; i < rows; ++i) {
        double sum64 = 0;
        float sum32 = 0;
        for (int64_t l = 0; l < inner; ++l) {
          double xv = load(
              plan.x.type, x,
              xBase + (plan.transX ? l + i * plan.x.ld : i + l * plan.x.ld));
          if (f64)
            sum64 += xv * yColumn[l];
          else
            sum32 += float(xv) * float(yColumn[l]);
        }
        acc[i] = f64 ? sum64 : double(sum32);
      }
      for (int64_t i = 0; i < rows; ++i) {
        int64_t index = outBase + i + j * plan.out.ld;
        if (f64) {
          double v = double(plan.alpha) * acc[i];
          if (plan.beta != 0)
            v += double(plan.beta) * load(plan.out.type, out, index);
          store(plan.out.type, out, index, v);
        } else {
          float v = plan.alpha * float(acc[i]);
          if (plan.beta != 0)
            v += plan.beta * float(load(plan.out.type, out, index));
          store(plan.out.type, out, index, v);
        }
      }
    }
  }
}
