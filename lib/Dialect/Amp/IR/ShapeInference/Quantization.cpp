//===- Quantization.cpp - shape rules of the quantization ops -------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferQuantizeLinear(InferenceContext &ctx,
                                         std::optional<Type> outputDtype,
                                         Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x) || failed(requireTensor(ctx, 1)))
    return failure();
  Type elementType = outputDtype.value_or(
      IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned));
  if (RankedTensorType zeroPoint = ctx.getTensorType(2))
    elementType = zeroPoint.getElementType();
  results.push_back(tensorOf(x->getShape(), elementType));
  return success();
}

LogicalResult shape::inferDequantizeLinear(InferenceContext &ctx,
                                           std::optional<Type> outputDtype,
                                           Types &results) {
  auto x = requireTensor(ctx, 0);
  auto scale = requireTensor(ctx, 1);
  if (failed(x) || failed(scale))
    return failure();
  results.push_back(
      tensorOf(x->getShape(), outputDtype.value_or(scale->getElementType())));
  return success();
}

LogicalResult shape::inferDynamicQuantizeLinear(InferenceContext &ctx,
                                                Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  Type u8 = IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned);
  results.push_back(tensorOf(x->getShape(), u8));
  results.push_back(tensorOf({}, Float32Type::get(ctx.getContext())));
  results.push_back(tensorOf({}, u8));
  return success();
}
