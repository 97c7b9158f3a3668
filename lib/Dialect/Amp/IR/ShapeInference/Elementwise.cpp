//===- Elementwise.cpp - shape rules of the elementwise ops ---------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferConstant(InferenceContext &ctx,
                                   ElementsAttr valueAttr, Types &results) {
  auto value = dyn_cast_or_null<TypedAttr>(valueAttr);
  auto type = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
  if (!type)
    return ctx.emitError("'value' must be a ranked tensor attribute");
  results.push_back(type);
  return success();
}

LogicalResult shape::inferSameAsFirst(InferenceContext &ctx, Types &results) {
  auto type = requireTensor(ctx, 0);
  if (failed(type))
    return failure();
  results.push_back(*type);
  return success();
}

LogicalResult shape::inferBoolLikeFirst(InferenceContext &ctx, Types &results) {
  auto type = requireTensor(ctx, 0);
  if (failed(type))
    return failure();
  results.push_back(
      tensorOf(type->getShape(), IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult shape::inferDropout(InferenceContext &ctx, Types &results) {
  if (failed(inferSameAsFirst(ctx, results)))
    return failure();
  auto type = cast<RankedTensorType>(results.front());
  results.push_back(
      tensorOf(type.getShape(), IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult shape::inferBroadcast(InferenceContext &ctx, Types &results) {
  SmallVector<int64_t> shape;
  if (failed(requireTensor(ctx, 0)) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())) ||
      failed(broadcastShapes(ctx, 0, ctx.getNumOperands(), shape)))
    return failure();
  results.push_back(tensorOf(shape, ctx.getTensorType(0).getElementType()));
  return success();
}

LogicalResult shape::inferBroadcastMixed(InferenceContext &ctx,
                                         Types &results) {
  SmallVector<int64_t> shape;
  if (failed(requireTensor(ctx, 0)) ||
      failed(broadcastShapes(ctx, 0, ctx.getNumOperands(), shape)))
    return failure();
  results.push_back(tensorOf(shape, ctx.getTensorType(0).getElementType()));
  return success();
}

LogicalResult shape::inferBroadcastBool(InferenceContext &ctx, Types &results) {
  SmallVector<int64_t> shape;
  if (failed(requireTensor(ctx, 0)) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())) ||
      failed(broadcastShapes(ctx, 0, ctx.getNumOperands(), shape)))
    return failure();
  results.push_back(tensorOf(shape, IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult shape::inferWhere(InferenceContext &ctx, Types &results) {
  SmallVector<int64_t> shape;
  if (failed(requireTensor(ctx, 1)) ||
      failed(requireSameElementTypes(ctx, 1, 3)) ||
      failed(broadcastShapes(ctx, 0, 3, shape)))
    return failure();
  results.push_back(tensorOf(shape, ctx.getTensorType(1).getElementType()));
  return success();
}

LogicalResult shape::inferCast(InferenceContext &ctx, Type to, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (!to)
    return ctx.emitError("Cast requires a 'to' type attribute");
  results.push_back(tensorOf(x->getShape(), to));
  return success();
}

LogicalResult shape::inferCastLike(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto target = requireTensor(ctx, 1);
  if (failed(x) || failed(target))
    return failure();
  results.push_back(tensorOf(x->getShape(), target->getElementType()));
  return success();
}

LogicalResult shape::inferRandomLike(InferenceContext &ctx,
                                     std::optional<Type> dtype,
                                     Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  results.push_back(
      tensorOf(x->getShape(), dtype.value_or(x->getElementType())));
  return success();
}
