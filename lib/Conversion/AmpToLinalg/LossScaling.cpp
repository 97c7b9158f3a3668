//===- LossScaling.cpp - the fused unscale + Inf/NaN check ----------------===//
//
// amp.multi_tensor_unscale_check becomes, per gradient, ONE loop over its
// elements that multiplies by 1/scale, stores the product and ORs its
// non-finiteness into a flag carried by the loop: each gradient is read
// once. The flags give the per-tensor `nonfinite` vector and `found_inf`.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {

namespace {

struct MultiTensorUnscaleCheckOpLowering
    : public OpConversionPattern<MultiTensorUnscaleCheckOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MultiTensorUnscaleCheckOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type(), i1 = rewriter.getI1Type();
    Value invScale = extractScalar(rewriter, loc, adaptor.getInvScale());
    SmallVector<Value> results, flags;
    for (Value grad : adaptor.getGrads()) {
      auto type = cast<RankedTensorType>(grad.getType());
      if (!type.hasStaticShape())
        return notLowerable(op, "a gradient has a dynamic shape");
      Type storage = type.getElementType();
      int64_t count = type.getNumElements();
      auto flatType = RankedTensorType::get({count}, storage);
      Value flat = reshapeTensor(rewriter, loc, grad, flatType, {});
      Value init = emptyTensor(rewriter, loc, flatType, {});
      Value c0 = rewriter.create<arith::ConstantIndexOp>(loc, 0);
      Value c1 = rewriter.create<arith::ConstantIndexOp>(loc, 1);
      Value n = rewriter.create<arith::ConstantIndexOp>(loc, count);
      Value clean = constantScalar(rewriter, loc, i1, 0);
      auto loop = rewriter.create<scf::ForOp>(
          loc, c0, n, c1, ValueRange{init, clean},
          [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
            Value x = toComputeType(
                b, l, b.create<tensor::ExtractOp>(l, flat, ValueRange{i}));
            Value scale = convertScalar(b, l, invScale, x.getType(), false,
                                        false);
            Value y = b.create<arith::MulFOp>(l, x, scale);
            Value stored = convertScalar(b, l, y, storage, false, false);
            // Checked as stored (an fp16 product can overflow on rounding):
            // v - v is NaN exactly when v is Inf or NaN.
            Value v = toComputeType(b, l, stored);
            Value diff = b.create<arith::SubFOp>(l, v, v);
            Value bad = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO,
                                                diff, diff);
            Value out = b.create<tensor::InsertOp>(l, stored, carried[0],
                                                   ValueRange{i});
            Value flag = b.create<arith::OrIOp>(l, carried[1], bad);
            b.create<scf::YieldOp>(l, ValueRange{out, flag});
          });
      results.push_back(
          reshapeTensor(rewriter, loc, loop.getResult(0), type, {}));
      flags.push_back(rewriter.create<arith::UIToFPOp>(loc, f32,
                                                        loop.getResult(1)));
    }
    Value any = constantScalar(rewriter, loc, f32, 0);
    for (Value flag : flags)
      any = rewriter.create<arith::MaximumFOp>(loc, any, flag);
    results.push_back(rewriter.create<tensor::FromElementsOp>(
        loc, RankedTensorType::get({}, f32), ValueRange{any}));
    results.push_back(rewriter.create<tensor::FromElementsOp>(
        loc, RankedTensorType::get({int64_t(flags.size())}, f32), flags));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateLossScalingPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns) {
  patterns.add<MultiTensorUnscaleCheckOpLowering>(converter,
                                                   patterns.getContext());
}

} // namespace mlir::amp::lowering
