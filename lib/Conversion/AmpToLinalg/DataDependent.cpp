//===- DataDependent.cpp - NonZero, Compress ------------------------------===//
//
// Ops whose result size depends on the data. Each takes two passes: a
// reduction counts what is kept, the result is allocated at that size, and
// a sequential scf.for writes the kept elements in order (tensor.insert /
// tensor.insert_slice on a loop-carried tensor, which bufferizes in
// place).
//
//   NonZero(X):         [rank, count] int64, the coordinates of the nonzero
//                       elements in row-major order (numpy.nonzero).
//   Compress(x, c, a):  the slices of x along axis a (x flattened without
//                       a) whose condition entry is true; a condition
//                       shorter than the axis keeps nothing beyond it, a
//                       longer one is a run-time error naming the node.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {

namespace {

/// Whether a scalar of `x`'s element type is nonzero (NaN is nonzero).
Value isNonZero(OpBuilder &b, Location loc, Value v) {
  Value zero = constantScalar(b, loc, v.getType(), 0);
  if (isa<FloatType>(v.getType()))
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v, zero);
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v, zero);
}

/// Number of elements of `x` (any rank) for which `keep` holds, as index.
Value countWhere(OpBuilder &b, Location loc, Value x,
                 function_ref<Value(OpBuilder &, Location, Value)> keep) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  Type i64 = b.getI64Type();
  auto scalarType = RankedTensorType::get({}, i64);
  Value init =
      filledTensor(b, loc, scalarType, {}, constantScalar(b, loc, i64, 0));
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, {}, b.getContext())};
  Value count =
      b.create<linalg::GenericOp>(
           loc, TypeRange{scalarType}, ValueRange{x}, ValueRange{init}, maps,
           SmallVector<utils::IteratorType>(rank,
                                            utils::IteratorType::reduction),
           [&](OpBuilder &nb, Location l, ValueRange args) {
             Value one =
                 nb.create<arith::ExtUIOp>(l, i64, keep(nb, l, args[0]));
             nb.create<linalg::YieldOp>(
                 l, ValueRange{nb.create<arith::AddIOp>(l, args[1], one)});
           })
          .getResult(0);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                      extractScalar(b, loc, count));
}

struct NonZeroOpLowering : public OpConversionPattern<NonZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NonZeroOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    Value count =
        countWhere(rewriter, loc, x, [](OpBuilder &b, Location l, Value v) {
          return isNonZero(b, l, v);
        });
    Value result =
        emptyTensor(rewriter, loc, type, {rewriter.getIndexAttr(rank), count});
    // One pass over the elements in row-major order; `next` is where the
    // next coordinates go.
    SmallVector<Value> dims;
    Value total = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    for (int64_t d = 0; d < rank; ++d) {
      dims.push_back(rewriter.create<tensor::DimOp>(loc, x, d));
      total = rewriter.create<arith::MulIOp>(loc, total, dims.back());
    }
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = rewriter.create<scf::ForOp>(
        loc, zero, total, one, ValueRange{result, zero},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          // The coordinates of linear index i, last dimension fastest.
          SmallVector<Value> coords(rank);
          Value rest = i;
          for (int64_t d = rank - 1; d >= 0; --d) {
            coords[d] = b.create<arith::RemUIOp>(l, rest, dims[d]);
            rest = b.create<arith::DivUIOp>(l, rest, dims[d]);
          }
          Value v = b.create<tensor::ExtractOp>(l, x, coords);
          auto write = b.create<scf::IfOp>(
              l, isNonZero(b, l, v),
              [&](OpBuilder &tb, Location tl) {
                Value out = carried[0];
                for (int64_t d = 0; d < rank; ++d) {
                  Value coord = tb.create<arith::IndexCastOp>(
                      tl, tb.getI64Type(), coords[d]);
                  out = tb.create<tensor::InsertOp>(
                      tl, coord, out,
                      ValueRange{tb.create<arith::ConstantIndexOp>(tl, d),
                                 carried[1]});
                }
                Value next = tb.create<arith::AddIOp>(tl, carried[1], one);
                tb.create<scf::YieldOp>(tl, ValueRange{out, next});
              },
              [&](OpBuilder &eb, Location el) {
                eb.create<scf::YieldOp>(el, carried);
              });
          b.create<scf::YieldOp>(l, write.getResults());
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

struct CompressOpLowering : public OpConversionPattern<CompressOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CompressOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Value condition = adaptor.getCondition();
    auto conditionType = cast<RankedTensorType>(condition.getType());
    if (conditionType.getRank() != 1)
      return notLowerable(op, "a condition that is not 1-D");
    auto inputType = cast<RankedTensorType>(input.getType());
    // Without an axis the input is flattened.
    int64_t axis = 0;
    if (op.getAxis()) {
      axis = normalizeAxis(*op.getAxis(), inputType.getRank());
    } else {
      Value total = rewriter.create<arith::ConstantIndexOp>(loc, 1);
      for (int64_t d = 0; d < inputType.getRank(); ++d)
        total = rewriter.create<arith::MulIOp>(
            loc, total, rewriter.create<tensor::DimOp>(loc, input, d));
      int64_t flat = inputType.hasStaticShape() ? inputType.getNumElements()
                                                : ShapedType::kDynamic;
      auto flatType = RankedTensorType::get({flat}, inputType.getElementType());
      input = reshapeTensor(rewriter, loc, input, flatType, {total});
      inputType = flatType;
    }
    int64_t rank = inputType.getRank();
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value dim = rewriter.create<tensor::DimOp>(loc, input, axis);
    Value length = rewriter.create<tensor::DimOp>(loc, condition, 0);
    emitRuntimeCheck(rewriter, loc,
                     rewriter.create<arith::CmpIOp>(
                         loc, arith::CmpIPredicate::sgt, length, dim),
                     length, dim,
                     describeNode(op) + ": the condition has {value} entries "
                                        "but the axis only {bound}");
    Value used = rewriter.create<arith::MinSIOp>(loc, length, dim);
    Value usedCondition = rewriter.create<tensor::ExtractSliceOp>(
        loc, condition, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{used},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    Value count = countWhere(rewriter, loc, usedCondition,
                             [](OpBuilder &, Location, Value v) { return v; });
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, input);
    sizes[axis] = count;
    Value result = emptyTensor(rewriter, loc, type, sizes);
    auto loop = rewriter.create<scf::ForOp>(
        loc, zero, used, one, ValueRange{result, zero},
        [&](OpBuilder &b, Location l, Value j, ValueRange carried) {
          Value keep = b.create<tensor::ExtractOp>(l, condition, j);
          auto write = b.create<scf::IfOp>(
              l, keep,
              [&](OpBuilder &tb, Location tl) {
                SmallVector<OpFoldResult> offsets(rank, tb.getIndexAttr(0));
                SmallVector<OpFoldResult> sliceSizes = getSizes(tb, tl, input);
                SmallVector<OpFoldResult> strides(rank, tb.getIndexAttr(1));
                sliceSizes[axis] = tb.getIndexAttr(1);
                offsets[axis] = j;
                Value slab = tb.create<tensor::ExtractSliceOp>(
                    tl, input, offsets, sliceSizes, strides);
                offsets[axis] = carried[1];
                Value out = tb.create<tensor::InsertSliceOp>(
                    tl, slab, carried[0], offsets, sliceSizes, strides);
                Value next = tb.create<arith::AddIOp>(tl, carried[1], one);
                tb.create<scf::YieldOp>(tl, ValueRange{out, next});
              },
              [&](OpBuilder &eb, Location el) {
                eb.create<scf::YieldOp>(el, carried);
              });
          b.create<scf::YieldOp>(l, write.getResults());
        });
    Value out = loop.getResult(0);
    if (out.getType() != type)
      out = rewriter.create<tensor::CastOp>(loc, type, out);
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void populateDataDependentPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<NonZeroOpLowering, CompressOpLowering>(converter,
                                                      patterns.getContext());
}

} // namespace mlir::amp::lowering
