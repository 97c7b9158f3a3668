//===- StorageTypes.cpp - 8-bit floats and 4-/2-bit integers -------------===//
//
// amp holds ONNX's storage types as bytes: an 8-bit float as its bit
// pattern, a 4- or 2-bit integer sign- or zero-extended (the type
// converter makes them i8 tensors). Cast to and from them is emitted here
// as integer and f64 arithmetic, since LLVM has no 8-bit floats:
//
//  - decoding an 8-bit float is exact into f32 (it has at most 5 exponent
//    and 3 mantissa bits);
//  - encoding rounds to nearest even in f64: every source value is exact in
//    f64 (integers beyond 2^53 are far beyond the 8-bit range), so there is
//    no double rounding. The quantum of the value's binade (or of the
//    subnormal range) divides it exactly, math.roundeven rounds, and the
//    product is the rounded value, which then either overflows (saturate,
//    Inf or NaN as ONNX Cast's table says) or is encoded from its f64 bits.
//
// The formats' facts come from semantics::getFloat8Layout (LLVM's APFloat).
// amp_runtime::doubleToFloat8Bits is the same algorithm on the host; both
// are checked against onnx's reference in test/python/test_storage_types.py
// (the host one also against APFloat, test/unit/Runtime/Float8Test.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "amp/Dialect/Amp/Semantics/Quantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::amp::lowering;

using mlir::amp::semantics::Float8Layout;
namespace semantics = mlir::amp::semantics;

/// Bits of a 4- or 2-bit integer type, else 0.
static unsigned narrowIntegerBits(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  return integer && integer.getWidth() < 8 && integer.getWidth() > 1
             ? integer.getWidth()
             : 0;
}

bool mlir::amp::lowering::isStorageElementType(Type type) {
  return semantics::isFloat8Type(type) || narrowIntegerBits(type);
}

namespace {
/// Integer arithmetic on one width, for the bit manipulations below.
struct Bits {
  OpBuilder &b;
  Location loc;
  Type type;
  Value c(int64_t v) {
    return b.create<arith::ConstantOp>(loc, type, b.getIntegerAttr(type, v));
  }
  Value shr(Value x, int64_t n) {
    return b.create<arith::ShRUIOp>(loc, x, c(n));
  }
  Value shl(Value x, int64_t n) {
    return b.create<arith::ShLIOp>(loc, x, c(n));
  }
  Value band(Value x, int64_t m) {
    return b.create<arith::AndIOp>(loc, x, c(m));
  }
  Value bor(Value x, Value y) { return b.create<arith::OrIOp>(loc, x, y); }
  Value add(Value x, int64_t v) {
    return b.create<arith::AddIOp>(loc, x, c(v));
  }
  Value eq(Value x, int64_t v) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, c(v));
  }
  Value select(Value cond, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, cond, x, y);
  }
};
} // namespace

/// The f32 value of the 8-bit float whose bits are the i8 `bits` (exact).
static Value decodeFloat8(OpBuilder &b, Location loc, Value bits,
                          const Float8Layout &f) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Bits i{b, loc, i32};
  int64_t m = f.mantissaBits, exponentMask = (1 << f.exponentBits) - 1;
  Value u = b.create<arith::ExtUIOp>(loc, i32, bits);
  Value sign = i.shl(i.band(u, 0x80), 24);
  Value exponent = i.band(i.shr(u, m), exponentMask);
  Value mantissa = i.band(u, (1 << m) - 1);
  auto asFloat = [&](Value v) -> Value {
    return b.create<arith::BitcastOp>(loc, f32, v);
  };
  // Normal: rebias the exponent, widen the mantissa.
  Value normal =
      asFloat(i.bor(sign, i.bor(i.shl(i.add(exponent, 127 - f.bias), 23),
                                i.shl(mantissa, 23 - m))));
  // Subnormal (and zero): mantissa * 2^(1 - bias - m), exactly.
  Value magnitude = b.create<arith::MulFOp>(
      loc, b.create<arith::UIToFPOp>(loc, f32, mantissa),
      b.create<arith::ConstantOp>(
          loc, b.getF32FloatAttr(std::ldexp(1.0f, 1 - f.bias - int(m)))));
  Value subnormal = b.create<arith::SelectOp>(
      loc, i.eq(sign, 0), magnitude, b.create<arith::NegFOp>(loc, magnitude));
  Value value = i.select(i.eq(exponent, 0), subnormal, normal);
  Value nan = asFloat(i.bor(sign, i.c(0x7fc00000)));
  if (f.fnuz)
    return i.select(i.eq(u, 0x80), nan, value);
  Value allOnes = i.eq(exponent, exponentMask);
  if (f.hasInfinity) {
    Value inf = asFloat(i.bor(sign, i.c(0x7f800000)));
    return i.select(allOnes, i.select(i.eq(mantissa, 0), inf, nan), value);
  }
  Value isNan =
      b.create<arith::AndIOp>(loc, allOnes, i.eq(mantissa, (1 << m) - 1));
  return i.select(isNan, nan, value);
}

/// The i8 bits of the 8-bit float nearest the f64 `x` (ties to even), with
/// ONNX Cast's rules for Inf, NaN and overflow.
static Value encodeFloat8(OpBuilder &b, Location loc, Value x,
                          const Float8Layout &f, bool saturate) {
  Type i64 = b.getI64Type(), i8 = b.getI8Type(), f64 = b.getF64Type();
  Bits l{b, loc, i64};
  Bits c{b, loc, i8};
  int64_t m = f.mantissaBits;
  int64_t minExponent = 1 - f.bias;
  auto bitsOf = [&](Value v) -> Value {
    return b.create<arith::BitcastOp>(loc, i64, v);
  };
  auto real = [&](double v) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(v));
  };
  auto cmp = [&](arith::CmpFPredicate p, Value v, Value w) -> Value {
    return b.create<arith::CmpFOp>(loc, p, v, w);
  };
  Value sign =
      b.create<arith::TruncIOp>(loc, i8, l.band(l.shr(bitsOf(x), 56), 0x80));
  Value magnitude = b.create<math::AbsFOp>(loc, x);
  // The quantum: 2^(max(e, minExponent) - m) for |x| in [2^e, 2^(e+1)).
  Value exponent = l.add(l.shr(bitsOf(magnitude), 52), -1023);
  Value clamped = b.create<arith::MaxSIOp>(loc, exponent, l.c(minExponent));
  Value quantum =
      b.create<arith::BitcastOp>(loc, f64, l.shl(l.add(clamped, 1023 - m), 52));
  Value rounded = b.create<arith::MulFOp>(
      loc,
      b.create<math::RoundEvenOp>(
          loc, b.create<arith::DivFOp>(loc, magnitude, quantum)),
      quantum);
  // Normal: rebias the exponent, keep the top m mantissa bits (exact).
  Value roundedBits = bitsOf(rounded);
  Value normal = b.create<arith::TruncIOp>(
      loc, i8,
      b.create<arith::OrIOp>(
          loc, l.shl(l.add(l.shr(roundedBits, 52), f.bias - 1023), m),
          l.band(l.shr(roundedBits, 52 - m), (1 << m) - 1)));
  // Subnormal: the count of smallest subnormals.
  Value subnormal = b.create<arith::FPToUIOp>(
      loc, i8,
      b.create<arith::MulFOp>(loc, rounded,
                              real(std::ldexp(1.0, int(m) - minExponent))));
  Value code = c.select(cmp(arith::CmpFPredicate::OLT, rounded,
                            real(std::ldexp(1.0, minExponent))),
                        subnormal, normal);
  Value result = c.bor(sign, code);
  if (f.fnuz) // no negative zero
    result = c.select(cmp(arith::CmpFPredicate::OEQ, rounded, real(0)), c.c(0),
                      result);
  Value nanBits = f.fnuz ? c.c(0x80) : c.bor(sign, c.c(0x7f));
  Value overflowBits = saturate        ? c.bor(sign, c.c(f.maxBits))
                       : f.hasInfinity ? c.bor(sign, c.c(0x7c))
                                       : nanBits;
  result = c.select(cmp(arith::CmpFPredicate::OGT, rounded, real(f.maxFinite)),
                    overflowBits, result);
  return c.select(cmp(arith::CmpFPredicate::UNO, x, x), nanBits, result);
}

/// A float or integer scalar as f64 (exact; 16-bit floats through f32).
static Value toF64(OpBuilder &b, Location loc, Value value, bool isUnsigned) {
  if (isa<Float16Type, BFloat16Type>(value.getType()))
    value = b.create<arith::ExtFOp>(loc, b.getF32Type(), value);
  return convertScalar(b, loc, value, b.getF64Type(), isUnsigned, false);
}

/// Float -> 4- or 2-bit integer: truncation toward zero; values outside the
/// type's range (and NaN) give 0, as ONNX's reference does (ONNX leaves
/// them undefined). The result is the i8 extension.
static Value floatToNarrowInteger(OpBuilder &b, Location loc, Value x,
                                  unsigned bits, bool isUnsigned) {
  Type i8 = b.getI8Type();
  x = toF64(b, loc, x, false);
  double low = isUnsigned ? 0 : -std::ldexp(1.0, bits - 1);
  double high =
      isUnsigned ? std::ldexp(1.0, bits) - 1 : std::ldexp(1.0, bits - 1) - 1;
  auto real = [&](double v) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(v));
  };
  Value inRange = b.create<arith::AndIOp>(
      loc,
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, real(low - 1)),
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x,
                              real(high + 1)));
  Value safe = b.create<arith::SelectOp>(loc, inRange, x, real(0));
  return b.create<arith::FPToSIOp>(loc, i8, safe);
}

Value mlir::amp::lowering::castStorageScalar(OpBuilder &b, Location loc,
                                             Value value, Type from, Type to,
                                             bool saturate) {
  Type i8 = b.getI8Type();
  // The source as an ordinary value: f32 for an 8-bit float, the i8
  // extension for a narrow integer (exact either way).
  bool fromUnsigned = from.isUnsignedInteger();
  if (std::optional<Float8Layout> layout = semantics::getFloat8Layout(from)) {
    value = decodeFloat8(b, loc, value, *layout);
    fromUnsigned = false;
  }
  if (std::optional<Float8Layout> layout = semantics::getFloat8Layout(to)) {
    return encodeFloat8(b, loc, toF64(b, loc, value, fromUnsigned), *layout,
                        saturate);
  }
  if (unsigned bits = narrowIntegerBits(to)) {
    bool toUnsigned = to.isUnsignedInteger();
    if (isa<FloatType>(value.getType()))
      return floatToNarrowInteger(b, loc, value, bits, toUnsigned);
    // Integers wrap (the bits above the type's are dropped), bool is 0/1.
    Value byte = convertScalar(b, loc, value, i8, fromUnsigned, false);
    Bits c{b, loc, i8};
    if (toUnsigned)
      return c.band(byte, (1 << bits) - 1);
    return b.create<arith::ShRSIOp>(loc, c.shl(byte, 8 - bits), c.c(8 - bits));
  }
  Type target = to;
  if (auto integer = dyn_cast<IntegerType>(to))
    target = b.getIntegerType(integer.getWidth());
  return convertScalar(b, loc, value, target, fromUnsigned,
                       to.isUnsignedInteger());
}
