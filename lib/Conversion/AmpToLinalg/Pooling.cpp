//===- Pooling.cpp - MaxPool, AveragePool, LpPool, the global pools ------===//
//
// Also MaxUnpool: a zero tensor of the unpooled shape ((in - 1) * stride
// + kernel - pads, per spatial dimension) into which each element of X is
// written at its index in I, flat over that tensor as MaxPool's Indices
// number it (in order: a repeated index keeps the last value, as onnx's
// reference's assignment does); an output_shape larger than the unpooled
// shape (a constant, or values read at run time) pads it with zeros at
// the end of each dimension (onnx's reference and node tests; onnxruntime
// indexes the larger shape instead). An index
// outside the unpooled tensor is a run-time error naming the node
// (clamped meanwhile).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include <limits>

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {

namespace {

/// A sliding-window reduction over the spatial dims of an already padded
/// N, C, spatial... input: out[n, c, o] = combine over k of
/// in[n, c, o * stride + k * dilation].
Value buildWindowReduction(OpBuilder &b, Location loc, Value padded,
                           RankedTensorType outType,
                           ArrayRef<OpFoldResult> outSizes,
                           ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations, Value init,
                           ReduceCombine combine, ScalarBody map = nullptr) {
  MLIRContext *context = b.getContext();
  int64_t spatial = kernel.size();
  int64_t nLoops = 2 + 2 * spatial;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> inExprs = {d(0), d(1)}, winExprs,
                          outExprs = {d(0), d(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(d(2 + i) * strides[i] +
                      d(2 + spatial + i) * dilations[i]);
    winExprs.push_back(d(2 + spatial + i));
    outExprs.push_back(d(2 + i));
  }
  Value window = b.create<tensor::EmptyOp>(loc, kernel, b.getI1Type());
  Value filled = filledTensor(b, loc, outType, outSizes, init);
  SmallVector<utils::IteratorType> iterators(nLoops,
                                             utils::IteratorType::parallel);
  for (int64_t i = 2 + spatial; i < nLoops; ++i)
    iterators[i] = utils::IteratorType::reduction;
  Type acc = outType.getElementType();
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{outType}, ValueRange{padded, window},
          ValueRange{filled},
          SmallVector<AffineMap>{AffineMap::get(nLoops, 0, inExprs, context),
                                 AffineMap::get(nLoops, 0, winExprs, context),
                                 AffineMap::get(nLoops, 0, outExprs, context)},
          iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value x = toComputeType(nb, l, args[0]);
            if (map)
              x = map(nb, l, ValueRange{x});
            Value a = toComputeType(nb, l, args[2]);
            if (x.getType() != a.getType())
              x = convertScalar(nb, l, x, a.getType(), false, false);
            Value r = combine(nb, l, x, a);
            nb.create<linalg::YieldOp>(
                l, ValueRange{convertScalar(nb, l, r, acc, false, false)});
          })
      .getResult(0);
}

/// Shared by MaxPool, AveragePool and LpPool.
struct PoolParams {
  SmallVector<int64_t> kernel, strides, dilations, begin, end;
  /// The explicit (or SAME) end padding, without what ceil mode adds.
  SmallVector<int64_t> explicitEnd;
  SmallVector<OpFoldResult> outSizes;
};

template <typename OpTy>
FailureOr<PoolParams> getPoolParams(OpTy op, Value x,
                                    RankedTensorType resultType, OpBuilder &b) {
  PoolParams p;
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t spatial = xType.getRank() - 2;
  auto window = resolveWindowForLowering(
      op, semantics::WindowAttrs::getPool(op), xType, op.getKernelShape());
  if (failed(window))
    return failure();
  p.kernel = window->kernel;
  p.strides = window->strides;
  p.dilations = window->dilations;
  p.begin = window->padBegin;
  p.explicitEnd = window->padEnd;
  // ceil_mode: pad the end so that the last window fits.
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = xType.getDimSize(i + 2), out = resultType.getDimSize(i + 2);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out)) {
      (void)notLowerable(op, "pooling over a dynamic spatial size");
      return failure();
    }
    p.end.push_back(window->getPadEndCoveringOutput(i, in));
  }
  p.outSizes.push_back(b.create<tensor::DimOp>(op.getLoc(), x, 0).getResult());
  for (int64_t i = 1; i < resultType.getRank(); ++i)
    p.outSizes.push_back(b.getIndexAttr(resultType.getDimSize(i)));
  return p;
}

struct MaxPoolOpLowering : public OpConversionPattern<MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    auto p = getPoolParams(op, x, resultType, rewriter);
    if (failed(p))
      return failure();
    Type storage = resultType.getElementType();
    bool isUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getX()));
    Value lowest = lowestValue(rewriter, loc, storage, isUnsigned);
    Value padded = padSpatial(rewriter, loc, x, p->begin, p->end, lowest);
    bool isFloat = isa<FloatType>(storage);
    Value result = buildWindowReduction(
        rewriter, loc, padded, resultType, p->outSizes, p->kernel, p->strides,
        p->dilations, lowest,
        [&](OpBuilder &b, Location l, Value v, Value a) -> Value {
          if (isFloat)
            return b.create<arith::MaximumFOp>(l, v, a);
          if (isUnsigned)
            return b.create<arith::MaxUIOp>(l, v, a);
          return b.create<arith::MaxSIOp>(l, v, a);
        });
    Value indices;
    if (!op.getIndices().use_empty()) {
      indices = buildIndices(rewriter, loc, op, x, padded, result, *p);
      if (op.getStorageOrder() != 0)
        indices = toColumnMajor(rewriter, loc, indices, x);
    }
    rewriter.replaceOp(op, {result, indices});
    return success();
  }

  /// storage_order = 1: the same elements (the first maximum in row-major
  /// window order, as onnx's reference scans), numbered with the spatial
  /// dimensions in column-major order: (n * C + c) * H * W + h + w * H.
  Value toColumnMajor(OpBuilder &b, Location loc, Value indices,
                      Value x) const {
    auto xType = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> dims(xType.getShape().drop_front(2));
    int64_t plane = 1;
    for (int64_t d : dims)
      plane *= d;
    return buildElementwise(
        b, loc, ValueRange{indices}, cast<RankedTensorType>(indices.getType()),
        [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
          auto c = [&](int64_t v) {
            return nb.create<arith::ConstantIntOp>(l, v, 64);
          };
          Value index = args[0];
          Value channel = nb.create<arith::DivSIOp>(l, index, c(plane));
          Value rest = nb.create<arith::RemSIOp>(l, index, c(plane));
          // Row-major coordinates, last fastest; then the first fastest.
          SmallVector<Value> coords(dims.size());
          for (int64_t i = dims.size() - 1; i >= 0; --i) {
            coords[i] = nb.create<arith::RemSIOp>(l, rest, c(dims[i]));
            rest = nb.create<arith::DivSIOp>(l, rest, c(dims[i]));
          }
          Value column = c(0);
          int64_t stride = 1;
          for (size_t i = 0; i < dims.size(); ++i) {
            column = nb.create<arith::AddIOp>(
                l, column, nb.create<arith::MulIOp>(l, coords[i], c(stride)));
            stride *= dims[i];
          }
          return nb.create<arith::AddIOp>(
              l, nb.create<arith::MulIOp>(l, channel, c(plane)), column);
        });
  }

  /// The flat NCHW index (padding not counted) of the first maximum of each
  /// window, as ONNX defines MaxPool's Indices: the smallest index whose
  /// input equals the window's maximum.
  Value buildIndices(OpBuilder &b, Location loc, MaxPoolOp op, Value x,
                     Value padded, Value maxima, const PoolParams &p) const {
    MLIRContext *context = b.getContext();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t spatial = p.kernel.size(), nLoops = 2 + 2 * spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, context); };
    SmallVector<AffineExpr> inExprs = {d(0), d(1)}, winExprs,
                            outExprs = {d(0), d(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      inExprs.push_back(d(2 + i) * p.strides[i] +
                        d(2 + spatial + i) * p.dilations[i]);
      winExprs.push_back(d(2 + spatial + i));
      outExprs.push_back(d(2 + i));
    }
    auto indexType = RankedTensorType::get(
        cast<RankedTensorType>(maxima.getType()).getShape(), b.getI64Type());
    Value none = b.create<arith::ConstantIntOp>(
        loc, std::numeric_limits<int64_t>::max(), 64);
    Value init = filledTensor(b, loc, indexType, p.outSizes, none);
    Value window = b.create<tensor::EmptyOp>(loc, p.kernel, b.getI1Type());
    SmallVector<utils::IteratorType> iterators(nLoops,
                                               utils::IteratorType::parallel);
    for (int64_t i = 2 + spatial; i < nLoops; ++i)
      iterators[i] = utils::IteratorType::reduction;
    bool isFloat = isa<FloatType>(xType.getElementType());
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{indexType}, ValueRange{padded, window, maxima},
            ValueRange{init},
            SmallVector<AffineMap>{
                AffineMap::get(nLoops, 0, inExprs, context),
                AffineMap::get(nLoops, 0, winExprs, context),
                AffineMap::get(nLoops, 0, outExprs, context),
                AffineMap::get(nLoops, 0, outExprs, context)},
            iterators,
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value equal =
                  isFloat ? nb.create<arith::CmpFOp>(
                                l, arith::CmpFPredicate::OEQ, args[0], args[2])
                                .getResult()
                          : nb.create<arith::CmpIOp>(
                                l, arith::CmpIPredicate::eq, args[0], args[2])
                                .getResult();
              // ((n * C + c) * H + h) * W + w over the unpadded input.
              Value flat = nb.create<linalg::IndexOp>(l, 0);
              auto c = [&](int64_t v) {
                return nb.create<arith::ConstantIndexOp>(l, v);
              };
              Value channels = nb.create<tensor::DimOp>(l, x, 1);
              flat = nb.create<arith::AddIOp>(
                  l, nb.create<arith::MulIOp>(l, flat, channels),
                  nb.create<linalg::IndexOp>(l, 1));
              for (int64_t i = 0; i < spatial; ++i) {
                Value pos = nb.create<arith::AddIOp>(
                    l,
                    nb.create<arith::MulIOp>(
                        l, nb.create<linalg::IndexOp>(l, 2 + i),
                        c(p.strides[i])),
                    nb.create<arith::MulIOp>(
                        l, nb.create<linalg::IndexOp>(l, 2 + spatial + i),
                        c(p.dilations[i])));
                pos = nb.create<arith::SubIOp>(l, pos, c(p.begin[i]));
                flat = nb.create<arith::AddIOp>(
                    l,
                    nb.create<arith::MulIOp>(
                        l, flat, c(xType.getDimSize(2 + i))),
                    pos);
              }
              Value flat64 =
                  nb.create<arith::IndexCastOp>(l, nb.getI64Type(), flat);
              Value candidate =
                  nb.create<arith::SelectOp>(l, equal, flat64, args[3]);
              nb.create<linalg::YieldOp>(
                  l, ValueRange{nb.create<arith::MinSIOp>(l, candidate,
                                                         args[3])});
            })
        .getResult(0);
  }
};

/// Number of window positions of output index `o` (an index value) that
/// fall in [lo, hi) of the unpadded input coordinate system.
Value windowCount(OpBuilder &b, Location loc, Value o, int64_t stride,
                  int64_t dilation, int64_t kernel, int64_t padBegin,
                  int64_t lo, int64_t hi) {
  auto c = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
  // start = o * stride - padBegin; positions start + k * dilation.
  Value start = b.create<arith::SubIOp>(
      loc, b.create<arith::MulIOp>(loc, o, c(stride)), c(padBegin));
  // first k with start + k*d >= lo: ceil((lo - start) / d), at least 0.
  Value first = b.create<arith::CeilDivSIOp>(
      loc, b.create<arith::SubIOp>(loc, c(lo), start), c(dilation));
  first = b.create<arith::MaxSIOp>(loc, first, c(0));
  // last k with start + k*d <= hi - 1: floor((hi - 1 - start) / d).
  Value lastK = b.create<arith::FloorDivSIOp>(
      loc, b.create<arith::SubIOp>(loc, c(hi - 1), start), c(dilation));
  lastK = b.create<arith::MinSIOp>(loc, lastK, c(kernel - 1));
  Value count = b.create<arith::AddIOp>(
      loc, b.create<arith::SubIOp>(loc, lastK, first), c(1));
  return b.create<arith::MaxSIOp>(loc, count, c(0));
}

template <typename OpTy, bool isLp>
struct AvgLpPoolOpLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op);
    auto p = getPoolParams(op, x, resultType, rewriter);
    if (failed(p))
      return failure();
    Type storage = resultType.getElementType();
    Type acc = accumulatorType(op, storage);
    Value zero = constantScalar(rewriter, loc, storage, 0);
    Value padded = padSpatial(rewriter, loc, x, p->begin, p->end, zero);
    double power = 1;
    if constexpr (isLp)
      power = static_cast<double>(op.getP());
    auto accType = resultType.clone(acc);
    Value sum = buildWindowReduction(
        rewriter, loc, padded, accType, p->outSizes, p->kernel, p->strides,
        p->dilations, constantScalar(rewriter, loc, acc, 0),
        [](OpBuilder &b, Location l, Value v, Value a) -> Value {
          return b.create<arith::AddFOp>(l, v, a);
        },
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          if (!isLp)
            return v[0];
          Value absV = b.create<math::AbsFOp>(l, v[0]);
          return b.create<math::PowFOp>(
              l, absV, constantScalar(b, l, absV.getType(), power));
        });
    int64_t spatial = p->kernel.size();
    bool includePad = false;
    if constexpr (!isLp)
      includePad = op.getCountIncludePad() != 0;
    PoolParams params = *p;
    SmallVector<int64_t> inSizes(xType.getShape().drop_front(2));
    // The ceil_mode padding is never counted; explicit pads are when
    // count_include_pad is set.
    Value result =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{resultType}, ValueRange{sum},
                ValueRange{emptyTensor(rewriter, loc, resultType, p->outSizes)},
                SmallVector<AffineMap>(
                    2, rewriter.getMultiDimIdentityMap(resultType.getRank())),
                SmallVector<utils::IteratorType>(resultType.getRank(),
                                                 utils::IteratorType::parallel),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value v = toComputeType(b, l, args[0]);
                  Value r;
                  if (isLp) {
                    r = b.create<math::PowFOp>(
                        l, v, constantScalar(b, l, v.getType(), 1.0 / power));
                  } else {
                    Value count = b.create<arith::ConstantIndexOp>(l, 1);
                    for (int64_t i = 0; i < spatial; ++i) {
                      int64_t lo = includePad ? -params.begin[i] : 0;
                      int64_t hi = includePad
                                       ? inSizes[i] + params.explicitEnd[i]
                                       : inSizes[i];
                      Value o = b.create<linalg::IndexOp>(l, 2 + i);
                      count = b.create<arith::MulIOp>(
                          l, count,
                          windowCount(b, l, o, params.strides[i],
                                      params.dilations[i], params.kernel[i],
                                      params.begin[i], lo, hi));
                    }
                    Value countF = convertScalar(
                        b, l,
                        b.create<arith::IndexCastOp>(l, b.getI64Type(), count),
                        v.getType(), false, false);
                    r = b.create<arith::DivFOp>(l, v, countF);
                  }
                  b.create<linalg::YieldOp>(
                      l, ValueRange{
                             convertScalar(b, l, r, storage, false, false)});
                })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename OpTy>
struct GlobalPoolOpLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    SmallVector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i)
      axes.push_back(i);
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op);
    Type storage = resultType.getElementType();
    constexpr bool isMax = std::is_same_v<OpTy, GlobalMaxPoolOp>;
    constexpr bool isLp = std::is_same_v<OpTy, GlobalLpPoolOp>;
    Type acc = isMax ? storage : accumulatorType(op, storage);
    double power = 2;
    if constexpr (isLp)
      power = static_cast<double>(op.getP());
    Value reduced = buildReduction(
        rewriter, loc, x, axes, acc,
        isMax ? lowestValue(rewriter, loc, acc, false)
              : constantScalar(rewriter, loc, acc, 0),
        [&](OpBuilder &b, Location l, Value v, Value a) -> Value {
          if (isMax)
            return b.create<arith::MaximumFOp>(l, v, a);
          return b.create<arith::AddFOp>(l, v, a);
        },
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          if (!isLp)
            return v[0];
          return b.create<math::PowFOp>(
              l, b.create<math::AbsFOp>(l, v[0]),
              constantScalar(b, l, v[0].getType(), power));
        });
    Value count = countOver(rewriter, loc, x, axes, acc);
    Value result = buildElementwise(
        rewriter, loc, {reduced}, withElementType(reduced, storage),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          if (isMax)
            return a[0];
          if (isLp)
            return b.create<math::PowFOp>(
                l, a[0], constantScalar(b, l, a[0].getType(), 1.0 / power));
          return b.create<arith::DivFOp>(l, a[0], count);
        });
    rewriter.replaceOp(op, keepDims(rewriter, loc, result, rank, axes));
    return success();
  }
};

} // namespace

struct MaxUnpoolOpLowering : public OpConversionPattern<MaxUnpoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxUnpoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Value outputShape = adaptor.getOutputShape();
    if (!resultType.hasStaticShape() && !isa<TensorType>(outputShape.getType()))
      return notLowerable(op, "a dynamic output without output_shape");
    Value x = adaptor.getX(), indices = adaptor.getI();
    auto xType = cast<RankedTensorType>(x.getType());
    auto indexType = cast<RankedTensorType>(indices.getType());
    if (!xType.hasStaticShape() || indexType.getShape() != xType.getShape())
      return notLowerable(op, "X and I of different or dynamic shapes");
    // The unpooled shape, which the indices number.
    SmallVector<int64_t> unpooled = {xType.getDimSize(0), xType.getDimSize(1)};
    ArrayRef<int64_t> kernel = op.getKernelShape();
    int64_t spatial = kernel.size();
    if (xType.getRank() != spatial + 2 || resultType.getRank() != spatial + 2)
      return notLowerable(op, "a kernel_shape that does not match X's rank");
    SmallVector<int64_t> pads(2 * spatial, 0), strides(spatial, 1);
    if (op.getPads())
      pads.assign(op.getPads()->begin(), op.getPads()->end());
    if (op.getStrides())
      strides.assign(op.getStrides()->begin(), op.getStrides()->end());
    for (int64_t i = 0; i < spatial; ++i) {
      unpooled.push_back((xType.getDimSize(i + 2) - 1) * strides[i] +
                         kernel[i] - pads[i] - pads[spatial + i]);
      if (unpooled.back() < 0)
        return notLowerable(op, "an empty unpooled shape");
    }
    // The output's sizes: static, or output_shape's values read at run
    // time; the batch and channels must be X's, the spatial sizes at least
    // the unpooled ones (checked now, or at run time).
    SmallVector<OpFoldResult> outSizes;
    for (int64_t d = 0; d < spatial + 2; ++d) {
      int64_t size = resultType.getDimSize(d);
      bool exact = d < 2;
      if (!ShapedType::isDynamic(size)) {
        if (exact ? size != unpooled[d] : size < unpooled[d])
          return notLowerable(op, exact ? "an output_shape with another batch "
                                          "or channel count"
                                        : "an output_shape smaller than the "
                                          "unpooled shape");
        outSizes.push_back(rewriter.getIndexAttr(size));
        continue;
      }
      Value value = extractIndex(rewriter, loc, outputShape, d);
      Value value64 = rewriter.create<arith::IndexCastOp>(
          loc, rewriter.getI64Type(), value);
      Value need = rewriter.create<arith::ConstantIntOp>(loc, unpooled[d], 64);
      Value bad = rewriter.create<arith::CmpIOp>(
          loc, exact ? arith::CmpIPredicate::ne : arith::CmpIPredicate::slt,
          value64, need);
      emitRuntimeCheck(
          rewriter, loc, bad, value64, need,
          describeNode(op) + ": output_shape[" + Twine(d) +
              "] is {value} but " +
              (exact ? "X's is {bound}" : "the unpooled size is {bound}"));
      // Meanwhile at least the unpooled size, so the write stays inside.
      value = rewriter.create<arith::MaxSIOp>(
          loc, value,
          rewriter.create<arith::ConstantIndexOp>(loc, unpooled[d]));
      outSizes.push_back(value);
    }
    auto unpooledType =
        RankedTensorType::get(unpooled, resultType.getElementType());
    int64_t count = xType.getNumElements();
    int64_t total = unpooledType.getNumElements();
    Value flatX = reshapeTensor(
        rewriter, loc, x,
        RankedTensorType::get({count}, xType.getElementType()), {});
    Value flatI = reshapeTensor(
        rewriter, loc, indices,
        RankedTensorType::get({count}, indexType.getElementType()), {});
    auto flatType = RankedTensorType::get({total}, resultType.getElementType());
    Value zeros = filledTensor(
        rewriter, loc, flatType, {},
        constantScalar(rewriter, loc, resultType.getElementType(), 0));
    Value bound = rewriter.create<arith::ConstantIndexOp>(loc, total);
    Value result = zeros;
    if (count > 0 && total > 0) {
      checkIndexRange(rewriter, loc, op, flatI, bound, /*allowNegative=*/false,
                      "index");
      Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
      Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
      Value end = rewriter.create<arith::ConstantIndexOp>(loc, count);
      auto loop = rewriter.create<scf::ForOp>(
          loc, zero, end, one, ValueRange{zeros},
          [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
            Value target = clampIndex(
                b, l, toIndex(b, l, b.create<tensor::ExtractOp>(l, flatI, i)),
                bound);
            Value v = b.create<tensor::ExtractOp>(l, flatX, i);
            b.create<scf::YieldOp>(l, ValueRange{b.create<tensor::InsertOp>(
                                          l, v, carried[0], target)});
          });
      result = loop.getResult(0);
    }
    result = reshapeTensor(rewriter, loc, result, unpooledType, {});
    if (unpooledType != resultType) {
      // The unpooled tensor in the corner of a zero output.
      Value out = filledTensor(
          rewriter, loc, resultType, outSizes,
          constantScalar(rewriter, loc, resultType.getElementType(), 0));
      int64_t rank = spatial + 2;
      SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0)),
          ones(rank, rewriter.getIndexAttr(1)), sizes;
      for (int64_t d : unpooled)
        sizes.push_back(rewriter.getIndexAttr(d));
      result = rewriter.create<tensor::InsertSliceOp>(loc, result, out, zeros,
                                                      sizes, ones);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

void populatePoolingPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<MaxPoolOpLowering, MaxUnpoolOpLowering,
               AvgLpPoolOpLowering<AveragePoolOp, false>,
               AvgLpPoolOpLowering<LpPoolOp, true>,
               GlobalPoolOpLowering<GlobalAveragePoolOp>,
               GlobalPoolOpLowering<GlobalMaxPoolOp>,
               GlobalPoolOpLowering<GlobalLpPoolOp>>(converter,
                                                     patterns.getContext());
}

} // namespace mlir::amp::lowering
