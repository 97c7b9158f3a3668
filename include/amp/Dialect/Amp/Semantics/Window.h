//===- Window.h - sliding windows of Conv, ConvTranspose, pooling -*- C++ -*-//
//
// Kernel, strides, dilations, pads and auto_pad of Conv, ConvTranspose,
// MaxPool, AveragePool and LpPool, resolved against an input's spatial
// sizes: output sizes and the begin/end padding. Shape inference and the
// linalg lowering both use these results.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_WINDOW_H
#define AMP_DIALECT_AMP_SEMANTICS_WINDOW_H

#include "amp/Dialect/Amp/Semantics/Common.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::amp::semantics {

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

/// The auto_pad value named `text`; std::nullopt if ONNX has no such value.
std::optional<AutoPad> parseAutoPad(StringRef text);

/// Sliding-window attributes as written on the op (absent: std::nullopt).
struct WindowAttrs {
  StringRef autoPad = "NOTSET";
  std::optional<SmallVector<int64_t>> kernelShape, strides, dilations, pads;
  bool ceilMode = false;
  int64_t group = 1;
  /// ConvTranspose only.
  std::optional<SmallVector<int64_t>> outputPadding, outputShape;

  /// Conv (op or adaptor).
  template <typename ConvLike> static WindowAttrs getConv(ConvLike op) {
    WindowAttrs attrs;
    attrs.autoPad = op.getAutoPad();
    attrs.kernelShape = toVector(op.getKernelShape());
    attrs.strides = toVector(op.getStrides());
    attrs.dilations = toVector(op.getDilations());
    attrs.pads = toVector(op.getPads());
    attrs.group = op.getGroup();
    return attrs;
  }
  /// ConvTranspose (op or adaptor).
  template <typename ConvLike>
  static WindowAttrs getConvTranspose(ConvLike op) {
    WindowAttrs attrs = getConv(op);
    attrs.outputPadding = toVector(op.getOutputPadding());
    attrs.outputShape = toVector(op.getOutputShape());
    return attrs;
  }
  /// MaxPool, AveragePool, LpPool (op or adaptor).
  template <typename PoolLike> static WindowAttrs getPool(PoolLike op) {
    WindowAttrs attrs;
    attrs.autoPad = op.getAutoPad();
    attrs.kernelShape = SmallVector<int64_t>(op.getKernelShape());
    attrs.strides = toVector(op.getStrides());
    attrs.dilations = toVector(op.getDilations());
    attrs.pads = toVector(op.getPads());
    attrs.ceilMode = op.getCeilMode() != 0;
    return attrs;
  }
};

/// A window resolved against the spatial sizes of an input.
struct Window {
  AutoPad autoPad = AutoPad::NotSet;
  bool ceilMode = false;
  SmallVector<int64_t> kernel, strides, dilations;
  /// Padding before and after each spatial dimension. kDynamic where
  /// SAME_UPPER/SAME_LOWER meets a dynamic input size.
  SmallVector<int64_t> padBegin, padEnd;
  /// Output size per spatial dimension; kDynamic where the input's is.
  SmallVector<int64_t> outputSizes;

  size_t getNumSpatial() const { return kernel.size(); }
  /// (kernel - 1) * dilation + 1.
  int64_t getSpan(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
  /// Padding after dimension `i` that makes every output window read inside
  /// the padded input: padEnd plus what ceil mode's last window needs
  /// (static sizes only).
  int64_t getPadEndCoveringOutput(size_t i, int64_t inputSize) const;
};

/// Resolves a Conv or pooling window: `kernel` is the kernel size per
/// spatial dimension (kernel_shape, or the weights' trailing dimensions).
/// Fails, reporting through `error`, on attributes of the wrong length,
/// non-positive strides, dilations or kernel sizes, an unknown auto_pad or
/// a window that does not fit a static input.
FailureOr<Window> resolveWindow(const WindowAttrs &attrs,
                                ArrayRef<int64_t> inputSpatial,
                                ArrayRef<int64_t> kernel, ErrorFn error);

/// A ConvTranspose window: `outputSizes` are the result's spatial sizes
/// (output_shape, else stride * (in - 1) + output_padding + span - pads;
/// kDynamic where the input size is), `padBegin` the padding removed at the
/// start of each dimension of the full transposed output (auto_pad resolved
/// against the output sizes; kDynamic where they are), padEnd the rest.
struct TransposedWindow {
  AutoPad autoPad = AutoPad::NotSet;
  SmallVector<int64_t> kernel, strides, dilations, outputPadding;
  SmallVector<int64_t> padBegin, outputSizes;
};
FailureOr<TransposedWindow>
resolveTransposedWindow(const WindowAttrs &attrs,
                        ArrayRef<int64_t> inputSpatial,
                        ArrayRef<int64_t> kernel, ErrorFn error);

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_WINDOW_H
