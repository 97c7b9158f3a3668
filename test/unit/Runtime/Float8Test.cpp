//===- Float8Test.cpp - ONNX's 8-bit floats against APFloat --------------===//
//
// amp_runtime's float8 decoding and encoding against llvm::APFloat, which
// implements the four formats independently: every code decodes to
// APFloat's value, and values around every code (the code, the midpoints
// to its neighbours and their neighbours in f64, random doubles) round as
// APFloat rounds (ties to even). APFloat overflows to NaN (FN/FNUZ) or Inf
// (E5M2), ONNX's saturate=0; saturate=1 clamps those to the largest finite
// value of the sign.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/FloatConversion.h"
#include "amp/Runtime/HostTensor.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace amp_runtime;

namespace {

struct Case {
  Float8Kind kind;
  const llvm::fltSemantics &(*semantics)();
  const char *name;
};

const Case kCases[] = {
    {Float8Kind::E4M3FN, llvm::APFloat::Float8E4M3FN, "E4M3FN"},
    {Float8Kind::E4M3FNUZ, llvm::APFloat::Float8E4M3FNUZ, "E4M3FNUZ"},
    {Float8Kind::E5M2, llvm::APFloat::Float8E5M2, "E5M2"},
    {Float8Kind::E5M2FNUZ, llvm::APFloat::Float8E5M2FNUZ, "E5M2FNUZ"},
};

double apDecode(const Case &c, uint8_t bits) {
  llvm::APFloat value(c.semantics(), llvm::APInt(8, bits));
  bool lost;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
  return value.convertToDouble();
}

/// APFloat's rounding of `x`, with ONNX's saturation applied on top.
uint8_t apEncode(const Case &c, double x, bool saturate) {
  llvm::APFloat value(x);
  bool lost;
  value.convert(c.semantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
  const Float8Format &f = getFloat8Format(c.kind);
  bool overflowed = !std::isnan(x) && (value.isInfinity() || value.isNaN());
  if (saturate && overflowed)
    return (std::signbit(x) ? 0x80 : 0) | f.maxBits;
  uint8_t bits = static_cast<uint8_t>(value.bitcastToAPInt().getZExtValue());
  return bits;
}

bool sameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(Float8Test, EveryCodeDecodesAsAPFloat) {
  for (const Case &c : kCases)
    for (int bits = 0; bits < 256; ++bits)
      EXPECT_TRUE(
          sameValue(float8BitsToDouble(bits, c.kind), apDecode(c, bits)))
          << c.name << " code " << bits << ": "
          << float8BitsToDouble(bits, c.kind) << " vs " << apDecode(c, bits);
}

TEST(Float8Test, FormatsMatchAPFloat) {
  for (const Case &c : kCases) {
    const Float8Format &f = getFloat8Format(c.kind);
    EXPECT_EQ(f.maxFinite, apDecode(c, f.maxBits)) << c.name;
    EXPECT_EQ(f.maxFinite,
              llvm::APFloat::getLargest(c.semantics()).convertToDouble())
        << c.name;
  }
}

TEST(Float8Test, RoundsAsAPFloat) {
  std::mt19937_64 rng(8);
  for (const Case &c : kCases) {
    std::vector<double> values = {0.0,    -0.0,   INFINITY, -INFINITY, 1e300,
                                  -1e300, 1e-300, -1e-300,  5e-324,    NAN};
    for (int bits = 0; bits < 256; ++bits) {
      double v = float8BitsToDouble(bits, c.kind);
      if (!std::isfinite(v))
        continue;
      double next = float8BitsToDouble((bits + 1) & 0xff, c.kind);
      values.push_back(v);
      if (std::isfinite(next) && std::fabs(next) > std::fabs(v)) {
        double mid = (v + next) / 2;
        values.push_back(mid);
        values.push_back(std::nextafter(mid, INFINITY));
        values.push_back(std::nextafter(mid, -INFINITY));
      }
    }
    const Float8Format &f = getFloat8Format(c.kind);
    for (double scale : {1.0, 1.03, 1.0625, 1.07, 1.125, 1.2, 2.0})
      values.push_back(f.maxFinite * scale);
    std::uniform_real_distribution<double> exponent(-25, 18);
    std::uniform_real_distribution<double> unit(1, 2);
    for (int i = 0; i < 20000; ++i)
      values.push_back(std::ldexp(unit(rng), static_cast<int>(exponent(rng))));
    size_t n = values.size();
    for (size_t i = 0; i < n; ++i)
      values.push_back(-values[i]);
    for (bool saturate : {false, true})
      for (double x : values) {
        uint8_t got = doubleToFloat8Bits(x, c.kind, saturate);
        uint8_t want = apEncode(c, x, saturate);
        // NaN codes need only be NaN.
        if (std::isnan(float8BitsToDouble(want, c.kind)) &&
            std::isnan(float8BitsToDouble(got, c.kind)))
          continue;
        EXPECT_EQ(got, want)
            << c.name << " saturate=" << saturate << " x=" << x;
      }
  }
}

TEST(Float8Test, HostTensorsReadAndConvertStorageTypes) {
  // The 4-bit integers hold one value per byte; only the low bits count.
  Tensor t;
  t.elementType = ElementType::I4;
  t.shape = {3};
  t.bytes = {static_cast<char>(0xf9), 0x07, 0x08};
  EXPECT_EQ(t.getAsDouble(0), -7);
  EXPECT_EQ(t.getAsDouble(1), 7);
  EXPECT_EQ(t.getAsDouble(2), -8);
  Tensor wide = toCarrierType(t);
  EXPECT_EQ(wide.elementType, ElementType::I8);
  EXPECT_EQ(wide.bytes, (std::vector<char>{-7, 7, -8}));

  Tensor f;
  f.elementType = ElementType::F32;
  f.shape = {2};
  float values[] = {0.3f, -1000.0f};
  f.bytes.assign(reinterpret_cast<char *>(values),
                 reinterpret_cast<char *>(values) + 8);
  Tensor f8;
  std::string error;
  ASSERT_TRUE(convertToStorageType(f, ElementType::F8E4M3FN, f8, error));
  EXPECT_EQ(f8.getAsDouble(0), 0.3125);
  EXPECT_EQ(f8.getAsDouble(1), -448); // saturated
  Tensor bad;
  t.elementType = ElementType::I8;
  t.bytes = {1, 9, 0};
  EXPECT_FALSE(convertToStorageType(t, ElementType::I4, bad, error));
  EXPECT_NE(error.find("element 1 is 9"), std::string::npos) << error;
}

} // namespace
