//===- FloatConversion.h - fp32 to fp16/bf16 in bulk ------------*- C++ -*-===//
//
// Round-to-nearest-even conversion of fp32 weights to fp16 or bf16 at
// compile time, with the statistics the autocast pass needs to decide
// whether a constant fits; also what host tools use to read and write
// fp16/bf16 tensors. Bit-exact with APFloat (tested exhaustively on the
// 16-bit side); written out because APFloat is ~50x slower per element.
// Part of amp's runtime layer: plain C++, no MLIR or LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_FLOATCONVERSION_H
#define AMP_RUNTIME_FLOATCONVERSION_H

#include <cstddef>
#include <cstdint>

namespace amp_runtime {

enum class LowFloatKind { F16, BF16 };

/// IEEE binary32 -> binary16, round to nearest even; overflow gives Inf,
/// NaN stays NaN (quiet, sign kept).
uint16_t floatToHalfBits(float value);
/// binary32 -> bfloat16, round to nearest even; NaN stays NaN.
uint16_t floatToBFloat16Bits(float value);
float halfBitsToFloat(uint16_t bits);
float bfloat16BitsToFloat(uint16_t bits);

struct ConversionStats {
  /// Finite values that became +-Inf (or were clamped).
  int64_t overflowed = 0;
  /// Non-zero values that became zero.
  int64_t flushedToZero = 0;
  int64_t nonZero = 0;
  /// Largest finite magnitude in the input.
  float maxAbs = 0.0f;
};

/// Converts the `size` floats of `input` into `output`. With
/// `clampToFinite`, finite values beyond the target range become the largest
/// finite value.
ConversionStats convertFloats(const float *input, uint16_t *output,
                              size_t size, LowFloatKind kind,
                              bool clampToFinite);

/// The 8-bit float formats of ONNX (TensorProto FLOAT8E4M3FN, FLOAT8E4M3FNUZ,
/// FLOAT8E5M2, FLOAT8E5M2FNUZ; MLIR's f8E4M3FN, ...). They are storage
/// types: amp computes on them only through Cast, QuantizeLinear and
/// DequantizeLinear.
enum class Float8Kind { E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ };

struct Float8Format {
  unsigned exponentBits;
  unsigned mantissaBits;
  int bias;
  /// E5M2: an all-ones exponent holds +-Inf (mantissa 0) and NaN, as IEEE.
  bool hasInfinity;
  /// FNUZ: 0x80 is the only NaN; there is no negative zero and no Inf.
  bool fnuz;
  /// Bits and value of the largest finite value.
  uint8_t maxBits;
  double maxFinite;
};

const Float8Format &getFloat8Format(Float8Kind kind);
/// The value of the 8-bit pattern `bits` (exact).
double float8BitsToDouble(uint8_t bits, Float8Kind kind);
/// Rounds `value` to the nearest `kind` value, ties to even, as ONNX Cast:
/// with `saturate`, Inf and values that round beyond the largest finite
/// value become it (with their sign); without, they become Inf (E5M2) or
/// NaN. NaN stays NaN; FNUZ types have no -0 (it becomes +0).
uint8_t doubleToFloat8Bits(double value, Float8Kind kind, bool saturate);

} // namespace amp_runtime

#endif // AMP_RUNTIME_FLOATCONVERSION_H
