//===- Training.cpp - shape rules of the training ops ---------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferMultiTensorUnscaleCheck(InferenceContext &ctx,
                                                  Types &results) {
  auto invScale = requireTensor(ctx, 0);
  if (failed(invScale))
    return failure();
  if (invScale->getRank() != 0 || !invScale->getElementType().isF32())
    return ctx.emitError("inv_scale must be a rank-0 f32 tensor");
  unsigned numGrads = ctx.getNumOperands() - 1;
  for (unsigned i = 1; i <= numGrads; ++i) {
    auto grad = requireTensor(ctx, i);
    if (failed(grad))
      return failure();
    results.push_back(*grad);
  }
  Type f32 = Float32Type::get(ctx.getContext());
  results.push_back(tensorOf({}, f32));
  results.push_back(tensorOf({static_cast<int64_t>(numGrads)}, f32));
  return success();
}
