//===- Reduction.cpp - shape rules: Reduce* and ArgMax/ArgMin -------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferReduce(InferenceContext &ctx,
                                 const semantics::ReduceAttrs &attrs,
                                 Types &results) {
  auto type = requireTensor(ctx, 0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  Type elementType = type->getElementType();

  SmallVector<int64_t> axes;
  if (!ctx.isAbsent(1)) {
    std::optional<SmallVector<int64_t>> constant = ctx.getConstantInts(1);
    RankedTensorType axesType = ctx.getTensorType(1);
    // A list of static length 0 is empty whatever produces it.
    if (!constant && axesType && axesType.getRank() == 1 &&
        axesType.getDimSize(0) == 0)
      constant.emplace();
    if (!constant) {
      // Axes known only at run time: the rank is still known when the
      // dimensions are kept or the number of axes is static.
      if (attrs.keepDims) {
        results.push_back(
            tensorOf(SmallVector<int64_t>(rank, kDynamic), elementType));
        return success();
      }
      if (axesType.getRank() != 1 || axesType.isDynamicDim(0))
        return ctx.emitError("reduction axes must be constant, or have a "
                             "static length when keepdims is 0");
      if (axesType.getDimSize(0) > rank)
        return ctx.emitError("reduction axes lists " +
                             llvm::Twine(axesType.getDimSize(0)) +
                             " axes, more than the input's rank " +
                             llvm::Twine(rank));
      results.push_back(tensorOf(
          SmallVector<int64_t>(rank - axesType.getDimSize(0), kDynamic),
          elementType));
      return success();
    }
    axes = std::move(*constant);
  }
  auto reduced =
      semantics::resolveReduceAxes(rank, axes, attrs, ctx.getErrorFn());
  if (failed(reduced))
    return failure();
  if (!*reduced) {
    results.push_back(*type);
    return success();
  }
  results.push_back(tensorOf(
      semantics::getReducedShape(type->getShape(), **reduced, attrs.keepDims),
      elementType));
  return success();
}

LogicalResult shape::inferArgReduce(InferenceContext &ctx,
                                    const semantics::ArgReduceAttrs &attrs,
                                    Types &results) {
  auto type = requireTensor(ctx, 0);
  if (failed(type))
    return failure();
  auto axis = ctx.normalizeAxis(attrs.axis, type->getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(type->getShape());
  if (attrs.keepDims)
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  results.push_back(tensorOf(shape, IntegerType::get(ctx.getContext(), 64)));
  return success();
}
