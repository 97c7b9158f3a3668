//===- Gather.cpp - shape rules of the gather ops -------------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferReverseSequence(InferenceContext &ctx,
                                          int64_t batchAxis, int64_t timeAxis,
                                          Types &results) {
  auto input = requireTensor(ctx, 0);
  auto lens = requireTensor(ctx, 1);
  if (failed(input) || failed(lens))
    return failure();
  if (input->getRank() < 2)
    return ctx.emitError("ReverseSequence input must have rank 2 or more");
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return ctx.emitError("ReverseSequence batch_axis and time_axis must be 0 "
                         "and 1 in either order, not " +
                         Twine(batchAxis) + " and " + Twine(timeAxis));
  int64_t batch = input->getDimSize(batchAxis);
  if (lens->getRank() != 1 ||
      (!ShapedType::isDynamic(batch) && !lens->isDynamicDim(0) &&
       lens->getDimSize(0) != batch))
    return ctx.emitError("ReverseSequence sequence_lens must be 1-D with the "
                         "batch size " +
                         Twine(ShapedType::isDynamic(batch)
                                   ? std::string("?")
                                   : std::to_string(batch)));
  results.push_back(*input);
  return success();
}

LogicalResult shape::inferGather(InferenceContext &ctx, int64_t axisAttr,
                                 Types &results) {
  auto x = requireTensor(ctx, 0);
  auto indices = requireTensor(ctx, 1);
  if (failed(x) || failed(indices))
    return failure();
  if (x->getRank() == 0)
    return ctx.emitError("Gather data must have rank >= 1");
  auto axis = ctx.normalizeAxis(axisAttr, x->getRank(), "Gather axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(x->getShape().take_front(*axis));
  shape.append(indices->getShape().begin(), indices->getShape().end());
  shape.append(x->getShape().begin() + *axis + 1, x->getShape().end());
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferGatherElements(InferenceContext &ctx,
                                         int64_t axisAttr, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto indices = requireTensor(ctx, 1);
  if (failed(x) || failed(indices))
    return failure();
  if (x->getRank() != indices->getRank())
    return ctx.emitError("GatherElements data and indices must have the "
                         "same rank");
  if (failed(ctx.normalizeAxis(axisAttr, x->getRank())))
    return failure();
  results.push_back(tensorOf(indices->getShape(), x->getElementType()));
  return success();
}

LogicalResult shape::inferGatherND(InferenceContext &ctx, int64_t batchDims,
                                   Types &results) {
  auto x = requireTensor(ctx, 0);
  auto indices = requireTensor(ctx, 1);
  if (failed(x) || failed(indices))
    return failure();
  int64_t q = indices->getRank();
  if (q < 1 || indices->isDynamicDim(q - 1))
    return ctx.emitError("GatherND indices need a static last dimension");
  int64_t k = indices->getDimSize(q - 1);
  if (batchDims < 0 || batchDims + k > x->getRank() || batchDims >= q)
    return ctx.emitError("GatherND indices do not fit the data rank");
  SmallVector<int64_t> shape(indices->getShape().drop_back());
  shape.append(x->getShape().begin() + batchDims + k, x->getShape().end());
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferCompress(InferenceContext &ctx,
                                   std::optional<int64_t> axisAttr,
                                   Types &results) {
  auto x = requireTensor(ctx, 0);
  auto condition = requireTensor(ctx, 1);
  if (failed(x) || failed(condition))
    return failure();
  if (condition->getRank() != 1)
    return ctx.emitError("Compress condition must be 1-D, not of rank " +
                         Twine(condition->getRank()));
  if (axisAttr) {
    auto axis = ctx.normalizeAxis(*axisAttr, x->getRank(), "Compress axis");
    if (failed(axis))
      return failure();
    SmallVector<int64_t> shape(x->getShape());
    shape[*axis] = kDynamic;
    results.push_back(tensorOf(shape, x->getElementType()));
  } else {
    results.push_back(tensorOf({kDynamic}, x->getElementType()));
  }
  return success();
}

LogicalResult shape::inferNonZero(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  results.push_back(tensorOf({x->getRank(), kDynamic},
                             IntegerType::get(ctx.getContext(), 64)));
  return success();
}
