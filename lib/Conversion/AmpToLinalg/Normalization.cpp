//===- Normalization.cpp - normalisation ops -> linalg --------------------===//
//
// BatchNormalization (inference), LayerNormalization, InstanceNormalization,
// RMSNormalization, GroupNormalization, LpNormalization,
// MeanVarianceNormalization and LRN: linalg reductions for the statistics
// and elementwise generics for the rest.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::amp::lowering {

namespace {

/// Reshapes a per-channel [C] tensor to [C, 1, ..., 1] for broadcasting
/// against an N, C, spatial... tensor of rank `rank`.
Value perChannel(OpBuilder &b, Location loc, Value v, int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(std::max<int64_t>(rank - 1, 1), 1);
  shape[0] = type.getDimSize(0);
  return reshapeTensor(b, loc, v,
                       RankedTensorType::get(shape, type.getElementType()),
                       getSizes(b, loc, v));
}

struct BatchNormOpLowering : public OpConversionPattern<BatchNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getTrainingMode() != 0)
      return lowerTraining(op, adaptor, rewriter);
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    double epsilon = op.getEpsilon().convertToDouble();
    SmallVector<Value> inputs = {x};
    for (Value v : {adaptor.getScale(), adaptor.getB(), adaptor.getInputMean(),
                    adaptor.getInputVar()})
      inputs.push_back(perChannel(rewriter, loc, v, rank));
    Value result = buildElementwise(
        rewriter, loc, inputs, convertedResultType(getTypeConverter(), op),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Type t = a[0].getType();
          auto conv = [&](Value v) {
            return convertScalar(b, l, v, t, false, false);
          };
          Value scale = conv(a[1]), bias = conv(a[2]), mean = conv(a[3]),
                var = conv(a[4]);
          Value denom = b.create<math::SqrtOp>(
              l, b.create<arith::AddFOp>(l, var,
                                         constantScalar(b, l, t, epsilon)));
          Value norm = b.create<arith::DivFOp>(
              l, b.create<arith::SubFOp>(l, a[0], mean), denom);
          return b.create<arith::AddFOp>(
              l, b.create<arith::MulFOp>(l, norm, scale), bias);
        });
    SmallVector<Value> results = {result};
    for (size_t i = 1; i < op->getNumResults(); ++i)
      results.push_back(Value());
    for (size_t i = 1; i < op->getNumResults(); ++i)
      if (!op->getResult(i).use_empty())
        return notLowerable(op, "running statistics outputs are used");
    rewriter.replaceOp(op, results);
    return success();
  }

  /// Training mode: batch statistics (population variance, fp32 for
  /// low-precision inputs); the running statistics follow ONNX:
  /// running = input * momentum + batch * (1 - momentum).
  LogicalResult lowerTraining(BatchNormalizationOp op, OpAdaptor adaptor,
                              ConversionPatternRewriter &rewriter) const;
};

/// Normalises `x` over `axes` in `compute` precision: returns (x - mean),
/// mean and 1/sqrt(var + eps) (the latter two with kept dimensions).
struct Moments {
  Value centered, mean, invStdDev, variance;
};
Moments buildMoments(OpBuilder &b, Location loc, Value x,
                     ArrayRef<int64_t> axes, Type compute, double epsilon,
                     bool rms = false) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  auto add = [](OpBuilder &nb, Location l, Value v, Value a) -> Value {
    return nb.create<arith::AddFOp>(l, v, a);
  };
  Value count = countOver(b, loc, x, axes, compute);
  Value zero = constantScalar(b, loc, compute, 0);
  Value centered = convertTensor(b, loc, x, compute);
  Value meanKept;
  if (!rms) {
    Value sum = buildReduction(b, loc, x, axes, compute, zero, add);
    Value mean =
        buildElementwise(b, loc, {sum}, withElementType(sum, compute),
                         [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           return nb.create<arith::DivFOp>(l, a[0], count);
                         });
    meanKept = keepDims(b, loc, mean, rank, axes);
    centered = buildElementwise(
        b, loc, {x, meanKept}, withElementType(x, compute),
        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
          return nb.create<arith::SubFOp>(
              l, convertScalar(nb, l, a[0], a[1].getType(), false, false),
              a[1]);
        });
  }
  Value squares =
      buildReduction(b, loc, centered, axes, compute, zero, add,
                     [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       return nb.create<arith::MulFOp>(l, a[0], a[0]);
                     });
  Value variance = buildElementwise(
      b, loc, {squares}, withElementType(squares, compute),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return nb.create<arith::DivFOp>(l, a[0], count);
      });
  Value inv = buildElementwise(
      b, loc, {variance}, withElementType(squares, compute),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value eps = constantScalar(nb, l, compute, epsilon);
        Value root =
            nb.create<math::SqrtOp>(l, nb.create<arith::AddFOp>(l, a[0], eps));
        return nb.create<arith::DivFOp>(l, constantScalar(nb, l, compute, 1),
                                        root);
      });
  return {centered, meanKept, keepDims(b, loc, inv, rank, axes), variance};
}

LogicalResult BatchNormOpLowering::lowerTraining(
    BatchNormalizationOp op, OpAdaptor adaptor,
    ConversionPatternRewriter &rewriter) const {
  Location loc = op.getLoc();
  Value x = adaptor.getX();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t rank = xType.getRank();
  SmallVector<int64_t> axes{0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  Type storage = xType.getElementType();
  Type compute = isLowPrecisionFloat(storage) ? rewriter.getF32Type() : storage;
  Moments m = buildMoments(rewriter, loc, x, axes, compute,
                           op.getEpsilon().convertToDouble());
  Value scale = perChannel(rewriter, loc, adaptor.getScale(), rank);
  Value bias = perChannel(rewriter, loc, adaptor.getB(), rank);
  Value y = buildElementwise(
      rewriter, loc, {m.centered, m.invStdDev, scale, bias},
      convertedResultType(getTypeConverter(), op, 0),
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Type t = a[0].getType();
        auto conv = [&](Value v) {
          return convertScalar(b, l, v, t, false, false);
        };
        Value norm = b.create<arith::MulFOp>(l, a[0], conv(a[1]));
        return b.create<arith::AddFOp>(
            l, b.create<arith::MulFOp>(l, norm, conv(a[2])), conv(a[3]));
      });
  SmallVector<Value> results{y};
  double momentum = op.getMomentum().convertToDouble();
  Value batchStats[2] = {m.mean, m.variance};
  Value running[2] = {adaptor.getInputMean(), adaptor.getInputVar()};
  for (size_t i = 1; i < op->getNumResults(); ++i) {
    auto type = convertedResultType(getTypeConverter(), op, i);
    // The batch statistic as (C).
    Value stat = batchStats[i - 1];
    auto statType = RankedTensorType::get({type.getDimSize(0)}, compute);
    if (stat.getType() != statType)
      stat = reshapeTensor(rewriter, loc, stat, statType,
                           getSizes(rewriter, loc, running[i - 1]));
    results.push_back(buildElementwise(
        rewriter, loc, {running[i - 1], stat}, type,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Type t = a[1].getType();
          Value old = convertScalar(b, l, a[0], t, false, false);
          return b.create<arith::AddFOp>(
              l,
              b.create<arith::MulFOp>(l, old,
                                      constantScalar(b, l, t, momentum)),
              b.create<arith::MulFOp>(
                  l, a[1], constantScalar(b, l, t, 1.0 - momentum)));
        }));
  }
  rewriter.replaceOp(op, results);
  return success();
}

struct LayerNormOpLowering : public OpConversionPattern<LayerNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    SmallVector<int64_t> axes;
    for (int64_t i = axis; i < rank; ++i)
      axes.push_back(i);
    // stash_type = 1 (the default) computes in fp32; f64 stays f64.
    Type storage = xType.getElementType();
    Type compute = storage.isF64() ? storage : rewriter.getF32Type();
    if (op.getStashType() != 1 && !accumulatesInF32(op) &&
        isLowPrecisionFloat(storage))
      compute = storage;
    Type math = getComputeType(compute);
    Moments m = buildMoments(rewriter, loc, x, axes, compute,
                             op.getEpsilon().convertToDouble());
    SmallVector<Value> inputs = {m.centered, m.invStdDev, adaptor.getScale()};
    if (!isNone(adaptor.getB()))
      inputs.push_back(adaptor.getB());
    Value y = buildElementwise(
        rewriter, loc, inputs, convertedResultType(getTypeConverter(), op, 0),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          auto conv = [&](Value v) {
            return convertScalar(b, l, v, math, false, false);
          };
          Value r = b.create<arith::MulFOp>(
              l, b.create<arith::MulFOp>(l, conv(a[0]), conv(a[1])),
              conv(a[2]));
          if (a.size() > 3)
            r = b.create<arith::AddFOp>(l, r, conv(a[3]));
          return r;
        });
    SmallVector<Value> results = {y};
    results.push_back(
        op.getMean().use_empty()
            ? Value()
            : convertTensor(rewriter, loc, m.mean,
                            convertedResultType(getTypeConverter(), op, 1)
                                .getElementType()));
    results.push_back(
        op.getInvStdDev().use_empty()
            ? Value()
            : convertTensor(rewriter, loc, m.invStdDev,
                            convertedResultType(getTypeConverter(), op, 2)
                                .getElementType()));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct InstanceNormOpLowering
    : public OpConversionPattern<InstanceNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(InstanceNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    SmallVector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i)
      axes.push_back(i);
    Type storage = elementTypeOf(x);
    Type compute = storage.isF64() ? storage : rewriter.getF32Type();
    Moments m = buildMoments(rewriter, loc, x, axes, compute,
                             op.getEpsilon().convertToDouble());
    Value result = buildElementwise(
        rewriter, loc,
        {m.centered, m.invStdDev,
         perChannel(rewriter, loc, adaptor.getScale(), rank),
         perChannel(rewriter, loc, adaptor.getB(), rank)},
        convertedResultType(getTypeConverter(), op),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          auto conv = [&](Value v) {
            return convertScalar(b, l, v, compute, false, false);
          };
          return b.create<arith::AddFOp>(
              l,
              b.create<arith::MulFOp>(l, b.create<arith::MulFOp>(l, a[0], a[1]),
                                      conv(a[2])),
              conv(a[3]));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct RMSNormOpLowering : public OpConversionPattern<RMSNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RMSNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    SmallVector<int64_t> axes;
    for (int64_t i = axis; i < rank; ++i)
      axes.push_back(i);
    Type storage = elementTypeOf(x);
    Type compute = storage.isF64() ? storage : rewriter.getF32Type();
    Moments m = buildMoments(rewriter, loc, x, axes, compute,
                             op.getEpsilon().convertToDouble(), /*rms=*/true);
    Value result = buildElementwise(
        rewriter, loc, {m.centered, m.invStdDev, adaptor.getScale()},
        convertedResultType(getTypeConverter(), op),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return b.create<arith::MulFOp>(
              l, b.create<arith::MulFOp>(l, a[0], a[1]),
              convertScalar(b, l, a[2], compute, false, false));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LpNormalizationOpLowering
    : public OpConversionPattern<LpNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LpNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    int64_t p = op.getP();
    if (p != 1 && p != 2)
      return notLowerable(op, "p other than 1 or 2");
    Type storage = elementTypeOf(x);
    Type acc = accumulatorType(op, storage);
    Value norm = buildReduction(
        rewriter, loc, x, {axis}, acc, constantScalar(rewriter, loc, acc, 0),
        [](OpBuilder &b, Location l, Value v, Value a) -> Value {
          return b.create<arith::AddFOp>(l, v, a);
        },
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          if (p == 1)
            return b.create<math::AbsFOp>(l, v[0]);
          return b.create<arith::MulFOp>(l, v[0], v[0]);
        });
    Value kept = keepDims(rewriter, loc, norm, rank, {axis});
    Value result = buildElementwise(
        rewriter, loc, {x, kept}, convertedResultType(getTypeConverter(), op),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value n = convertScalar(b, l, a[1], a[0].getType(), false, false);
          if (p == 2)
            n = b.create<math::SqrtOp>(l, n);
          // A zero norm gives 0, not NaN.
          Value zero = constantScalar(b, l, n.getType(), 0);
          Value isZero =
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, n, zero);
          return b.create<arith::SelectOp>(l, isZero, zero,
                                           b.create<arith::DivFOp>(l, a[0], n));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MeanVarianceNormalizationOpLowering
    : public OpConversionPattern<MeanVarianceNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MeanVarianceNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    SmallVector<int64_t> axes;
    for (int64_t a : op.getAxes())
      axes.push_back(normalizeAxis(a, rank));
    llvm::sort(axes);
    Type storage = elementTypeOf(x);
    Type compute = storage.isF64() ? storage : rewriter.getF32Type();
    // The ONNX function body adds 1e-9 under the square root.
    Moments m = buildMoments(rewriter, loc, x, axes, compute, 1e-9);
    Value result =
        buildElementwise(rewriter, loc, {m.centered, m.invStdDev},
                         convertedResultType(getTypeConverter(), op),
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           return b.create<arith::MulFOp>(l, a[0], a[1]);
                         });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GroupNormalizationOpLowering
    : public OpConversionPattern<GroupNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GroupNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    int64_t groups = op.getNumGroups();
    int64_t channels = xType.getDimSize(1);
    if (ShapedType::isDynamic(channels))
      return notLowerable(op, "a dynamic channel count");
    // [N, C, s...] -> [N, G, C/G * s...]
    int64_t inner = channels / groups;
    for (int64_t i = 2; i < rank; ++i) {
      if (xType.isDynamicDim(i))
        return notLowerable(op, "a dynamic spatial size");
      inner *= xType.getDimSize(i);
    }
    SmallVector<OpFoldResult> sizes = {
        rewriter.create<tensor::DimOp>(loc, x, 0).getResult(),
        rewriter.getIndexAttr(groups), rewriter.getIndexAttr(inner)};
    auto groupedType = RankedTensorType::get(
        {xType.getDimSize(0), groups, inner}, xType.getElementType());
    Value grouped = reshapeTensor(rewriter, loc, x, groupedType, sizes);
    Type storage = xType.getElementType();
    Type compute = storage.isF64() ? storage : rewriter.getF32Type();
    Moments m = buildMoments(rewriter, loc, grouped, {2}, compute,
                             op.getEpsilon().convertToDouble());
    Value normalized =
        buildElementwise(rewriter, loc, {m.centered, m.invStdDev},
                         withElementType(m.centered, compute),
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           return b.create<arith::MulFOp>(l, a[0], a[1]);
                         });
    Value back = reshapeTensor(rewriter, loc, normalized, xType.clone(compute),
                               getSizes(rewriter, loc, x));
    // Scale and bias per channel (opset 21) or per group (opset 18).
    auto scaleType = cast<RankedTensorType>(adaptor.getScale().getType());
    Value scale = adaptor.getScale(), bias = adaptor.getBias();
    if (scaleType.getDimSize(0) == groups && groups != channels) {
      auto expand = [&](Value v) {
        auto t = cast<RankedTensorType>(v.getType());
        auto to = RankedTensorType::get({groups, channels / groups},
                                        t.getElementType());
        return buildElementwise(
            rewriter, loc,
            {reshapeTensor(
                rewriter, loc, v,
                RankedTensorType::get({groups, 1}, t.getElementType()), {})},
            to, [](OpBuilder &, Location, ValueRange a) { return a[0]; });
      };
      auto flat = [&](Value v) {
        auto t = cast<RankedTensorType>(v.getType());
        return reshapeTensor(
            rewriter, loc, v,
            RankedTensorType::get({channels}, t.getElementType()), {});
      };
      scale = flat(expand(scale));
      bias = flat(expand(bias));
    }
    Value result = buildElementwise(
        rewriter, loc,
        {back, perChannel(rewriter, loc, scale, rank),
         perChannel(rewriter, loc, bias, rank)},
        convertedResultType(getTypeConverter(), op),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          auto conv = [&](Value v) {
            return convertScalar(b, l, v, a[0].getType(), false, false);
          };
          return b.create<arith::AddFOp>(
              l, b.create<arith::MulFOp>(l, a[0], conv(a[1])), conv(a[2]));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// LRN: x / (bias + alpha / size * sum of squares over a channel window)^beta.
struct LRNOpLowering : public OpConversionPattern<LRNOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LRNOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    int64_t size = op.getSize();
    Type storage = xType.getElementType();
    Type compute = getComputeType(storage);
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    double bias = op.getBias().convertToDouble();
    int64_t before = (size - 1) / 2, after = size - 1 - before;
    Value squares =
        buildElementwise(rewriter, loc, {x}, xType.clone(compute),
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           return b.create<arith::MulFOp>(l, a[0], a[0]);
                         });
    SmallVector<int64_t> low(rank, 0), high(rank, 0);
    low[1] = before;
    high[1] = after;
    Value padded = padTensor(rewriter, loc, squares, low, high,
                             constantScalar(rewriter, loc, compute, 0));
    // out[n, c, s...] = sum_k padded[n, c + k, s...]
    MLIRContext *context = rewriter.getContext();
    int64_t loops = rank + 1;
    SmallVector<AffineExpr> inExprs,
        winExprs = {getAffineDimExpr(rank, context)}, outExprs;
    for (int64_t i = 0; i < rank; ++i) {
      AffineExpr d = getAffineDimExpr(i, context);
      inExprs.push_back(i == 1 ? d + getAffineDimExpr(rank, context) : d);
      outExprs.push_back(d);
    }
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value window = rewriter.create<tensor::EmptyOp>(
        loc, ArrayRef<int64_t>{size}, rewriter.getI1Type());
    Value sums =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{xType.clone(compute)},
                ValueRange{padded, window},
                ValueRange{
                    filledTensor(rewriter, loc, xType.clone(compute),
                                 getSizes(rewriter, loc, x),
                                 constantScalar(rewriter, loc, compute, 0))},
                SmallVector<AffineMap>{
                    AffineMap::get(loops, 0, inExprs, context),
                    AffineMap::get(loops, 0, winExprs, context),
                    AffineMap::get(loops, 0, outExprs, context)},
                iterators,
                [](OpBuilder &b, Location l, ValueRange args) {
                  b.create<linalg::YieldOp>(
                      l,
                      ValueRange{b.create<arith::AddFOp>(l, args[0], args[2])});
                })
            .getResult(0);
    Value result = buildElementwise(
        rewriter, loc, {x, sums}, convertedResultType(getTypeConverter(), op),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value scaled = b.create<arith::AddFOp>(
              l, constantScalar(b, l, t, bias),
              b.create<arith::MulFOp>(l, constantScalar(b, l, t, alpha / size),
                                      a[1]));
          return b.create<arith::DivFOp>(
              l, a[0],
              b.create<math::PowFOp>(l, scaled, constantScalar(b, l, t, beta)));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateNormalizationPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<BatchNormOpLowering, LayerNormOpLowering, InstanceNormOpLowering,
               RMSNormOpLowering, GroupNormalizationOpLowering,
               LpNormalizationOpLowering, MeanVarianceNormalizationOpLowering,
               LRNOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
