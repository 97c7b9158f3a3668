//===- TopK.cpp - TopK by ranking -----------------------------------------===//

#include "LoweringUtils.h"

namespace mlir::amp::lowering {

namespace {

/// TopK by ranking: rank[i] = number of elements that come before element
/// i (larger/smaller, ties by lower index); output j is the element of rank
/// j. O(n^2) per row, without sorting networks.
struct TopKOpLowering : public OpConversionPattern<TopKOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    bool largest = op.getLargest() != 0;
    bool isUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getX()));
    MLIRContext *context = rewriter.getContext();
    Type i64 = rewriter.getI64Type();
    // 1. rank of every element along the axis: an extra reduction loop i'.
    SmallVector<AffineExpr> other;
    for (int64_t i = 0; i < rank; ++i)
      other.push_back(i == axis ? getAffineDimExpr(rank, context)
                                : getAffineDimExpr(i, context));
    AffineMap self = AffineMap::getMultiDimIdentityMap(rank + 1, context)
                         .getMajorSubMap(rank);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto rankType = xType.clone(i64);
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, x);
    Value zeros = filledTensor(rewriter, loc, rankType, sizes,
                               constantScalar(rewriter, loc, i64, 0));
    Value ranks =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{rankType}, ValueRange{x, x}, ValueRange{zeros},
                SmallVector<AffineMap>{
                    self, AffineMap::get(rank + 1, 0, other, context), self},
                iterators,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value mine = toComputeType(b, l, args[0]);
                  Value theirs = toComputeType(b, l, args[1]);
                  Value before;
                  if (isa<FloatType>(mine.getType())) {
                    before = b.create<arith::CmpFOp>(
                        l,
                        largest ? arith::CmpFPredicate::OGT
                                : arith::CmpFPredicate::OLT,
                        theirs, mine);
                  } else {
                    arith::CmpIPredicate p =
                        largest ? (isUnsigned ? arith::CmpIPredicate::ugt
                                              : arith::CmpIPredicate::sgt)
                                : (isUnsigned ? arith::CmpIPredicate::ult
                                              : arith::CmpIPredicate::slt);
                    before = b.create<arith::CmpIOp>(l, p, theirs, mine);
                  }
                  Value equal =
                      isa<FloatType>(mine.getType())
                          ? b.create<arith::CmpFOp>(
                                 l, arith::CmpFPredicate::OEQ, theirs, mine)
                                .getResult()
                          : b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                                    theirs, mine)
                                .getResult();
                  Value earlier = b.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::ult,
                      b.create<linalg::IndexOp>(l, rank),
                      b.create<linalg::IndexOp>(l, axis));
                  before = b.create<arith::OrIOp>(
                      l, before, b.create<arith::AndIOp>(l, equal, earlier));
                  Value one = b.create<arith::ExtUIOp>(l, i64, before);
                  b.create<linalg::YieldOp>(
                      l, ValueRange{b.create<arith::AddIOp>(l, args[2], one)});
                })
            .getResult(0);
    // 2. output j: the index whose rank is j (reduction over i).
    RankedTensorType valuesType =
        convertedResultType(getTypeConverter(), op, 0);
    RankedTensorType indicesType =
        convertedResultType(getTypeConverter(), op, 1);
    SmallVector<OpFoldResult> outSizes(sizes);
    outSizes[axis] =
        valuesType.isDynamicDim(axis)
            ? OpFoldResult(rewriter.create<arith::IndexCastOp>(
                  loc, rewriter.getIndexType(),
                  rewriter.create<tensor::ExtractOp>(
                      loc, adaptor.getK(),
                      ValueRange{
                          rewriter.create<arith::ConstantIndexOp>(loc, 0)})))
            : rewriter.getIndexAttr(valuesType.getDimSize(axis));
    Value minusOne = filledTensor(rewriter, loc, indicesType, outSizes,
                                  constantScalar(rewriter, loc, i64, 0));
    Value indices =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{indicesType}, ValueRange{ranks},
                ValueRange{minusOne},
                SmallVector<AffineMap>{
                    AffineMap::get(rank + 1, 0, other, context), self},
                iterators,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value j = b.create<arith::IndexCastOp>(
                      l, i64, b.create<linalg::IndexOp>(l, axis));
                  Value i = b.create<arith::IndexCastOp>(
                      l, i64, b.create<linalg::IndexOp>(l, rank));
                  Value hit = b.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::eq, args[0], j);
                  b.create<linalg::YieldOp>(
                      l, ValueRange{
                             b.create<arith::SelectOp>(l, hit, i, args[1])});
                })
            .getResult(0);
    // The indices were computed here: in range.
    Value values =
        gatherAlongAxis(rewriter, loc, x, indices, axis, valuesType, outSizes);
    rewriter.replaceOp(op, {values, indices});
    return success();
  }
};

} // namespace

void populateTopKPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns) {
  patterns.add<TopKOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
