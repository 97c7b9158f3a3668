//===- LinearAlgebra.cpp - shape rules: MatMul, Gemm, Einsum and Det ------===//

#include "ShapeInferenceUtils.h"

#include "amp/Dialect/Amp/Semantics/Einsum.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferMatMul(InferenceContext &ctx, Types &results) {
  auto lhs = requireTensor(ctx, 0);
  auto rhs = requireTensor(ctx, 1);
  if (failed(lhs) || failed(rhs) || failed(requireSameElementTypes(ctx, 0, 2)))
    return failure();
  auto dims = semantics::resolveMatMulDims(lhs->getShape(), rhs->getShape(),
                                           ctx.getErrorFn());
  if (failed(dims))
    return failure();
  results.push_back(tensorOf(dims->getResultShape(), lhs->getElementType()));
  return success();
}

LogicalResult shape::inferGemm(InferenceContext &ctx,
                               const semantics::GemmAttrs &attrs,
                               Types &results) {
  auto lhs = requireTensor(ctx, 0);
  auto rhs = requireTensor(ctx, 1);
  if (failed(lhs) || failed(rhs) || failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  if (lhs->getRank() != 2 || rhs->getRank() != 2)
    return ctx.emitError("Gemm operands A and B must be 2-d");
  auto dims = semantics::resolveGemmDims(lhs->getShape(), rhs->getShape(),
                                         attrs, ctx.getErrorFn());
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape = {dims->m, dims->n};
  if (RankedTensorType c = ctx.getTensorType(2)) {
    if (c.getRank() > 2 || !semantics::broadcastShapes(shape, c.getShape()))
      return ctx.emitError("Gemm operand C does not broadcast to (M, N)");
  }
  results.push_back(tensorOf(shape, lhs->getElementType()));
  return success();
}

LogicalResult shape::inferEinsum(InferenceContext &ctx, StringRef equationAttr,
                                 Types &results) {
  if (ctx.getNumOperands() == 0 || failed(requireTensor(ctx, 0)) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())))
    return failure();
  SmallVector<int64_t> ranks;
  for (unsigned i = 0; i < ctx.getNumOperands(); ++i) {
    if (failed(requireTensor(ctx, i)))
      return failure();
    ranks.push_back(ctx.getTensorType(i).getRank());
  }
  bool reported = false;
  auto equation = semantics::resolveEinsum(
      equationAttr, ranks, [&](const Twine &message) {
        reported = true;
        (void)ctx.emitError(message);
      });
  if (failed(equation))
    return reported ? failure() : ctx.emitError("invalid einsum equation");
  // One size per letter; a size-1 dimension broadcasts (ellipsis
  // dimensions share letters right-aligned, so they broadcast too).
  llvm::DenseMap<char, int64_t> letterSize;
  for (auto [index, term] : llvm::enumerate(equation->inputs)) {
    ArrayRef<int64_t> dims = ctx.getTensorType(index).getShape();
    for (auto [letter, size] : llvm::zip(term, dims)) {
      auto [it, inserted] = letterSize.try_emplace(letter, size);
      if (inserted)
        continue;
      if (ShapedType::isDynamic(it->second) || it->second == 1)
        it->second = size == 1 && !ShapedType::isDynamic(it->second)
                         ? it->second
                         : size;
      else if (!ShapedType::isDynamic(size) && it->second != size &&
               size != 1 && !equationAttr.contains(letter))
        return ctx.emitError("einsum ellipsis dimensions do not broadcast");
      else if (!ShapedType::isDynamic(size) && it->second != size &&
               size != 1)
        return ctx.emitError("einsum index '" + llvm::Twine(letter) +
                             "' has sizes " + llvm::Twine(it->second) +
                             " and " + llvm::Twine(size));
    }
  }
  SmallVector<int64_t> shape;
  for (char letter : equation->output)
    shape.push_back(letterSize.lookup(letter));
  results.push_back(tensorOf(shape, ctx.getTensorType(0).getElementType()));
  return success();
}

LogicalResult shape::inferDet(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  if (rank < 2 || failed(checkContraction(ctx, x->getDimSize(rank - 1),
                                          x->getDimSize(rank - 2))))
    return ctx.emitError("Det expects square matrices in the last two "
                         "dimensions");
  results.push_back(tensorOf(x->getShape().drop_back(2), x->getElementType()));
  return success();
}
