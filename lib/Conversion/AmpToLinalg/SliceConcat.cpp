//===- SliceConcat.cpp - Slice, Split and Concat --------------------------===//

#include "LoweringUtils.h"

namespace mlir::amp::lowering {

namespace {

struct ConcatOpLowering : public OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    int64_t rank = type.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    ValueRange inputs = adaptor.getInputs();
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, inputs[0]);
    // Sizes off the axis that are only known at run time must agree there.
    // The check reports a mismatch after the program returns, so the
    // inserts below also never write past the result: each input is cut to
    // the first input's sizes (what it writes is then discarded).
    auto firstType = cast<RankedTensorType>(inputs[0].getType());
    SmallVector<Value> parts(inputs.begin(), inputs.end());
    for (auto [i, input] : llvm::enumerate(inputs)) {
      auto inputType = cast<RankedTensorType>(input.getType());
      bool cut = false;
      SmallVector<OpFoldResult> kept = getSizes(rewriter, loc, input);
      for (int64_t d = 0; i > 0 && d < rank; ++d) {
        if (d == axis ||
            (!firstType.isDynamicDim(d) && !inputType.isDynamicDim(d)))
          continue;
        Value size = rewriter.create<tensor::DimOp>(loc, input, d);
        Value first = indexValue(rewriter, loc, sizes[d]);
        kept[d] = rewriter.create<arith::MinUIOp>(loc, size, first).getResult();
        cut = true;
        emitRuntimeCheck(
            rewriter, loc,
            rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, size,
                                           first),
            size, first,
            describeNode(op) + ": input " + std::to_string(i) + " has {value}" +
                " elements along dimension " + std::to_string(d) +
                " but input 0 has {bound} (only the axis " +
                std::to_string(axis) + " may differ)");
      }
      if (cut)
        parts[i] = rewriter.create<tensor::ExtractSliceOp>(
            loc, input, SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)),
            kept, SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    }
    Value total = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    for (Value input : inputs)
      total = rewriter.create<arith::AddIOp>(
          loc, total, rewriter.create<tensor::DimOp>(loc, input, axis));
    sizes[axis] = total;
    Value result = emptyTensor(rewriter, loc, type, sizes);
    Value offset = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    for (Value input : parts) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[axis] = offset;
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      SmallVector<OpFoldResult> inputSizes = getSizes(rewriter, loc, input);
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, input, result, offsets, inputSizes, strides);
      offset = rewriter.create<arith::AddIOp>(
          loc, offset, indexValue(rewriter, loc, inputSizes[axis]));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SplitOpLowering : public OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    SmallVector<int64_t> parts;
    if (!isNone(op.getSplit())) {
      auto values = getConstantInts(op.getSplit());
      if (failed(values))
        return lowerRuntimeSizes(op, adaptor, rewriter, axis);
      parts = *values;
    } else {
      for (Value result : op.getOutputs()) {
        int64_t size =
            cast<RankedTensorType>(result.getType()).getDimSize(axis);
        if (ShapedType::isDynamic(size))
          return notLowerable(op, "splitting a dynamic dimension");
        parts.push_back(size);
      }
    }
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, input);
    SmallVector<Value> results;
    int64_t offset = 0;
    for (auto [i, part] : llvm::enumerate(parts)) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[axis] = rewriter.getIndexAttr(offset);
      SmallVector<OpFoldResult> partSizes(sizes);
      partSizes[axis] = rewriter.getIndexAttr(part);
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      RankedTensorType type = convertedResultType(getTypeConverter(), op, i);
      results.push_back(rewriter.create<tensor::ExtractSliceOp>(
          loc, type, input, offsets, partSizes, strides));
      offset += part;
    }
    rewriter.replaceOp(op, results);
    return success();
  }

private:
  /// Sizes read at run time (one per output, as shape inference checked):
  /// they must be non-negative and add up to the axis' size, else a
  /// run-time error names the node.
  LogicalResult lowerRuntimeSizes(SplitOp op, OpAdaptor adaptor,
                                  ConversionPatternRewriter &rewriter,
                                  int64_t axis) const {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    auto splitType = cast<RankedTensorType>(op.getSplit().getType());
    if (splitType.getRank() != 1 || splitType.isDynamicDim(0))
      return notLowerable(op, "the number of split sizes is not static");
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, input);
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value offset = zero;
    SmallVector<Value> parts;
    for (int64_t i = 0, e = op.getOutputs().size(); i < e; ++i) {
      Value part = extractIndex(rewriter, loc, adaptor.getSplit(), i);
      emitRuntimeCheck(rewriter, loc,
                       rewriter.create<arith::CmpIOp>(
                           loc, arith::CmpIPredicate::slt, part, zero),
                       part, zero,
                       describeNode(op) + ": split size " + Twine(i) +
                           " is {value}, negative");
      part = rewriter.create<arith::MaxSIOp>(loc, part, zero);
      parts.push_back(part);
      offset = rewriter.create<arith::AddIOp>(loc, offset, part);
    }
    Value dim = indexValue(rewriter, loc, sizes[axis]);
    emitRuntimeCheck(rewriter, loc,
                     rewriter.create<arith::CmpIOp>(
                         loc, arith::CmpIPredicate::ne, offset, dim),
                     offset, dim,
                     describeNode(op) +
                         ": the split sizes add up to {value} but the "
                         "axis has {bound} elements");
    SmallVector<Value> results;
    offset = zero;
    for (auto [i, part] : llvm::enumerate(parts)) {
      // Within the input even when the check failed (and stopped the run
      // at its end): offset and size clamped to the axis.
      Value start = rewriter.create<arith::MinSIOp>(loc, offset, dim);
      Value size = rewriter.create<arith::MinSIOp>(
          loc, part, rewriter.create<arith::SubIOp>(loc, dim, start));
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[axis] = start;
      SmallVector<OpFoldResult> partSizes(sizes);
      partSizes[axis] = size;
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      RankedTensorType type = convertedResultType(getTypeConverter(), op, i);
      results.push_back(rewriter.create<tensor::ExtractSliceOp>(
          loc, type, input, offsets, partSizes, strides));
      offset = rewriter.create<arith::AddIOp>(loc, offset, part);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Element `i` of a 1-D integer tensor as an index: a constant when the
/// tensor is one, else read at run time.
static OpFoldResult indexElement(OpBuilder &b, Location loc, Value tensor,
                                 Value converted, int64_t i) {
  auto values = getConstantInts(tensor);
  if (succeeded(values))
    return b.getIndexAttr((*values)[i]);
  Value position = b.create<arith::ConstantIndexOp>(loc, i);
  Value element = b.create<tensor::ExtractOp>(loc, converted, position);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), element)
      .getResult();
}

struct SliceOpLowering : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    auto type = cast<RankedTensorType>(data.getType());
    int64_t rank = type.getRank();
    auto startsType = cast<RankedTensorType>(op.getStarts().getType());
    if (startsType.isDynamicDim(0))
      return notLowerable(op, "the number of starts is not static");
    int64_t count = startsType.getDimSize(0);
    // The axes decide which dimensions are sliced and the step signs decide
    // the clamping rules: both must be known. Starts and ends may be
    // computed at run time (exports with dynamic sequence axes compute them
    // from Shape).
    SmallVector<int64_t> axes, steps(count, 1);
    if ((!isNone(op.getAxes()) && failed(getConstantInts(op.getAxes()))) ||
        (!isNone(op.getSteps()) && failed(getConstantInts(op.getSteps()))))
      return lowerRuntimeAxes(op, adaptor, rewriter, count);
    if (!isNone(op.getAxes())) {
      auto values = getConstantInts(op.getAxes());
      axes = *values;
    } else {
      for (int64_t i = 0; i < count; ++i)
        axes.push_back(i);
    }
    if (!isNone(op.getSteps()))
      steps = *getConstantInts(op.getSteps());
    // Index arithmetic that folds when everything is constant.
    auto value = [&](OpFoldResult v) {
      return getValueOrCreateConstantIndexOp(rewriter, loc, v);
    };
    auto constant = [&](int64_t v) {
      return rewriter.create<arith::ConstantIndexOp>(loc, v).getResult();
    };
    auto fold = [&](Value v) { return getAsOpFoldResult(v); };
    auto clamp = [&](Value v, Value low, Value high) {
      Value above = rewriter.createOrFold<arith::MaxSIOp>(loc, v, low);
      return rewriter.createOrFold<arith::MinSIOp>(loc, above, high);
    };
    // A negative position counts from the end (INT64_MIN and INT64_MAX
    // ends stay out of range and are clamped).
    auto fromEnd = [&](Value v, Value dim) {
      Value zero = constant(0);
      Value isNegative = rewriter.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::slt, v, zero);
      Value shifted = rewriter.createOrFold<arith::AddIOp>(loc, v, dim);
      return rewriter.createOrFold<arith::SelectOp>(loc, isNegative, shifted,
                                                    v);
    };
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, data);
    SmallVector<int64_t> stepOf(rank, 1);
    bool negative = false;
    for (auto [i, rawAxis] : llvm::enumerate(axes)) {
      int64_t axis = normalizeAxis(rawAxis, rank);
      int64_t step = steps[i];
      if (step == 0)
        return notLowerable(op, "a step is 0");
      Value dim = value(sizes[axis]);
      Value start = fromEnd(value(indexElement(rewriter, loc, op.getStarts(),
                                               adaptor.getStarts(), i)),
                            dim);
      Value end = fromEnd(value(indexElement(rewriter, loc, op.getEnds(),
                                             adaptor.getEnds(), i)),
                          dim);
      Value zero = constant(0);
      Value size;
      if (step > 0) {
        start = clamp(start, zero, dim);
        end = clamp(end, zero, dim);
        Value span = rewriter.createOrFold<arith::SubIOp>(loc, end, start);
        size = rewriter.createOrFold<arith::CeilDivSIOp>(loc, span,
                                                         constant(step));
      } else {
        Value last =
            rewriter.createOrFold<arith::SubIOp>(loc, dim, constant(1));
        start = clamp(start, zero, last);
        end = clamp(end, constant(-1), last);
        Value span = rewriter.createOrFold<arith::SubIOp>(loc, start, end);
        size = rewriter.createOrFold<arith::CeilDivSIOp>(loc, span,
                                                         constant(-step));
        negative = true;
      }
      size = rewriter.createOrFold<arith::MaxSIOp>(loc, size, zero);
      stepOf[axis] = step;
      offsets[axis] = fold(start);
      sizes[axis] = fold(size);
    }
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Value result;
    if (!negative) {
      SmallVector<OpFoldResult> strides;
      for (int64_t s : stepOf)
        strides.push_back(rewriter.getIndexAttr(s));
      result = rewriter.create<tensor::ExtractSliceOp>(loc, data, offsets,
                                                       sizes, strides);
    } else {
      // Negative steps: index arithmetic in a generic.
      SmallVector<int64_t> shape;
      for (OpFoldResult size : sizes) {
        std::optional<int64_t> known = getConstantIntValue(size);
        shape.push_back(known ? *known : ShapedType::kDynamic);
      }
      auto sliceType = RankedTensorType::get(shape, type.getElementType());
      result = buildIndexGenerated(
          rewriter, loc, sliceType, sizes,
          [&](OpBuilder &b, Location l, ValueRange outIndices) -> Value {
            SmallVector<Value> indices;
            for (int64_t i = 0; i < rank; ++i) {
              Value scaled = b.create<arith::MulIOp>(
                  l, outIndices[i],
                  b.create<arith::ConstantIndexOp>(l, stepOf[i]));
              indices.push_back(b.create<arith::AddIOp>(
                  l, scaled, indexValue(b, l, offsets[i])));
            }
            return b.create<tensor::ExtractOp>(l, data, indices);
          });
    }
    if (result.getType() != resultType)
      result = rewriter.create<tensor::CastOp>(loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  /// Axes or steps read at run time (the rank is static): every
  /// dimension's start, size and step are chosen at run time from the
  /// entry that names it (selects over the entries, no branches), and one
  /// generic reads data[start + i * step]. An axis out of [-rank, rank) or
  /// a step of 0 is a run-time error naming the node.
  LogicalResult lowerRuntimeAxes(SliceOp op, OpAdaptor adaptor,
                                 ConversionPatternRewriter &rewriter,
                                 int64_t count) const {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    auto type = cast<RankedTensorType>(data.getType());
    int64_t rank = type.getRank();
    auto constant = [&](int64_t v) -> Value {
      return rewriter.create<arith::ConstantIndexOp>(loc, v);
    };
    auto cmp = [&](arith::CmpIPredicate p, Value a, Value b) -> Value {
      return rewriter.create<arith::CmpIOp>(loc, p, a, b);
    };
    auto select = [&](Value c, Value a, Value b) -> Value {
      return rewriter.create<arith::SelectOp>(loc, c, a, b);
    };
    auto clamp = [&](Value v, Value low, Value high) -> Value {
      Value above = rewriter.create<arith::MaxSIOp>(loc, v, low);
      return rewriter.create<arith::MinSIOp>(loc, above, high);
    };
    for (Value v :
         SmallVector<Value>{op.getEnds(), op.getAxes(), op.getSteps()}) {
      if (isNone(v))
        continue;
      auto t = cast<RankedTensorType>(v.getType());
      if (t.getRank() != 1 || t.isDynamicDim(0) || t.getDimSize(0) != count)
        return notLowerable(op, "starts, ends, axes and steps are not all "
                                "of the same static length");
    }
    Value zero = constant(0), one = constant(1), rankValue = constant(rank);
    if (!isNone(op.getAxes()))
      checkIndexRange(rewriter, loc, op, adaptor.getAxes(), rankValue,
                      /*allowNegative=*/true, "axis");
    SmallVector<OpFoldResult> dimSizes = getSizes(rewriter, loc, data);
    SmallVector<Value> dims, starts, sizes, steps;
    for (int64_t d = 0; d < rank; ++d) {
      dims.push_back(indexValue(rewriter, loc, dimSizes[d]));
      starts.push_back(zero);
      sizes.push_back(dims.back());
      steps.push_back(one);
    }
    auto entry = [&](Value original, Value converted, int64_t k) -> Value {
      return indexValue(rewriter, loc,
                        indexElement(rewriter, loc, original, converted, k));
    };
    for (int64_t k = 0; k < count; ++k) {
      Value axis = isNone(op.getAxes())
                       ? constant(k)
                       : entry(op.getAxes(), adaptor.getAxes(), k);
      axis = select(cmp(arith::CmpIPredicate::slt, axis, zero),
                    rewriter.create<arith::AddIOp>(loc, axis, rankValue), axis);
      Value step = isNone(op.getSteps())
                       ? one
                       : entry(op.getSteps(), adaptor.getSteps(), k);
      Value isZero = cmp(arith::CmpIPredicate::eq, step, zero);
      emitRuntimeCheck(rewriter, loc, isZero, step, zero,
                       describeNode(op) + ": step " + Twine(k) + " is 0");
      step = select(isZero, one, step);
      Value positive = cmp(arith::CmpIPredicate::sgt, step, zero);
      Value start = entry(op.getStarts(), adaptor.getStarts(), k);
      Value end = entry(op.getEnds(), adaptor.getEnds(), k);
      for (int64_t d = 0; d < rank; ++d) {
        Value dim = dims[d];
        // A negative position counts from the end.
        auto fromEnd = [&](Value v) {
          return select(cmp(arith::CmpIPredicate::slt, v, zero),
                        rewriter.create<arith::AddIOp>(loc, v, dim), v);
        };
        Value s = fromEnd(start), e = fromEnd(end);
        Value last = rewriter.create<arith::SubIOp>(loc, dim, one);
        Value forwardStart = clamp(s, zero, dim);
        Value forwardSize = rewriter.create<arith::CeilDivSIOp>(
            loc,
            rewriter.create<arith::SubIOp>(loc, clamp(e, zero, dim),
                                           forwardStart),
            step);
        Value backwardStart = clamp(s, zero, last);
        Value backwardSize = rewriter.create<arith::CeilDivSIOp>(
            loc,
            rewriter.create<arith::SubIOp>(loc, backwardStart,
                                           clamp(e, constant(-1), last)),
            rewriter.create<arith::SubIOp>(loc, zero, step));
        Value size = rewriter.create<arith::MaxSIOp>(
            loc, select(positive, forwardSize, backwardSize), zero);
        Value named = cmp(arith::CmpIPredicate::eq, axis, constant(d));
        starts[d] = select(named, select(positive, forwardStart, backwardStart),
                           starts[d]);
        sizes[d] = select(named, size, sizes[d]);
        steps[d] = select(named, step, steps[d]);
      }
    }
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    SmallVector<OpFoldResult> outSizes;
    for (int64_t d = 0; d < rank; ++d)
      outSizes.push_back(resultType.isDynamicDim(d)
                             ? OpFoldResult(sizes[d])
                             : rewriter.getIndexAttr(resultType.getDimSize(d)));
    Value result = buildIndexGenerated(
        rewriter, loc, resultType, outSizes,
        [&](OpBuilder &b, Location l, ValueRange out) -> Value {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d)
            indices.push_back(b.create<arith::AddIOp>(
                l, starts[d], b.create<arith::MulIOp>(l, out[d], steps[d])));
          return b.create<tensor::ExtractOp>(l, data, indices);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateSliceConcatPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns) {
  patterns.add<SliceOpLowering, SplitOpLowering, ConcatOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
