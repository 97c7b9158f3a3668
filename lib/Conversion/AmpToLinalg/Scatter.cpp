//===- Scatter.cpp - ScatterND, ScatterElements, GatherND -----------------===//
//
// Scatters write data-dependent positions in order (later updates win, or
// combine with the reduction): they are scf.for loops over the updates with
// tensor iter_args, which one-shot bufferization turns into in-place writes.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {
namespace {

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// An index read from an integer tensor, made non-negative against `dim`.
Value readIndex(OpBuilder &b, Location loc, Value indices,
                ValueRange position, Value dim) {
  Value raw = b.create<tensor::ExtractOp>(loc, indices, position);
  Value index = b.create<arith::IndexCastOp>(loc, b.getIndexType(), raw);
  return wrapIndex(b, loc, index, dim);
}

/// Combines an existing and an update scalar per the ONNX reduction.
Value combine(OpBuilder &b, Location loc, StringRef reduction, Value old,
              Value update) {
  bool isFloat = isa<FloatType>(old.getType());
  Value o = toComputeType(b, loc, old), u = toComputeType(b, loc, update);
  Value r = u;
  if (reduction == "add")
    r = isFloat ? b.create<arith::AddFOp>(loc, o, u).getResult()
                : b.create<arith::AddIOp>(loc, o, u).getResult();
  else if (reduction == "mul")
    r = isFloat ? b.create<arith::MulFOp>(loc, o, u).getResult()
                : b.create<arith::MulIOp>(loc, o, u).getResult();
  else if (reduction == "max")
    r = isFloat ? b.create<arith::MaximumFOp>(loc, o, u).getResult()
                : b.create<arith::MaxSIOp>(loc, o, u).getResult();
  else if (reduction == "min")
    r = isFloat ? b.create<arith::MinimumFOp>(loc, o, u).getResult()
                : b.create<arith::MinSIOp>(loc, o, u).getResult();
  return convertScalar(b, loc, r, old.getType(), false, false);
}

/// Nested scf.for loops over `sizes`, threading one tensor; `body` gets the
/// induction variables and the current tensor and returns the next one.
Value loopNest(OpBuilder &b, Location loc, ArrayRef<Value> sizes, Value init,
               function_ref<Value(OpBuilder &, Location, ValueRange, Value)>
                   body,
               SmallVector<Value> ivs = {}) {
  if (ivs.size() == sizes.size())
    return body(b, loc, ivs, init);
  auto loop = b.create<scf::ForOp>(
      loc, cIndex(b, loc, 0), sizes[ivs.size()], cIndex(b, loc, 1),
      ValueRange{init},
      [&](OpBuilder &nb, Location l, Value iv, ValueRange args) {
        SmallVector<Value> inner(ivs);
        inner.push_back(iv);
        Value next = loopNest(nb, l, sizes, args[0], body, inner);
        nb.create<scf::YieldOp>(l, next);
      });
  return loop.getResult(0);
}

struct ScatterNDOpLowering : public OpConversionPattern<ScatterNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    int64_t r = dataType.getRank(), q = indicesType.getRank();
    int64_t k = indicesType.getDimSize(q - 1);
    if (ShapedType::isDynamic(k))
      return notLowerable(op, "the index depth is dynamic");
    StringRef reduction = op.getReduction();
    SmallVector<Value> dataDims, loopSizes;
    for (int64_t i = 0; i < r; ++i)
      dataDims.push_back(rewriter.create<tensor::DimOp>(loc, data, i));
    for (int64_t i = 0; i + 1 < q; ++i)
      loopSizes.push_back(rewriter.create<tensor::DimOp>(loc, indices, i));
    // Each update is a slice of data.shape[k:]: loop over its elements too.
    SmallVector<Value> sliceSizes(dataDims.begin() + k, dataDims.end());
    SmallVector<Value> allSizes(loopSizes);
    allSizes.append(sliceSizes);
    Value result = loopNest(
        rewriter, loc, allSizes, data,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value current) {
          ValueRange outer = ivs.take_front(q - 1);
          ValueRange inner = ivs.drop_front(q - 1);
          SmallVector<Value> at;
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> position(outer);
            position.push_back(cIndex(b, l, j));
            at.push_back(readIndex(b, l, indices, position, dataDims[j]));
          }
          at.append(inner.begin(), inner.end());
          Value update = b.create<tensor::ExtractOp>(l, updates, ivs);
          if (reduction != "none") {
            Value old = b.create<tensor::ExtractOp>(l, current, at);
            update = combine(b, l, reduction, old, update);
          }
          return b.create<tensor::InsertOp>(l, update, current, at)
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ScatterElementsOpLowering
    : public OpConversionPattern<ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    StringRef reduction = op.getReduction();
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(rewriter.create<tensor::DimOp>(loc, indices, i));
    Value axisDim = rewriter.create<tensor::DimOp>(loc, data, axis);
    Value result = loopNest(
        rewriter, loc, sizes, data,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value current) {
          SmallVector<Value> at(ivs);
          at[axis] = readIndex(b, l, indices, ivs, axisDim);
          Value update = b.create<tensor::ExtractOp>(l, updates, ivs);
          if (reduction != "none") {
            Value old = b.create<tensor::ExtractOp>(l, current, at);
            update = combine(b, l, reduction, old, update);
          }
          return b.create<tensor::InsertOp>(l, update, current, at)
              .getResult();
        });
    rewriter.replaceOp(op, result);
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
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes;
    SmallVector<OpFoldResult> indexSizes = getSizes(rewriter, loc, indices);
    SmallVector<OpFoldResult> dataSizes = getSizes(rewriter, loc, data);
    sizes.append(indexSizes.begin(), indexSizes.end() - 1);
    sizes.append(dataSizes.begin() + batch + k, dataSizes.end());
    SmallVector<Value> dataDims;
    for (int64_t i = 0; i < r; ++i)
      dataDims.push_back(rewriter.create<tensor::DimOp>(loc, data, i));
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{},
        ValueRange{emptyTensor(rewriter, loc, type, sizes)},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> outer;
          for (int64_t i = 0; i + 1 < q; ++i)
            outer.push_back(b.create<linalg::IndexOp>(l, i));
          SmallVector<Value> at(outer.begin(), outer.begin() + batch);
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> position(outer);
            position.push_back(cIndex(b, l, j));
            at.push_back(
                readIndex(b, l, indices, position, dataDims[batch + j]));
          }
          for (int64_t i = q - 1; i < rank; ++i)
            at.push_back(b.create<linalg::IndexOp>(l, i));
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<tensor::ExtractOp>(l, data, at)});
        }).getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};


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
    Value ranks = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{rankType}, ValueRange{x, x}, ValueRange{zeros},
        SmallVector<AffineMap>{self, AffineMap::get(rank + 1, 0, other, context),
                               self},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value mine = toComputeType(b, l, args[0]);
          Value theirs = toComputeType(b, l, args[1]);
          Value before;
          if (isa<FloatType>(mine.getType())) {
            before = b.create<arith::CmpFOp>(
                l, largest ? arith::CmpFPredicate::OGT
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
                  ? b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ,
                                            theirs, mine)
                        .getResult()
                  : b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                            theirs, mine)
                        .getResult();
          Value earlier = b.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::ult, b.create<linalg::IndexOp>(l, rank),
              b.create<linalg::IndexOp>(l, axis));
          before = b.create<arith::OrIOp>(
              l, before, b.create<arith::AndIOp>(l, equal, earlier));
          Value one = b.create<arith::ExtUIOp>(l, i64, before);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::AddIOp>(l, args[2], one)});
        }).getResult(0);
    // 2. output j: the index whose rank is j (reduction over i).
    RankedTensorType valuesType = convertedResultType(getTypeConverter(), op, 0);
    RankedTensorType indicesType =
        convertedResultType(getTypeConverter(), op, 1);
    SmallVector<OpFoldResult> outSizes(sizes);
    outSizes[axis] =
        valuesType.isDynamicDim(axis)
            ? OpFoldResult(rewriter.create<arith::IndexCastOp>(
                  loc, rewriter.getIndexType(),
                  rewriter.create<tensor::ExtractOp>(
                      loc, adaptor.getK(),
                      ValueRange{rewriter.create<arith::ConstantIndexOp>(loc, 0)})))
            : rewriter.getIndexAttr(valuesType.getDimSize(axis));
    Value minusOne = filledTensor(rewriter, loc, indicesType, outSizes,
                                  constantScalar(rewriter, loc, i64, 0));
    Value indices = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{indicesType}, ValueRange{ranks}, ValueRange{minusOne},
        SmallVector<AffineMap>{AffineMap::get(rank + 1, 0, other, context),
                               self},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value j = b.create<arith::IndexCastOp>(
              l, i64, b.create<linalg::IndexOp>(l, axis));
          Value i = b.create<arith::IndexCastOp>(
              l, i64, b.create<linalg::IndexOp>(l, rank));
          Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                              args[0], j);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, hit, i, args[1])});
        }).getResult(0);
    Value values = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{valuesType}, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, loc, valuesType, outSizes)},
        SmallVector<AffineMap>(2, rewriter.getMultiDimIdentityMap(rank)),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(d == axis ? b.create<arith::IndexCastOp>(
                                          l, b.getIndexType(), args[0])
                                          .getResult()
                                   : b.create<linalg::IndexOp>(l, d).getResult());
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<tensor::ExtractOp>(l, x, at)});
        }).getResult(0);
    rewriter.replaceOp(op, {values, indices});
    return success();
  }
};

} // namespace

void populateScatterPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<ScatterNDOpLowering, ScatterElementsOpLowering,
               GatherNDOpLowering, TopKOpLowering>(converter,
                                                   patterns.getContext());
}

} // namespace mlir::amp::lowering
