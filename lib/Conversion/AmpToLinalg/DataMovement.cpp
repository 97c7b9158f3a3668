//===- DataMovement.cpp - shape, layout and indexing ops -> tensor/linalg -===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::amp::lowering {
namespace {

Value indexValue(OpBuilder &b, Location loc, OpFoldResult size) {
  return getValueOrCreateConstantIndexOp(b, loc, size);
}

Value toIndex(OpBuilder &b, Location loc, Value integer) {
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), integer);
}

/// Reads element `i` of a 1-D integer tensor as an index.
Value extractIndex(OpBuilder &b, Location loc, Value tensor, int64_t i) {
  Value position = b.create<arith::ConstantIndexOp>(loc, i);
  Value element = b.create<tensor::ExtractOp>(loc, tensor, position);
  return toIndex(b, loc, element);
}

/// Reads the single element of a 0-d or 1-element tensor.
Value extractScalar(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> indices(type.getRank(),
                             b.create<arith::ConstantIndexOp>(loc, 0));
  return b.create<tensor::ExtractOp>(loc, tensor, indices);
}

/// Result sizes where the dynamic dims of `type` are the dynamic dims of
/// `input`, in order (Squeeze, Unsqueeze, Identity-like reshapes).
FailureOr<SmallVector<OpFoldResult>>
matchDynamicDims(OpBuilder &b, Location loc, Value input,
                 RankedTensorType type) {
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> inputDynamic;
  for (int64_t i = 0; i < inputType.getRank(); ++i)
    if (inputType.isDynamicDim(i))
      inputDynamic.push_back(b.create<tensor::DimOp>(loc, input, i).getResult());
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
        sizes.push_back(rewriter
                            .create<arith::SelectOp>(loc, isMinus,
                                                     inferredSize, dims[i])
                            .getResult());
      }
    }
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, data, type, sizes));
    return success();
  }
};

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
    Value asI64 = rewriter.create<arith::IndexCastOp>(
        loc, rewriter.getI64Type(), count);
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
    rewriter.replaceOp(op, rewriter.create<linalg::TransposeOp>(
                               loc, data, init, perm)
                               .getResult()[0]);
    return success();
  }
};

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
    Value total = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    for (Value input : inputs)
      total = rewriter.create<arith::AddIOp>(
          loc, total, rewriter.create<tensor::DimOp>(loc, input, axis));
    sizes[axis] = total;
    Value result = emptyTensor(rewriter, loc, type, sizes);
    Value offset = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    for (Value input : inputs) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[axis] = offset;
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      SmallVector<OpFoldResult> inputSizes = getSizes(rewriter, loc, input);
      result = rewriter.create<tensor::InsertSliceOp>(loc, input, result,
                                                      offsets, inputSizes,
                                                      strides);
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
        return notLowerable(op, "the split input is not a constant");
      parts = *values;
    } else {
      for (Value result : op.getOutputs()) {
        int64_t size = cast<RankedTensorType>(result.getType()).getDimSize(axis);
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
    if (!isNone(op.getAxes())) {
      auto values = getConstantInts(op.getAxes());
      if (failed(values))
        return notLowerable(op, "axes are not constants");
      axes = *values;
    } else {
      for (int64_t i = 0; i < count; ++i)
        axes.push_back(i);
    }
    if (!isNone(op.getSteps())) {
      auto values = getConstantInts(op.getSteps());
      if (failed(values))
        return notLowerable(op, "steps are not constants");
      steps = *values;
    }
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
      Value start = fromEnd(
          value(indexElement(rewriter, loc, op.getStarts(), adaptor.getStarts(),
                             i)),
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
        Value last = rewriter.createOrFold<arith::SubIOp>(loc, dim, constant(1));
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
      Value init = emptyTensor(rewriter, loc, sliceType, sizes);
      result =
          rewriter
              .create<linalg::GenericOp>(
                  loc, TypeRange{sliceType}, ValueRange{}, ValueRange{init},
                  SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
                  SmallVector<utils::IteratorType>(
                      rank, utils::IteratorType::parallel),
                  [&](OpBuilder &b, Location l, ValueRange) {
                    SmallVector<Value> indices;
                    for (int64_t i = 0; i < rank; ++i) {
                      Value o = b.create<linalg::IndexOp>(l, i);
                      Value scaled = b.create<arith::MulIOp>(
                          l, o, b.create<arith::ConstantIndexOp>(l, stepOf[i]));
                      indices.push_back(b.create<arith::AddIOp>(
                          l, scaled,
                          getValueOrCreateConstantIndexOp(b, l, offsets[i])));
                    }
                    b.create<linalg::YieldOp>(
                        l, ValueRange{
                               b.create<tensor::ExtractOp>(l, data, indices)});
                  })
              .getResult(0);
    }
    if (result.getType() != resultType)
      result = rewriter.create<tensor::CastOp>(loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

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
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, loc, type, sizes)},
        SmallVector<AffineMap>{
            AffineMap::get(rank, 0, indexExprs, rewriter.getContext()),
            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> at;
          for (int64_t i = 0; i < axis; ++i)
            at.push_back(b.create<linalg::IndexOp>(l, i));
          at.push_back(wrapIndex(b, l, toIndex(b, l, args[0]), axisDim));
          for (int64_t i = axis + 1; i < r; ++i)
            at.push_back(b.create<linalg::IndexOp>(l, i - 1 + q));
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<tensor::ExtractOp>(l, data, at)});
        }).getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherElementsOpLowering
    : public OpConversionPattern<GatherElementsOp> {
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
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, loc, type,
                               getSizes(rewriter, loc, indices))},
        SmallVector<AffineMap>(2, rewriter.getMultiDimIdentityMap(rank)),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> at;
          for (int64_t i = 0; i < rank; ++i)
            at.push_back(i == axis
                             ? wrapIndex(b, l, toIndex(b, l, args[0]), axisDim)
                             : b.create<linalg::IndexOp>(l, i).getResult());
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<tensor::ExtractOp>(l, data, at)});
        }).getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

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
      int64_t shapeIndex = i - (rank - cast<RankedTensorType>(
                                           adaptor.getShape().getType())
                                           .getDimSize(0));
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
    Value result = buildElementwise(
        rewriter, loc, {input}, type,
        [](OpBuilder &, Location, ValueRange a) { return a[0]; }, false,
        sizes);
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
      sizes.push_back(rewriter
                          .create<arith::MulIOp>(
                              loc, indexValue(rewriter, loc, inSizes[i]),
                              repeat)
                          .getResult());
    }
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{},
        ValueRange{emptyTensor(rewriter, loc, type, sizes)},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> at;
          for (int64_t i = 0; i < rank; ++i)
            at.push_back(b.create<arith::RemUIOp>(
                l, b.create<linalg::IndexOp>(l, i),
                indexValue(b, l, inSizes[i])));
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<tensor::ExtractOp>(l, input, at)});
        }).getResult(0);
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
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{resultType}, ValueRange{},
        ValueRange{emptyTensor(rewriter, loc, resultType, sizes)},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> at;
          auto c = [&](int64_t v) {
            return b.create<arith::ConstantIndexOp>(l, v);
          };
          Value inside;
          for (int64_t i = 0; i < rank; ++i) {
            Value dim = indexValue(b, l, inSizes[i]);
            // Source coordinate (may be outside [0, dim)).
            Value s = b.create<arith::SubIOp>(
                l, b.create<linalg::IndexOp>(l, i), indexValue(b, l, low[i]));
            Value last = b.create<arith::SubIOp>(l, dim, c(1));
            Value mapped;
            if (mode == "constant") {
              Value inRange = b.create<arith::AndIOp>(
                  l,
                  b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, s,
                                          c(0)),
                  b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, s,
                                          dim));
              inside = inside ? b.create<arith::AndIOp>(l, inside, inRange)
                                    .getResult()
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
          b.create<linalg::YieldOp>(l, ValueRange{element});
        }).getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

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
      sizes.push_back(type.isDynamicDim(i)
                          ? OpFoldResult(extractIndex(rewriter, loc,
                                                      adaptor.getInput(), i))
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
      Value span = rewriter.create<arith::SubFOp>(loc, wide(limit),
                                                  wide(start));
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
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{},
        ValueRange{emptyTensor(rewriter, loc, type, sizes)},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(1)},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = b.create<arith::IndexCastOp>(
              l, b.getI64Type(), b.create<linalg::IndexOp>(l, 0));
          Value iv = convertScalar(b, l, i, element, false, false);
          Value r;
          if (isa<FloatType>(element))
            r = b.create<arith::AddFOp>(
                l, start, b.create<arith::MulFOp>(l, iv, delta));
          else
            r = b.create<arith::AddIOp>(
                l, start, b.create<arith::MulIOp>(l, iv, delta));
          b.create<linalg::YieldOp>(l, ValueRange{r});
        }).getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DropoutOpLowering : public OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isNone(op.getTrainingMode())) {
      auto training = getConstantInts(op.getTrainingMode());
      if (failed(training) || training->empty() || (*training)[0] != 0)
        return notLowerable(op, "training_mode is not a constant false");
    }
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    Value mask;
    if (!op.getMask().use_empty()) {
      RankedTensorType maskType =
          convertedResultType(getTypeConverter(), op, 1);
      mask = filledTensor(rewriter, loc, maskType,
                          getSizes(rewriter, loc, data),
                          constantScalar(rewriter, loc,
                                         rewriter.getI1Type(), 1));
    }
    rewriter.replaceOp(op, {data, mask});
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
      shape = {n, c, h / bs, bs, w / bs, bs};
      perm = {0, 3, 5, 1, 2, 4};
    }
    Value expanded = reshapeTensor(
        rewriter, loc, input, RankedTensorType::get(shape, element), {});
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

struct TriluOpLowering : public OpConversionPattern<TriluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // k may be a runtime scalar.
    Value kValue;
    if (!isNone(adaptor.getK()))
      kValue = toIndex(rewriter, loc, extractScalar(rewriter, loc,
                                                    adaptor.getK()));
    else
      kValue = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    bool upper = op.getUpper() != 0;
    Value input = adaptor.getInput();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    int64_t rank = type.getRank();
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{input},
        ValueRange{emptyTensor(rewriter, loc, type,
                               getSizes(rewriter, loc, input))},
        SmallVector<AffineMap>(2, rewriter.getMultiDimIdentityMap(rank)),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value i = b.create<linalg::IndexOp>(l, rank - 2);
          Value j = b.create<linalg::IndexOp>(l, rank - 1);
          Value diff = b.create<arith::SubIOp>(l, j, i);
          Value kv = kValue;
          Value keep = b.create<arith::CmpIOp>(
              l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
              diff, kv);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(
                     l, keep, args[0],
                     constantScalar(b, l, args[0].getType(), 0))});
        }).getResult(0);
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
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{},
        ValueRange{emptyTensor(rewriter, loc, type,
                               getSizes(rewriter, loc, adaptor.getInput()))},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(2)},
        SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = b.create<linalg::IndexOp>(l, 0);
          Value j = b.create<linalg::IndexOp>(l, 1);
          Value on = b.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq, b.create<arith::SubIOp>(l, j, i),
              b.create<arith::ConstantIndexOp>(l, k));
          Type t = type.getElementType();
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(
                     l, on, constantScalar(b, l, t, 1),
                     constantScalar(b, l, t, 0))});
        }).getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CumSumOpLowering : public OpConversionPattern<CumSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto axisValues = getConstantInts(op.getAxis());
    if (failed(axisValues) || axisValues->empty())
      return notLowerable(op, "axis is not a constant");
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    int64_t axis = normalizeAxis((*axisValues)[0], rank);
    bool exclusive = op.getExclusive() != 0, reverse = op.getReverse() != 0;
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    Type storage = type.getElementType();
    Type acc = isLowPrecisionFloat(storage) && accumulatesInF32(op)
                   ? rewriter.getF32Type()
                   : storage;
    // out[.., i, ..] = sum over j of [j in prefix(i)] x[.., j, ..], with an
    // extra reduction loop j (the cumulative axis is small in practice).
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineExpr> inExprs;
    for (int64_t i = 0; i < rank; ++i)
      inExprs.push_back(i == axis ? getAffineDimExpr(rank, context)
                                  : getAffineDimExpr(i, context));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto accType = type.clone(acc);
    Value init = filledTensor(rewriter, loc, accType,
                              getSizes(rewriter, loc, x),
                              constantScalar(rewriter, loc, acc, 0));
    Value sum = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{accType}, ValueRange{x}, ValueRange{init},
        SmallVector<AffineMap>{AffineMap::get(rank + 1, 0, inExprs, context),
                               rewriter.getMultiDimIdentityMap(rank + 1)
                                   .getMajorSubMap(rank)},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value i = b.create<linalg::IndexOp>(l, axis);
          Value j = b.create<linalg::IndexOp>(l, rank);
          arith::CmpIPredicate pred =
              reverse ? (exclusive ? arith::CmpIPredicate::sgt
                                   : arith::CmpIPredicate::sge)
                      : (exclusive ? arith::CmpIPredicate::slt
                                   : arith::CmpIPredicate::sle);
          Value inside = b.create<arith::CmpIOp>(l, pred, j, i);
          Value v = convertScalar(b, l, toComputeType(b, l, args[0]),
                                  getComputeType(acc), false, false);
          Value a = toComputeType(b, l, args[1]);
          Value added = isa<FloatType>(a.getType())
                            ? b.create<arith::AddFOp>(l, a, v).getResult()
                            : b.create<arith::AddIOp>(l, a, v).getResult();
          Value r = b.create<arith::SelectOp>(l, inside, added, a);
          b.create<linalg::YieldOp>(
              l, ValueRange{convertScalar(b, l, r, acc, false, false)});
        }).getResult(0);
    rewriter.replaceOp(op, acc == storage ? sum
                                          : buildElementwise(
                                                rewriter, loc, {sum}, type,
                                                [](OpBuilder &, Location,
                                                   ValueRange a) {
                                                  return a[0];
                                                }));
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
    if (type.isDynamicDim(axis))
      return notLowerable(op, "depth is not a constant");
    int64_t depth = type.getDimSize(axis);
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
    sizes.insert(sizes.begin() + axis, rewriter.getIndexAttr(depth));
    bool indexUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getIndices()));
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, loc, type, sizes)},
        SmallVector<AffineMap>{
            AffineMap::get(rank, 0, indexExprs, rewriter.getContext()),
            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value idx = convertScalar(b, l, args[0], b.getI64Type(),
                                    indexUnsigned, false);
          Value d = constantScalar(b, l, b.getI64Type(), depth);
          Value isNeg = b.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::slt, idx,
              constantScalar(b, l, b.getI64Type(), 0));
          idx = b.create<arith::SelectOp>(
              l, isNeg, b.create<arith::AddIOp>(l, idx, d), idx);
          Value position = b.create<arith::IndexCastOp>(
              l, b.getI64Type(), b.create<linalg::IndexOp>(l, axis));
          Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                              idx, position);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, hit, on, off)});
        }).getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateDataMovementPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns) {
  patterns.add<ReshapeOpLowering, ShapeOnlyReshapeLowering<FlattenOp>,
               ShapeOnlyReshapeLowering<SqueezeOp>,
               ShapeOnlyReshapeLowering<UnsqueezeOp>, ShapeOpLowering,
               SizeOpLowering, TransposeOpLowering, ConcatOpLowering,
               SplitOpLowering, SliceOpLowering, GatherOpLowering,
               GatherElementsOpLowering, ExpandOpLowering, TileOpLowering,
               PadOpLowering, ConstantOfShapeOpLowering, RangeOpLowering,
               DropoutOpLowering, SpaceDepthLowering<DepthToSpaceOp>,
               SpaceDepthLowering<SpaceToDepthOp>, TriluOpLowering,
               EyeLikeOpLowering, CumSumOpLowering, OneHotOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
