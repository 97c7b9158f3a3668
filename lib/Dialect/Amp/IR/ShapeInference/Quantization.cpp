//===- Quantization.cpp - shape rules of the quantization ops -------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

/// The scale and zero point against x (Quantization.h); the zero point's
/// type must be a quantized integer type (`what` names the op).
static LogicalResult checkScaleAndZeroPoint(InferenceContext &ctx,
                                            const semantics::QuantAttrs &attrs,
                                            RankedTensorType x,
                                            RankedTensorType scale,
                                            StringRef what) {
  RankedTensorType zeroPoint = ctx.getTensorType(2);
  std::optional<ArrayRef<int64_t>> zeroPointShape;
  if (zeroPoint) {
    zeroPointShape = zeroPoint.getShape();
    if (!semantics::getQuantizedRange(zeroPoint.getElementType()) &&
        !semantics::isFloat8Type(zeroPoint.getElementType()))
      return ctx.emitError(what + " zero point of element type " +
                           Twine(typeToString(zeroPoint.getElementType())) +
                           " is not supported (int2, uint2, int4, uint4, "
                           "int8, uint8, int16, uint16" +
                           (what == "DequantizeLinear" ? ", int32" : "") +
                           " and the 8-bit floats)");
  }
  return semantics::resolveQuantLayout(x.getShape(), scale.getShape(),
                                       zeroPointShape, attrs, ctx.getErrorFn());
}

LogicalResult shape::inferQuantizeLinear(InferenceContext &ctx,
                                         const semantics::QuantAttrs &attrs,
                                         std::optional<Type> outputDtype,
                                         Types &results) {
  auto x = requireTensor(ctx, 0);
  auto scale = requireTensor(ctx, 1);
  if (failed(x) || failed(scale) ||
      failed(checkScaleAndZeroPoint(ctx, attrs, *x, *scale, "QuantizeLinear")))
    return failure();
  Type elementType = outputDtype.value_or(
      IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned));
  if (RankedTensorType zeroPoint = ctx.getTensorType(2)) {
    if (outputDtype && *outputDtype != zeroPoint.getElementType())
      return ctx.emitError("QuantizeLinear output_dtype " +
                           Twine(typeToString(*outputDtype)) +
                           " differs from the zero point's type " +
                           Twine(typeToString(zeroPoint.getElementType())));
    elementType = zeroPoint.getElementType();
  }
  auto intType = dyn_cast<IntegerType>(elementType);
  bool supported = semantics::isFloat8Type(elementType) ||
                   (intType && intType.getWidth() <= 16 &&
                    semantics::getQuantizedRange(elementType));
  if (!supported)
    return ctx.emitError("QuantizeLinear output type " +
                         Twine(typeToString(elementType)) +
                         " is not supported (int2, uint2, int4, uint4, int8, "
                         "uint8, int16, uint16 and the 8-bit floats)");
  results.push_back(tensorOf(x->getShape(), elementType));
  return success();
}

LogicalResult shape::inferDequantizeLinear(InferenceContext &ctx,
                                           const semantics::QuantAttrs &attrs,
                                           std::optional<Type> outputDtype,
                                           Types &results) {
  auto x = requireTensor(ctx, 0);
  auto scale = requireTensor(ctx, 1);
  if (failed(x) || failed(scale) ||
      failed(
          checkScaleAndZeroPoint(ctx, attrs, *x, *scale, "DequantizeLinear")))
    return failure();
  if (!semantics::getQuantizedRange(x->getElementType()) &&
      !semantics::isFloat8Type(x->getElementType()))
    return ctx.emitError("DequantizeLinear input of element type " +
                         Twine(typeToString(x->getElementType())) +
                         " is not supported (int2, uint2, int4, uint4, int8, "
                         "uint8, int16, uint16, int32 and the 8-bit floats)");
  if (RankedTensorType zeroPoint = ctx.getTensorType(2);
      zeroPoint && zeroPoint.getElementType() != x->getElementType())
    return ctx.emitError("DequantizeLinear zero point's type " +
                         Twine(typeToString(zeroPoint.getElementType())) +
                         " differs from x's " +
                         Twine(typeToString(x->getElementType())));
  results.push_back(
      tensorOf(x->getShape(), outputDtype.value_or(scale->getElementType())));
  return success();
}

LogicalResult shape::inferDynamicQuantizeLinear(InferenceContext &ctx,
                                                Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  Type u8 = IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned);
  results.push_back(tensorOf(x->getShape(), u8));
  results.push_back(tensorOf({}, Float32Type::get(ctx.getContext())));
  results.push_back(tensorOf({}, u8));
  return success();
}

//===----------------------------------------------------------------------===//
// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
//===----------------------------------------------------------------------===//

namespace {
/// One zero point or scale of an integer / QLinear op: its operand index
/// and name, the operand it quantizes, and the scope the op allows.
struct QuantParam {
  unsigned index;
  const char *name;
  unsigned of;
  const char *ofName;
  semantics::QuantParamScope allowed;
  bool isZeroPoint;
};
} // namespace

/// Checks each present parameter's shape against its operand and its type:
/// a zero point has its operand's type, the scales share one float type.
static LogicalResult checkQuantParams(InferenceContext &ctx, StringRef opName,
                                      ArrayRef<QuantParam> params) {
  Type scaleType;
  for (const QuantParam &param : params) {
    RankedTensorType type = ctx.getTensorType(param.index);
    if (!type)
      continue;
    RankedTensorType of = ctx.getTensorType(param.of);
    std::string what = (opName + " " + param.name).str();
    if (param.isZeroPoint && of && type.getElementType() != of.getElementType())
      return ctx.emitError(
          what + " is " + Twine(typeToString(type.getElementType())) + " but " +
          param.ofName + " is " + Twine(typeToString(of.getElementType())));
    if (!param.isZeroPoint) {
      if (scaleType && scaleType != type.getElementType())
        return ctx.emitError(opName + " scales must share one float type (" +
                             Twine(typeToString(scaleType)) + " and " +
                             Twine(typeToString(type.getElementType())) + ")");
      scaleType = type.getElementType();
    }
    if (failed(semantics::resolveQuantParam(
            type.getShape(), of ? of.getShape() : ArrayRef<int64_t>{},
            param.allowed, what, ctx.getErrorFn())))
      return failure();
  }
  return success();
}

using Scope = semantics::QuantParamScope;

/// The result shape of A x B (numpy matmul rules) at operands `a` and `b`.
static FailureOr<SmallVector<int64_t>>
inferIntegerMatMulShape(InferenceContext &ctx, unsigned a, unsigned b) {
  auto lhs = requireTensor(ctx, a);
  auto rhs = requireTensor(ctx, b);
  if (failed(lhs) || failed(rhs))
    return failure();
  auto dims = semantics::resolveMatMulDims(lhs->getShape(), rhs->getShape(),
                                           ctx.getErrorFn());
  if (failed(dims))
    return failure();
  return dims->getResultShape();
}

LogicalResult shape::inferMatMulInteger(InferenceContext &ctx, Types &results) {
  auto shape = inferIntegerMatMulShape(ctx, 0, 1);
  if (failed(shape) ||
      failed(checkQuantParams(
          ctx, "MatMulInteger",
          {{2, "a_zero_point", 0, "A", Scope::PerRow, true},
           {3, "b_zero_point", 1, "B", Scope::PerColumn, true}})))
    return failure();
  results.push_back(tensorOf(*shape, IntegerType::get(ctx.getContext(), 32)));
  return success();
}

LogicalResult shape::inferQLinearMatMul(InferenceContext &ctx, Types &results) {
  auto shape = inferIntegerMatMulShape(ctx, 0, 3);
  if (failed(shape) ||
      failed(checkQuantParams(
          ctx, "QLinearMatMul",
          {{1, "a_scale", 0, "a", Scope::PerRow, false},
           {2, "a_zero_point", 0, "a", Scope::PerRow, true},
           {4, "b_scale", 3, "b", Scope::PerColumn, false},
           {5, "b_zero_point", 3, "b", Scope::PerColumn, true},
           {6, "y_scale", 7, "y", Scope::PerTensor, false},
           {7, "y_zero_point", 7, "y", Scope::PerTensor, true}})))
    return failure();
  auto zeroPoint = requireTensor(ctx, 7);
  if (failed(zeroPoint))
    return failure();
  results.push_back(tensorOf(*shape, zeroPoint->getElementType()));
  return success();
}

LogicalResult shape::inferConvInteger(InferenceContext &ctx,
                                      const semantics::WindowAttrs &attrs,
                                      Types &results) {
  auto shape = inferConvShape(ctx, "ConvInteger", attrs, 0, 1);
  if (failed(shape) ||
      failed(checkQuantParams(
          ctx, "ConvInteger",
          {{2, "x_zero_point", 0, "x", Scope::PerTensor, true},
           {3, "w_zero_point", 1, "w", Scope::PerOutputChannel, true}})))
    return failure();
  results.push_back(tensorOf(*shape, IntegerType::get(ctx.getContext(), 32)));
  return success();
}

LogicalResult shape::inferQLinearConv(InferenceContext &ctx,
                                      const semantics::WindowAttrs &attrs,
                                      Types &results) {
  auto shape = inferConvShape(ctx, "QLinearConv", attrs, 0, 3);
  if (failed(shape) ||
      failed(checkQuantParams(
          ctx, "QLinearConv",
          {{1, "x_scale", 0, "x", Scope::PerTensor, false},
           {2, "x_zero_point", 0, "x", Scope::PerTensor, true},
           {4, "w_scale", 3, "w", Scope::PerOutputChannel, false},
           {5, "w_zero_point", 3, "w", Scope::PerOutputChannel, true},
           {6, "y_scale", 7, "y", Scope::PerTensor, false},
           {7, "y_zero_point", 7, "y", Scope::PerTensor, true}})))
    return failure();
  if (RankedTensorType bias = ctx.getTensorType(8)) {
    int64_t filters = (*shape)[1];
    if (bias.getRank() != 1 ||
        (!bias.isDynamicDim(0) && !ShapedType::isDynamic(filters) &&
         bias.getDimSize(0) != filters))
      return ctx.emitError("QLinearConv B must be 1-D with one element per "
                           "output channel (" +
                           Twine(filters) + "), not of shape " +
                           Twine(typeToString(bias)));
  }
  auto zeroPoint = requireTensor(ctx, 7);
  if (failed(zeroPoint))
    return failure();
  results.push_back(tensorOf(*shape, zeroPoint->getElementType()));
  return success();
}
