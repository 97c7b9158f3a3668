//===- Training.cpp - loss scaling and Dropout masks ----------------------===//
//
// amp.multi_tensor_unscale_check becomes, per gradient, ONE loop over its
// elements that multiplies by 1/scale, stores the product and ORs its
// non-finiteness into a flag carried by the loop: each gradient is read
// once. The flags give the per-tensor `nonfinite` vector and `found_inf`.
// With `parallel-unscale` (the CUDA pipeline) each gradient gets two
// linalg ops instead, which run in parallel: an elementwise unscale and a
// max-reduction of the stored values' non-finiteness.
//
// amp.gradient_seed (unscaled) is the constant 1.
//
// amp.dropout_mask becomes one linalg.generic whose body runs Philox4x32-10
// on the element's linear index (see the op's description).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <array>

namespace mlir::amp::lowering {

namespace {

/// The parallel form: y = round(x * inv) elementwise, then
/// flag = max over y of (y - y is NaN ? 1 : 0), both linalg ops.
std::pair<Value, Value> unscaleInParallel(OpBuilder &b, Location loc,
                                          Value grad, Value invScale) {
  auto type = cast<RankedTensorType>(grad.getType());
  Type storage = type.getElementType(), f32 = b.getF32Type();
  int64_t rank = type.getRank();
  MLIRContext *context = b.getContext();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap scalar = AffineMap::get(rank, 0, {}, context);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  Value unscaled =
      b.create<linalg::GenericOp>(
           loc, TypeRange{type}, ValueRange{grad, invScale},
           ValueRange{emptyTensor(b, loc, type, {})},
           SmallVector<AffineMap>{identity, scalar, identity}, parallel,
           [&](OpBuilder &nb, Location l, ValueRange args) {
             Value x = toComputeType(nb, l, args[0]);
             Value scale =
                 convertScalar(nb, l, args[1], x.getType(), false, false);
             Value y = nb.create<arith::MulFOp>(l, x, scale);
             nb.create<linalg::YieldOp>(
                 l, convertScalar(nb, l, y, storage, false, false));
           })
          .getResult(0);
  // The check reads the gradient as one dimension, so that a backend can
  // split the reduction across threads.
  auto flatType = RankedTensorType::get({type.getNumElements()}, storage);
  Value flat = reshapeTensor(b, loc, unscaled, flatType, {});
  AffineMap flatIdentity = b.getMultiDimIdentityMap(1);
  AffineMap flatScalar = AffineMap::get(1, 0, {}, context);
  auto flagType = RankedTensorType::get({}, f32);
  Value zero = constantScalar(b, loc, f32, 0);
  Value flagInit =
      b.create<linalg::FillOp>(loc, zero, emptyTensor(b, loc, flagType, {}))
          .getResult(0);
  Value flag =
      b.create<linalg::GenericOp>(
           loc, TypeRange{flagType}, ValueRange{flat}, ValueRange{flagInit},
           SmallVector<AffineMap>{flatIdentity, flatScalar},
           SmallVector<utils::IteratorType>(1, utils::IteratorType::reduction),
           [&](OpBuilder &nb, Location l, ValueRange args) {
             // Checked as stored: v - v is NaN exactly when v is Inf/NaN.
             Value v = toComputeType(nb, l, args[0]);
             Value diff = nb.create<arith::SubFOp>(l, v, v);
             Value bad = nb.create<arith::CmpFOp>(
                 l, arith::CmpFPredicate::UNO, diff, diff);
             Value one = nb.create<arith::UIToFPOp>(l, f32, bad);
             nb.create<linalg::YieldOp>(
                 l, ValueRange{nb.create<arith::MaximumFOp>(l, one, args[1])});
           })
          .getResult(0);
  return {unscaled, extractScalar(b, loc, flag)};
}

struct MultiTensorUnscaleCheckOpLowering
    : public OpConversionPattern<MultiTensorUnscaleCheckOp> {
  MultiTensorUnscaleCheckOpLowering(TypeConverter &converter,
                                    MLIRContext *context, bool parallel)
      : OpConversionPattern(converter, context), parallel(parallel) {}
  bool parallel;

  LogicalResult
  matchAndRewrite(MultiTensorUnscaleCheckOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type(), i1 = rewriter.getI1Type();
    Value invScale = parallel ? Value()
                              : extractScalar(rewriter, loc,
                                              adaptor.getInvScale());
    SmallVector<Value> results, flags;
    for (Value grad : adaptor.getGrads()) {
      auto type = cast<RankedTensorType>(grad.getType());
      if (!type.hasStaticShape())
        return notLowerable(op, "a gradient has a dynamic shape");
      if (parallel) {
        auto [unscaled, flag] =
            unscaleInParallel(rewriter, loc, grad, adaptor.getInvScale());
        results.push_back(unscaled);
        flags.push_back(flag);
        continue;
      }
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

/// Philox4x32-10 (Random123's constants): the first word of the output
/// block for `counter` under `key`.
Value philoxFirstWord(OpBuilder &b, Location loc, std::array<Value, 4> c,
                      std::array<Value, 2> key) {
  Type i32 = b.getI32Type();
  auto constant = [&](uint32_t v) -> Value {
    return b.create<arith::ConstantOp>(
        loc, b.getIntegerAttr(i32, static_cast<int32_t>(v)));
  };
  Value m0 = constant(0xD2511F53u), m1 = constant(0xCD9E8D57u);
  Value w0 = constant(0x9E3779B9u), w1 = constant(0xBB67AE85u);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] = b.create<arith::AddIOp>(loc, key[0], w0);
      key[1] = b.create<arith::AddIOp>(loc, key[1], w1);
    }
    auto p0 = b.create<arith::MulUIExtendedOp>(loc, m0, c[0]);
    auto p1 = b.create<arith::MulUIExtendedOp>(loc, m1, c[2]);
    Value x0 = b.create<arith::XOrIOp>(
        loc, b.create<arith::XOrIOp>(loc, p1.getHigh(), c[1]), key[0]);
    Value x2 = b.create<arith::XOrIOp>(
        loc, b.create<arith::XOrIOp>(loc, p0.getHigh(), c[3]), key[1]);
    c = {x0, p1.getLow(), x2, p0.getLow()};
  }
  return c[0];
}

struct DropoutMaskOpLowering : public OpConversionPattern<DropoutMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type(),
         i64 = rewriter.getI64Type();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, adaptor.getData());
    Value ratio = convertScalar(rewriter, loc,
                                extractScalar(rewriter, loc, adaptor.getRatio()),
                                f32, false, false);
    Value counter = extractScalar(rewriter, loc, adaptor.getCounter());
    auto lo32 = [&](OpBuilder &b, Location l, Value v) -> Value {
      return b.create<arith::TruncIOp>(l, i32, v);
    };
    auto hi32 = [&](OpBuilder &b, Location l, Value v) -> Value {
      Value shift = b.create<arith::ConstantOp>(l, b.getIntegerAttr(i64, 32));
      return lo32(b, l, b.create<arith::ShRUIOp>(l, v, shift));
    };
    auto word = [&](int64_t v) -> Value {
      return rewriter.create<arith::ConstantOp>(
          loc, rewriter.getIntegerAttr(i32, static_cast<int32_t>(v)));
    };
    Value stream = word(static_cast<int64_t>(op.getStream()));
    Value seed = word(static_cast<int64_t>(op.getSeed()));
    std::array<Value, 2> key = {lo32(rewriter, loc, counter),
                                hi32(rewriter, loc, counter)};
    SmallVector<Value> dims;
    for (OpFoldResult size : sizes)
      dims.push_back(indexValue(rewriter, loc, size));
    Value mask = buildIndexGenerated(
        rewriter, loc, type, sizes,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          // Row-major linear index, in i64.
          Value linear = indices.empty()
                             ? b.create<arith::ConstantIndexOp>(l, 0)
                             : indices[0];
          for (size_t d = 1; d < indices.size(); ++d) {
            linear = b.create<arith::MulIOp>(l, linear, dims[d]);
            linear = b.create<arith::AddIOp>(l, linear, indices[d]);
          }
          Value i = b.create<arith::IndexCastUIOp>(l, i64, linear);
          Value bits = philoxFirstWord(
              b, l, {lo32(b, l, i), hi32(b, l, i), stream, seed}, key);
          // u = (bits >> 8) * 2^-24 in [0, 1), exact in f32.
          Value top = b.create<arith::ShRUIOp>(
              l, bits, b.create<arith::ConstantOp>(l, b.getIntegerAttr(i32, 8)));
          Value u = b.create<arith::MulFOp>(
              l, b.create<arith::UIToFPOp>(l, f32, top),
              b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0x1p-24f)));
          return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE, u,
                                         ratio);
        });
    rewriter.replaceOp(op, mask);
    return success();
  }
};

/// The unscaled seed: the constant 1.
struct GradientSeedOpLowering : public OpConversionPattern<GradientSeedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GradientSeedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = RankedTensorType::get({}, rewriter.getF32Type());
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(type, rewriter.getF32FloatAttr(1.0f)));
    return success();
  }
};

} // namespace

void populateTrainingPatterns(TypeConverter &converter,
                              RewritePatternSet &patterns,
                              bool parallelUnscale) {
  patterns.add<MultiTensorUnscaleCheckOpLowering>(
      converter, patterns.getContext(), parallelUnscale);
  patterns.add<DropoutMaskOpLowering, GradientSeedOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
