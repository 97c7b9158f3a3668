//===- TopK.cpp - shape rules: TopK ---------------------------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferTopK(InferenceContext &ctx, int64_t axisAttr,
                               Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  auto axis = ctx.normalizeAxis(axisAttr, x->getRank(), "TopK axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(x->getShape());
  auto k = ctx.getConstantInts(1);
  shape[*axis] = k && k->size() == 1 ? (*k)[0] : kDynamic;
  results.push_back(tensorOf(shape, x->getElementType()));
  results.push_back(tensorOf(shape, IntegerType::get(ctx.getContext(), 64)));
  return success();
}
