//===- CudaGemm.cpp - linalg GEMMs as cuBLASLt calls ----------------------===//

#include "amp/Conversion/LinalgToCUDA/CudaGemm.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

using namespace mlir;
using namespace mlir::amp::cuda;

namespace {

struct Strided {
  SmallVector<int64_t> shape, strides;
  int64_t offset = 0;
};

std::optional<Strided> getStrided(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Strided result;
  if (failed(getStridesAndOffset(type, result.strides, result.offset)) ||
      ShapedType::isDynamic(result.offset) ||
      llvm::any_of(result.strides, ShapedType::isDynamic))
    return std::nullopt;
  result.shape.assign(type.getShape().begin(), type.getShape().end());
  return result;
}

/// How a logical rows x cols matrix with the given strides is stored:
/// row-major (false) or as its row-major transpose (true), and the row
/// stride of what is stored. Size-1 dimensions accept any stride.
std::optional<std::pair<bool, int64_t>>
matrixLayout(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride) {
  if ((cols == 1 || colStride == 1) && (rows == 1 || rowStride >= cols))
    return std::make_pair(false,
                          rows == 1 ? std::max<int64_t>(cols, 1) : rowStride);
  if ((rows == 1 || rowStride == 1) && (cols == 1 || colStride >= rows))
    return std::make_pair(true,
                          cols == 1 ? std::max<int64_t>(rows, 1) : colStride);
  return std::nullopt;
}

bool isGemmOp(Operation *op, bool &batched, bool &transposedB) {
  batched = isa<linalg::BatchMatmulOp, linalg::BatchMatmulTransposeBOp>(op);
  transposedB =
      isa<linalg::MatmulTransposeBOp, linalg::BatchMatmulTransposeBOp>(op);
  return isa<linalg::MatmulOp, linalg::MatmulTransposeBOp,
             linalg::BatchMatmulOp, linalg::BatchMatmulTransposeBOp>(op);
}

} // namespace

FailureOr<GemmLayout> mlir::amp::cuda::getCudaGemm(Operation *op) {
  bool batched, transposedB;
  if (!isGemmOp(op, batched, transposedB))
    return failure();
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (!linalgOp.hasPureBufferSemantics() || linalgOp.getNumDpsInputs() != 2)
    return failure();
  // Named matmuls may carry a non-default cast (unsigned); those stay loops.
  if (auto cast = op->getAttrOfType<linalg::TypeFnAttr>("cast"))
    if (cast.getValue() != linalg::TypeFn::cast_signed)
      return failure();
  GemmLayout g;
  g.a = linalgOp.getDpsInputs()[0];
  g.b = linalgOp.getDpsInputs()[1];
  g.c = linalgOp.getDpsInits()[0];
  g.aType = getElementTypeOrSelf(g.a.getType());
  g.bType = getElementTypeOrSelf(g.b.getType());
  g.cType = getElementTypeOrSelf(g.c.getType());
  bool lowPrecisionIn = g.aType.isF16() || g.aType.isBF16() || g.aType.isF32();
  if (g.aType != g.bType || !((g.cType.isF32() && lowPrecisionIn) ||
                              (g.cType.isF64() && g.aType.isF64())))
    return failure();
  std::optional<Strided> a = getStrided(g.a), b = getStrided(g.b),
                         c = getStrided(g.c);
  if (!a || !b || !c)
    return failure();
  size_t o = batched ? 1 : 0;
  if (batched) {
    g.batch = c->shape[0];
    if (a->shape[0] != g.batch || b->shape[0] != g.batch)
      return failure();
    g.strideA = a->strides[0];
    g.strideB = b->strides[0];
    g.strideC = c->strides[0];
    if (g.batch == 1)
      g.strideA = g.strideB = g.strideC = 0;
  }
  g.m = c->shape[o];
  g.n = c->shape[o + 1];
  g.k = a->shape[o + 1];
  // Logical B is k x n; matmul_transpose_b stores it n x k.
  int64_t bRowStride = transposedB ? b->strides[o + 1] : b->strides[o];
  int64_t bColStride = transposedB ? b->strides[o] : b->strides[o + 1];
  auto aLayout = matrixLayout(g.m, g.k, a->strides[o], a->strides[o + 1]);
  auto bLayout = matrixLayout(g.k, g.n, bRowStride, bColStride);
  auto cLayout = matrixLayout(g.m, g.n, c->strides[o], c->strides[o + 1]);
  if (!aLayout || !bLayout || !cLayout || cLayout->first)
    return failure();
  std::tie(g.transA, g.lda) = *aLayout;
  std::tie(g.transB, g.ldb) = *bLayout;
  g.ldc = cLayout->second;
  g.offsetA = a->offset;
  g.offsetB = b->offset;
  g.offsetC = c->offset;
  if (auto beta = op->getAttrOfType<FloatAttr>(kBetaAttrName))
    g.beta = static_cast<float>(beta.getValueAsDouble());
  // cuBLASLt takes 32-bit batch counts and needs non-empty matrices.
  if (g.m == 0 || g.n == 0 || g.k == 0 || g.batch > INT32_MAX)
    return failure();
  return g;
}
