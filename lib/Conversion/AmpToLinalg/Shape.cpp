//===- Shape.cpp - reshapes, transposes and shape queries -----------------===//
//
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, DepthToSpace,
// SpaceToDepth (tensor.collapse/expand_shape, tensor.reshape,
// linalg.transpose) and the Shape and Size queries.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

namespace mlir::amp::lowering {

namespace {

/// Result sizes where the dynamic dims of `type` are the dynamic dims of
/// `input`, in order (Squeeze, Unsqueeze, Identity-like reshapes).
FailureOr<SmallVector<OpFoldResult>> matchDynamicDims(OpBuilder &b,
                                                      Location loc, Value input,
                                                      RankedTensorType type) {
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> inputDynamic;
  for (int64_t i = 0; i < inputType.getRank(); ++i)
    if (inputType.isDynamicDim(i))
      inputDynamic.push_back(
          b.create<tensor::DimOp>(loc, input, i).getResult());
  SmallVector<OpFoldResult> sizes;
  size_t next = 0;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (!type.isDynamicDim(i)) {
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
      continue;
    }
    if (next >= inputDynamic.size())
      return failure();
    sizes.push_back(inputDynamic[next++]);
  }
  if (next != inputDynamic.size() && type.getNumDynamicDims() > 0)
    return failure();
  return sizes;
}

struct ReshapeOpLowering : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    SmallVector<OpFoldResult> sizes;
    if (type.getNumDynamicDims() > 0) {
      // Resolve 0 (copy) and -1 (infer) of the runtime shape.
      auto inputType = cast<RankedTensorType>(data.getType());
      Value shape = adaptor.getShape();
      SmallVector<Value> dims;
      Value minusOne = rewriter.create<arith::ConstantIndexOp>(loc, -1);
      Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
      for (int64_t i = 0; i < type.getRank(); ++i) {
        if (!type.isDynamicDim(i)) {
          dims.push_back(
              rewriter.create<arith::ConstantIndexOp>(loc, type.getDimSize(i)));
          continue;
        }
        Value v = extractIndex(rewriter, loc, shape, i);
        if (op.getAllowzero() == 0 && i < inputType.getRank()) {
          Value isZero = rewriter.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::eq, v, zero);
          v = rewriter.create<arith::SelectOp>(
              loc, isZero, rewriter.create<tensor::DimOp>(loc, data, i), v);
        }
        dims.push_back(v);
      }
      Value total = rewriter.create<arith::ConstantIndexOp>(loc, 1);
      for (int64_t i = 0; i < inputType.getRank(); ++i)
        total = rewriter.create<arith::MulIOp>(
            loc, total, rewriter.create<tensor::DimOp>(loc, data, i));
      for (int64_t i = 0; i < type.getRank(); ++i) {
        if (!type.isDynamicDim(i)) {
          sizes.push_back(rewriter.getIndexAttr(type.getDimSize(i)));
          continue;
        }
        // -1: total / product of the other dims.
        Value others = rewriter.create<arith::ConstantIndexOp>(loc, 1);
        for (int64_t j = 0; j < type.getRank(); ++j) {
          if (j == i)
            continue;
          Value isMinus = rewriter.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::eq, dims[j], minusOne);
          Value factor = rewriter.create<arith::SelectOp>(
              loc, isMinus, rewriter.create<arith::ConstantIndexOp>(loc, 1),
              dims[j]);
          others = rewriter.create<arith::MulIOp>(loc, others, factor);
        }
        Value isMinus = rewriter.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::eq, dims[i], minusOne);
        Value inferredSize =
            rewriter.create<arith::DivUIOp>(loc, total, others);
        sizes.push_back(
            rewriter
                .create<arith::SelectOp>(loc, isMinus, inferredSize, dims[i])
                .getResult());
      }
    }
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, data, type, sizes));
    return success();
  }
};

/// The result sizes of a Squeeze or Unsqueeze whose axes are read at run
/// time (their count, and so the result's rank, is static). Unsqueeze:
/// output p is 1 where an axis names it, else the next input size;
/// Squeeze: output p is the p-th input size no axis names. Axes out of
/// range, repeated axes and squeezed sizes other than 1 are run-time
/// errors naming the node.
template <typename OpTy>
SmallVector<OpFoldResult> runtimeAxesSizes(OpTy op, Value axesTensor,
                                           Value data, OpBuilder &b) {
  constexpr bool isUnsqueeze = std::is_same_v<OpTy, UnsqueezeOp>;
  Location loc = op.getLoc();
  int64_t inRank = cast<RankedTensorType>(data.getType()).getRank();
  int64_t count = cast<RankedTensorType>(axesTensor.getType()).getDimSize(0);
  int64_t outRank = isUnsqueeze ? inRank + count : inRank - count;
  // Axes count against the output's rank (Unsqueeze) or the input's.
  int64_t axisRank = isUnsqueeze ? outRank : inRank;
  auto c = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  auto eq = [&](Value x, Value y) -> Value {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, y);
  };
  auto select = [&](Value cond, Value x, Value y) -> Value {
    return b.create<arith::SelectOp>(loc, cond, x, y);
  };
  Value zero = c(0), one = c(1);
  checkIndexRange(b, loc, op, axesTensor, c(axisRank), /*allowNegative=*/true,
                  "axis");
  SmallVector<Value> axes;
  for (int64_t k = 0; k < count; ++k) {
    Value axis = extractIndex(b, loc, axesTensor, k);
    axes.push_back(select(
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, axis, zero),
        b.create<arith::AddIOp>(loc, axis, c(axisRank)), axis));
  }
  // named[i]: whether an axis names position i; the number of positions
  // named must be the number of axes (no repeats).
  SmallVector<Value> named;
  Value namedCount = zero;
  for (int64_t i = 0; i < axisRank; ++i) {
    Value hit = b.create<arith::ConstantIntOp>(loc, 0, 1);
    for (Value axis : axes)
      hit = b.create<arith::OrIOp>(loc, hit, eq(axis, c(i)));
    named.push_back(hit);
    namedCount =
        b.create<arith::AddIOp>(loc, namedCount, select(hit, one, zero));
  }
  emitRuntimeCheck(b, loc,
                   b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                           namedCount, c(count)),
                   namedCount, c(count),
                   describeNode(op) + ": the axes repeat (they name {value} "
                                      "positions, not {bound})");
  SmallVector<Value> dims;
  for (int64_t i = 0; i < inRank; ++i)
    dims.push_back(b.create<tensor::DimOp>(loc, data, i));
  SmallVector<OpFoldResult> sizes;
  if constexpr (isUnsqueeze) {
    // Output p takes input size (p - axes before p) where no axis names it.
    Value before = zero;
    for (int64_t p = 0; p < outRank; ++p) {
      Value size = one;
      for (int64_t q = 0; q < inRank; ++q)
        size = select(eq(before, c(q)), dims[q], size);
      sizes.push_back(select(named[p], one, size));
      before =
          b.create<arith::AddIOp>(loc, before, select(named[p], zero, one));
    }
  } else {
    // Input q is kept unless named; a named size must be 1.
    for (int64_t q = 0; q < inRank; ++q)
      emitRuntimeCheck(b, loc,
                       b.create<arith::AndIOp>(
                           loc, named[q],
                           b.create<arith::CmpIOp>(
                               loc, arith::CmpIPredicate::ne, dims[q], one)),
                       dims[q], one,
                       describeNode(op) + ": cannot squeeze dimension " +
                           Twine(q) + " of size {value}");
    for (int64_t p = 0; p < outRank; ++p) {
      Value size = one, kept = zero;
      for (int64_t q = 0; q < inRank; ++q) {
        size = select(
            b.create<arith::AndIOp>(
                loc, eq(kept, c(p)),
                b.create<arith::XOrIOp>(
                    loc, named[q], b.create<arith::ConstantIntOp>(loc, 1, 1))),
            dims[q], size);
        kept = b.create<arith::AddIOp>(loc, kept, select(named[q], zero, one));
      }
      sizes.push_back(size);
    }
  }
  return sizes;
}

/// Flatten, Squeeze, Unsqueeze: reshapes whose result type is known.
template <typename OpTy>
struct ShapeOnlyReshapeLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getOperands()[0];
    RankedTensorType type = convertedResultType(this->getTypeConverter(), op);
    SmallVector<OpFoldResult> sizes;
    if constexpr (std::is_same_v<OpTy, FlattenOp>) {
      auto inputType = cast<RankedTensorType>(data.getType());
      int64_t axis = normalizeAxis(op.getAxis(), inputType.getRank());
      Value outer = rewriter.create<arith::ConstantIndexOp>(loc, 1);
      Value inner = rewriter.create<arith::ConstantIndexOp>(loc, 1);
      for (int64_t i = 0; i < inputType.getRank(); ++i) {
        Value dim = rewriter.create<tensor::DimOp>(loc, data, i);
        if (i < axis)
          outer = rewriter.create<arith::MulIOp>(loc, outer, dim);
        else
          inner = rewriter.create<arith::MulIOp>(loc, inner, dim);
      }
      sizes = {outer, inner};
    } else if (!isNone(op.getAxes()) && failed(getConstantInts(op.getAxes()))) {
      sizes = runtimeAxesSizes(op, adaptor.getAxes(), data, rewriter);
    } else {
      auto matched = matchDynamicDims(rewriter, loc, data, type);
      if (failed(matched))
        return notLowerable(op, "a dynamic dimension is removed or added");
      sizes = *matched;
    }
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, data, type, sizes));
    return success();
  }
};

struct ShapeOpLowering : public OpConversionPattern<ShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ShapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    int64_t start = op.getStart() ? *op.getStart() : 0;
    int64_t end = op.getEnd() ? *op.getEnd() : rank;
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    SmallVector<Value> dims;
    for (int64_t i = start; i < end; ++i)
      dims.push_back(rewriter.create<arith::IndexCastOp>(
          loc, rewriter.getI64Type(),
          rewriter.create<tensor::DimOp>(loc, data, i)));
    auto type = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                      rewriter.getI64Type());
    if (dims.empty()) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type, {}));
      return success();
    }
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, type, dims);
    return success();
  }
};

struct SizeOpLowering : public OpConversionPattern<SizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    Value count = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    for (int64_t i = 0; i < rank; ++i)
      count = rewriter.create<arith::MulIOp>(
          loc, count, rewriter.create<tensor::DimOp>(loc, data, i));
    Value asI64 =
        rewriter.create<arith::IndexCastOp>(loc, rewriter.getI64Type(), count);
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(
        op, RankedTensorType::get({}, rewriter.getI64Type()), asI64);
    return success();
  }
};

struct TransposeOpLowering : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    SmallVector<int64_t> perm;
    if (op.getPerm())
      perm.assign(op.getPerm()->begin(), op.getPerm()->end());
    else
      for (int64_t i = rank - 1; i >= 0; --i)
        perm.push_back(i);
    SmallVector<OpFoldResult> inSizes = getSizes(rewriter, loc, data);
    SmallVector<OpFoldResult> sizes;
    for (int64_t p : perm)
      sizes.push_back(inSizes[p]);
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    Value init = emptyTensor(rewriter, loc, type, sizes);
    rewriter.replaceOp(
        op, rewriter.create<linalg::TransposeOp>(loc, data, init, perm)
                .getResult()[0]);
    return success();
  }
};

/// DepthToSpace and SpaceToDepth: reshape, transpose, reshape.
template <typename OpTy>
struct SpaceDepthLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    if (!type.hasStaticShape() || type.getRank() != 4)
      return notLowerable(op, "a dynamic or non-4-d input");
    int64_t n = type.getDimSize(0), c = type.getDimSize(1),
            h = type.getDimSize(2), w = type.getDimSize(3);
    int64_t bs = op.getBlocksize();
    Type element = type.getElementType();
    SmallVector<int64_t> shape, perm;
    constexpr bool toSpace = std::is_same_v<OpTy, DepthToSpaceOp>;
    if constexpr (toSpace) {
      if (op.getMode() == "DCR") {
        shape = {n, bs, bs, c / (bs * bs), h, w};
        perm = {0, 3, 4, 1, 5, 2};
      } else {
        shape = {n, c / (bs * bs), bs, bs, h, w};
        perm = {0, 1, 4, 2, 5, 3};
      }
    } else {
      // (n, c, h', by, w', bx) -> channels (by, bx, c) in DCR order,
      // (c, by, bx) in CRD order.
      shape = {n, c, h / bs, bs, w / bs, bs};
      if (op.getMode() == "DCR")
        perm = {0, 3, 5, 1, 2, 4};
      else
        perm = {0, 1, 3, 5, 2, 4};
    }
    Value expanded = reshapeTensor(rewriter, loc, input,
                                   RankedTensorType::get(shape, element), {});
    SmallVector<int64_t> permuted;
    for (int64_t p : perm)
      permuted.push_back(shape[p]);
    Value init = rewriter.create<tensor::EmptyOp>(loc, permuted, element);
    Value transposed =
        rewriter.create<linalg::TransposeOp>(loc, expanded, init, perm)
            .getResult()[0];
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op);
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, transposed, resultType, {}));
    return success();
  }
};

} // namespace

void populateShapePatterns(TypeConverter &converter,
                           RewritePatternSet &patterns) {
  patterns
      .add<ReshapeOpLowering, ShapeOnlyReshapeLowering<FlattenOp>,
           ShapeOnlyReshapeLowering<SqueezeOp>,
           ShapeOnlyReshapeLowering<UnsqueezeOp>, TransposeOpLowering,
           SpaceDepthLowering<DepthToSpaceOp>,
           SpaceDepthLowering<SpaceToDepthOp>, ShapeOpLowering, SizeOpLowering>(
          converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
