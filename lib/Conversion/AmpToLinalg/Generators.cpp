//===- Generators.cpp - ConstantOfShape, Range, EyeLike, OneHot, Trilu ----===//
//
// Tensors whose elements follow from their position: each is one
// linalg.generic computing an element from its linalg.index values (or a
// fill, for ConstantOfShape).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Semantics/Generators.h"
#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::amp::lowering {

namespace {

struct ConstantOfShapeOpLowering
    : public OpConversionPattern<ConstantOfShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOfShapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      sizes.push_back(
          type.isDynamicDim(i)
              ? OpFoldResult(extractIndex(rewriter, loc, adaptor.getInput(), i))
              : rewriter.getIndexAttr(type.getDimSize(i)));
    Type element = type.getElementType();
    Value value;
    if (op.getValue()) {
      Attribute first = *op.getValue()->getValues<Attribute>().begin();
      if (auto f = dyn_cast<FloatAttr>(first))
        value = rewriter.create<arith::ConstantOp>(
            loc, rewriter.getFloatAttr(element, f.getValueAsDouble()));
      else if (auto i = dyn_cast<IntegerAttr>(first))
        value = rewriter.create<arith::ConstantOp>(
            loc, rewriter.getIntegerAttr(element, i.getValue()));
      else
        return notLowerable(op, "unsupported value attribute");
    } else {
      value = constantScalar(rewriter, loc, element, 0);
    }
    rewriter.replaceOp(op, filledTensor(rewriter, loc, type, sizes, value));
    return success();
  }
};

struct RangeOpLowering : public OpConversionPattern<RangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    Type element = type.getElementType();
    Value start = extractScalar(rewriter, loc, adaptor.getStart());
    Value limit = extractScalar(rewriter, loc, adaptor.getLimit());
    Value delta = extractScalar(rewriter, loc, adaptor.getDelta());
    SmallVector<OpFoldResult> sizes;
    if (type.isDynamicDim(0)) {
      // max(ceil((limit - start) / delta), 0), computed in f64.
      Type f64 = rewriter.getF64Type();
      auto wide = [&](Value v) {
        return convertScalar(rewriter, loc, v, f64, false, false);
      };
      Value span =
          rewriter.create<arith::SubFOp>(loc, wide(limit), wide(start));
      Value steps = rewriter.create<math::CeilOp>(
          loc, rewriter.create<arith::DivFOp>(loc, span, wide(delta)));
      Value count = convertScalar(rewriter, loc, steps, rewriter.getI64Type(),
                                  false, false);
      count = rewriter.create<arith::MaxSIOp>(
          loc, count, constantScalar(rewriter, loc, rewriter.getI64Type(), 0));
      sizes.push_back(toIndex(rewriter, loc, count));
    } else {
      sizes.push_back(rewriter.getIndexAttr(type.getDimSize(0)));
    }
    // float16/bfloat16 ranges compute in stash_type and round once.
    Type compute = semantics::getRangeComputeType(element, op.getStashType());
    if (!compute)
      return notLowerable(op, "an invalid stash_type");
    Value cstart = convertScalar(rewriter, loc, start, compute, false, false);
    Value cdelta = convertScalar(rewriter, loc, delta, compute, false, false);
    Value result = buildIndexGenerated(
        rewriter, loc, type, sizes,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          Value i = b.create<arith::IndexCastOp>(l, b.getI64Type(), indices[0]);
          Value iv = convertScalar(b, l, i, compute, false, false);
          Value r;
          if (isa<FloatType>(compute))
            r = b.create<arith::AddFOp>(l, cstart,
                                        b.create<arith::MulFOp>(l, iv, cdelta));
          else
            r = b.create<arith::AddIOp>(l, cstart,
                                        b.create<arith::MulIOp>(l, iv, cdelta));
          return convertScalar(b, l, r, element, false, false);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct EyeLikeOpLowering : public OpConversionPattern<EyeLikeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EyeLikeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    int64_t k = op.getK();
    Value result = buildIndexGenerated(
        rewriter, loc, type, getSizes(rewriter, loc, adaptor.getInput()),
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          Value i = indices[0];
          Value j = indices[1];
          Value on = b.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq, b.create<arith::SubIOp>(l, j, i),
              b.create<arith::ConstantIndexOp>(l, k));
          Type t = type.getElementType();
          return b.create<arith::SelectOp>(l, on, constantScalar(b, l, t, 1),
                                           constantScalar(b, l, t, 0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct OneHotOpLowering : public OpConversionPattern<OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    int64_t rank = type.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    // The depth: the result's static size, or read at run time (any numeric
    // type; a fractional one truncates, as onnxruntime does).
    OpFoldResult depthSize;
    Value depthI64;
    if (!type.isDynamicDim(axis)) {
      depthSize = rewriter.getIndexAttr(type.getDimSize(axis));
      depthI64 = constantScalar(rewriter, loc, rewriter.getI64Type(),
                                type.getDimSize(axis));
    } else {
      Value scalar = extractScalar(rewriter, loc, adaptor.getDepth());
      Type depthType = getElementTypeOrSelf(op.getDepth());
      if (isa<FloatType>(scalar.getType()))
        scalar = toComputeType(rewriter, loc, scalar);
      depthI64 = convertScalar(rewriter, loc, scalar, rewriter.getI64Type(),
                               isUnsignedInt(depthType), false);
      Value zero64 = constantScalar(rewriter, loc, rewriter.getI64Type(), 0);
      emitRuntimeCheck(rewriter, loc,
                       rewriter.create<arith::CmpIOp>(
                           loc, arith::CmpIPredicate::slt, depthI64, zero64),
                       depthI64, zero64,
                       describeNode(op) + ": depth {value} is negative");
      depthI64 = rewriter.create<arith::MaxSIOp>(loc, depthI64, zero64);
      depthSize = rewriter
                      .create<arith::IndexCastOp>(loc, rewriter.getIndexType(),
                                                  depthI64)
                      .getResult();
    }
    Value indices = adaptor.getIndices();
    Value values = adaptor.getValues();
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value off = rewriter.create<tensor::ExtractOp>(loc, values, zero);
    Value on = rewriter.create<tensor::ExtractOp>(loc, values, one);
    SmallVector<AffineExpr> indexExprs;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        indexExprs.push_back(rewriter.getAffineDimExpr(i));
    SmallVector<OpFoldResult> indexSizes = getSizes(rewriter, loc, indices);
    SmallVector<OpFoldResult> sizes(indexSizes);
    sizes.insert(sizes.begin() + axis, depthSize);
    bool indexUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getIndices()));
    Value result =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{type}, ValueRange{indices},
                ValueRange{emptyTensor(rewriter, loc, type, sizes)},
                SmallVector<AffineMap>{
                    AffineMap::get(rank, 0, indexExprs, rewriter.getContext()),
                    rewriter.getMultiDimIdentityMap(rank)},
                SmallVector<utils::IteratorType>(rank,
                                                 utils::IteratorType::parallel),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value idx = convertScalar(b, l, args[0], b.getI64Type(),
                                            indexUnsigned, false);
                  Value d = depthI64;
                  Value isNeg = b.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::slt, idx,
                      constantScalar(b, l, b.getI64Type(), 0));
                  idx = b.create<arith::SelectOp>(
                      l, isNeg, b.create<arith::AddIOp>(l, idx, d), idx);
                  Value position = b.create<arith::IndexCastOp>(
                      l, b.getI64Type(), b.create<linalg::IndexOp>(l, axis));
                  Value hit = b.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::eq, idx, position);
                  b.create<linalg::YieldOp>(
                      l,
                      ValueRange{b.create<arith::SelectOp>(l, hit, on, off)});
                })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TriluOpLowering : public OpConversionPattern<TriluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // k may be a runtime scalar.
    Value kValue;
    if (!isNone(adaptor.getK()))
      kValue =
          toIndex(rewriter, loc, extractScalar(rewriter, loc, adaptor.getK()));
    else
      kValue = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    bool upper = op.getUpper() != 0;
    Value input = adaptor.getInput();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    int64_t rank = type.getRank();
    Value result =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{type}, ValueRange{input},
                ValueRange{emptyTensor(rewriter, loc, type,
                                       getSizes(rewriter, loc, input))},
                SmallVector<AffineMap>(2,
                                       rewriter.getMultiDimIdentityMap(rank)),
                SmallVector<utils::IteratorType>(rank,
                                                 utils::IteratorType::parallel),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value i = b.create<linalg::IndexOp>(l, rank - 2);
                  Value j = b.create<linalg::IndexOp>(l, rank - 1);
                  Value diff = b.create<arith::SubIOp>(l, j, i);
                  Value kv = kValue;
                  Value keep =
                      b.create<arith::CmpIOp>(l,
                                              upper ? arith::CmpIPredicate::sge
                                                    : arith::CmpIPredicate::sle,
                                              diff, kv);
                  b.create<linalg::YieldOp>(
                      l, ValueRange{b.create<arith::SelectOp>(
                             l, keep, args[0],
                             constantScalar(b, l, args[0].getType(), 0))});
                })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateGeneratorPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns) {
  patterns.add<ConstantOfShapeOpLowering, RangeOpLowering, EyeLikeOpLowering,
               OneHotOpLowering, TriluOpLowering>(converter,
                                                  patterns.getContext());
}

} // namespace mlir::amp::lowering
