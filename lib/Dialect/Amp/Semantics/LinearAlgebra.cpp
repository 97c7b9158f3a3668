//===- LinearAlgebra.cpp - dimensions of MatMul and Gemm ------------------===//

#include "amp/Dialect/Amp/Semantics/LinearAlgebra.h"
#include "amp/Dialect/Amp/Semantics/Indexing.h"

using namespace mlir;
using namespace mlir::amp::semantics;

LogicalResult mlir::amp::semantics::checkContraction(int64_t lhs, int64_t rhs,
                                                     ErrorFn error) {
  if (!ShapedType::isDynamic(lhs) && !ShapedType::isDynamic(rhs) &&
      lhs != rhs) {
    error("contracting dimensions differ: " + llvm::Twine(lhs) + " vs " +
          llvm::Twine(rhs));
    return failure();
  }
  return success();
}

FailureOr<GemmDims>
mlir::amp::semantics::resolveGemmDims(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                                      const GemmAttrs &attrs, ErrorFn error) {
  GemmDims dims;
  dims.m = a[attrs.transA ? 1 : 0];
  dims.k = a[attrs.transA ? 0 : 1];
  int64_t kb = b[attrs.transB ? 1 : 0];
  dims.n = b[attrs.transB ? 0 : 1];
  if (failed(checkContraction(dims.k, kb, error)))
    return failure();
  if (ShapedType::isDynamic(dims.k))
    dims.k = kb;
  return dims;
}

FailureOr<MatMulDims>
mlir::amp::semantics::resolveMatMulDims(ArrayRef<int64_t> a,
                                        ArrayRef<int64_t> b, ErrorFn error) {
  if (a.empty() || b.empty()) {
    error("MatMul operands must have rank >= 1");
    return failure();
  }
  SmallVector<int64_t> lhs(a), rhs(b);
  MatMulDims dims;
  dims.lhsIsVector = lhs.size() == 1;
  dims.rhsIsVector = rhs.size() == 1;
  if (dims.lhsIsVector)
    lhs.insert(lhs.begin(), 1);
  if (dims.rhsIsVector)
    rhs.push_back(1);
  dims.m = lhs[lhs.size() - 2];
  dims.k = lhs.back();
  dims.n = rhs.back();
  if (failed(checkContraction(dims.k, rhs[rhs.size() - 2], error)))
    return failure();
  std::optional<SmallVector<int64_t>> batch =
      broadcastShapes(ArrayRef(lhs).drop_back(2), ArrayRef(rhs).drop_back(2));
  if (!batch) {
    error("MatMul batch dimensions do not broadcast");
    return failure();
  }
  dims.batch = std::move(*batch);
  return dims;
}

SmallVector<int64_t> MatMulDims::getResultShape() const {
  SmallVector<int64_t> shape(batch);
  if (!lhsIsVector)
    shape.push_back(m);
  if (!rhsIsVector)
    shape.push_back(n);
  return shape;
}
