//===- FloatConversionTest.cpp - fp32 -> fp16/bf16 against APFloat -------===//
//
// The bulk converter used for weights must agree bit for bit with LLVM's
// APFloat (IEEE round to nearest even): every fp16 and bf16 bit pattern
// round-trips, and a dense sweep of fp32 values (all exponents, boundary
// mantissas, random bits) converts exactly as APFloat does.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/FloatConversion.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace amp_runtime;

namespace {

float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint16_t referenceBits(float value, const llvm::fltSemantics &semantics) {
  llvm::APFloat converted(value);
  bool losesInfo = false;
  converted.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return static_cast<uint16_t>(converted.bitcastToAPInt().getZExtValue());
}

bool isNaNHalf(uint16_t bits) {
  return (bits & 0x7c00) == 0x7c00 && (bits & 0x03ff);
}

bool isNaNBFloat(uint16_t bits) {
  return (bits & 0x7f80) == 0x7f80 && (bits & 0x007f);
}

void expectSame(float value) {
  uint16_t half = floatToHalfBits(value);
  uint16_t refHalf = referenceBits(value, llvm::APFloat::IEEEhalf());
  uint16_t bf16 = floatToBFloat16Bits(value);
  uint16_t refBf16 = referenceBits(value, llvm::APFloat::BFloat());
  if (std::isnan(value)) {
    EXPECT_TRUE(isNaNHalf(half)) << std::hex << half;
    EXPECT_TRUE(isNaNBFloat(bf16)) << std::hex << bf16;
    return;
  }
  ASSERT_EQ(half, refHalf) << "fp16 of " << value;
  ASSERT_EQ(bf16, refBf16) << "bf16 of " << value;
}

TEST(FloatConversion, EveryHalfPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t half = static_cast<uint16_t>(bits);
    float value = halfBitsToFloat(half);
    if (isNaNHalf(half)) {
      EXPECT_TRUE(std::isnan(value));
      EXPECT_TRUE(isNaNHalf(floatToHalfBits(value)));
      continue;
    }
    llvm::APFloat reference(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
    EXPECT_EQ(value, reference.convertToFloat()) << std::hex << bits;
    EXPECT_EQ(floatToHalfBits(value), half) << std::hex << bits;
  }
}

TEST(FloatConversion, EveryBFloat16PatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t bf16 = static_cast<uint16_t>(bits);
    float value = bfloat16BitsToFloat(bf16);
    if (isNaNBFloat(bf16)) {
      EXPECT_TRUE(std::isnan(value));
      EXPECT_TRUE(isNaNBFloat(floatToBFloat16Bits(value)));
      continue;
    }
    EXPECT_EQ(floatToBFloat16Bits(value), bf16) << std::hex << bits;
  }
}

TEST(FloatConversion, MatchesAPFloatOnEveryExponentAndBoundary) {
  // For every sign and exponent: mantissas around the rounding points of
  // both targets (ties, just below and above), plus the extremes.
  const uint32_t mantissas[] = {
      0x000000, 0x000001, 0x000fff, 0x001000, 0x001001, 0x001fff, 0x002000,
      0x003000, 0x007fff, 0x008000, 0x008001, 0x00ffff, 0x010000, 0x018000,
      0x3fffff, 0x400000, 0x7fefff, 0x7ff000, 0x7ff001, 0x7fffff};
  for (uint32_t sign : {0u, 1u})
    for (uint32_t exponent = 0; exponent < 256; ++exponent)
      for (uint32_t mantissa : mantissas)
        expectSame(floatFromBits((sign << 31) | (exponent << 23) | mantissa));
}

TEST(FloatConversion, MatchesAPFloatOnRandomBits) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000000; ++i)
    expectSame(floatFromBits(rng()));
}

// The bulk converter (branch-free, vectorised) equals the scalar one.
TEST(FloatConversion, BulkEqualsScalar) {
  std::mt19937 rng(99);
  std::vector<float> input;
  for (uint32_t exponent = 0; exponent < 256; ++exponent)
    for (uint32_t low = 0; low < 0x2000; low += 7)
      for (uint32_t sign : {0u, 1u})
        input.push_back(floatFromBits((sign << 31) | (exponent << 23) |
                                      (rng() & 0x7fe000) | low));
  for (int i = 0; i < 1000000; ++i)
    input.push_back(floatFromBits(rng()));
  std::vector<uint16_t> half(input.size()), bf16(input.size());
  convertFloats(input.data(), half.data(), input.size(), LowFloatKind::F16,
                false);
  convertFloats(input.data(), bf16.data(), input.size(), LowFloatKind::BF16,
                false);
  for (size_t i = 0; i < input.size(); ++i) {
    if (std::isnan(input[i])) {
      ASSERT_TRUE(isNaNHalf(half[i]));
      ASSERT_TRUE(isNaNBFloat(bf16[i]));
      continue;
    }
    ASSERT_EQ(half[i], floatToHalfBits(input[i])) << input[i];
    ASSERT_EQ(bf16[i], floatToBFloat16Bits(input[i])) << input[i];
  }
}

TEST(FloatConversion, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(floatToHalfBits(inf), 0x7c00);
  EXPECT_EQ(floatToHalfBits(-inf), 0xfc00);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65519.99f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00); // ties to even: overflow
  EXPECT_EQ(floatToHalfBits(1e5f), 0x7c00);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001); // min subnormal
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000); // tie -> even 0
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(isNaNHalf(floatToHalfBits(std::nanf(""))));
  EXPECT_EQ(floatToBFloat16Bits(inf), 0x7f80);
  EXPECT_EQ(floatToBFloat16Bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_TRUE(isNaNBFloat(floatToBFloat16Bits(std::nanf(""))));
  // A NaN whose payload lives only in the low bits must stay a NaN.
  EXPECT_TRUE(isNaNBFloat(floatToBFloat16Bits(floatFromBits(0x7f800001))));
  EXPECT_TRUE(isNaNHalf(floatToHalfBits(floatFromBits(0x7f800001))));
}

TEST(FloatConversion, StatisticsAndClamping) {
  std::vector<float> input = {1.0f, 7e4f, -1e6f, 1e-9f, 0.0f, 3e-8f};
  std::vector<uint16_t> output(input.size());
  ConversionStats stats =
      convertFloats(input.data(), output.data(), input.size(),
                    LowFloatKind::F16, /*clampToFinite=*/false);
  EXPECT_EQ(stats.overflowed, 2);
  EXPECT_EQ(stats.flushedToZero, 1); // 1e-9; 3e-8 becomes a subnormal
  EXPECT_EQ(stats.nonZero, 5);
  EXPECT_EQ(stats.maxAbs, 1e6f);
  EXPECT_EQ(output[1], 0x7c00);
  stats = convertFloats(input.data(), output.data(), input.size(),
                        LowFloatKind::F16, /*clampToFinite=*/true);
  EXPECT_EQ(stats.overflowed, 2);
  EXPECT_EQ(output[1], 0x7bff);
  EXPECT_EQ(output[2], 0xfbff);
  stats = convertFloats(input.data(), output.data(), input.size(),
                        LowFloatKind::BF16, false);
  EXPECT_EQ(stats.overflowed, 0);
  EXPECT_EQ(stats.flushedToZero, 0);
}

} // namespace
