//===- Softmax.cpp - Softmax, LogSoftmax and Hardmax ----------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::amp::lowering {

/// softmax(input) or log_softmax(input) along `axis`; intermediates in
/// `acc` (fp32 for fp32-accumulating low-precision ops), the result rounded
/// once to `resultType`.
Value buildSoftmax(OpBuilder &rewriter, Location loc, Value input, int64_t axis,
                   Type acc, RankedTensorType resultType, bool isLog) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  Type compute = getComputeType(acc);
  Value max =
      buildReduction(rewriter, loc, input, {axis}, compute,
                     lowestValue(rewriter, loc, compute, false),
                     [](OpBuilder &b, Location l, Value x, Value a) -> Value {
                       return b.create<arith::MaximumFOp>(l, x, a);
                     });
  Value maxKept = keepDims(rewriter, loc, max, rank, {axis});
  Value exps = buildElementwise(
      rewriter, loc, {input, maxKept}, withElementType(input, acc),
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, a[0], a[1]));
      });
  Value sum = buildReduction(
      rewriter, loc, exps, {axis}, acc, constantScalar(rewriter, loc, acc, 0),
      [](OpBuilder &b, Location l, Value x, Value a) -> Value {
        return b.create<arith::AddFOp>(l, x, a);
      });
  Value sumKept = keepDims(rewriter, loc, sum, rank, {axis});
  if (isLog)
    return buildElementwise(
        rewriter, loc, {input, maxKept, sumKept}, resultType,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value shifted = b.create<arith::SubFOp>(l, a[0], a[1]);
          return b.create<arith::SubFOp>(l, shifted,
                                         b.create<math::LogOp>(l, a[2]));
        });
  return buildElementwise(rewriter, loc, {exps, sumKept}, resultType,
                          [](OpBuilder &b, Location l, ValueRange a) -> Value {
                            return b.create<arith::DivFOp>(l, a[0], a[1]);
                          });
}

namespace {

template <typename OpTy>
struct SoftmaxLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op);
    Type storage = inputType.getElementType();
    Type acc = accumulatorType(op, storage);
    if (std::is_same_v<OpTy, HardmaxOp>) {
      Value argmax = buildArgReduce(rewriter, loc, input, axis, /*max=*/true,
                                    /*last=*/false, /*isUnsigned=*/false);
      Value kept = keepDims(rewriter, loc, argmax, rank, {axis});
      Value result =
          rewriter
              .create<linalg::GenericOp>(
                  loc, TypeRange{resultType}, ValueRange{kept},
                  ValueRange{emptyTensor(rewriter, loc, resultType,
                                         getSizes(rewriter, loc, input))},
                  SmallVector<AffineMap>{keptMap(rewriter, rank, axis),
                                         rewriter.getMultiDimIdentityMap(rank)},
                  SmallVector<utils::IteratorType>(
                      rank, utils::IteratorType::parallel),
                  [&](OpBuilder &b, Location l, ValueRange args) {
                    Value index = b.create<arith::IndexCastOp>(
                        l, b.getI64Type(), b.create<linalg::IndexOp>(l, axis));
                    Value hit = b.create<arith::CmpIOp>(
                        l, arith::CmpIPredicate::eq, index, args[0]);
                    Type t = resultType.getElementType();
                    b.create<linalg::YieldOp>(
                        l, ValueRange{b.create<arith::SelectOp>(
                               l, hit, constantScalar(b, l, t, 1),
                               constantScalar(b, l, t, 0))});
                  })
              .getResult(0);
      rewriter.replaceOp(op, result);
      return success();
    }
    Value result = buildSoftmax(rewriter, loc, input, axis, acc, resultType,
                                std::is_same_v<OpTy, LogSoftmaxOp>);
    rewriter.replaceOp(op, result);
    return success();
  }

  static AffineMap keptMap(OpBuilder &b, int64_t rank, int64_t axis) {
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(i == axis ? b.getAffineConstantExpr(0)
                                : b.getAffineDimExpr(i));
    return AffineMap::get(rank, 0, exprs, b.getContext());
  }
};

} // namespace

void populateSoftmaxPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>,
               SoftmaxLowering<HardmaxOp>>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
