//===- PadTile.cpp - Pad, Expand and Tile ---------------------------------===//

#include "LoweringUtils.h"

namespace mlir::amp::lowering {

namespace {

struct ExpandOpLowering : public OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank; ++i) {
      if (!type.isDynamicDim(i)) {
        sizes.push_back(rewriter.getIndexAttr(type.getDimSize(i)));
        continue;
      }
      // max(input dim, requested dim).
      int64_t shapeIndex =
          i -
          (rank -
           cast<RankedTensorType>(adaptor.getShape().getType()).getDimSize(0));
      Value requested =
          shapeIndex >= 0
              ? extractIndex(rewriter, loc, adaptor.getShape(), shapeIndex)
              : rewriter.create<arith::ConstantIndexOp>(loc, 1).getResult();
      int64_t inputDim = i - (rank - inputType.getRank());
      Value have =
          inputDim >= 0
              ? rewriter.create<tensor::DimOp>(loc, input, inputDim).getResult()
              : rewriter.create<arith::ConstantIndexOp>(loc, 1).getResult();
      sizes.push_back(
          rewriter.create<arith::MaxSIOp>(loc, requested, have).getResult());
    }
    // An input dimension of run-time size may be 1 where the shape asks
    // for more: it is broadcast explicitly (buildElementwise takes the
    // size of a lone input's dynamic dimension as the result's).
    SmallVector<int64_t> dynamicDims;
    int64_t offset = rank - inputType.getRank();
    for (int64_t i = 0; i < inputType.getRank(); ++i)
      if (inputType.isDynamicDim(i) && type.getDimSize(i + offset) != 1)
        dynamicDims.push_back(i);
    if (!dynamicDims.empty())
      input =
          broadcastAtRunTime(rewriter, loc, input, dynamicDims, type, sizes);
    Value result = buildElementwise(
        rewriter, loc, {input}, type,
        [](OpBuilder &, Location, ValueRange a) { return a[0]; }, false, sizes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TileOpLowering : public OpConversionPattern<TileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    SmallVector<OpFoldResult> inSizes = getSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank; ++i) {
      Value repeat = extractIndex(rewriter, loc, adaptor.getRepeats(), i);
      sizes.push_back(
          rewriter
              .create<arith::MulIOp>(loc, indexValue(rewriter, loc, inSizes[i]),
                                     repeat)
              .getResult());
    }
    Value result = buildIndexGenerated(
        rewriter, loc, type, sizes,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          SmallVector<Value> at;
          for (int64_t i = 0; i < rank; ++i)
            at.push_back(b.create<arith::RemUIOp>(
                l, indices[i], indexValue(b, l, inSizes[i])));
          return b.create<tensor::ExtractOp>(l, input, at);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct PadOpLowering : public OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    auto type = cast<RankedTensorType>(data.getType());
    int64_t rank = type.getRank();
    auto padsType = cast<RankedTensorType>(op.getPads().getType());
    if (padsType.isDynamicDim(0))
      return notLowerable(op, "the number of pads is not static");
    SmallVector<int64_t> axes;
    if (!isNone(op.getAxes())) {
      auto values = getConstantInts(op.getAxes());
      if (failed(values))
        return notLowerable(op, "axes are not constants");
      axes = *values;
    } else {
      for (int64_t i = 0; i < rank; ++i)
        axes.push_back(i);
    }
    int64_t count = axes.size();
    if (padsType.getDimSize(0) != 2 * count)
      return notLowerable(op, "pads do not match the axes");
    // Pads may be computed at run time (windowed attention pads to a
    // multiple of the window); negative pads crop.
    auto pads = getConstantInts(op.getPads());
    SmallVector<OpFoldResult> low(rank, rewriter.getIndexAttr(0)),
        high(rank, rewriter.getIndexAttr(0));
    for (auto [i, axis] : llvm::enumerate(axes)) {
      int64_t a = normalizeAxis(axis, rank);
      auto padAt = [&](int64_t k) -> OpFoldResult {
        if (succeeded(pads))
          return rewriter.getIndexAttr((*pads)[k]);
        return extractIndex(rewriter, loc, adaptor.getPads(), k);
      };
      low[a] = padAt(i);
      high[a] = padAt(i + count);
    }
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    StringRef mode = op.getMode();
    if (mode != "constant" && mode != "edge" && mode != "reflect" &&
        mode != "wrap")
      return notLowerable(op, "mode '" + mode + "'");
    Value value;
    if (mode == "constant")
      value = isNone(adaptor.getConstantValue())
                  ? constantScalar(rewriter, loc, type.getElementType(), 0)
                  : extractScalar(rewriter, loc, adaptor.getConstantValue());
    SmallVector<int64_t> staticLow, staticHigh;
    for (int64_t i = 0; i < rank; ++i) {
      std::optional<int64_t> l = getConstantIntValue(low[i]);
      std::optional<int64_t> h = getConstantIntValue(high[i]);
      staticLow.push_back(l && *l >= 0 ? *l : -1);
      staticHigh.push_back(h && *h >= 0 ? *h : -1);
    }
    bool knownNonNegative = !llvm::is_contained(staticLow, -1) &&
                            !llvm::is_contained(staticHigh, -1);
    if (mode == "constant" && knownNonNegative) {
      Value padded =
          padTensor(rewriter, loc, data, staticLow, staticHigh, value);
      if (padded.getType() != resultType)
        padded = rewriter.create<tensor::CastOp>(loc, resultType, padded);
      rewriter.replaceOp(op, padded);
      return success();
    }
    // Every output element reads its source coordinate index - low, mapped
    // by the mode (constant: the pad value outside the input).
    SmallVector<OpFoldResult> inSizes = getSizes(rewriter, loc, data);
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank; ++i) {
      Value grown = rewriter.create<arith::AddIOp>(
          loc, indexValue(rewriter, loc, inSizes[i]),
          rewriter.create<arith::AddIOp>(loc, indexValue(rewriter, loc, low[i]),
                                         indexValue(rewriter, loc, high[i])));
      sizes.push_back(grown);
    }
    Value result = buildIndexGenerated(
        rewriter, loc, resultType, sizes,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          SmallVector<Value> at;
          auto c = [&](int64_t v) {
            return b.create<arith::ConstantIndexOp>(l, v);
          };
          Value inside;
          for (int64_t i = 0; i < rank; ++i) {
            Value dim = indexValue(b, l, inSizes[i]);
            // Source coordinate (may be outside [0, dim)).
            Value s = b.create<arith::SubIOp>(l, indices[i],
                                              indexValue(b, l, low[i]));
            Value last = b.create<arith::SubIOp>(l, dim, c(1));
            Value mapped;
            if (mode == "constant") {
              Value inRange = b.create<arith::AndIOp>(
                  l,
                  b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, s,
                                          c(0)),
                  b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, s,
                                          dim));
              inside =
                  inside
                      ? b.create<arith::AndIOp>(l, inside, inRange).getResult()
                      : inRange;
              mapped = b.create<arith::MaxSIOp>(
                  l, c(0), b.create<arith::MinSIOp>(l, s, last));
            } else if (mode == "edge") {
              mapped = b.create<arith::MaxSIOp>(
                  l, c(0), b.create<arith::MinSIOp>(l, s, last));
            } else if (mode == "wrap") {
              Value r = b.create<arith::RemSIOp>(l, s, dim);
              Value isNeg = b.create<arith::CmpIOp>(
                  l, arith::CmpIPredicate::slt, r, c(0));
              mapped = b.create<arith::SelectOp>(
                  l, isNeg, b.create<arith::AddIOp>(l, r, dim), r);
            } else {
              // reflect: period 2 * (dim - 1).
              Value period = b.create<arith::MulIOp>(l, last, c(2));
              Value safePeriod = b.create<arith::MaxSIOp>(l, period, c(1));
              Value r = b.create<arith::RemSIOp>(l, s, safePeriod);
              Value isNeg = b.create<arith::CmpIOp>(
                  l, arith::CmpIPredicate::slt, r, c(0));
              r = b.create<arith::SelectOp>(
                  l, isNeg, b.create<arith::AddIOp>(l, r, safePeriod), r);
              Value beyond = b.create<arith::CmpIOp>(
                  l, arith::CmpIPredicate::sgt, r, last);
              mapped = b.create<arith::SelectOp>(
                  l, beyond, b.create<arith::SubIOp>(l, period, r), r);
            }
            at.push_back(mapped);
          }
          Value element = b.create<tensor::ExtractOp>(l, data, at);
          if (inside)
            element = b.create<arith::SelectOp>(l, inside, element, value);
          return element;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populatePadTilePatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<PadOpLowering, ExpandOpLowering, TileOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
