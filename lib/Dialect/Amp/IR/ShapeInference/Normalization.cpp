//===- Normalization.cpp - shape rules of the normalization ops -----------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferBatchNorm(InferenceContext &ctx, bool trainingMode,
                                    Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() < 2)
    return ctx.emitError("BatchNormalization expects an input of rank >= 2");
  for (unsigned i = 1; i < 5; ++i) {
    RankedTensorType param = ctx.getTensorType(i);
    if (!param || param.getRank() != 1 ||
        failed(checkContraction(ctx, param.getDimSize(0), x->getDimSize(1))))
      return ctx.emitError("BatchNormalization operand #" + llvm::Twine(i) +
                           " must be a 1-d tensor of size C");
  }
  results.push_back(*x);
  if (trainingMode) {
    results.push_back(ctx.getTensorType(3));
    results.push_back(ctx.getTensorType(4));
  }
  return success();
}

LogicalResult shape::inferLayerNorm(InferenceContext &ctx, int64_t axisAttr,
                                    int64_t stashType, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x) || failed(requireTensor(ctx, 1)))
    return failure();
  auto axis = ctx.normalizeAxis(axisAttr, x->getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> statsShape(x->getShape());
  std::fill(statsShape.begin() + *axis, statsShape.end(), 1);
  Type statsType =
      stashType == 1 ? Float32Type::get(ctx.getContext()) : x->getElementType();
  results.push_back(*x);
  results.push_back(tensorOf(statsShape, statsType));
  results.push_back(tensorOf(statsShape, statsType));
  return success();
}
