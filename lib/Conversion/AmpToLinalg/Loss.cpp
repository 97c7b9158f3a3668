//===- Loss.cpp - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss ---===//

#include "LoweringUtils.h"

namespace mlir::amp::lowering {

namespace {

/// NLL over log-probabilities [N, C, d...] and targets [N, d...]: per
/// element -logp[n, t, d] * w[t] (0 where t == ignore_index), reduced by
/// none, sum or the weighted mean.
Value buildNllLoss(OpBuilder &b, Location loc, Operation *op, Value logProb,
                   Value target, Value weight, std::optional<int64_t> ignore,
                   StringRef reduction, RankedTensorType resultType) {
  auto targetType = cast<RankedTensorType>(target.getType());
  int64_t rank = targetType.getRank();
  Type storage = resultType.getElementType();
  Type acc = isLowPrecisionFloat(storage) ? b.getF32Type() : storage;
  auto accType = targetType.clone(acc);
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, target);
  Value classes = b.create<tensor::DimOp>(loc, logProb, 1);
  if (collectsRuntimeChecks(b)) {
    // Targets equal to ignore_index are not class indices.
    Value checked = target;
    if (ignore)
      checked = buildElementwise(
          b, loc, {target}, targetType,
          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
            Value t = a[0];
            Value isIgnored = nb.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::eq, t,
                constantScalar(nb, l, t.getType(), *ignore));
            return nb.create<arith::SelectOp>(
                l, isIgnored, constantScalar(nb, l, t.getType(), 0), t);
          },
          false, sizes);
    checkIndexRange(b, loc, op, checked, classes, /*allowNegative=*/false,
                    "target");
  }
  // No class at run time: no target is valid (the check fails) and nothing
  // may be read; the losses and weights are zeros then.
  auto build = [&](OpBuilder &b, Location loc) -> SmallVector<Value> {
    auto generic = b.create<linalg::GenericOp>(
        loc, TypeRange{accType, accType}, ValueRange{target},
        ValueRange{emptyTensor(b, loc, accType, sizes),
                   emptyTensor(b, loc, accType, sizes)},
        SmallVector<AffineMap>(3, b.getMultiDimIdentityMap(rank)),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value t = args[0];
          Value zero = constantScalar(nb, l, acc, 0);
          Value ignored = constantScalar(nb, l, nb.getI1Type(), 0);
          if (ignore)
            ignored = nb.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::eq, t,
                constantScalar(nb, l, t.getType(), *ignore));
          // Out-of-range targets are clamped (never read out of bounds) and
          // reported by the check above.
          Value index = nb.create<arith::IndexCastOp>(l, nb.getIndexType(), t);
          Value c0 = nb.create<arith::ConstantIndexOp>(l, 0);
          Value last = nb.create<arith::SubIOp>(
              l, classes, nb.create<arith::ConstantIndexOp>(l, 1));
          index = nb.create<arith::MaxSIOp>(
              l, c0, nb.create<arith::MinSIOp>(l, index, last));
          SmallVector<Value> at = {nb.create<linalg::IndexOp>(l, 0), index};
          for (int64_t i = 1; i < rank; ++i)
            at.push_back(nb.create<linalg::IndexOp>(l, i));
          Value lp = convertScalar(
              nb, l,
              toComputeType(nb, l,
                            nb.create<tensor::ExtractOp>(l, logProb, at)),
              acc, false, false);
          Value w = constantScalar(nb, l, acc, 1);
          if (weight)
            w = convertScalar(nb, l,
                              toComputeType(nb, l,
                                            nb.create<tensor::ExtractOp>(
                                                l, weight, ValueRange{index})),
                              acc, false, false);
          w = nb.create<arith::SelectOp>(l, ignored, zero, w);
          Value loss =
              nb.create<arith::NegFOp>(l, nb.create<arith::MulFOp>(l, lp, w));
          nb.create<linalg::YieldOp>(l, ValueRange{loss, w});
        });
    return SmallVector<Value>(generic.getResults());
  };
  auto zeros = [&](OpBuilder &b, Location loc) -> SmallVector<Value> {
    Value zero = zeroFilled(accType, sizes)(b, loc);
    return {zero, zero};
  };
  SmallVector<Value> perElement =
      guardEmptyAxesN(b, loc, logProb, {1}, build, zeros);
  Value losses = perElement[0], weights = perElement[1];
  if (reduction == "none")
    return convertTensor(b, loc, losses, storage);
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  auto add = [](OpBuilder &nb, Location l, Value x, Value a) -> Value {
    return nb.create<arith::AddFOp>(l, x, a);
  };
  Value zero = constantScalar(b, loc, acc, 0);
  Value total = buildReduction(b, loc, losses, all, acc, zero, add);
  if (reduction == "sum")
    return convertTensor(b, loc, total, storage);
  Value weightSum = buildReduction(b, loc, weights, all, acc, zero, add);
  return buildElementwise(b, loc, {total, weightSum},
                          RankedTensorType::get({}, storage),
                          [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            return nb.create<arith::DivFOp>(l, a[0], a[1]);
                          });
}

struct NllLossOpLowering
    : public OpConversionPattern<NegativeLogLikelihoodLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NegativeLogLikelihoodLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value weight = isNone(adaptor.getWeight()) ? Value() : adaptor.getWeight();
    rewriter.replaceOp(
        op, buildNllLoss(rewriter, op.getLoc(), op, adaptor.getInput(),
                         adaptor.getTarget(), weight, op.getIgnoreIndex(),
                         op.getReduction(),
                         convertedResultType(getTypeConverter(), op)));
    return success();
  }
};

struct SoftmaxCrossEntropyLossOpLowering
    : public OpConversionPattern<SoftmaxCrossEntropyLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxCrossEntropyLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value scores = adaptor.getScores();
    auto scoresType = cast<RankedTensorType>(scores.getType());
    Type storage = scoresType.getElementType();
    Type acc = isLowPrecisionFloat(storage) ? rewriter.getF32Type() : storage;
    Value logProb = buildSoftmax(rewriter, loc, scores, 1, acc,
                                 scoresType.clone(acc), /*isLog=*/true);
    Value weight =
        isNone(adaptor.getWeights()) ? Value() : adaptor.getWeights();
    Value loss = buildNllLoss(rewriter, loc, op, logProb, adaptor.getLabels(),
                              weight, op.getIgnoreIndex(), op.getReduction(),
                              convertedResultType(getTypeConverter(), op, 0));
    Value logProbOut;
    if (!op.getLogProb().use_empty())
      logProbOut = convertTensor(
          rewriter, loc, logProb,
          convertedResultType(getTypeConverter(), op, 1).getElementType());
    rewriter.replaceOp(op, {loss, logProbOut});
    return success();
  }
};

} // namespace

void populateLossPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns) {
  patterns.add<NllLossOpLowering, SoftmaxCrossEntropyLossOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
