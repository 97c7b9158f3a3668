//===- Quantization.cpp - QuantizeLinear, DequantizeLinear ----------------===//
//
// One linalg.generic over x each. The scale and the zero point apply per
// tensor, per index of an axis, or per block along an axis
// (semantics::resolveQuantLayout): the first two through indexing maps,
// blocks by reading scale[i with i[axis] / block_size] in the body.
//
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//                     in f32 (x of f16/bf16/f32/int32); NaN saturates to
//                     the type's lowest value.
//   DequantizeLinear: y = (x - zero_point) * scale, the difference in
//                     int64 (exact), the product in f32, rounded once to
//                     the result type.
//
// 4- and 2-bit integers arrive as their i8 extensions (see StorageTypes.cpp)
// and saturate to their own ranges. An 8-bit float y is x / scale + zero
// point rounded as Cast rounds (saturate as the op says); an 8-bit float x
// is decoded exactly and (x - zero_point) * scale computed in f32. ONNX
// requires their zero point to be 0; it is applied all the same.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "amp/Dialect/Amp/Semantics/Quantization.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::amp::lowering {

namespace {

/// What the body of a quantization generic receives: x's element and the
/// scale and zero point that apply to it (no zero point: nullptr).
using QuantBody =
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value, Value)>;

/// The layout of `op`'s scale against its x, or "not lowerable" with the
/// reason (shape inference has checked static shapes already).
template <typename OpTy>
FailureOr<semantics::QuantLayout> getLayout(OpTy op) {
  auto x = cast<RankedTensorType>(op->getOperand(0).getType());
  auto scale = cast<RankedTensorType>(op->getOperand(1).getType());
  std::optional<ArrayRef<int64_t>> zeroPointShape;
  if (auto zp = dyn_cast<RankedTensorType>(op->getOperand(2).getType()))
    zeroPointShape = zp.getShape();
  std::string problem;
  FailureOr<semantics::QuantLayout> layout = semantics::resolveQuantLayout(
      x.getShape(), scale.getShape(), zeroPointShape,
      semantics::QuantAttrs::get(op),
      [&](const Twine &message) { problem = message.str(); });
  if (failed(layout))
    return notLowerable(op, problem);
  return layout;
}

/// y[i] = body(x[i], scale[s(i)], zeroPoint[s(i)]) over x's shape.
Value buildQuantGeneric(OpBuilder &b, Location loc, Value x, Value scale,
                        Value zeroPoint, const semantics::QuantLayout &layout,
                        RankedTensorType resultType, QuantBody body) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t rank = xType.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, x);
  Value init = emptyTensor(b, loc, resultType, sizes);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  bool blocked = layout.granularity == semantics::QuantGranularity::Blocked;
  // The scale's map: () for a rank-0 scale, (0) for a one-element vector,
  // (d_axis) per axis.
  auto scaleMap = [&](Value operand) {
    auto type = cast<RankedTensorType>(operand.getType());
    SmallVector<AffineExpr> results;
    if (layout.granularity == semantics::QuantGranularity::PerAxis)
      results.push_back(getAffineDimExpr(layout.axis, context));
    else
      for (int64_t d = 0; d < type.getRank(); ++d)
        results.push_back(getAffineConstantExpr(0, context));
    return AffineMap::get(rank, 0, results, context);
  };
  SmallVector<Value> inputs{x};
  SmallVector<AffineMap> maps{identity};
  if (!blocked) {
    inputs.push_back(scale);
    maps.push_back(scaleMap(scale));
    if (zeroPoint) {
      inputs.push_back(zeroPoint);
      maps.push_back(scaleMap(zeroPoint));
    }
  }
  maps.push_back(identity);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
          iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value s, z;
            if (blocked) {
              // scale[i with i[axis] / block_size in place of i[axis]].
              SmallVector<Value> at;
              for (int64_t d = 0; d < rank; ++d) {
                Value index = nb.create<linalg::IndexOp>(l, d);
                if (d == layout.axis)
                  index = nb.create<arith::DivUIOp>(
                      l, index,
                      nb.create<arith::ConstantIndexOp>(l, layout.blockSize));
                at.push_back(index);
              }
              s = nb.create<tensor::ExtractOp>(l, scale, at);
              if (zeroPoint)
                z = nb.create<tensor::ExtractOp>(l, zeroPoint, at);
            } else {
              s = args[1];
              z = zeroPoint ? args[2] : Value();
            }
            nb.create<linalg::YieldOp>(l, body(nb, l, args[0], s, z));
          })
      .getResult(0);
}

struct QuantizeLinearLowering : public OpConversionPattern<QuantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QuantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<semantics::QuantLayout> layout = getLayout(op);
    if (failed(layout))
      return failure();
    Type storage = getElementTypeOrSelf(op.getY());
    std::optional<std::pair<int64_t, int64_t>> range =
        semantics::getQuantizedRange(storage);
    bool toFloat8 = semantics::isFloat8Type(storage);
    if (!range && !toFloat8)
      return notLowerable(op, "a quantized type other than int2, uint2, "
                              "int4, uint4, int8, uint8, int16, uint16 or an "
                              "8-bit float");
    bool saturate = op.getSaturate() != 0;
    bool toUnsigned = isUnsignedInt(storage);
    bool xUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getX()));
    bool zpUnsigned = toUnsigned;
    Value zeroPoint = isNone(adaptor.getYZeroPoint())
                          ? Value()
                          : adaptor.getYZeroPoint();
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Type f32 = rewriter.getF32Type();
    auto [lo, hi] = *range;
    Value result = buildQuantGeneric(
        rewriter, op.getLoc(), adaptor.getX(), adaptor.getYScale(), zeroPoint,
        *layout, resultType,
        [&](OpBuilder &b, Location l, Value x, Value s, Value z) -> Value {
          Value xf = convertScalar(b, l, x, f32, xUnsigned, false);
          Value sf = convertScalar(b, l, s, f32, false, false);
          if (toFloat8) {
            Value q = b.create<arith::DivFOp>(l, xf, sf);
            if (z)
              q = b.create<arith::AddFOp>(
                  l, q, castStorageScalar(b, l, z, storage, f32, true));
            return castStorageScalar(b, l, q, f32, storage, saturate);
          }
          Value q = b.create<math::RoundEvenOp>(
              l, b.create<arith::DivFOp>(l, xf, sf));
          if (z)
            q = b.create<arith::AddFOp>(
                l, q, convertScalar(b, l, z, f32, zpUnsigned, false));
          // maxnum/minnum: a NaN becomes the lowest value.
          q = b.create<arith::MaxNumFOp>(
              l, q, constantScalar(b, l, f32, static_cast<double>(lo)));
          q = b.create<arith::MinNumFOp>(
              l, q, constantScalar(b, l, f32, static_cast<double>(hi)));
          return convertScalar(b, l, q, resultType.getElementType(), false,
                               toUnsigned);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DequantizeLinearLowering
    : public OpConversionPattern<DequantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DequantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<semantics::QuantLayout> layout = getLayout(op);
    if (failed(layout))
      return failure();
    Type stored = getElementTypeOrSelf(op.getX());
    bool fromFloat8 = semantics::isFloat8Type(stored);
    if (!semantics::getQuantizedRange(stored) && !fromFloat8)
      return notLowerable(op, "a quantized type other than int2, uint2, "
                              "int4, uint4, int8, uint8, int16, uint16, int32 "
                              "or an 8-bit float");
    bool isUnsigned = isUnsignedInt(stored);
    Value zeroPoint = isNone(adaptor.getXZeroPoint())
                          ? Value()
                          : adaptor.getXZeroPoint();
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Type f32 = rewriter.getF32Type();
    Type i64 = rewriter.getI64Type();
    Value result = buildQuantGeneric(
        rewriter, op.getLoc(), adaptor.getX(), adaptor.getXScale(), zeroPoint,
        *layout, resultType,
        [&](OpBuilder &b, Location l, Value x, Value s, Value z) -> Value {
          Value sf = convertScalar(b, l, s, f32, false, false);
          if (fromFloat8) {
            Value xf = castStorageScalar(b, l, x, stored, f32, true);
            if (z)
              xf = b.create<arith::SubFOp>(
                  l, xf, castStorageScalar(b, l, z, stored, f32, true));
            return convertScalar(b, l, b.create<arith::MulFOp>(l, xf, sf),
                                 resultType.getElementType(), false, false);
          }
          Value diff = convertScalar(b, l, x, i64, isUnsigned, false);
          if (z)
            diff = b.create<arith::SubIOp>(
                l, diff, convertScalar(b, l, z, i64, isUnsigned, false));
          Value y = b.create<arith::MulFOp>(
              l, convertScalar(b, l, diff, f32, false, false), sf);
          return convertScalar(b, l, y, resultType.getElementType(), false,
                               false);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateQuantizationPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns) {
  patterns.add<QuantizeLinearLowering, DequantizeLinearLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
