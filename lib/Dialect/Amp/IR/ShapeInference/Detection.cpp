//===- Detection.cpp - shape rules of NonMaxSuppression and RoiAlign ------===//

#include "ShapeInferenceUtils.h"

#include "amp/Dialect/Amp/Semantics/Detection.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferNonMaxSuppression(InferenceContext &ctx,
                                            int64_t centerPointBox,
                                            Types &results) {
  auto boxes = requireTensor(ctx, 0);
  auto scores = requireTensor(ctx, 1);
  if (failed(boxes) || failed(scores))
    return failure();
  SmallVector<std::optional<ArrayRef<int64_t>>> parameters;
  for (unsigned i = 2; i < 5; ++i) {
    RankedTensorType type = ctx.getTensorType(i);
    parameters.push_back(type ? std::optional(type.getShape()) : std::nullopt);
  }
  if (failed(semantics::checkNonMaxSuppression(
          boxes->getShape(), scores->getShape(), parameters, centerPointBox,
          ctx.getErrorFn())))
    return failure();
  // [num_selected, 3]: (batch, class, box) rows, as many as the data select.
  results.push_back(
      tensorOf({kDynamic, 3}, IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferRoiAlign(InferenceContext &ctx,
                                   const semantics::RoiAlignAttrs &attrs,
                                   Types &results) {
  auto x = requireTensor(ctx, 0);
  auto rois = requireTensor(ctx, 1);
  auto batchIndices = requireTensor(ctx, 2);
  if (failed(x) || failed(rois) || failed(batchIndices) ||
      failed(requireSameElementTypes(ctx, 0, 2)))
    return failure();
  auto shape = semantics::resolveRoiAlign(x->getShape(), rois->getShape(),
                                          batchIndices->getShape(), attrs,
                                          ctx.getErrorFn());
  if (failed(shape))
    return failure();
  results.push_back(tensorOf(*shape, x->getElementType()));
  return success();
}
