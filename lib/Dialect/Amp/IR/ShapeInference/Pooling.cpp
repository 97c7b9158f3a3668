//===- Pooling.cpp - shape rules of the pooling ops -----------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferPool(InferenceContext &ctx,
                               const semantics::WindowAttrs &attrs,
                               Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() < 3)
    return ctx.emitError("pooling expects an input of rank >= 3");
  if (!attrs.kernelShape)
    return ctx.emitError("pooling requires 'kernel_shape'");
  auto window = semantics::resolveWindow(attrs, x->getShape().drop_front(2),
                                         *attrs.kernelShape, ctx.getErrorFn());
  if (failed(window))
    return failure();
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1)};
  shape.append(window->outputSizes.begin(), window->outputSizes.end());
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferMaxPool(InferenceContext &ctx,
                                  const semantics::WindowAttrs &attrs,
                                  Types &results) {
  if (failed(inferPool(ctx, attrs, results)))
    return failure();
  auto values = cast<RankedTensorType>(results.front());
  results.push_back(
      tensorOf(values.getShape(), IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferGlobalPool(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() < 3)
    return ctx.emitError("global pooling expects an input of rank >= 3");
  SmallVector<int64_t> shape(x->getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferMaxUnpool(InferenceContext &ctx,
                                    MaxUnpoolOpAdaptor adaptor,
                                    Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() < 3)
    return ctx.emitError("MaxUnpool expects an input of rank >= 3");
  if (auto shape = ctx.getConstantInts(2)) {
    if (static_cast<int64_t>(shape->size()) != x->getRank())
      return ctx.emitError("MaxUnpool output_shape must match the rank");
    results.push_back(tensorOf(*shape, x->getElementType()));
    return success();
  }
  size_t n = x->getRank() - 2;
  ArrayRef<int64_t> kernel = adaptor.getKernelShape();
  SmallVector<int64_t> strides(n, 1), pads(2 * n, 0);
  if (std::optional<ArrayRef<int64_t>> values = adaptor.getStrides())
    strides.assign(values->begin(), values->end());
  if (std::optional<ArrayRef<int64_t>> values = adaptor.getPads())
    pads.assign(values->begin(), values->end());
  if (kernel.size() != n || strides.size() != n || pads.size() != 2 * n)
    return ctx.emitError("MaxUnpool attributes do not match the rank");
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1)};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x->getDimSize(i + 2);
    shape.push_back(ShapedType::isDynamic(in) || !ctx.isAbsent(2)
                        ? kDynamic
                        : (in - 1) * strides[i] + kernel[i] - pads[i] -
                              pads[i + n]);
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}
