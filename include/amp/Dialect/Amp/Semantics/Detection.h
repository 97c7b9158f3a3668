//===- Detection.h - NonMaxSuppression, RoiAlign ----------------*- C++ -*-===//
//
// ONNX NonMaxSuppression (opsets 10, 11), as onnxruntime and the ONNX
// reference compute it. Per batch b and class c, the candidates are the
// boxes whose score is above score_threshold (every box when it is absent),
// visited by descending score, ties by ascending box index; a candidate is
// selected unless its IoU with an already selected box of the same class
// is above iou_threshold, until max_output_boxes_per_class are selected
// (0, the default, selects none). The result lists (b, c, box) rows in
// that order: batches, then classes, then selection order.
//
// IoU: boxes are [y1, x1, y2, x2] with either corner first
// (center_point_box = 0) or [x_center, y_center, width, height]
// (center_point_box = 1). Two boxes whose intersection is empty in either
// axis, or whose area or union is not positive, do not suppress each other.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_DETECTION_H
#define AMP_DIALECT_AMP_SEMANTICS_DETECTION_H

#include "amp/Dialect/Amp/Semantics/Common.h"

namespace mlir::amp::semantics {

/// Checks the operand shapes of NonMaxSuppression: boxes [B, N, 4] and
/// scores [B, C, N] (sizes that are static must agree), the three optional
/// parameters (when given: `std::nullopt` for absent) a scalar or one
/// element, and center_point_box 0 or 1.
LogicalResult
checkNonMaxSuppression(ArrayRef<int64_t> boxes, ArrayRef<int64_t> scores,
                       ArrayRef<std::optional<ArrayRef<int64_t>>> parameters,
                       int64_t centerPointBox, ErrorFn error);

/// The most rows a NonMaxSuppression result can have: B * C * min(N, max)
/// (max: max_output_boxes_per_class, when known).
int64_t maxSelectedBoxes(ArrayRef<int64_t> boxes, ArrayRef<int64_t> scores,
                         std::optional<int64_t> maxPerClass);

/// ONNX RoiAlign (opsets 10, 16), as onnxruntime and the ONNX reference
/// compute it. For ROI r = (x1, y1, x2, y2) of image batch_indices[r],
/// scaled by spatial_scale and shifted by -0.5 (half_pixel; not with
/// output_half_pixel, opset 10's behaviour, where an ROI is also at least
/// 1 x 1), each output cell (ph, pw) averages (or takes the max of) a grid
/// of sampling_ratio^2 bilinear samples (ceil(roi size / output size) per
/// axis when sampling_ratio is 0) at the centres of the grid's cells. A
/// sample beyond [-1, size] in either axis is 0; others are clamped into
/// the image. The max mode takes, per sample, the largest of the four
/// weighted corners (onnxruntime's definition), and over the samples the
/// largest of those.
struct RoiAlignAttrs {
  bool halfPixel = true;
  bool maxMode = false;
  int64_t outputHeight = 1, outputWidth = 1, samplingRatio = 0;
  float spatialScale = 1.0f;
  /// The attributes as written, unchecked (checkRoiAlign checks them).
  StringRef coordinateTransformationMode, mode;

  template <typename RoiAlignLike> static RoiAlignAttrs get(RoiAlignLike op) {
    RoiAlignAttrs attrs;
    attrs.coordinateTransformationMode = op.getCoordinateTransformationMode();
    attrs.mode = op.getMode();
    attrs.halfPixel = attrs.coordinateTransformationMode == "half_pixel";
    attrs.maxMode = attrs.mode == "max";
    attrs.outputHeight = op.getOutputHeight();
    attrs.outputWidth = op.getOutputWidth();
    attrs.samplingRatio = op.getSamplingRatio();
    attrs.spatialScale = op.getSpatialScale().convertToFloat();
    return attrs;
  }
};

/// Checks RoiAlign's attributes and operand shapes: X [N, C, H, W], rois
/// [num_rois, 4], batch_indices [num_rois]. Returns the result shape
/// [num_rois, C, output_height, output_width].
FailureOr<SmallVector<int64_t>> resolveRoiAlign(ArrayRef<int64_t> x,
                                                ArrayRef<int64_t> rois,
                                                ArrayRef<int64_t> batchIndices,
                                                const RoiAlignAttrs &attrs,
                                                ErrorFn error);

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_DETECTION_H
