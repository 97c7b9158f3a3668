//===- Float8.cpp - ONNX's 8-bit float formats ---------------------------===//
//
// Decoding and round-to-nearest-even encoding of FLOAT8E4M3FN,
// FLOAT8E4M3FNUZ, FLOAT8E5M2 and FLOAT8E5M2FNUZ with ONNX Cast's
// saturation rules. The CPU backend emits the same algorithm as IR
// (AmpToLinalg/Float8.cpp); this one serves host tools (reading and writing
// tensors, random inputs) and is checked against APFloat in the unit tests.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/FloatConversion.h"

#include <cmath>

using namespace amp_runtime;

const Float8Format &amp_runtime::getFloat8Format(Float8Kind kind) {
  // exponent, mantissa, bias, Inf, FNUZ, max bits, max value.
  static const Float8Format formats[] = {
      {4, 3, 7, false, false, 0x7e, 448.0},
      {4, 3, 8, false, true, 0x7f, 240.0},
      {5, 2, 15, true, false, 0x7b, 57344.0},
      {5, 2, 16, false, true, 0x7f, 57344.0},
  };
  return formats[static_cast<int>(kind)];
}

double amp_runtime::float8BitsToDouble(uint8_t bits, Float8Kind kind) {
  const Float8Format &f = getFloat8Format(kind);
  bool negative = bits & 0x80;
  unsigned exponentMask = (1u << f.exponentBits) - 1;
  unsigned mantissaMask = (1u << f.mantissaBits) - 1;
  unsigned exponent = (bits >> f.mantissaBits) & exponentMask;
  unsigned mantissa = bits & mantissaMask;
  if (f.fnuz && bits == 0x80)
    return NAN;
  if (f.hasInfinity && exponent == exponentMask)
    return mantissa ? NAN : (negative ? -INFINITY : INFINITY);
  if (!f.fnuz && !f.hasInfinity && exponent == exponentMask &&
      mantissa == mantissaMask)
    return negative ? -NAN : NAN;
  double value =
      exponent == 0
          ? std::ldexp(static_cast<double>(mantissa),
                       1 - f.bias - static_cast<int>(f.mantissaBits))
          : std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa),
                                        -static_cast<int>(f.mantissaBits)),
                       static_cast<int>(exponent) - f.bias);
  return negative ? -value : value;
}

uint8_t amp_runtime::doubleToFloat8Bits(double value, Float8Kind kind,
                                        bool saturate) {
  const Float8Format &f = getFloat8Format(kind);
  uint8_t sign = std::signbit(value) ? 0x80 : 0;
  uint8_t nanBits = f.fnuz ? 0x80 : static_cast<uint8_t>(sign | 0x7f);
  if (std::isnan(value))
    return nanBits;
  double magnitude = std::fabs(value);
  int minExponent = 1 - f.bias; // of the smallest normal
  int mantissaBits = static_cast<int>(f.mantissaBits);
  double rounded = magnitude;
  if (std::isfinite(magnitude) && magnitude != 0) {
    int exponent;
    std::frexp(magnitude, &exponent); // magnitude in [2^(e-1), 2^e)
    int quantumExponent = std::max(exponent - 1, minExponent) - mantissaBits;
    // Scaling by powers of two is exact; nearbyint rounds ties to even.
    rounded =
        std::ldexp(std::nearbyint(std::ldexp(magnitude, -quantumExponent)),
                   quantumExponent);
  }
  if (rounded > f.maxFinite) {
    if (saturate)
      return sign | f.maxBits;
    if (f.hasInfinity)
      return sign | 0x7c;
    return nanBits;
  }
  if (rounded == 0)
    return f.fnuz ? 0 : sign;
  if (rounded < std::ldexp(1.0, minExponent))
    return sign | static_cast<uint8_t>(
                      std::ldexp(rounded, mantissaBits - minExponent));
  int exponent;
  double fraction = std::frexp(rounded, &exponent); // [0.5, 1)
  unsigned mantissa = static_cast<unsigned>(
      std::ldexp(fraction * 2 - 1, mantissaBits)); // exact
  return sign | static_cast<uint8_t>(((exponent - 1 + f.bias) << mantissaBits) |
                                     mantissa);
}
