//===- FloatConversion.cpp - fp32 to fp16/bf16 in bulk --------------------===//

#include "amp/Runtime/FloatConversion.h"

#include <cmath>
#include <cstring>

using namespace amp_runtime;

static uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint16_t amp_runtime::floatToHalfBits(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = (bits >> 16) & 0x8000;
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000) {
    if (magnitude == 0x7f800000)
      return sign | 0x7c00;
    // NaN: keep the top payload bits and make it quiet.
    return sign | 0x7e00 | ((magnitude >> 13) & 0x3ff);
  }
  // 65520 = 65504 + half an ulp rounds (to even) to Inf.
  if (magnitude >= 0x477ff000)
    return sign | 0x7c00;
  if (magnitude < 0x38800000) {
    // Below 2^-14: an fp16 subnormal, or zero. Up to 2^-25 (a tie with
    // zero) everything rounds to zero.
    if (magnitude <= 0x33000000)
      return sign;
    uint32_t exponent = magnitude >> 23;
    uint32_t mantissa = (magnitude & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - exponent; // 14..24
    uint32_t result = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (result & 1)))
      ++result;
    return sign | result;
  }
  // Normal: rebias the exponent (127 -> 15) and round the mantissa; a carry
  // out of the mantissa correctly bumps the exponent.
  uint32_t result = (magnitude - 0x38000000) >> 13;
  uint32_t rest = magnitude & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (result & 1)))
    ++result;
  return sign | result;
}

uint16_t amp_runtime::floatToBFloat16Bits(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return (bits >> 16) | 0x0040;
  uint32_t lsb = (bits >> 16) & 1;
  return (bits + 0x7fff + lsb) >> 16;
}

float amp_runtime::halfBitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return floatOf(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in fp32.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float amp_runtime::bfloat16BitsToFloat(uint16_t bits) {
  return floatOf(static_cast<uint32_t>(bits) << 16);
}

/// Branch-free fp32 -> fp16 (round to nearest even) for one element, in a
/// form compilers vectorise: F. Giesen's float_to_half_fast3_rtne. Equal to
/// floatToHalfBits for every input (NaNs become the canonical quiet NaN).
static inline uint16_t floatToHalfBitsFast(uint32_t bits) {
  const uint32_t sign = bits & 0x80000000u;
  const uint32_t magnitude = bits ^ sign;
  // Subnormal results: adding 0.5f aligns the mantissa so that the FPU's
  // own round-to-nearest-even does the rounding.
  float scaled = floatOf(magnitude) + 0.5f;
  uint32_t subnormal = bitsOf(scaled) - 0x3f000000u;
  // Normal results: rebias, round to nearest even by adding 0xfff plus the
  // lowest kept mantissa bit.
  uint32_t odd = (magnitude >> 13) & 1u;
  uint32_t normal = (magnitude + 0xc8000fffu + odd) >> 13;
  uint32_t result = magnitude < 0x38800000u ? subnormal : normal;
  // 65520 and above round to Inf; NaN stays NaN.
  result = magnitude >= 0x477ff000u ? 0x7c00u : result;
  result = magnitude > 0x7f800000u ? 0x7e00u : result;
  return static_cast<uint16_t>(result | (sign >> 16));
}

/// Branch-free fp32 -> bf16, round to nearest even; NaN stays NaN.
static inline uint16_t floatToBFloat16BitsFast(uint32_t bits) {
  uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  bool isNaN = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(isNaN ? ((bits >> 16) | 0x40u) : rounded);
}

ConversionStats amp_runtime::convertFloats(const float *input, uint16_t *output,
                                           size_t size, LowFloatKind kind,
                                           bool clampToFinite) {
  const bool isHalf = kind == LowFloatKind::F16;
  const uint16_t infBits = isHalf ? 0x7c00 : 0x7f80;
  const uint16_t maxFiniteBits = isHalf ? 0x7bff : 0x7f7f;
  const uint32_t *in = reinterpret_cast<const uint32_t *>(input);
  uint16_t *out = output;
  // One branch-free pass that the compiler vectorises; the statistics are
  // reductions over the same data.
  int64_t overflowed = 0, flushed = 0, nonZero = 0;
  uint32_t maxMagnitude = 0;
  if (isHalf) {
    for (size_t i = 0; i < size; ++i)
      out[i] = floatToHalfBitsFast(in[i]);
  } else {
    for (size_t i = 0; i < size; ++i)
      out[i] = floatToBFloat16BitsFast(in[i]);
  }
  for (size_t i = 0; i < size; ++i) {
    uint32_t magnitude = in[i] & 0x7fffffffu;
    uint32_t outMagnitude = out[i] & 0x7fffu;
    bool finite = magnitude < 0x7f800000u;
    bool isNonZero = magnitude != 0 && finite;
    nonZero += isNonZero;
    flushed += isNonZero && outMagnitude == 0;
    overflowed += finite && outMagnitude == infBits;
    maxMagnitude =
        finite && magnitude > maxMagnitude ? magnitude : maxMagnitude;
  }
  if (clampToFinite && overflowed) {
    for (size_t i = 0; i < size; ++i)
      if ((in[i] & 0x7fffffffu) < 0x7f800000u && (out[i] & 0x7fffu) == infBits)
        out[i] = (out[i] & 0x8000u) | maxFiniteBits;
  }
  ConversionStats stats;
  stats.overflowed = overflowed;
  stats.flushedToZero = flushed;
  stats.nonZero = nonZero;
  stats.maxAbs = floatOf(maxMagnitude);
  return stats;
}
