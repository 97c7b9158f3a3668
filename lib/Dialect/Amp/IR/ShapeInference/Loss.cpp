//===- Loss.cpp - shape rules of the loss ops -----------------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

/// The loss tensor of NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss.
static FailureOr<RankedTensorType> lossType(InferenceContext &ctx,
                                            StringRef reduction) {
  auto input = requireTensor(ctx, 0);
  auto target = requireTensor(ctx, 1);
  if (failed(input) || failed(target))
    return failure();
  if (input->getRank() < 2 || target->getRank() != input->getRank() - 1)
    return (void)ctx.emitError("loss expects input (N, C, d1...) and target "
                               "(N, d1...)"),
           failure();
  if (reduction == "none")
    return tensorOf(target->getShape(), input->getElementType());
  if (reduction != "mean" && reduction != "sum")
    return (void)ctx.emitError("unknown reduction '" + reduction + "'"),
           failure();
  return tensorOf({}, input->getElementType());
}

LogicalResult shape::inferLoss(InferenceContext &ctx, StringRef reduction,
                               Types &results) {
  auto loss = lossType(ctx, reduction);
  if (failed(loss))
    return failure();
  results.push_back(*loss);
  return success();
}

LogicalResult shape::inferSoftmaxCrossEntropyLoss(InferenceContext &ctx,
                                                  StringRef reduction,
                                                  Types &results) {
  auto loss = lossType(ctx, reduction);
  if (failed(loss))
    return failure();
  results.push_back(*loss);
  results.push_back(ctx.getTensorType(0));
  return success();
}
