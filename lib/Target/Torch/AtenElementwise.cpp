//===- AtenElementwise.cpp - unary, binary, comparison, where, casts ------===//
//
// Arithmetic computes in the dtype torch recorded for the result (its type
// promotion already applied), comparisons in the promoted operand type;
// Python numbers become rank-0 constants of that type.
//
//===----------------------------------------------------------------------===//

#include "AtenCall.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::torch_import;

namespace {

/// The two operands of a binary op in `type`.
LogicalResult binaryOperands(AtenCall &call, Type type, Value &lhs,
                             Value &rhs) {
  FailureOr<Value> a = call.operand(0, "self", type);
  if (failed(a))
    return failure();
  FailureOr<Value> b = call.operand(1, "other", type);
  if (failed(b))
    return failure();
  lhs = *a;
  rhs = *b;
  return success();
}

/// The result type torch recorded, or the first operand's.
Type computeType(AtenCall &call) {
  if (Type type = call.resultElementType())
    return type;
  return call.argElementType(0, "self");
}

template <typename OpTy>
LogicalResult binary(AtenCall &call) {
  Value lhs, rhs;
  if (failed(binaryOperands(call, computeType(call), lhs, rhs)))
    return failure();
  return call.finish(call.value<OpTy>(lhs, rhs));
}

template <typename OpTy>
LogicalResult variadic(AtenCall &call) {
  Value lhs, rhs;
  if (failed(binaryOperands(call, computeType(call), lhs, rhs)))
    return failure();
  return call.finish(call.value<OpTy>(ValueRange{lhs, rhs}));
}

/// add/sub with alpha: a ± alpha * b.
template <typename OpTy>
LogicalResult addSub(AtenCall &call) {
  Type type = computeType(call);
  Value lhs, rhs;
  if (failed(binaryOperands(call, type, lhs, rhs)))
    return failure();
  FailureOr<double> alpha = call.number(2, "alpha", 1.0);
  if (failed(alpha))
    return failure();
  if (*alpha != 1.0) {
    FailureOr<Value> scaled =
        call.value<MulOp>(rhs, call.scalar(*alpha, type));
    if (failed(scaled))
      return failure();
    rhs = *scaled;
  }
  return call.finish(call.value<OpTy>(lhs, rhs));
}

LogicalResult rsub(AtenCall &call) {
  // other - alpha * self
  Type type = computeType(call);
  Value lhs, rhs;
  if (failed(binaryOperands(call, type, lhs, rhs)))
    return failure();
  FailureOr<double> alpha = call.number(2, "alpha", 1.0);
  if (failed(alpha))
    return failure();
  if (*alpha != 1.0) {
    FailureOr<Value> scaled =
        call.value<MulOp>(lhs, call.scalar(*alpha, type));
    if (failed(scaled))
      return failure();
    lhs = *scaled;
  }
  return call.finish(call.value<SubOp>(rhs, lhs));
}

LogicalResult div(AtenCall &call) {
  Type type = computeType(call);
  FailureOr<std::string> mode = call.string(2, "rounding_mode", "");
  if (failed(mode))
    return failure();
  Value lhs, rhs;
  if (failed(binaryOperands(call, type, lhs, rhs)))
    return failure();
  if (mode->empty()) {
    FailureOr<Value> result = call.value<DivOp>(lhs, rhs);
    if (failed(result))
      return failure();
    call.setResult(*result);
    return success();
  }
  if (*mode != "floor" && *mode != "trunc")
    return call.fail("rounding_mode '" + *mode + "' is not supported");
  if (isa<IntegerType>(type)) {
    // amp's integer Div truncates; floor: one less where the remainder is
    // not zero and the operands' signs differ.
    FailureOr<Value> quotient = call.value<DivOp>(lhs, rhs);
    if (failed(quotient) || *mode == "trunc") {
      if (succeeded(quotient))
        call.setResult(*quotient);
      return failure(failed(quotient));
    }
    Value zero = call.scalar(0, type);
    FailureOr<Value> rem =
        call.value<ModOp>(lhs, rhs, call.builder.getI64IntegerAttr(1));
    if (failed(rem))
      return failure();
    FailureOr<Value> exact = call.value<EqualOp>(*rem, zero);
    FailureOr<Value> lhsNeg = call.value<LessOp>(lhs, zero);
    FailureOr<Value> rhsNeg = call.value<LessOp>(rhs, zero);
    if (failed(exact) || failed(lhsNeg) || failed(rhsNeg))
      return failure();
    FailureOr<Value> inexact = call.value<NotOp>(*exact);
    FailureOr<Value> signsDiffer = call.value<XorOp>(*lhsNeg, *rhsNeg);
    if (failed(inexact) || failed(signsDiffer))
      return failure();
    FailureOr<Value> adjust = call.value<AndOp>(*inexact, *signsDiffer);
    if (failed(adjust))
      return failure();
    FailureOr<Value> one = call.castTo(*adjust, type);
    if (failed(one))
      return failure();
    FailureOr<Value> result = call.value<SubOp>(*quotient, *one);
    if (failed(result))
      return failure();
    call.setResult(*result);
    return success();
  }
  FailureOr<Value> quotient = call.value<DivOp>(lhs, rhs);
  if (failed(quotient))
    return failure();
  FailureOr<Value> rounded;
  if (*mode == "floor") {
    rounded = call.value<FloorOp>(*quotient);
  } else {
    // trunc(q) = sign(q) * floor(|q|)
    FailureOr<Value> magnitude = call.value<AbsOp>(*quotient);
    FailureOr<Value> sign = call.value<SignOp>(*quotient);
    if (failed(magnitude) || failed(sign))
      return failure();
    FailureOr<Value> floored = call.value<FloorOp>(*magnitude);
    if (failed(floored))
      return failure();
    rounded = call.value<MulOp>(*sign, *floored);
  }
  if (failed(rounded))
    return failure();
  call.setResult(*rounded);
  return success();
}

template <int64_t Fmod>
LogicalResult mod(AtenCall &call) {
  Value lhs, rhs;
  if (failed(binaryOperands(call, computeType(call), lhs, rhs)))
    return failure();
  return call.finish(call.value<ModOp>(lhs, rhs, call.builder.getI64IntegerAttr(Fmod)));
}

LogicalResult pow(AtenCall &call) {
  Type type = computeType(call);
  FailureOr<Value> base = call.operand(0, "self", type);
  if (failed(base))
    return failure();
  FailureOr<Value> exponent = call.operand(1, "exponent", type);
  if (failed(exponent))
    return failure();
  return call.finish(call.value<PowOp>(*base, *exponent));
}

/// The promoted type of the two operands of a comparison.
Type promoted(AtenCall &call) {
  Type a = call.argElementType(0, "self");
  Type b = call.argElementType(1, "other");
  bool aTensor = call.isTensor(0, "self"), bTensor = call.isTensor(1, "other");
  auto category = [](Type t) {
    return t.isInteger(1) ? 0 : isa<IntegerType>(t) ? 1 : 2;
  };
  if (a == b)
    return a;
  if (category(a) != category(b))
    return category(a) > category(b) ? a : b;
  if (aTensor != bTensor)
    return aTensor ? a : b;
  return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
}

template <typename OpTy, bool Negate = false>
LogicalResult compare(AtenCall &call) {
  Value lhs, rhs;
  if (failed(binaryOperands(call, promoted(call), lhs, rhs)))
    return failure();
  FailureOr<Value> result = call.value<OpTy>(lhs, rhs);
  if (failed(result))
    return failure();
  if (Negate)
    result = call.value<NotOp>(*result);
  if (failed(result))
    return failure();
  call.setResult(*result);
  return success();
}

template <typename OpTy>
LogicalResult logical(AtenCall &call) {
  Value lhs, rhs;
  if (failed(binaryOperands(call, call.builder.getI1Type(), lhs, rhs)))
    return failure();
  return call.finish(call.value<OpTy>(lhs, rhs));
}

template <typename OpTy>
LogicalResult unary(AtenCall &call) {
  FailureOr<Value> x = call.operand(0, "self", computeType(call));
  if (failed(x))
    return failure();
  return call.finish(call.value<OpTy>(*x));
}

LogicalResult rsqrt(AtenCall &call) {
  FailureOr<Value> x = call.operand(0, "self", computeType(call));
  if (failed(x))
    return failure();
  FailureOr<Value> root = call.value<SqrtOp>(*x);
  if (failed(root))
    return failure();
  return call.finish(call.value<ReciprocalOp>(*root));
}

LogicalResult notOp(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  FailureOr<Value> result;
  if (AtenCall::elementTypeOf(*x).isInteger(1) ||
      call.getTarget() == "aten.logical_not.default") {
    FailureOr<Value> flags = call.castTo(*x, call.builder.getI1Type());
    if (failed(flags))
      return failure();
    result = call.value<NotOp>(*flags);
  } else {
    result = call.value<BitwiseNotOp>(*x);
  }
  if (failed(result))
    return failure();
  call.setResult(*result);
  return success();
}

LogicalResult gelu(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<std::string> approximate = call.string(1, "approximate", "none");
  if (failed(x) || failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return call.fail("approximate='" + *approximate + "' is not supported");
  return call.finish(call.value<GeluOp>(*x, call.builder.getStringAttr(*approximate)));
}

/// clamp / hardtanh / clamp_min / clamp_max: Clip with bounds of x's type.
LogicalResult clip(AtenCall &call, Value x, std::optional<unsigned> minArg,
                   std::optional<unsigned> maxArg, StringRef minName,
                   StringRef maxName, std::optional<double> minDefault,
                   std::optional<double> maxDefault) {
  Type type = AtenCall::elementTypeOf(x);
  auto bound = [&](std::optional<unsigned> i, StringRef name,
                   std::optional<double> dflt) -> FailureOr<Value> {
    if (i && call.has(*i, name))
      return call.operand(*i, name, type);
    if (dflt)
      return call.scalar(*dflt, type);
    return call.none();
  };
  FailureOr<Value> lo = bound(minArg, minName, minDefault);
  FailureOr<Value> hi = bound(maxArg, maxName, maxDefault);
  if (failed(lo) || failed(hi))
    return failure();
  return call.finish(call.value<ClipOp>(x, *lo, *hi));
}

LogicalResult clamp(AtenCall &call) {
  FailureOr<Value> x = call.operand(0, "self", computeType(call));
  if (failed(x))
    return failure();
  return clip(call, *x, 1, 2, "min", "max", std::nullopt, std::nullopt);
}
LogicalResult clampMin(AtenCall &call) {
  FailureOr<Value> x = call.operand(0, "self", computeType(call));
  if (failed(x))
    return failure();
  return clip(call, *x, 1, std::nullopt, "min", "", std::nullopt,
              std::nullopt);
}
LogicalResult clampMax(AtenCall &call) {
  FailureOr<Value> x = call.operand(0, "self", computeType(call));
  if (failed(x))
    return failure();
  return clip(call, *x, std::nullopt, 1, "", "max", std::nullopt,
              std::nullopt);
}
LogicalResult hardtanh(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  return clip(call, *x, 1, 2, "min_val", "max_val", -1.0, 1.0);
}

LogicalResult leakyRelu(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<double> slope = call.number(1, "negative_slope", 0.01);
  if (failed(x) || failed(slope))
    return failure();
  return call.finish(call.value<LeakyReluOp>(*x, call.builder.getF32FloatAttr(*slope)));
}

LogicalResult elu(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<double> alpha = call.number(1, "alpha", 1.0);
  FailureOr<double> scale = call.number(2, "scale", 1.0);
  FailureOr<double> inputScale = call.number(3, "input_scale", 1.0);
  if (failed(x) || failed(alpha) || failed(scale) || failed(inputScale))
    return failure();
  if (*scale != 1.0 || *inputScale != 1.0)
    return call.fail("elu with scale or input_scale other than 1 is not "
                     "supported");
  return call.finish(call.value<EluOp>(*x, call.builder.getF32FloatAttr(*alpha)));
}

LogicalResult hardsigmoid(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  return call.finish(call.value<HardSigmoidOp>(
      *x, call.builder.getF32FloatAttr(1.0 / 6.0),
      call.builder.getF32FloatAttr(0.5)));
}

LogicalResult silu(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  return call.finish(call.value<SwishOp>(*x, call.builder.getF32FloatAttr(1.0)));
}

LogicalResult where(AtenCall &call) {
  Type type = computeType(call);
  FailureOr<Value> condition = call.tensor(0, "condition");
  if (failed(condition))
    return failure();
  FailureOr<Value> flags = call.castTo(*condition, call.builder.getI1Type());
  FailureOr<Value> a = call.operand(1, "self", type);
  FailureOr<Value> b = call.operand(2, "other", type);
  if (failed(flags) || failed(a) || failed(b))
    return failure();
  return call.finish(call.value<WhereOp>(*flags, *a, *b));
}

/// _to_copy, clone, alias and the like: the value itself, cast to the
/// recorded dtype where it differs (the driver casts).
LogicalResult copy(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  FailureOr<Type> dtype = call.dtype(1000, "dtype");
  if (failed(dtype))
    return failure();
  if (*dtype) {
    FailureOr<Value> cast = call.castTo(*x, *dtype);
    if (failed(cast))
      return failure();
    call.setResult(*cast);
    return success();
  }
  call.setResult(*x);
  return success();
}

LogicalResult isnan(AtenCall &call) { return unary<IsNaNOp>(call); }

LogicalResult isinf(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  return call.finish(call.value<IsInfOp>(*x, IntegerAttr(), IntegerAttr()));
}

LogicalResult expm1(AtenCall &call) {
  FailureOr<Value> x = call.operand(0, "self", computeType(call));
  if (failed(x))
    return failure();
  FailureOr<Value> e = call.value<ExpOp>(*x);
  if (failed(e))
    return failure();
  return call.finish(call.value<SubOp>(*e, call.scalar(1.0, AtenCall::elementTypeOf(*e))));
}

LogicalResult log1p(AtenCall &call) {
  FailureOr<Value> x = call.operand(0, "self", computeType(call));
  if (failed(x))
    return failure();
  FailureOr<Value> shifted =
      call.value<AddOp>(*x, call.scalar(1.0, AtenCall::elementTypeOf(*x)));
  if (failed(shifted))
    return failure();
  return call.finish(call.value<LogOp>(*shifted));
}

/// native_dropout(x, p, train) -> (y, mask): a Dropout in training mode
/// (train_step draws its masks); the identity when not training.
LogicalResult dropout(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "input");
  FailureOr<double> p = call.number(1, "p");
  FailureOr<bool> train = call.flag(2, "train", true);
  if (failed(x) || failed(p) || failed(train))
    return failure();
  if (!*train || *p == 0.0) {
    call.setResults({*x, Value()});
    return success();
  }
  OpBuilder &b = call.builder;
  auto flagType = RankedTensorType::get({}, b.getI1Type());
  Value trainingMode = b.create<ConstantOp>(
      call.loc, cast<ElementsAttr>(DenseElementsAttr::get(flagType, true)));
  FailureOr<DropoutOp> op = call.create<DropoutOp>(
      *x, call.scalar(*p, b.getF32Type()), trainingMode, IntegerAttr());
  if (failed(op))
    return failure();
  call.setResults({op->getOutput(), op->getMask()});
  return success();
}

const AtenRule kRules[] = {
    {"aten.add.Tensor", "amp.add (amp.mul for alpha)", addSub<AddOp>},
    {"aten.add.Scalar", "amp.add", addSub<AddOp>},
    {"aten.sub.Tensor", "amp.sub (amp.mul for alpha)", addSub<SubOp>},
    {"aten.sub.Scalar", "amp.sub", addSub<SubOp>},
    {"aten.rsub.Scalar", "amp.sub", rsub},
    {"aten.rsub.Tensor", "amp.sub", rsub},
    {"aten.mul.Tensor", "amp.mul", binary<MulOp>},
    {"aten.mul.Scalar", "amp.mul", binary<MulOp>},
    {"aten.div.Tensor", "amp.div", div},
    {"aten.div.Scalar", "amp.div", div},
    {"aten.div.Tensor_mode", "amp.div, amp.floor (floats); amp.div, amp.mod (integers)", div},
    {"aten.div.Scalar_mode", "amp.div, amp.floor (floats); amp.div, amp.mod (integers)", div},
    {"aten.fmod.Scalar", "amp.mod (fmod)", mod<1>},
    {"aten.fmod.Tensor", "amp.mod (fmod)", mod<1>},
    {"aten.remainder.Scalar", "amp.mod", mod<0>},
    {"aten.remainder.Tensor", "amp.mod", mod<0>},
    {"aten.pow.Tensor_Scalar", "amp.pow", pow},
    {"aten.pow.Tensor_Tensor", "amp.pow", pow},
    {"aten.maximum.default", "amp.max", variadic<MaxOp>},
    {"aten.minimum.default", "amp.min", variadic<MinOp>},
    {"aten.eq.Tensor", "amp.equal", compare<EqualOp>},
    {"aten.eq.Scalar", "amp.equal", compare<EqualOp>},
    {"aten.ne.Tensor", "amp.equal, amp.not", compare<EqualOp, true>},
    {"aten.ne.Scalar", "amp.equal, amp.not", compare<EqualOp, true>},
    {"aten.lt.Tensor", "amp.less", compare<LessOp>},
    {"aten.lt.Scalar", "amp.less", compare<LessOp>},
    {"aten.le.Tensor", "amp.less_or_equal", compare<LessOrEqualOp>},
    {"aten.le.Scalar", "amp.less_or_equal", compare<LessOrEqualOp>},
    {"aten.gt.Tensor", "amp.greater", compare<GreaterOp>},
    {"aten.gt.Scalar", "amp.greater", compare<GreaterOp>},
    {"aten.ge.Tensor", "amp.greater_or_equal", compare<GreaterOrEqualOp>},
    {"aten.ge.Scalar", "amp.greater_or_equal", compare<GreaterOrEqualOp>},
    {"aten.logical_and.default", "amp.and", logical<AndOp>},
    {"aten.logical_or.default", "amp.or", logical<OrOp>},
    {"aten.logical_xor.default", "amp.xor", logical<XorOp>},
    {"aten.logical_not.default", "amp.not", notOp},
    {"aten.bitwise_not.default", "amp.not / amp.bitwise_not", notOp},
    {"aten.abs.default", "amp.abs", unary<AbsOp>},
    {"aten.neg.default", "amp.neg", unary<NegOp>},
    {"aten.relu.default", "amp.relu", unary<ReluOp>},
    {"aten.sigmoid.default", "amp.sigmoid", unary<SigmoidOp>},
    {"aten.tanh.default", "amp.tanh", unary<TanhOp>},
    {"aten.exp.default", "amp.exp", unary<ExpOp>},
    {"aten.expm1.default", "amp.exp, amp.sub", expm1},
    {"aten.log.default", "amp.log", unary<LogOp>},
    {"aten.log1p.default", "amp.add, amp.log", log1p},
    {"aten.sqrt.default", "amp.sqrt", unary<SqrtOp>},
    {"aten.rsqrt.default", "amp.sqrt, amp.reciprocal", rsqrt},
    {"aten.reciprocal.default", "amp.reciprocal", unary<ReciprocalOp>},
    {"aten.sin.default", "amp.sin", unary<SinOp>},
    {"aten.cos.default", "amp.cos", unary<CosOp>},
    {"aten.erf.default", "amp.erf", unary<ErfOp>},
    {"aten.floor.default", "amp.floor", unary<FloorOp>},
    {"aten.ceil.default", "amp.ceil", unary<CeilOp>},
    {"aten.round.default", "amp.round", unary<RoundOp>},
    {"aten.sign.default", "amp.sign", unary<SignOp>},
    {"aten.isnan.default", "amp.is_nan", isnan},
    {"aten.isinf.default", "amp.is_inf", isinf},
    {"aten.gelu.default", "amp.gelu", gelu},
    {"aten.hardtanh.default", "amp.clip", hardtanh},
    {"aten.clamp.default", "amp.clip", clamp},
    {"aten.clamp.Tensor", "amp.clip", clamp},
    {"aten.clamp_min.default", "amp.clip", clampMin},
    {"aten.clamp_max.default", "amp.clip", clampMax},
    {"aten.leaky_relu.default", "amp.leaky_relu", leakyRelu},
    {"aten.elu.default", "amp.elu", elu},
    {"aten.hardsigmoid.default", "amp.hard_sigmoid", hardsigmoid},
    {"aten.hardswish.default", "amp.hard_swish", unary<HardSwishOp>},
    {"aten.silu.default", "amp.swish", silu},
    {"aten.mish.default", "amp.mish", unary<MishOp>},
    {"aten.where.self", "amp.where", where},
    {"aten.native_dropout.default", "amp.dropout (training mode; train_step only)",
     dropout},
    {"aten._to_copy.default", "amp.cast", copy},
    {"aten.clone.default", "(none: the value itself)", copy},
    {"aten.alias.default", "(none: the value itself)", copy},
    {"aten.lift_fresh_copy.default", "(none: the value itself)", copy},
    {"aten.detach.default", "(none: the value itself)", copy},
};

} // namespace

ArrayRef<AtenRule> torch_import::getElementwiseRules() { return kRules; }
