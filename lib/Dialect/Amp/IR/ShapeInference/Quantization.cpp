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
