//===- Conv.cpp - shape rules: Conv and ConvTranspose ---------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

namespace {
/// X and W of a convolution: tensors of one rank >= 3; and the kernel size
/// (kernel_shape, else W's trailing dimensions).
struct ConvOperands {
  RankedTensorType x, w;
  SmallVector<int64_t> kernel;
};
} // namespace

/// X and W of a convolution at operands `xIndex` and `wIndex`.
static FailureOr<ConvOperands>
getConvOperands(InferenceContext &ctx, StringRef opName,
                const semantics::WindowAttrs &attrs, unsigned xIndex = 0,
                unsigned wIndex = 1) {
  auto x = requireTensor(ctx, xIndex);
  auto w = requireTensor(ctx, wIndex);
  if (failed(x) || failed(w))
    return failure();
  if (x->getRank() < 3 || w->getRank() != x->getRank())
    return (void)ctx.emitError(opName + " expects X of rank >= 3 and W of the "
                                        "same rank"),
           failure();
  SmallVector<int64_t> kernel = attrs.kernelShape.value_or(
      SmallVector<int64_t>(w->getShape().drop_front(2)));
  return ConvOperands{*x, *w, std::move(kernel)};
}

FailureOr<SmallVector<int64_t>>
shape::inferConvShape(InferenceContext &ctx, StringRef opName,
                      const semantics::WindowAttrs &attrs, unsigned xIndex,
                      unsigned wIndex) {
  auto operands = getConvOperands(ctx, opName, attrs, xIndex, wIndex);
  if (failed(operands))
    return failure();
  RankedTensorType x = operands->x, w = operands->w;
  int64_t group = attrs.group;
  if (group <= 0)
    return (void)ctx.emitError("group must be positive"), failure();
  int64_t channels = x.getDimSize(1), filterChannels = w.getDimSize(1);
  if (!ShapedType::isDynamic(channels) &&
      !ShapedType::isDynamic(filterChannels) &&
      channels != mulDims(filterChannels, group)) // a huge group: no overflow
    return (void)ctx.emitError("input has " + llvm::Twine(channels) +
                               " channels but W expects " +
                               llvm::Twine(filterChannels) + " x group " +
                               llvm::Twine(group)),
           failure();
  ArrayRef<int64_t> kernel = operands->kernel;
  if (llvm::any_of(kernel, ShapedType::isDynamic))
    return (void)ctx.emitError(opName + " needs a static kernel shape"),
           failure();
  auto window = semantics::resolveWindow(attrs, x.getShape().drop_front(2),
                                         kernel, ctx.getErrorFn());
  if (failed(window))
    return failure();
  SmallVector<int64_t> shape = {x.getDimSize(0), w.getDimSize(0)};
  shape.append(window->outputSizes.begin(), window->outputSizes.end());
  return shape;
}

LogicalResult shape::inferConv(InferenceContext &ctx,
                               const semantics::WindowAttrs &attrs,
                               Types &results) {
  if (failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  auto shape = inferConvShape(ctx, "Conv", attrs, 0, 1);
  if (failed(shape))
    return failure();
  results.push_back(tensorOf(*shape, ctx.getTensorType(0).getElementType()));
  return success();
}

LogicalResult shape::inferConvTranspose(InferenceContext &ctx,
                                        const semantics::WindowAttrs &attrs,
                                        Types &results) {
  if (failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  auto operands = getConvOperands(ctx, "ConvTranspose", attrs);
  if (failed(operands))
    return failure();
  RankedTensorType x = operands->x, w = operands->w;
  ArrayRef<int64_t> kernel = operands->kernel;
  auto window = semantics::resolveTransposedWindow(
      attrs, x.getShape().drop_front(2), kernel, ctx.getErrorFn());
  if (failed(window))
    return failure();
  SmallVector<int64_t> shape = {x.getDimSize(0),
                                mulDims(w.getDimSize(1), attrs.group)};
  shape.append(window->outputSizes.begin(), window->outputSizes.end());
  results.push_back(tensorOf(shape, x.getElementType()));
  return success();
}

LogicalResult shape::inferConvWeightGrad(InferenceContext &ctx,
                                         const semantics::WindowAttrs &attrs,
                                         Types &results) {
  auto x = requireTensor(ctx, 0);
  auto dy = requireTensor(ctx, 1);
  if (failed(x) || failed(dy) || failed(requireSameElementTypes(ctx, 0, 2)))
    return failure();
  int64_t spatial = x->getRank() - 2;
  if (spatial < 1 || dy->getRank() != x->getRank())
    return ctx.emitError(
        "conv_weight_grad expects X of rank >= 3 and dY of the same rank");
  SmallVector<int64_t> kernel = attrs.kernelShape.value_or(
      SmallVector<int64_t>());
  if (static_cast<int64_t>(kernel.size()) != spatial ||
      llvm::any_of(kernel, [](int64_t k) { return k <= 0; }))
    return ctx.emitError("kernel_shape must have one positive size per "
                         "spatial dimension of X");
  int64_t group = attrs.group;
  if (group <= 0)
    return ctx.emitError("group must be positive");
  int64_t channels = x->getDimSize(1), filters = dy->getDimSize(1);
  if (!ShapedType::isDynamic(channels) && channels % group != 0)
    return ctx.emitError("X has " + Twine(channels) +
                         " channels, not a multiple of group " + Twine(group));
  if (!ShapedType::isDynamic(filters) && filters % group != 0)
    return ctx.emitError("dY has " + Twine(filters) +
                         " channels, not a multiple of group " + Twine(group));
  int64_t batchX = x->getDimSize(0), batchY = dy->getDimSize(0);
  if (!ShapedType::isDynamic(batchX) && !ShapedType::isDynamic(batchY) &&
      batchX != batchY)
    return ctx.emitError("X has batch " + Twine(batchX) + " but dY has " +
                         Twine(batchY));
  auto window = semantics::resolveWindow(attrs, x->getShape().drop_front(2),
                                         kernel, ctx.getErrorFn());
  if (failed(window))
    return failure();
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t expected = window->outputSizes[i], got = dy->getDimSize(2 + i);
    if (!ShapedType::isDynamic(expected) && !ShapedType::isDynamic(got) &&
        expected != got)
      return ctx.emitError("dY has spatial size " + Twine(got) +
                           " in dimension " + Twine(2 + i) +
                           " but the convolution's output has " +
                           Twine(expected));
  }
  SmallVector<int64_t> shape = {
      filters, ShapedType::isDynamic(channels) ? ShapedType::kDynamic
                                               : channels / group};
  shape.append(kernel.begin(), kernel.end());
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}
