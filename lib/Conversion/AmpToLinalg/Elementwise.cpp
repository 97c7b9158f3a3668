//===- Elementwise.cpp - amp elementwise ops -> linalg.generic ------------===//
//
// Every broadcasting elementwise amp op becomes one linalg.generic whose
// body is built by a scalar function below. Scalars arrive in their compute
// type (f16/bf16 widened to f32); the result is rounded once to the storage
// type by buildElementwise. Clip (optional bounds) and Dropout (the identity
// in inference) have their own patterns.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::amp::lowering {
namespace {

/// Builds the scalar body of one elementwise op. `unsignedArgs` tells, per
/// operand, whether the original amp type was unsigned.
struct ScalarBuilder {
  OpBuilder &b;
  Location loc;
  ArrayRef<bool> unsignedArgs;

  Value cst(Type type, double v) { return constantScalar(b, loc, type, v); }
  bool isFloat(Value v) { return isa<FloatType>(v.getType()); }
  bool isUnsigned(unsigned i) {
    return i < unsignedArgs.size() && unsignedArgs[i];
  }

  Value cmp(arith::CmpFPredicate fp, arith::CmpIPredicate si,
            arith::CmpIPredicate ui, Value x, Value y, bool isUnsigned) {
    if (isFloat(x))
      return b.create<arith::CmpFOp>(loc, fp, x, y);
    return b.create<arith::CmpIOp>(loc, isUnsigned ? ui : si, x, y);
  }
  Value lt(Value x, Value y, bool u = false) {
    return cmp(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
               arith::CmpIPredicate::ult, x, y, u);
  }
  Value gt(Value x, Value y, bool u = false) {
    return cmp(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
               arith::CmpIPredicate::ugt, x, y, u);
  }
  Value select(Value c, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, c, x, y);
  }
  Value add(Value x, Value y) {
    if (isFloat(x))
      return b.create<arith::AddFOp>(loc, x, y);
    return b.create<arith::AddIOp>(loc, x, y);
  }
  Value sub(Value x, Value y) {
    if (isFloat(x))
      return b.create<arith::SubFOp>(loc, x, y);
    return b.create<arith::SubIOp>(loc, x, y);
  }
  Value mul(Value x, Value y) {
    if (isFloat(x))
      return b.create<arith::MulFOp>(loc, x, y);
    return b.create<arith::MulIOp>(loc, x, y);
  }
  Value div(Value x, Value y, bool u = false) {
    if (isFloat(x))
      return b.create<arith::DivFOp>(loc, x, y);
    if (u)
      return b.create<arith::DivUIOp>(loc, x, y);
    return b.create<arith::DivSIOp>(loc, x, y);
  }
  Value exp(Value x) { return b.create<math::ExpOp>(loc, x); }
  Value log(Value x) { return b.create<math::LogOp>(loc, x); }
  Value tanh(Value x) { return b.create<math::TanhOp>(loc, x); }
  Value sigmoid(Value x) {
    Value one = cst(x.getType(), 1);
    Value negX = b.create<arith::NegFOp>(loc, x);
    return b.create<arith::DivFOp>(loc, one, add(one, exp(negX)));
  }
  Value softplus(Value x) {
    // log(1 + exp(x)), stable for large x: max(x, 0) + log1p(exp(-|x|)).
    Value zero = cst(x.getType(), 0);
    Value absX = b.create<math::AbsFOp>(loc, x);
    Value tail =
        b.create<math::Log1pOp>(loc, exp(b.create<arith::NegFOp>(loc, absX)));
    Value pos = select(gt(x, zero), x, zero);
    return add(pos, tail);
  }
  Value maxOf(Value x, Value y, bool u) {
    if (isFloat(x))
      return b.create<arith::MaximumFOp>(loc, x, y);
    if (u)
      return b.create<arith::MaxUIOp>(loc, x, y);
    return b.create<arith::MaxSIOp>(loc, x, y);
  }
  Value minOf(Value x, Value y, bool u) {
    if (isFloat(x))
      return b.create<arith::MinimumFOp>(loc, x, y);
    if (u)
      return b.create<arith::MinUIOp>(loc, x, y);
    return b.create<arith::MinSIOp>(loc, x, y);
  }
  /// Clamps to [0, 1].
  Value saturate(Value x) {
    Value zero = cst(x.getType(), 0), one = cst(x.getType(), 1);
    return select(lt(x, zero), zero, select(gt(x, one), one, x));
  }
};

using BodyFn = std::function<Value(ScalarBuilder &, ValueRange)>;

/// The scalar body of `op`, or nullptr if `op` is not elementwise.
BodyFn getBody(Operation *op) {
  auto f = [](auto fn) -> BodyFn { return fn; };
  return llvm::TypeSwitch<Operation *, BodyFn>(op)
      // Unary.
      .Case([&](AbsOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          if (s.isFloat(a[0]))
            return s.b.create<math::AbsFOp>(s.loc, a[0]);
          if (s.isUnsigned(0))
            return a[0];
          return signedIntAbs(s.b, s.loc, a[0]);
        });
      })
      .Case([&](NegOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          if (s.isFloat(a[0]))
            return s.b.create<arith::NegFOp>(s.loc, a[0]);
          return s.sub(s.cst(a[0].getType(), 0), a[0]);
        });
      })
      .Case([&](ReluOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Value zero = s.cst(a[0].getType(), 0);
          return s.select(s.lt(a[0], zero), zero, a[0]);
        });
      })
      .Case([&](SignOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value zero = s.cst(t, 0);
          bool u = s.isUnsigned(0);
          Value neg = u ? zero : s.cst(t, -1);
          return s.select(s.gt(a[0], zero, u), s.cst(t, 1),
                          s.select(s.lt(a[0], zero, u), neg, a[0]));
        });
      })
      .Case([&](IdentityOp) {
        return f([](ScalarBuilder &, ValueRange a) -> Value { return a[0]; });
      })
      .Case([&](NotOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.b.create<arith::XOrIOp>(s.loc, a[0],
                                           s.cst(a[0].getType(), 1));
        });
      })
      .Case([&](BitwiseNotOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.b.create<arith::XOrIOp>(s.loc, a[0],
                                           s.cst(a[0].getType(), -1));
        });
      })
#define AMP_MATH_UNARY(AmpOp, MathOp)                                          \
  .Case([&](AmpOp) {                                                           \
    return f([](ScalarBuilder &s, ValueRange a) -> Value {                     \
      return s.b.create<MathOp>(s.loc, a[0]);                                  \
    });                                                                        \
  })
          AMP_MATH_UNARY(AcosOp, math::AcosOp) AMP_MATH_UNARY(
              AcoshOp, math::AcoshOp) AMP_MATH_UNARY(AsinOp, math::AsinOp)
              AMP_MATH_UNARY(AsinhOp,
                             math::AsinhOp) AMP_MATH_UNARY(AtanOp, math::AtanOp)
                  AMP_MATH_UNARY(AtanhOp, math::AtanhOp) AMP_MATH_UNARY(
                      CeilOp, math::CeilOp) AMP_MATH_UNARY(CosOp, math::CosOp)
                      AMP_MATH_UNARY(CoshOp, math::CoshOp) AMP_MATH_UNARY(
                          ErfOp, math::ErfOp) AMP_MATH_UNARY(ExpOp, math::ExpOp)
                          AMP_MATH_UNARY(FloorOp, math::FloorOp)
                              AMP_MATH_UNARY(LogOp, math::LogOp) AMP_MATH_UNARY(
                                  RoundOp, math::RoundEvenOp)
                                  AMP_MATH_UNARY(SinOp, math::SinOp)
                                      AMP_MATH_UNARY(SinhOp, math::SinhOp)
                                          AMP_MATH_UNARY(SqrtOp, math::SqrtOp)
                                              AMP_MATH_UNARY(TanOp, math::TanOp)
                                                  AMP_MATH_UNARY(TanhOp,
                                                                 math::TanhOp)
#undef AMP_MATH_UNARY
      .Case([&](ReciprocalOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.div(s.cst(a[0].getType(), 1), a[0]);
        });
      })
      .Case([&](SigmoidOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.sigmoid(a[0]);
        });
      })
      .Case([&](SoftplusOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.softplus(a[0]);
        });
      })
      .Case([&](SoftsignOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Value one = s.cst(a[0].getType(), 1);
          Value absX = s.b.create<math::AbsFOp>(s.loc, a[0]);
          return s.div(a[0], s.add(one, absX));
        });
      })
      .Case([&](MishOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.mul(a[0], s.tanh(s.softplus(a[0])));
        });
      })
      .Case([&](HardSwishOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value gate =
              s.saturate(s.add(s.mul(a[0], s.cst(t, 1.0 / 6)), s.cst(t, 0.5)));
          return s.mul(a[0], gate);
        });
      })
      .Case([&](HardSigmoidOp o) {
        double alpha = o.getAlpha().convertToDouble();
        double beta = o.getBeta().convertToDouble();
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          return s.saturate(
              s.add(s.mul(a[0], s.cst(t, alpha)), s.cst(t, beta)));
        });
      })
      .Case([&](LeakyReluOp o) {
        double alpha = o.getAlpha().convertToDouble();
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          return s.select(s.lt(a[0], s.cst(t, 0)), s.mul(a[0], s.cst(t, alpha)),
                          a[0]);
        });
      })
      .Case([&](EluOp o) {
        double alpha = o.getAlpha().convertToDouble();
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value negative =
              s.mul(s.cst(t, alpha), s.b.create<math::ExpM1Op>(s.loc, a[0]));
          return s.select(s.lt(a[0], s.cst(t, 0)), negative, a[0]);
        });
      })
      .Case([&](CeluOp o) {
        double alpha = o.getAlpha().convertToDouble();
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value zero = s.cst(t, 0);
          Value scaled = s.div(a[0], s.cst(t, alpha));
          Value negative =
              s.mul(s.cst(t, alpha), s.b.create<math::ExpM1Op>(s.loc, scaled));
          return s.select(s.lt(a[0], zero), negative, a[0]);
        });
      })
      .Case([&](SeluOp o) {
        double alpha = o.getAlpha().convertToDouble();
        double gamma = o.getGamma().convertToDouble();
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value negative =
              s.mul(s.cst(t, alpha), s.b.create<math::ExpM1Op>(s.loc, a[0]));
          Value v = s.select(s.gt(a[0], s.cst(t, 0)), a[0], negative);
          return s.mul(s.cst(t, gamma), v);
        });
      })
      .Case([&](ThresholdedReluOp o) {
        double alpha = o.getAlpha().convertToDouble();
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          return s.select(s.gt(a[0], s.cst(t, alpha)), a[0], s.cst(t, 0));
        });
      })
      .Case([&](ShrinkOp o) {
        double bias = o.getBias().convertToDouble();
        double lambd = o.getLambd().convertToDouble();
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value x = a[0];
          if (!s.isFloat(x))
            x = convertScalar(s.b, s.loc, x, s.b.getF64Type(), s.isUnsigned(0),
                              false);
          Type ft = x.getType();
          Value below = s.lt(x, s.cst(ft, -lambd));
          Value above = s.gt(x, s.cst(ft, lambd));
          Value r = s.select(
              below, s.add(x, s.cst(ft, bias)),
              s.select(above, s.sub(x, s.cst(ft, bias)), s.cst(ft, 0)));
          return convertScalar(s.b, s.loc, r, t, false, s.isUnsigned(0));
        });
      })
      .Case([&](SwishOp o) {
        double alpha = o.getAlpha().convertToDouble();
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          return s.mul(a[0], s.sigmoid(s.mul(a[0], s.cst(t, alpha))));
        });
      })
      .Case([&](GeluOp o) {
        bool useTanh = o.getApproximate() == "tanh";
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value x = a[0];
          Value inner;
          if (useTanh) {
            Value cube = s.mul(x, s.mul(x, x));
            Value arg = s.mul(s.cst(t, std::sqrt(2.0 / M_PI)),
                              s.add(x, s.mul(s.cst(t, 0.044715), cube)));
            inner = s.tanh(arg);
          } else {
            inner = s.b.create<math::ErfOp>(
                s.loc, s.mul(x, s.cst(t, 1.0 / std::sqrt(2.0))));
          }
          return s.mul(s.mul(s.cst(t, 0.5), x), s.add(s.cst(t, 1), inner));
        });
      })
      .Case([&](IsNaNOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.b.create<arith::CmpFOp>(s.loc, arith::CmpFPredicate::UNO,
                                           a[0], a[0]);
        });
      })
      .Case([&](IsInfOp o) {
        bool negative = o.getDetectNegative() != 0;
        bool positive = o.getDetectPositive() != 0;
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type t = a[0].getType();
          auto inf = [&](bool neg) {
            return s.b.create<arith::ConstantOp>(
                s.loc,
                s.b.getFloatAttr(
                    t, APFloat::getInf(cast<FloatType>(t).getFloatSemantics(),
                                       neg)));
          };
          Value result = s.cst(s.b.getI1Type(), 0);
          if (positive)
            result = s.b.create<arith::OrIOp>(
                s.loc, result,
                s.b.create<arith::CmpFOp>(s.loc, arith::CmpFPredicate::OEQ,
                                          a[0], inf(false)));
          if (negative)
            result = s.b.create<arith::OrIOp>(
                s.loc, result,
                s.b.create<arith::CmpFOp>(s.loc, arith::CmpFPredicate::OEQ,
                                          a[0], inf(true)));
          return result;
        });
      })
      // Binary.
      .Case([&](AddOp) {
        return f(
            [](ScalarBuilder &s, ValueRange a) { return s.add(a[0], a[1]); });
      })
      .Case([&](SubOp) {
        return f(
            [](ScalarBuilder &s, ValueRange a) { return s.sub(a[0], a[1]); });
      })
      .Case([&](MulOp) {
        return f(
            [](ScalarBuilder &s, ValueRange a) { return s.mul(a[0], a[1]); });
      })
      .Case([&](DivOp) {
        return f([](ScalarBuilder &s, ValueRange a) {
          return s.div(a[0], a[1], s.isUnsigned(0));
        });
      })
      .Case([&](ModOp o) {
        bool fmod = o.getFmod() != 0;
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Value x = a[0], y = a[1];
          bool isFloat = s.isFloat(x);
          if (!isFloat && s.isUnsigned(0))
            return s.b.create<arith::RemUIOp>(s.loc, x, y);
          Value r = isFloat
                        ? s.b.create<arith::RemFOp>(s.loc, x, y).getResult()
                        : s.b.create<arith::RemSIOp>(s.loc, x, y).getResult();
          if (fmod)
            return r;
          // fmod = 0 (floats from opset 28): x - floor(x / y) * y, the sign
          // of the divisor; a zero result is a zero with y's sign, and
          // x mod +-inf is x when the signs agree, y otherwise.
          Value zero = s.cst(x.getType(), 0);
          Value nonzero =
              s.cmp(arith::CmpFPredicate::ONE, arith::CmpIPredicate::ne,
                    arith::CmpIPredicate::ne, r, zero, false);
          Value signDiffers =
              s.b.create<arith::XOrIOp>(s.loc, s.lt(r, zero), s.lt(y, zero));
          Value fix = s.b.create<arith::AndIOp>(s.loc, nonzero, signDiffers);
          Value result = s.select(fix, s.add(r, y), r);
          if (!isFloat)
            return result;
          Value isZero =
              s.cmp(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
                    arith::CmpIPredicate::eq, r, zero, false);
          // y is not +-0 or NaN here (r would be NaN).
          Value signedZero =
              s.select(s.lt(y, zero), s.cst(x.getType(), -0.0), zero);
          return s.select(isZero, signedZero, result);
        });
      })
      .Case([&](PowOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Value x = a[0], y = a[1];
          Type t = x.getType();
          Type ft = s.isFloat(x) ? t : s.b.getF64Type();
          Value fx = convertScalar(s.b, s.loc, x, ft, s.isUnsigned(0), false);
          Value fy = convertScalar(s.b, s.loc, y, ft, s.isUnsigned(1), false);
          Value r = s.b.create<math::PowFOp>(s.loc, fx, fy);
          return convertScalar(s.b, s.loc, r, t, false, s.isUnsigned(0));
        });
      })
      .Case([&](PReluOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Value zero = s.cst(a[0].getType(), 0);
          return s.select(s.lt(a[0], zero), s.mul(a[0], a[1]), a[0]);
        });
      })
      .Case([&](BitShiftOp o) {
        // Opset 28's definition (earlier ones only had unsigned types and
        // left large shifts undefined): a signed right shift is arithmetic;
        // a shift by a negative amount or by the width or more gives what
        // the fill alone gives (0, or -1 for a negative value shifted right).
        bool left = o.getDirection() == "LEFT";
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Location l = s.loc;
          OpBuilder &b = s.b;
          Type type = a[0].getType();
          unsigned width = type.getIntOrFloatBitWidth();
          bool isSigned = !s.isUnsigned(0);
          Value shifted =
              left       ? b.create<arith::ShLIOp>(l, a[0], a[1]).getResult()
              : isSigned ? b.create<arith::ShRSIOp>(l, a[0], a[1]).getResult()
                         : b.create<arith::ShRUIOp>(l, a[0], a[1]).getResult();
          Value widthValue = b.create<arith::ConstantOp>(
              l, type, b.getIntegerAttr(type, width));
          // Unsigned compare: a negative amount is out of range too.
          Value inRange = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult,
                                                  a[1], widthValue);
          Value fill =
              !left && isSigned
                  ? b.create<arith::ShRSIOp>(
                         l, a[0],
                         b.create<arith::ConstantOp>(
                             l, type, b.getIntegerAttr(type, width - 1)))
                        .getResult()
                  : b.create<arith::ConstantOp>(l, type,
                                                b.getIntegerAttr(type, 0))
                        .getResult();
          return b.create<arith::SelectOp>(l, inRange, shifted, fill);
        });
      })
      .Case<BitwiseAndOp, AndOp>([&](auto) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.b.create<arith::AndIOp>(s.loc, a[0], a[1]);
        });
      })
      .Case<BitwiseOrOp, OrOp>([&](auto) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.b.create<arith::OrIOp>(s.loc, a[0], a[1]);
        });
      })
      .Case<BitwiseXorOp, XorOp>([&](auto) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.b.create<arith::XOrIOp>(s.loc, a[0], a[1]);
        });
      })
#define AMP_COMPARE(AmpOp, FP, SI, UI)                                         \
  .Case([&](AmpOp) {                                                           \
    return f([](ScalarBuilder &s, ValueRange a) -> Value {                     \
      return s.cmp(arith::CmpFPredicate::FP, arith::CmpIPredicate::SI,         \
                   arith::CmpIPredicate::UI, a[0], a[1], s.isUnsigned(0));     \
    });                                                                        \
  })
          AMP_COMPARE(EqualOp, OEQ, eq, eq)
              AMP_COMPARE(GreaterOp, OGT, sgt, ugt)
                  AMP_COMPARE(GreaterOrEqualOp, OGE, sge, uge)
                      AMP_COMPARE(LessOp, OLT, slt, ult)
                          AMP_COMPARE(LessOrEqualOp, OLE, sle, ule)
#undef AMP_COMPARE
      // Variadic.
      .Case([&](MaxOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Value r = a[0];
          for (Value v : a.drop_front())
            r = s.maxOf(r, v, s.isUnsigned(0));
          return r;
        });
      })
      .Case([&](MinOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Value r = a[0];
          for (Value v : a.drop_front())
            r = s.minOf(r, v, s.isUnsigned(0));
          return r;
        });
      })
      .Case([&](SumOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Value r = a[0];
          for (Value v : a.drop_front())
            r = s.add(r, v);
          return r;
        });
      })
      .Case([&](MeanOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          Value r = a[0];
          for (Value v : a.drop_front())
            r = s.add(r, v);
          return s.div(r, s.cst(r.getType(), a.size()), s.isUnsigned(0));
        });
      })
      .Case([&](WhereOp) {
        return f([](ScalarBuilder &s, ValueRange a) -> Value {
          return s.select(a[0], a[1], a[2]);
        });
      })
      .Case<CastOp, CastLikeOp>([&](auto o) {
        Type to = getElementTypeOrSelf(o.getOutput().getType());
        Type from = getElementTypeOrSelf(o.getInput().getType());
        bool toUnsigned = isUnsignedInt(to);
        if (isStorageElementType(from) || isStorageElementType(to)) {
          bool saturate = o.getSaturate() != 0;
          return f([=](ScalarBuilder &s, ValueRange a) -> Value {
            return castStorageScalar(s.b, s.loc, a[0], from, to, saturate);
          });
        }
        return f([=](ScalarBuilder &s, ValueRange a) -> Value {
          Type target = to;
          if (auto intType = dyn_cast<IntegerType>(to))
            target = s.b.getIntegerType(intType.getWidth());
          return convertScalar(s.b, s.loc, a[0], target, s.isUnsigned(0),
                               toUnsigned);
        });
      })
      .Default([](Operation *) { return BodyFn(); });
}

/// Lowers every elementwise amp op (see getBody).
struct ElementwiseOpLowering : public ConversionPattern {
  ElementwiseOpLowering(TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<AmpDialect>(op->getDialect()))
      return failure();
    BodyFn body = getBody(op);
    if (!body)
      return failure();
    // Clip's optional bounds and CastLike's type operand are not data.
    SmallVector<Value> inputs;
    SmallVector<bool> unsignedArgs;
    for (auto [i, operand] : llvm::enumerate(operands)) {
      if (isa<CastLikeOp>(op) && i == 1)
        continue;
      inputs.push_back(operand);
      unsignedArgs.push_back(
          isUnsignedInt(getElementTypeOrSelf(op->getOperand(i).getType())));
    }
    Type resultElement = getElementTypeOrSelf(op->getResult(0).getType());
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Location loc = op->getLoc();
    Value result = buildElementwise(
        rewriter, loc, inputs, resultType,
        [&](OpBuilder &b, Location l, ValueRange args) {
          ScalarBuilder s{b, l, unsignedArgs};
          return body(s, args);
        },
        isUnsignedInt(resultElement));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Clip with optional scalar bounds.
struct ClipOpLowering : public OpConversionPattern<ClipOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ClipOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> inputs = {adaptor.getInput()};
    bool hasMin = !isNone(adaptor.getMin());
    bool hasMax = !isNone(adaptor.getMax());
    if (hasMin)
      inputs.push_back(adaptor.getMin());
    if (hasMax)
      inputs.push_back(adaptor.getMax());
    bool isUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getType()));
    Value result = buildElementwise(
        rewriter, op.getLoc(), inputs,
        convertedResultType(getTypeConverter(), op),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          ScalarBuilder s{b, loc, {}};
          Value x = args[0];
          unsigned next = 1;
          if (hasMin) {
            Value lo = args[next++];
            x = s.select(s.lt(x, lo, isUnsigned), lo, x);
          }
          if (hasMax) {
            Value hi = args[next++];
            x = s.select(s.gt(x, hi, isUnsigned), hi, x);
          }
          return x;
        },
        isUnsigned);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Dropout in inference: the identity (and an all-true mask).
struct DropoutOpLowering : public OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isNone(op.getTrainingMode())) {
      auto training = getConstantInts(op.getTrainingMode());
      if (failed(training) || training->empty() || (*training)[0] != 0)
        return notLowerable(op, "training_mode is not a constant false");
    }
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    Value mask;
    if (!op.getMask().use_empty()) {
      RankedTensorType maskType =
          convertedResultType(getTypeConverter(), op, 1);
      mask =
          filledTensor(rewriter, loc, maskType, getSizes(rewriter, loc, data),
                       constantScalar(rewriter, loc, rewriter.getI1Type(), 1));
    }
    rewriter.replaceOp(op, {data, mask});
    return success();
  }
};

} // namespace

void populateElementwisePatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns) {
  patterns.add<ElementwiseOpLowering, ClipOpLowering, DropoutOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
