//===- Detection.cpp - NonMaxSuppression, RoiAlign ------------------------===//

#include "amp/Dialect/Amp/Semantics/Detection.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::semantics;

/// Static sizes that differ.
static bool differ(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

LogicalResult semantics::checkNonMaxSuppression(
    ArrayRef<int64_t> boxes, ArrayRef<int64_t> scores,
    ArrayRef<std::optional<ArrayRef<int64_t>>> parameters,
    int64_t centerPointBox, ErrorFn error) {
  if (boxes.size() != 3 || differ(boxes[2], 4)) {
    error("NonMaxSuppression boxes must be [num_batches, num_boxes, 4]");
    return failure();
  }
  if (scores.size() != 3) {
    error("NonMaxSuppression scores must be [num_batches, num_classes, "
          "num_boxes]");
    return failure();
  }
  if (differ(boxes[0], scores[0])) {
    error("NonMaxSuppression boxes have " + Twine(boxes[0]) +
          " batches but scores " + Twine(scores[0]));
    return failure();
  }
  if (differ(boxes[1], scores[2])) {
    error("NonMaxSuppression boxes hold " + Twine(boxes[1]) +
          " boxes per batch but scores score " + Twine(scores[2]));
    return failure();
  }
  static constexpr const char *kNames[] = {"max_output_boxes_per_class",
                                           "iou_threshold", "score_threshold"};
  for (auto [i, shape] : llvm::enumerate(parameters)) {
    if (!shape)
      continue;
    if (!llvm::all_of(*shape, [](int64_t d) { return d == 1; })) {
      error(Twine("NonMaxSuppression ") + kNames[i] +
            " must be a scalar or hold one element");
      return failure();
    }
  }
  if (centerPointBox != 0 && centerPointBox != 1) {
    error("NonMaxSuppression center_point_box must be 0 or 1, not " +
          Twine(centerPointBox));
    return failure();
  }
  return success();
}

int64_t semantics::maxSelectedBoxes(ArrayRef<int64_t> boxes,
                                    ArrayRef<int64_t> scores,
                                    std::optional<int64_t> maxPerClass) {
  int64_t perClass = boxes[1];
  if (maxPerClass && !ShapedType::isDynamic(perClass))
    perClass = std::min(perClass, std::max<int64_t>(*maxPerClass, 0));
  return mulDims(mulDims(scores[0], scores[1]), perClass);
}

FailureOr<SmallVector<int64_t>>
semantics::resolveRoiAlign(ArrayRef<int64_t> x, ArrayRef<int64_t> rois,
                           ArrayRef<int64_t> batchIndices,
                           const RoiAlignAttrs &attrs, ErrorFn error) {
  if (attrs.coordinateTransformationMode != "half_pixel" &&
      attrs.coordinateTransformationMode != "output_half_pixel") {
    error("RoiAlign coordinate_transformation_mode must be half_pixel or "
          "output_half_pixel, not '" +
          attrs.coordinateTransformationMode + "'");
    return failure();
  }
  if (attrs.mode != "avg" && attrs.mode != "max") {
    error("RoiAlign mode must be avg or max, not '" + attrs.mode + "'");
    return failure();
  }
  if (attrs.outputHeight <= 0 || attrs.outputWidth <= 0) {
    error("RoiAlign output_height and output_width must be positive, not " +
          Twine(attrs.outputHeight) + " and " + Twine(attrs.outputWidth));
    return failure();
  }
  if (attrs.samplingRatio < 0) {
    error("RoiAlign sampling_ratio must not be negative, not " +
          Twine(attrs.samplingRatio));
    return failure();
  }
  if (x.size() != 4) {
    error("RoiAlign X must be [N, C, H, W], not of rank " + Twine(x.size()));
    return failure();
  }
  if (rois.size() != 2 || differ(rois[1], 4)) {
    error("RoiAlign rois must be [num_rois, 4]");
    return failure();
  }
  if (batchIndices.size() != 1 || differ(batchIndices[0], rois[0])) {
    error("RoiAlign batch_indices must be [num_rois] with rois' " +
          Twine(rois[0]) + " rois");
    return failure();
  }
  int64_t count = ShapedType::isDynamic(rois[0]) ? batchIndices[0] : rois[0];
  return SmallVector<int64_t>{count, x[1], attrs.outputHeight,
                              attrs.outputWidth};
}
