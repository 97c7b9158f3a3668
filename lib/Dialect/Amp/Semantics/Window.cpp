//===- Window.cpp - sliding windows of Conv, ConvTranspose, pooling -------===//

#include "amp/Dialect/Amp/Semantics/Window.h"

using namespace mlir;
using namespace mlir::amp::semantics;

std::optional<AutoPad> mlir::amp::semantics::parseAutoPad(StringRef text) {
  if (text == "NOTSET")
    return AutoPad::NotSet;
  if (text == "SAME_UPPER")
    return AutoPad::SameUpper;
  if (text == "SAME_LOWER")
    return AutoPad::SameLower;
  if (text == "VALID")
    return AutoPad::Valid;
  return std::nullopt;
}

/// An optional per-dimension attribute, or `count` copies of its default.
static FailureOr<SmallVector<int64_t>>
spatialValues(const std::optional<SmallVector<int64_t>> &values, StringRef name,
              size_t count, int64_t defaultValue, ErrorFn error) {
  if (!values)
    return SmallVector<int64_t>(count, defaultValue);
  if (values->size() != count) {
    error("attribute '" + name + "' must have " + llvm::Twine(count) +
          " elements, got " + llvm::Twine(values->size()));
    return failure();
  }
  return *values;
}

/// The largest size, stride, dilation, pad or kernel extent a window takes.
/// With every quantity within it, the window arithmetic below (a product
/// of two and a few sums) stays far from int64 overflow whatever a model
/// file says. Real models are many orders of magnitude below it.
constexpr int64_t kMaxWindowValue = int64_t(1) << 31;

/// Fails with a message unless every value in `values` lies in
/// [`min`, kMaxWindowValue]. Dynamic sizes pass where `dynamicAllowed`
/// (tensor sizes); an attribute value equal to kDynamic is just a number
/// out of range (fuzzing: a pad of INT64_MIN overflowed the size sums).
static LogicalResult checkRange(ArrayRef<int64_t> values, StringRef what,
                                int64_t min, ErrorFn error,
                                bool dynamicAllowed = false) {
  for (int64_t v : values)
    if (!(dynamicAllowed && ShapedType::isDynamic(v)) &&
        (v < min || v > kMaxWindowValue)) {
      error(what + " value " + llvm::Twine(v) + " is outside [" +
            llvm::Twine(min) + ", " + llvm::Twine(kMaxWindowValue) + "]");
      return failure();
    }
  return success();
}

/// Total SAME padding of one dimension: the output is ceil(in / stride).
static int64_t samePadding(int64_t in, int64_t stride, int64_t span) {
  int64_t out = (in + stride - 1) / stride;
  return std::max<int64_t>(0, (out - 1) * stride + span - in);
}

FailureOr<Window>
mlir::amp::semantics::resolveWindow(const WindowAttrs &attrs,
                                    ArrayRef<int64_t> inputSpatial,
                                    ArrayRef<int64_t> kernel, ErrorFn error) {
  size_t n = inputSpatial.size();
  if (kernel.size() != n) {
    error("kernel has " + llvm::Twine(kernel.size()) +
          " spatial dimensions but the input has " + llvm::Twine(n));
    return failure();
  }
  Window window;
  window.ceilMode = attrs.ceilMode;
  window.kernel.assign(kernel.begin(), kernel.end());
  auto strides = spatialValues(attrs.strides, "strides", n, 1, error);
  if (failed(strides))
    return failure();
  auto dilations = spatialValues(attrs.dilations, "dilations", n, 1, error);
  if (failed(dilations))
    return failure();
  auto pads = spatialValues(attrs.pads, "pads", 2 * n, 0, error);
  if (failed(pads))
    return failure();
  std::optional<AutoPad> autoPad = parseAutoPad(attrs.autoPad);
  window.strides = std::move(*strides);
  window.dilations = std::move(*dilations);
  for (size_t i = 0; i < n; ++i) {
    if (window.strides[i] <= 0 || window.dilations[i] <= 0 || kernel[i] <= 0) {
      error("strides, dilations and kernel sizes must be positive");
      return failure();
    }
  }
  if (failed(checkRange(inputSpatial, "input size", 0, error, true)) ||
      failed(checkRange(kernel, "kernel size", 1, error, true)) ||
      failed(checkRange(window.strides, "stride", 1, error)) ||
      failed(checkRange(window.dilations, "dilation", 1, error)) ||
      failed(checkRange(*pads, "pad", -kMaxWindowValue, error)))
    return failure();
  if (!autoPad) {
    error("unknown auto_pad value '" + attrs.autoPad + "'");
    return failure();
  }
  window.autoPad = *autoPad;
  for (size_t i = 0; i < n; ++i) {
    int64_t in = inputSpatial[i], stride = window.strides[i];
    int64_t span = window.getSpan(i);
    int64_t begin = 0, end = 0, size = kDynamic;
    switch (*autoPad) {
    case AutoPad::SameUpper:
    case AutoPad::SameLower:
      if (ShapedType::isDynamic(in)) {
        begin = end = kDynamic;
        break;
      }
      end = samePadding(in, stride, span);
      begin = *autoPad == AutoPad::SameUpper ? end / 2 : end - end / 2;
      end -= begin;
      size = (in + stride - 1) / stride;
      break;
    case AutoPad::Valid:
      if (!ShapedType::isDynamic(in))
        size = (in - span) / stride + 1;
      break;
    case AutoPad::NotSet:
      begin = (*pads)[i];
      end = (*pads)[i + n];
      if (ShapedType::isDynamic(in))
        break;
      int64_t padded = in + begin + end - span;
      size = (window.ceilMode ? (padded + stride - 1) / stride
                              : floorDiv(padded, stride)) +
             1;
      // A ceil-mode window must start inside the input or left padding.
      if (window.ceilMode && (size - 1) * stride >= in + begin)
        --size;
      break;
    }
    if (!ShapedType::isDynamic(in) && size <= 0) {
      error("window of size " + llvm::Twine(span) +
            " does not fit spatial dimension " + llvm::Twine(i) + " of size " +
            llvm::Twine(in));
      return failure();
    }
    window.padBegin.push_back(begin);
    window.padEnd.push_back(end);
    window.outputSizes.push_back(size);
  }
  return window;
}

int64_t Window::getPadEndCoveringOutput(size_t i, int64_t inputSize) const {
  int64_t needed = (outputSizes[i] - 1) * strides[i] + getSpan(i);
  int64_t have = inputSize + padBegin[i] + padEnd[i];
  return padEnd[i] + std::max<int64_t>(0, needed - have);
}

FailureOr<TransposedWindow> mlir::amp::semantics::resolveTransposedWindow(
    const WindowAttrs &attrs, ArrayRef<int64_t> inputSpatial,
    ArrayRef<int64_t> kernel, ErrorFn error) {
  size_t n = inputSpatial.size();
  TransposedWindow window;
  window.kernel.assign(kernel.begin(), kernel.end());
  auto strides = spatialValues(attrs.strides, "strides", n, 1, error);
  auto dilations = spatialValues(attrs.dilations, "dilations", n, 1, error);
  auto pads = spatialValues(attrs.pads, "pads", 2 * n, 0, error);
  auto outputPadding =
      spatialValues(attrs.outputPadding, "output_padding", n, 0, error);
  if (failed(strides) || failed(dilations) || failed(pads) ||
      failed(outputPadding) || kernel.size() != n) {
    error("ConvTranspose attributes do not match the rank");
    return failure();
  }
  std::optional<SmallVector<int64_t>> outputShape = attrs.outputShape;
  if (outputShape && outputShape->size() == n + 2)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && outputShape->size() != n) {
    error("output_shape must have one entry per spatial dim");
    return failure();
  }
  for (size_t i = 0; i < n; ++i)
    if ((*strides)[i] <= 0 || (*dilations)[i] <= 0) {
      error("strides and dilations must be positive");
      return failure();
    }
  if (failed(checkRange(inputSpatial, "input size", 0, error, true)) ||
      failed(checkRange(kernel, "kernel size", 1, error, true)) ||
      failed(checkRange(*strides, "stride", 1, error)) ||
      failed(checkRange(*dilations, "dilation", 1, error)) ||
      failed(checkRange(*pads, "pad", -kMaxWindowValue, error)) ||
      failed(checkRange(*outputPadding, "output_padding", 0, error)) ||
      (outputShape &&
       failed(checkRange(*outputShape, "output_shape", 0, error))))
    return failure();
  // Unknown auto_pad values behave as NOTSET (as ONNX's reference does).
  window.autoPad = parseAutoPad(attrs.autoPad).value_or(AutoPad::NotSet);
  window.strides = std::move(*strides);
  window.dilations = std::move(*dilations);
  window.outputPadding = std::move(*outputPadding);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = inputSpatial[i], stride = window.strides[i];
    // A kernel size known only at run time leaves the output size open.
    bool dynamicKernel = ShapedType::isDynamic(kernel[i]);
    int64_t span =
        dynamicKernel ? kDynamic : (kernel[i] - 1) * window.dilations[i] + 1;
    int64_t size;
    if (outputShape)
      size = (*outputShape)[i];
    else if (ShapedType::isDynamic(in) || dynamicKernel)
      size = kDynamic;
    else if (window.autoPad == AutoPad::SameUpper ||
             window.autoPad == AutoPad::SameLower)
      size = in * stride;
    else
      size =
          stride * (in - 1) + window.outputPadding[i] + span -
          (window.autoPad == AutoPad::Valid ? 0 : (*pads)[i] + (*pads)[i + n]);
    window.outputSizes.push_back(size);
    // The full transposed output has stride * (in - 1) + output_padding +
    // span elements; `padBegin` of them are cut at the start.
    int64_t begin = 0;
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(size) ||
        dynamicKernel) {
      begin = window.autoPad == AutoPad::SameUpper ||
                      window.autoPad == AutoPad::SameLower
                  ? kDynamic
                  : (window.autoPad == AutoPad::Valid ? 0 : (*pads)[i]);
    } else {
      int64_t total = stride * (in - 1) + window.outputPadding[i] + span - size;
      if (window.autoPad == AutoPad::SameUpper)
        begin = total / 2;
      else if (window.autoPad == AutoPad::SameLower)
        begin = total - total / 2;
      else if (window.autoPad == AutoPad::NotSet)
        begin = (*pads)[i];
    }
    window.padBegin.push_back(begin);
  }
  return window;
}
