//===- Quantization.h - QuantizeLinear / DequantizeLinear -------*- C++ -*-===//
//
// How the scale and zero point of QuantizeLinear and DequantizeLinear apply
// to the elements of x: one for the whole tensor, one per index of `axis`,
// or one per block of `block_size` consecutive indices along `axis`
// (blocked quantization, opset 21), checked against x's shape; and the
// integer range a quantized type saturates to. Shape inference and the
// linalg lowering both use these.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_QUANTIZATION_H
#define AMP_DIALECT_AMP_SEMANTICS_QUANTIZATION_H

#include "amp/Dialect/Amp/Semantics/Common.h"

#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>

namespace mlir::amp::semantics {

/// Quantization attributes as written on the op (op or adaptor).
struct QuantAttrs {
  int64_t axis = 1;
  int64_t blockSize = 0;

  template <typename QuantOp> static QuantAttrs get(QuantOp op) {
    return QuantAttrs{static_cast<int64_t>(op.getAxis()),
                      static_cast<int64_t>(op.getBlockSize())};
  }
};

enum class QuantGranularity { PerTensor, PerAxis, Blocked };

/// The scale's layout resolved against x: for an element at index i of x,
/// the scale (and zero point) at [] (per tensor), [i[axis]] (per axis) or
/// i with i[axis] / blockSize in place of i[axis] (blocked).
struct QuantLayout {
  QuantGranularity granularity = QuantGranularity::PerTensor;
  /// In [0, rank) for PerAxis and Blocked.
  int64_t axis = 0;
  int64_t blockSize = 0;
};

/// Resolves the scale's shape against x's (both static or dynamic; a
/// dynamic size is not checked). `zeroPointShape`, when given, must equal
/// the scale's. Fails through `error` with what is wrong.
FailureOr<QuantLayout>
resolveQuantLayout(ArrayRef<int64_t> xShape, ArrayRef<int64_t> scaleShape,
                   std::optional<ArrayRef<int64_t>> zeroPointShape,
                   const QuantAttrs &attrs, ErrorFn error);

/// Where a zero point or scale of MatMulInteger, ConvInteger, QLinearMatMul
/// or QLinearConv applies: to the whole operand (a scalar or a tensor of one
/// element, any rank), or, where the op allows it, one per index of an axis
/// (a 1-D tensor): the rows of A (its dimension -2), the columns of B
/// (dimension -1) or the output channels of W (dimension 0). Per column
/// also takes onnxruntime's form [..., 1, N] (B's rank or less, 1 in
/// dimension -2), which broadcasts against B as [N] does.
enum class QuantParamScope { PerTensor, PerRow, PerColumn, PerOutputChannel };

/// The axis size a PerRow / PerColumn / PerOutputChannel parameter of
/// `operandShape` must have (1 along a missing dimension: a 1-D A has one
/// row); kDynamic when unknown.
int64_t getQuantParamAxisSize(ArrayRef<int64_t> operandShape,
                              QuantParamScope scope);

/// Checks the shape of a zero point or scale (`what`, e.g. "b_zero_point")
/// against the scope the op allows for it (`allowed`; PerTensor: a scalar
/// only) and the operand's shape. Returns the scope it takes: PerTensor for
/// one element, else `allowed` (a 1-D tensor of the axis's size).
FailureOr<QuantParamScope> resolveQuantParam(ArrayRef<int64_t> paramShape,
                                             ArrayRef<int64_t> operandShape,
                                             QuantParamScope allowed,
                                             StringRef what, ErrorFn error);

/// The saturation range of a quantized integer type (int2, uint2, int4,
/// uint4, int8, uint8, int16, uint16, int32); std::nullopt for any other
/// type.
std::optional<std::pair<int64_t, int64_t>> getQuantizedRange(Type type);
/// Whether `type` is one of ONNX's 8-bit floats (a quantized type too: x /
/// scale rounded to it, with Cast's saturation; no zero point added).
bool isFloat8Type(Type type);

/// The bit layout of an 8-bit float type, derived from LLVM's APFloat
/// semantics (the host runtime's amp_runtime::Float8Format holds the same
/// facts without MLIR, checked against APFloat in its unit test).
struct Float8Layout {
  unsigned exponentBits;
  unsigned mantissaBits;
  int bias;
  /// E5M2: an all-ones exponent holds +-Inf (mantissa 0) and NaN.
  bool hasInfinity;
  /// FNUZ: 0x80 is the only NaN; no -0, no Inf.
  bool fnuz;
  /// Bits and value of the largest finite value.
  uint8_t maxBits;
  double maxFinite;
};
/// The layout of `type`, or std::nullopt when it is not an 8-bit float.
std::optional<Float8Layout> getFloat8Layout(Type type);

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_QUANTIZATION_H
