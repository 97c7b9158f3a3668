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

LogicalResult shape::inferDropoutMask(InferenceContext &ctx, Types &results) {
  auto data = requireTensor(ctx, 0);
  auto ratio = requireTensor(ctx, 1);
  auto counter = requireTensor(ctx, 2);
  if (failed(data) || failed(ratio) || failed(counter))
    return failure();
  if (ratio->getRank() != 0)
    return ctx.emitError("ratio must be a rank-0 tensor");
  if (counter->getRank() != 0)
    return ctx.emitError("counter must be a rank-0 i64 tensor");
  results.push_back(
      tensorOf(data->getShape(), IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult shape::inferGradientSeed(InferenceContext &ctx, Types &results) {
  results.push_back(tensorOf({}, Float32Type::get(ctx.getContext())));
  return success();
}
