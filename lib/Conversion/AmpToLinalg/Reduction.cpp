//===- Reduction.cpp - Reduce*, ArgMax/ArgMin and CumSum ------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {

Value buildArgReduce(OpBuilder &b, Location loc, Value input, int64_t axis,
                     bool max, bool last, bool isUnsigned) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  Type compute = getComputeType(inputType.getElementType());
  ReductionShape reduction = getReductionShape(b, loc, input, {axis});
  ArrayRef<int64_t> shape = reduction.shape;
  ArrayRef<OpFoldResult> sizes = reduction.sizes;
  AffineMap outMap = reduction.outMap;
  SmallVector<utils::IteratorType> iterators = reduction.iterators;
  auto valueType = RankedTensorType::get(shape, compute);
  auto indexType = RankedTensorType::get(shape, b.getI64Type());
  Value values = filledTensor(b, loc, valueType, sizes,
                              max ? lowestValue(b, loc, compute, isUnsigned)
                                  : highestValue(b, loc, compute, isUnsigned));
  Value indices = filledTensor(b, loc, indexType, sizes,
                               constantScalar(b, loc, b.getI64Type(), -1));
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{valueType, indexType}, ValueRange{input},
      ValueRange{values, indices},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank), outMap, outMap},
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value x = toComputeType(nb, l, args[0]);
        Value best = args[1], bestIndex = args[2];
        Value index = nb.create<arith::IndexCastOp>(
            l, nb.getI64Type(), nb.create<linalg::IndexOp>(l, axis));
        Value better;
        if (isa<FloatType>(compute)) {
          auto strict =
              max ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
          auto loose =
              max ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE;
          better = nb.create<arith::CmpFOp>(l, last ? loose : strict, x, best);
        } else {
          arith::CmpIPredicate strict, loose;
          if (isUnsigned) {
            strict =
                max ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::ult;
            loose = max ? arith::CmpIPredicate::uge : arith::CmpIPredicate::ule;
          } else {
            strict =
                max ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt;
            loose = max ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle;
          }
          better = nb.create<arith::CmpIOp>(l, last ? loose : strict, x, best);
        }
        // The first element always wins over the initial value.
        Value first =
            nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, bestIndex,
                                     constantScalar(nb, l, nb.getI64Type(), 0));
        better = nb.create<arith::OrIOp>(l, better, first);
        nb.create<linalg::YieldOp>(
            l, ValueRange{
                   nb.create<arith::SelectOp>(l, better, x, best),
                   nb.create<arith::SelectOp>(l, better, index, bestIndex)});
      });
  return generic.getResult(1);
}

namespace {

/// Whether a Reduce* op's axes are known when it is lowered: absent, a
/// constant, or a tensor of static length 0 (an empty list whatever its
/// values). Other axes are read at run time.
bool hasCompileTimeAxes(Value axesOperand) {
  if (isNone(axesOperand) || succeeded(getConstantInts(axesOperand)))
    return true;
  auto type = dyn_cast<RankedTensorType>(axesOperand.getType());
  return type && type.getRank() == 1 && type.getDimSize(0) == 0;
}

/// The compile-time axes of a reduction op (op-semantics helper);
/// `std::nullopt` for a no-op reduction.
FailureOr<std::optional<SmallVector<int64_t>>>
getReduceAxes(Operation *op, Value axesOperand, int64_t rank,
              const semantics::ReduceAttrs &attrs) {
  SmallVector<int64_t> axes;
  if (!isNone(axesOperand)) {
    FailureOr<SmallVector<int64_t>> values = getConstantInts(axesOperand);
    if (succeeded(values))
      axes = *values;
  }
  return semantics::resolveReduceAxes(
      rank, axes, attrs,
      [&](const Twine &message) { (void)op->emitError(message); });
}

/// Which dimensions of a rank-`rank` input the run-time `axes` (a 1-D
/// integer tensor) name, as i1 scalars: an axis is counted modulo the
/// rank's sign convention (negative axes count from the back). An empty
/// list names every dimension unless `noopWithEmptyAxes`.
SmallVector<Value> getRuntimeAxisFlags(OpBuilder &b, Location loc, Value axes,
                                       int64_t rank, bool noopWithEmptyAxes) {
  MLIRContext *context = b.getContext();
  auto flagsType = RankedTensorType::get({rank}, b.getI1Type());
  Value flags = filledTensor(b, loc, flagsType, {},
                             constantScalar(b, loc, b.getI1Type(), 0));
  // flags[i] |= (axes[j] + (axes[j] < 0 ? rank : 0)) == i over (i, j).
  flags =
      b.create<linalg::GenericOp>(
           loc, TypeRange{flagsType}, ValueRange{axes}, ValueRange{flags},
           SmallVector<AffineMap>{
               AffineMap::get(2, 0, {getAffineDimExpr(1, context)}, context),
               AffineMap::get(2, 0, {getAffineDimExpr(0, context)}, context)},
           SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                            utils::IteratorType::reduction},
           [&](OpBuilder &nb, Location l, ValueRange args) {
             Value axis = nb.create<arith::IndexCastOp>(l, nb.getIndexType(),
                                                        args[0]);
             axis = wrapIndex(nb, l, axis,
                              nb.create<arith::ConstantIndexOp>(l, rank));
             Value named = nb.create<arith::CmpIOp>(
                 l, arith::CmpIPredicate::eq, axis,
                 nb.create<linalg::IndexOp>(l, 0));
             nb.create<linalg::YieldOp>(
                 l, ValueRange{nb.create<arith::OrIOp>(l, args[1], named)});
           })
          .getResult(0);
  Value all;
  if (!noopWithEmptyAxes)
    all = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                  b.create<tensor::DimOp>(loc, axes, 0),
                                  b.create<arith::ConstantIndexOp>(loc, 0));
  SmallVector<Value> result;
  for (int64_t i = 0; i < rank; ++i) {
    Value flag = b.create<tensor::ExtractOp>(
        loc, flags, ValueRange{b.create<arith::ConstantIndexOp>(loc, i)});
    result.push_back(all ? b.create<arith::OrIOp>(loc, flag, all).getResult()
                         : flag);
  }
  return result;
}

enum class ReduceKind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

template <typename OpTy, ReduceKind kind>
struct ReduceOpLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getData();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    semantics::ReduceAttrs attrs = semantics::ReduceAttrs::get(op);
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op);
    Type storage = inputType.getElementType();
    // Booleans order as unsigned (true > false): Max is any, Min is all.
    bool isUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getData())) ||
                      storage.isInteger(1);
    Type acc = accumulatorType(op, storage);
    bool isFloat = isa<FloatType>(storage);
    Value init;
    switch (kind) {
    case ReduceKind::Max:
      init = lowestValue(rewriter, loc, acc, isUnsigned);
      break;
    case ReduceKind::Min:
      init = highestValue(rewriter, loc, acc, isUnsigned);
      break;
    case ReduceKind::Prod:
      init = constantScalar(rewriter, loc, acc, 1);
      break;
    default:
      init = constantScalar(rewriter, loc, acc, 0);
    }
    auto combine = [&](OpBuilder &b, Location l, Value x, Value a) -> Value {
      switch (kind) {
      case ReduceKind::Max:
        if (isFloat)
          return b.create<arith::MaximumFOp>(l, x, a);
        return isUnsigned ? b.create<arith::MaxUIOp>(l, x, a).getResult()
                          : b.create<arith::MaxSIOp>(l, x, a).getResult();
      case ReduceKind::Min:
        if (isFloat)
          return b.create<arith::MinimumFOp>(l, x, a);
        return isUnsigned ? b.create<arith::MinUIOp>(l, x, a).getResult()
                          : b.create<arith::MinSIOp>(l, x, a).getResult();
      case ReduceKind::Prod:
        if (isFloat)
          return b.create<arith::MulFOp>(l, x, a);
        return b.create<arith::MulIOp>(l, x, a);
      default:
        if (isFloat)
          return b.create<arith::AddFOp>(l, x, a);
        return b.create<arith::AddIOp>(l, x, a);
      }
    };
    auto map = [&](OpBuilder &b, Location l, ValueRange args) -> Value {
      Value x = args[0];
      switch (kind) {
      case ReduceKind::L1:
        if (isFloat)
          return b.create<math::AbsFOp>(l, x);
        return isUnsigned ? x : signedIntAbs(b, l, x);
      case ReduceKind::L2:
      case ReduceKind::SumSquare:
        if (isFloat)
          return b.create<arith::MulFOp>(l, x, x);
        return b.create<arith::MulIOp>(l, x, x);
      case ReduceKind::LogSumExp:
        return b.create<math::ExpOp>(l, x);
      default:
        return x;
      }
    };
    // The final scalar step (`count`: the number of elements reduced, for
    // Mean), rounded once to the result type.
    auto finish = [&](Value reduced, Value count) {
      auto outType = withElementType(reduced, resultType.getElementType());
      return buildElementwise(
          rewriter, loc, {reduced}, outType,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value x = args[0];
            switch (kind) {
            case ReduceKind::Mean:
              if (isFloat)
                return b.create<arith::DivFOp>(l, x, count);
              return isUnsigned
                         ? b.create<arith::DivUIOp>(
                                l, x,
                                convertScalar(b, l, count, x.getType(), false,
                                              true))
                               .getResult()
                         : b.create<arith::DivSIOp>(
                                l, x,
                                convertScalar(b, l, count, x.getType(), false,
                                              false))
                               .getResult();
            case ReduceKind::L2:
              if (isFloat)
                return b.create<math::SqrtOp>(l, x);
              return convertScalar(
                  b, l,
                  b.create<math::SqrtOp>(
                      l, convertScalar(b, l, x, b.getF64Type(), isUnsigned,
                                       false)),
                  x.getType(), false, isUnsigned);
            case ReduceKind::LogSum:
            case ReduceKind::LogSumExp:
              return b.create<math::LogOp>(l, x);
            default:
              return x;
            }
          },
          isUnsigned);
    };

    if (!hasCompileTimeAxes(op.getAxes())) {
      checkIndexRange(rewriter, loc, op, adaptor.getAxes(),
                      rewriter.create<arith::ConstantIndexOp>(loc, rank),
                      /*allowNegative=*/true, "axis");
      rewriter.replaceOp(op, reduceOverRuntimeAxes(rewriter, loc, input,
                                                   adaptor.getAxes(), attrs,
                                                   resultType, acc, isUnsigned,
                                                   init, combine, map, finish));
      return success();
    }
    auto axes = getReduceAxes(op, op.getAxes(), rank, attrs);
    if (failed(axes))
      return failure();
    if (!*axes) {
      // noop_with_empty_axes: the input, converted like the reduction's
      // elementwise part.
      rewriter.replaceOp(
          op, convertTensor(rewriter, loc, input, resultType.getElementType()));
      return success();
    }
    ArrayRef<int64_t> reduceAxes = **axes;
    Value reduced = buildReduction(rewriter, loc, input, reduceAxes, acc, init,
                                   combine, map);
    Value count;
    if (kind == ReduceKind::Mean)
      count = countOver(rewriter, loc, input, reduceAxes, acc);
    Value result = finish(reduced, count);
    if (op.getKeepdims() != 0)
      result = keepDims(rewriter, loc, result, rank, reduceAxes);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  /// A reduction whose axes are read at run time. The rank is static, so
  /// the input (after the elementwise `map`) is reduced one dimension at a
  /// time, each reduction under an scf.if on whether the axes name that
  /// dimension; the dimensions stay (size 1) until the end, where
  /// keepdims = 0 reshapes them away with sizes computed from the flags.
  /// Composing per-dimension reductions gives the same result as one
  /// reduction up to the order of the accumulation.
  template <typename Combine, typename Map, typename Finish>
  static Value reduceOverRuntimeAxes(OpBuilder &b, Location loc, Value input,
                                     Value axes,
                                     const semantics::ReduceAttrs &attrs,
                                     RankedTensorType resultType, Type acc,
                                     bool isUnsigned, Value init,
                                     Combine &combine, Map &map,
                                     Finish &finish) {
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    SmallVector<Value> flags =
        getRuntimeAxisFlags(b, loc, axes, rank, attrs.noopWithEmptyAxes);
    auto dynamicType =
        RankedTensorType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic), acc);
    Value current =
        buildElementwise(b, loc, {input}, inputType.clone(acc), map, isUnsigned);
    current = b.create<tensor::CastOp>(loc, dynamicType, current);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    Value count = one;
    for (int64_t i = 0; i < rank; ++i) {
      Value dim = b.create<tensor::DimOp>(loc, input, i);
      count = b.create<arith::MulIOp>(
          loc, count, b.create<arith::SelectOp>(loc, flags[i], dim, one));
      Value source = current;
      auto branch = b.create<scf::IfOp>(
          loc, flags[i],
          [&](OpBuilder &then, Location l) {
            Value reduced =
                buildReduction(then, l, source, {i}, acc, init, combine);
            reduced = keepDims(then, l, reduced, rank, {i});
            then.create<scf::YieldOp>(
                l, ValueRange{
                       then.create<tensor::CastOp>(l, dynamicType, reduced)});
          },
          [&](OpBuilder &otherwise, Location l) {
            otherwise.create<scf::YieldOp>(l, ValueRange{source});
          });
      current = branch.getResult(0);
    }
    Value countValue = convertScalar(
        b, loc, b.create<arith::IndexCastOp>(loc, b.getI64Type(), count),
        getComputeType(acc), false, false);
    Value result = finish(current, countValue);
    if (attrs.keepDims) {
      if (attrs.noopWithEmptyAxes) {
        // An empty list at run time: the input, converted.
        Value empty = b.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::eq,
            b.create<tensor::DimOp>(loc, axes, 0),
            b.create<arith::ConstantIndexOp>(loc, 0));
        auto resultDynamic = cast<RankedTensorType>(result.getType());
        result =
            b.create<scf::IfOp>(
                 loc, empty,
                 [&](OpBuilder &then, Location l) {
                   Value same = convertTensor(then, l, input,
                                              resultType.getElementType());
                   then.create<scf::YieldOp>(
                       l, ValueRange{then.create<tensor::CastOp>(
                              l, resultDynamic, same)});
                 },
                 [&](OpBuilder &otherwise, Location l) {
                   otherwise.create<scf::YieldOp>(l, ValueRange{result});
                 })
                .getResult(0);
      }
      return b.create<tensor::CastOp>(loc, resultType, result);
    }
    // keepdims = 0: output dimension k is the k-th dimension not named.
    int64_t outRank = resultType.getRank();
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    SmallVector<OpFoldResult> sizes(outRank, b.getIndexAttr(0));
    SmallVector<Value> outSizes(outRank, zero);
    Value position = zero;
    for (int64_t i = 0; i < rank; ++i) {
      Value kept = b.create<arith::XOrIOp>(
          loc, flags[i], constantScalar(b, loc, b.getI1Type(), 1));
      Value dim = b.create<tensor::DimOp>(loc, input, i);
      for (int64_t k = 0; k < outRank; ++k) {
        Value here = b.create<arith::AndIOp>(
            loc, kept,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, position,
                                    b.create<arith::ConstantIndexOp>(loc, k)));
        outSizes[k] = b.create<arith::SelectOp>(loc, here, dim, outSizes[k]);
      }
      position = b.create<arith::AddIOp>(
          loc, position, b.create<arith::SelectOp>(loc, kept, one, zero));
    }
    for (int64_t k = 0; k < outRank; ++k)
      sizes[k] = outSizes[k];
    return reshapeTensor(b, loc, result, resultType, sizes);
  }
};

/// ArgMax / ArgMin along one axis.
template <typename OpTy, bool isMax>
struct ArgReduceOpLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getData();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    bool last = op.getSelectLastIndex() != 0;
    bool isUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getData()));
    Value result =
        buildArgReduce(rewriter, loc, input, axis, isMax, last, isUnsigned);
    if (op.getKeepdims() != 0)
      result = keepDims(rewriter, loc, result, rank, {axis});
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Inclusive or exclusive, forward or reverse cumulative sum of `x` along
/// `axis`, accumulated in `acc`, as `type`.
/// out[.., i, ..] = sum over j of [j in prefix(i)] x[.., j, ..], with an
/// extra reduction loop j (the cumulative axis is small in practice).
static Value buildCumSum(OpBuilder &rewriter, Location loc, Value x,
                         int64_t axis, bool exclusive, bool reverse,
                         RankedTensorType type, Type acc) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t rank = xType.getRank();
  Type storage = type.getElementType();
  MLIRContext *context = rewriter.getContext();
  SmallVector<AffineExpr> inExprs;
  for (int64_t i = 0; i < rank; ++i)
    inExprs.push_back(i == axis ? getAffineDimExpr(rank, context)
                                : getAffineDimExpr(i, context));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto accType = type.clone(acc);
  Value init = filledTensor(rewriter, loc, accType, getSizes(rewriter, loc, x),
                            constantScalar(rewriter, loc, acc, 0));
  Value sum =
      rewriter
          .create<linalg::GenericOp>(
              loc, TypeRange{accType}, ValueRange{x}, ValueRange{init},
              SmallVector<AffineMap>{
                  AffineMap::get(rank + 1, 0, inExprs, context),
                  rewriter.getMultiDimIdentityMap(rank + 1).getMajorSubMap(
                      rank)},
              iterators,
              [&](OpBuilder &b, Location l, ValueRange args) {
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
                Value added =
                    isa<FloatType>(a.getType())
                        ? b.create<arith::AddFOp>(l, a, v).getResult()
                        : b.create<arith::AddIOp>(l, a, v).getResult();
                Value r = b.create<arith::SelectOp>(l, inside, added, a);
                b.create<linalg::YieldOp>(
                    l, ValueRange{convertScalar(b, l, r, acc, false, false)});
              })
          .getResult(0);
  if (acc == storage)
    return sum;
  return buildElementwise(
      rewriter, loc, {sum}, type,
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

struct CumSumOpLowering : public OpConversionPattern<CumSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    bool exclusive = op.getExclusive() != 0, reverse = op.getReverse() != 0;
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    Type acc = accumulatorType(op, type.getElementType());
    auto build = [&](OpBuilder &b, int64_t axis) {
      return buildCumSum(b, loc, x, axis, exclusive, reverse, type, acc);
    };
    auto axisValues = getConstantInts(op.getAxis());
    if (succeeded(axisValues) && !axisValues->empty()) {
      rewriter.replaceOp(
          op, build(rewriter, normalizeAxis((*axisValues)[0], rank)));
      return success();
    }
    // An axis known at run time: the rank is static, so one sum per
    // possible axis behind a chain of scf.if (one of them runs).
    if (rank == 0)
      return notLowerable(op, "a cumulative sum of a scalar");
    checkIndexRange(rewriter, loc, op, adaptor.getAxis(),
                    rewriter.create<arith::ConstantIndexOp>(loc, rank),
                    /*allowNegative=*/true, "axis");
    Value axis = extractScalar(rewriter, loc, adaptor.getAxis());
    axis = toIndex(rewriter, loc, axis);
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    axis = rewriter.create<arith::SelectOp>(
        loc,
        rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, axis,
                                       zero),
        rewriter.create<arith::AddIOp>(
            loc, axis, rewriter.create<arith::ConstantIndexOp>(loc, rank)),
        axis);
    std::function<Value(OpBuilder &, int64_t)> chain = [&](OpBuilder &b,
                                                           int64_t d) -> Value {
      if (d == rank - 1)
        return build(b, d);
      Value isAxis =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, axis,
                                  b.create<arith::ConstantIndexOp>(loc, d));
      return b
          .create<scf::IfOp>(
              loc, isAxis,
              [&](OpBuilder &nb, Location l) {
                nb.create<scf::YieldOp>(l, build(nb, d));
              },
              [&](OpBuilder &nb, Location l) {
                nb.create<scf::YieldOp>(l, chain(nb, d + 1));
              })
          .getResult(0);
    };
    rewriter.replaceOp(op, chain(rewriter, 0));
    return success();
  }
};

} // namespace

void populateReductionPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns) {
  patterns.add<ReduceOpLowering<ReduceSumOp, ReduceKind::Sum>,
               ReduceOpLowering<ReduceMeanOp, ReduceKind::Mean>,
               ReduceOpLowering<ReduceMaxOp, ReduceKind::Max>,
               ReduceOpLowering<ReduceMinOp, ReduceKind::Min>,
               ReduceOpLowering<ReduceProdOp, ReduceKind::Prod>,
               ReduceOpLowering<ReduceL1Op, ReduceKind::L1>,
               ReduceOpLowering<ReduceL2Op, ReduceKind::L2>,
               ReduceOpLowering<ReduceLogSumOp, ReduceKind::LogSum>,
               ReduceOpLowering<ReduceLogSumExpOp, ReduceKind::LogSumExp>,
               ReduceOpLowering<ReduceSumSquareOp, ReduceKind::SumSquare>,
               ArgReduceOpLowering<ArgMaxOp, true>,
               ArgReduceOpLowering<ArgMinOp, false>, CumSumOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
