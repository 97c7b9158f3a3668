//===- Gather.cpp - Gather, GatherElements and GatherND -------------------===//

#include "LoweringUtils.h"

namespace mlir::amp::lowering {

namespace {

struct GatherOpLowering : public OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    int64_t r = dataType.getRank(), q = indicesType.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), r);
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> dataSizes = getSizes(rewriter, loc, data);
    SmallVector<OpFoldResult> indexSizes = getSizes(rewriter, loc, indices);
    SmallVector<OpFoldResult> sizes(dataSizes.begin(),
                                    dataSizes.begin() + axis);
    sizes.append(indexSizes.begin(), indexSizes.end());
    sizes.append(dataSizes.begin() + axis + 1, dataSizes.end());
    SmallVector<AffineExpr> indexExprs;
    for (int64_t i = 0; i < q; ++i)
      indexExprs.push_back(rewriter.getAffineDimExpr(axis + i));
    Value axisDim = rewriter.create<tensor::DimOp>(loc, data, axis);
    checkIndexRange(rewriter, loc, op, indices, axisDim,
                    /*allowNegative=*/true, "index");
    auto gather = [&](OpBuilder &nb, Location nl) -> Value {
      return nb
          .create<linalg::GenericOp>(
              nl, TypeRange{type}, ValueRange{indices},
              ValueRange{emptyTensor(nb, nl, type, sizes)},
              SmallVector<AffineMap>{
                  AffineMap::get(rank, 0, indexExprs, nb.getContext()),
                  nb.getMultiDimIdentityMap(rank)},
              SmallVector<utils::IteratorType>(rank,
                                               utils::IteratorType::parallel),
              [&](OpBuilder &b, Location l, ValueRange args) {
                SmallVector<Value> at;
                for (int64_t i = 0; i < axis; ++i)
                  at.push_back(b.create<linalg::IndexOp>(l, i));
                at.push_back(clampIndex(b, l, toIndex(b, l, args[0]), axisDim));
                for (int64_t i = axis + 1; i < r; ++i)
                  at.push_back(b.create<linalg::IndexOp>(l, i - 1 + q));
                b.create<linalg::YieldOp>(
                    l, ValueRange{b.create<tensor::ExtractOp>(l, data, at)});
              })
          .getResult(0);
    };
    rewriter.replaceOp(op, guardEmptyAxes(rewriter, loc, data, {axis}, gather,
                                          zeroFilled(type, sizes)));
    return success();
  }
};

struct GatherElementsOpLowering : public OpConversionPattern<GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    Value axisDim = rewriter.create<tensor::DimOp>(loc, data, axis);
    checkIndexRange(rewriter, loc, op, indices, axisDim,
                    /*allowNegative=*/true, "index");
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, indices);
    auto gather = [&](OpBuilder &nb, Location nl) -> Value {
      return gatherAlongAxis(nb, nl, data, indices, axis, type, sizes,
                             axisDim);
    };
    rewriter.replaceOp(op, guardEmptyAxes(rewriter, loc, data, {axis}, gather,
                                          zeroFilled(type, sizes)));
    return success();
  }
};

/// GatherND: out[b..., i..., s...] = data[b..., indices[b..., i..., :], s...].
struct GatherNDOpLowering : public OpConversionPattern<GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    int64_t r = dataType.getRank(), q = indicesType.getRank();
    int64_t batch = op.getBatchDims();
    int64_t k = indicesType.getDimSize(q - 1);
    if (ShapedType::isDynamic(k))
      return notLowerable(op, "the index depth is dynamic");
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    SmallVector<OpFoldResult> sizes;
    SmallVector<OpFoldResult> indexSizes = getSizes(rewriter, loc, indices);
    SmallVector<OpFoldResult> dataSizes = getSizes(rewriter, loc, data);
    sizes.append(indexSizes.begin(), indexSizes.end() - 1);
    sizes.append(dataSizes.begin() + batch + k, dataSizes.end());
    SmallVector<Value> dataDims;
    for (int64_t i = 0; i < r; ++i)
      dataDims.push_back(rewriter.create<tensor::DimOp>(loc, data, i));
    checkIndexTuples(rewriter, loc, op, indices,
                     ArrayRef<Value>(dataDims).slice(batch, k));
    SmallVector<int64_t> indexedAxes;
    for (int64_t j = 0; j < k; ++j)
      indexedAxes.push_back(batch + j);
    auto gather = [&](OpBuilder &nb, Location nl) -> Value {
      return buildIndexGenerated(
          nb, nl, type, sizes,
          [&](OpBuilder &b, Location l, ValueRange outIndices) -> Value {
            ValueRange outer = outIndices.take_front(q - 1);
            SmallVector<Value> at(outer.begin(), outer.begin() + batch);
            for (int64_t j = 0; j < k; ++j) {
              SmallVector<Value> position(outer);
              position.push_back(b.create<arith::ConstantIndexOp>(l, j));
              at.push_back(
                  readIndex(b, l, indices, position, dataDims[batch + j]));
            }
            at.append(outIndices.begin() + (q - 1), outIndices.end());
            return b.create<tensor::ExtractOp>(l, data, at);
          });
    };
    rewriter.replaceOp(op, guardEmptyAxes(rewriter, loc, data, indexedAxes,
                                          gather, zeroFilled(type, sizes)));
    return success();
  }
};

/// ReverseSequence: out[.., t, .., b, ..] = in[.., len[b] - 1 - t, .., b, ..]
/// for t < len[b], in[..] itself beyond; len[b] is checked to be in
/// [0, seq] (and clamped into it).
struct ReverseSequenceOpLowering
    : public OpConversionPattern<ReverseSequenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReverseSequenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), lens = adaptor.getSequenceLens();
    int64_t timeAxis = op.getTimeAxis(), batchAxis = op.getBatchAxis();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, input);
    Value seq = rewriter.create<tensor::DimOp>(loc, input, timeAxis);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value seqPlusOne = rewriter.create<arith::AddIOp>(loc, seq, one);
    checkIndexRange(rewriter, loc, op, lens, seqPlusOne,
                    /*allowNegative=*/false, "sequence length");
    Value result = buildIndexGenerated(
        rewriter, loc, type, sizes,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          Value t = indices[timeAxis];
          Value len = toIndex(b, l,
                              b.create<tensor::ExtractOp>(
                                  l, lens, ValueRange{indices[batchAxis]}));
          Value zero = b.create<arith::ConstantIndexOp>(l, 0);
          len = b.create<arith::MaxSIOp>(l, len, zero);
          len = b.create<arith::MinSIOp>(l, len, seq);
          Value reversed = b.create<arith::SubIOp>(
              l, b.create<arith::SubIOp>(l, len, one), t);
          Value inside =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, t, len);
          SmallVector<Value> at(indices);
          at[timeAxis] = b.create<arith::SelectOp>(l, inside, reversed, t);
          return b.create<tensor::ExtractOp>(l, input, at);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateGatherPatterns(TypeConverter &converter,
                            RewritePatternSet &patterns) {
  patterns.add<GatherOpLowering, GatherElementsOpLowering, GatherNDOpLowering,
               ReverseSequenceOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
