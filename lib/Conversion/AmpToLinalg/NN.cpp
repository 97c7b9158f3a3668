//===- NN.cpp - reductions, GEMMs, convolutions, pooling, normalisation ---===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <atomic>
#include <cctype>
#include <map>

namespace mlir::amp::lowering {
namespace {

/// The element type an op accumulates in: fp32 for fp32-accumulating
/// low-precision ops, otherwise the storage type.
Type accumulatorType(Operation *op, Type storage) {
  if (isLowPrecisionFloat(storage) && accumulatesInF32(op))
    return Float32Type::get(op->getContext());
  return storage;
}

/// Number of elements of `tensor` over `axes`, as a scalar of `type`.
Value countOver(OpBuilder &b, Location loc, Value tensor,
                ArrayRef<int64_t> axes, Type type) {
  Value count = b.create<arith::ConstantIndexOp>(loc, 1);
  for (int64_t axis : axes) {
    Value dim = b.create<tensor::DimOp>(loc, tensor, axis);
    count = b.create<arith::MulIOp>(loc, count, dim);
  }
  Value asInt = b.create<arith::IndexCastOp>(loc, b.getI64Type(), count);
  return convertScalar(b, loc, asInt, getComputeType(type), false, false);
}

/// Tensor type with the same shape and another element type.
RankedTensorType withElementType(Value tensor, Type element) {
  return cast<RankedTensorType>(tensor.getType()).clone(element);
}

/// Elementwise conversion of a whole tensor to `element`.
Value convertTensor(OpBuilder &b, Location loc, Value tensor, Type element) {
  if (elementTypeOf(tensor) == element)
    return tensor;
  return buildElementwise(
      b, loc, {tensor}, withElementType(tensor, element),
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The axes of a reduction op; `std::nullopt` for a no-op reduction.
FailureOr<std::optional<SmallVector<int64_t>>>
getReduceAxes(Operation *op, Value axesOperand, int64_t rank,
              bool noopWithEmptyAxes) {
  SmallVector<int64_t> axes;
  if (!isNone(axesOperand)) {
    FailureOr<SmallVector<int64_t>> values = getConstantInts(axesOperand);
    if (failed(values)) {
      (void)notLowerable(op, "the axes input is not a constant");
      return failure();
    }
    axes = *values;
  }
  if (axes.empty()) {
    if (noopWithEmptyAxes)
      return std::optional<SmallVector<int64_t>>();
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  for (int64_t &axis : axes)
    axis = normalizeAxis(axis, rank);
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return std::optional<SmallVector<int64_t>>(axes);
}

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp,
                        SumSquare };

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
    auto axes = getReduceAxes(op, op.getAxes(), rank,
                              op.getNoopWithEmptyAxes() != 0);
    if (failed(axes))
      return failure();
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op);
    Type storage = inputType.getElementType();
    bool isUnsigned = isUnsignedInt(getElementTypeOrSelf(op.getData()));
    if (!*axes) {
      // noop_with_empty_axes: the input, converted like the reduction's
      // elementwise part.
      rewriter.replaceOp(op, convertTensor(rewriter, loc, input,
                                           resultType.getElementType()));
      return success();
    }
    ArrayRef<int64_t> reduceAxes = **axes;
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
    Value reduced =
        buildReduction(rewriter, loc, input, reduceAxes, acc, init, combine,
                       map);
    // Final scalar step, then round once to the result type.
    Value count;
    if (kind == ReduceKind::Mean)
      count = countOver(rewriter, loc, input, reduceAxes, acc);
    auto outType = withElementType(reduced, resultType.getElementType());
    Value result = buildElementwise(
        rewriter, loc, {reduced}, outType,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value x = args[0];
          switch (kind) {
          case ReduceKind::Mean:
            if (isFloat)
              return b.create<arith::DivFOp>(l, x, count);
            return isUnsigned ? b.create<arith::DivUIOp>(
                                     l, x, convertScalar(b, l, count,
                                                         x.getType(), false,
                                                         true))
                                    .getResult()
                              : b.create<arith::DivSIOp>(
                                     l, x, convertScalar(b, l, count,
                                                         x.getType(), false,
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
    if (op.getKeepdims() != 0)
      result = keepDims(rewriter, loc, result, rank, reduceAxes);
    rewriter.replaceOp(op, result);
    return success();
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
    Value result = buildArgReduce(rewriter, loc, input, axis, isMax, last,
                                  isUnsigned);
    if (op.getKeepdims() != 0)
      result = keepDims(rewriter, loc, result, rank, {axis});
    rewriter.replaceOp(op, result);
    return success();
  }

  static Value buildArgReduce(OpBuilder &b, Location loc, Value input,
                              int64_t axis, bool max, bool last,
                              bool isUnsigned) {
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
    Value values = filledTensor(
        b, loc, valueType, sizes,
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
            auto strict = max ? arith::CmpFPredicate::OGT
                              : arith::CmpFPredicate::OLT;
            auto loose = max ? arith::CmpFPredicate::OGE
                             : arith::CmpFPredicate::OLE;
            better = nb.create<arith::CmpFOp>(l, last ? loose : strict, x,
                                              best);
          } else {
            arith::CmpIPredicate strict, loose;
            if (isUnsigned) {
              strict = max ? arith::CmpIPredicate::ugt
                           : arith::CmpIPredicate::ult;
              loose = max ? arith::CmpIPredicate::uge
                          : arith::CmpIPredicate::ule;
            } else {
              strict = max ? arith::CmpIPredicate::sgt
                           : arith::CmpIPredicate::slt;
              loose = max ? arith::CmpIPredicate::sge
                          : arith::CmpIPredicate::sle;
            }
            better = nb.create<arith::CmpIOp>(l, last ? loose : strict, x,
                                              best);
          }
          // The first element always wins over the initial value.
          Value first = nb.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::slt, bestIndex,
              constantScalar(nb, l, nb.getI64Type(), 0));
          better = nb.create<arith::OrIOp>(l, better, first);
          nb.create<linalg::YieldOp>(
              l, ValueRange{nb.create<arith::SelectOp>(l, better, x, best),
                            nb.create<arith::SelectOp>(l, better, index,
                                                       bestIndex)});
        });
    return generic.getResult(1);
  }
};

//===----------------------------------------------------------------------===//
// Softmax family
//===----------------------------------------------------------------------===//

/// softmax(input) or log_softmax(input) along `axis`; intermediates in
/// `acc` (fp32 for fp32-accumulating low-precision ops), the result rounded
/// once to `resultType`.
Value buildSoftmax(OpBuilder &rewriter, Location loc, Value input,
                   int64_t axis, Type acc, RankedTensorType resultType,
                   bool isLog) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  Type compute = getComputeType(acc);
  Value max = buildReduction(
      rewriter, loc, input, {axis}, compute,
      lowestValue(rewriter, loc, compute, false),
      [](OpBuilder &b, Location l, Value x, Value a) -> Value {
        return b.create<arith::MaximumFOp>(l, x, a);
      });
  Value maxKept = keepDims(rewriter, loc, max, rank, {axis});
  Value exps = buildElementwise(
      rewriter, loc, {input, maxKept}, withElementType(input, acc),
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, a[0], a[1]));
      });
  Value sum = buildReduction(
      rewriter, loc, exps, {axis}, acc, constantScalar(rewriter, loc, acc, 0),
      [](OpBuilder &b, Location l, Value x, Value a) -> Value {
        return b.create<arith::AddFOp>(l, x, a);
      });
  Value sumKept = keepDims(rewriter, loc, sum, rank, {axis});
  if (isLog)
    return buildElementwise(
        rewriter, loc, {input, maxKept, sumKept}, resultType,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value shifted = b.create<arith::SubFOp>(l, a[0], a[1]);
          return b.create<arith::SubFOp>(l, shifted,
                                         b.create<math::LogOp>(l, a[2]));
        });
  return buildElementwise(
      rewriter, loc, {exps, sumKept}, resultType,
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return b.create<arith::DivFOp>(l, a[0], a[1]);
      });
}

template <typename OpTy>
struct SoftmaxLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op);
    Type storage = inputType.getElementType();
    Type acc = accumulatorType(op, storage);
    if (std::is_same_v<OpTy, HardmaxOp>) {
      Value argmax = ArgReduceOpLowering<ArgMaxOp, true>::buildArgReduce(
          rewriter, loc, input, axis, /*max=*/true, /*last=*/false, false);
      Value kept = keepDims(rewriter, loc, argmax, rank, {axis});
      Value result = rewriter.create<linalg::GenericOp>(
          loc, TypeRange{resultType}, ValueRange{kept},
          ValueRange{emptyTensor(rewriter, loc, resultType,
                                 getSizes(rewriter, loc, input))},
          SmallVector<AffineMap>{
              keptMap(rewriter, rank, axis),
              rewriter.getMultiDimIdentityMap(rank)},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::parallel),
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value index = b.create<arith::IndexCastOp>(
                l, b.getI64Type(), b.create<linalg::IndexOp>(l, axis));
            Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                                index, args[0]);
            Type t = resultType.getElementType();
            b.create<linalg::YieldOp>(
                l, ValueRange{b.create<arith::SelectOp>(
                       l, hit, constantScalar(b, l, t, 1),
                       constantScalar(b, l, t, 0))});
          }).getResult(0);
      rewriter.replaceOp(op, result);
      return success();
    }
    Value result = buildSoftmax(rewriter, loc, input, axis, acc, resultType,
                                std::is_same_v<OpTy, LogSoftmaxOp>);
    rewriter.replaceOp(op, result);
    return success();
  }

  static AffineMap keptMap(OpBuilder &b, int64_t rank, int64_t axis) {
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(i == axis ? b.getAffineConstantExpr(0)
                                : b.getAffineDimExpr(i));
    return AffineMap::get(rank, 0, exprs, b.getContext());
  }
};

//===----------------------------------------------------------------------===//
// MatMul and Gemm
//===----------------------------------------------------------------------===//

/// C (+)= A x B for [M,K]x[K,N] or batched [B,M,K]x[B,K,N] (`transB`: B is
/// [.., N, K]). fp32/f64/integer work uses the named linalg ops (fp32 ones
/// become oneDNN calls); f16/bf16 accumulation rounds after every step.
Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  Value init, bool transposeB) {
  auto initType = cast<RankedTensorType>(init.getType());
  bool batched = initType.getRank() == 3;
  Type acc = initType.getElementType();
  if (!isLowPrecisionFloat(acc)) {
    Operation *matmul;
    if (batched)
      matmul = transposeB ? b.create<linalg::BatchMatmulTransposeBOp>(
                                loc, TypeRange{initType},
                                ValueRange{lhs, rhs}, ValueRange{init})
                                .getOperation()
                          : b.create<linalg::BatchMatmulOp>(
                                loc, TypeRange{initType},
                                ValueRange{lhs, rhs}, ValueRange{init})
                                .getOperation();
    else
      matmul = transposeB ? b.create<linalg::MatmulTransposeBOp>(
                                loc, TypeRange{initType},
                                ValueRange{lhs, rhs}, ValueRange{init})
                                .getOperation()
                          : b.create<linalg::MatmulOp>(
                                loc, TypeRange{initType},
                                ValueRange{lhs, rhs}, ValueRange{init})
                                .getOperation();
    return matmul->getResult(0);
  }
  MLIRContext *context = b.getContext();
  int64_t loops = batched ? 4 : 3;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, context); };
  int64_t o = batched ? 1 : 0;
  SmallVector<AffineExpr> batch;
  if (batched)
    batch.push_back(d(0));
  auto with = [&](std::initializer_list<AffineExpr> exprs) {
    SmallVector<AffineExpr> all(batch);
    all.append(exprs.begin(), exprs.end());
    return AffineMap::get(loops, 0, all, context);
  };
  AffineExpr m = d(o), n = d(o + 1), k = d(o + 2);
  SmallVector<AffineMap> maps = {with({m, k}),
                                 transposeB ? with({n, k}) : with({k, n}),
                                 with({m, n})};
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{initType}, ValueRange{lhs, rhs}, ValueRange{init},
          maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value x = toComputeType(nb, l, args[0]);
            Value y = toComputeType(nb, l, args[1]);
            Value a = toComputeType(nb, l, args[2]);
            Value sum = nb.create<arith::AddFOp>(
                l, a, nb.create<arith::MulFOp>(l, x, y));
            nb.create<linalg::YieldOp>(
                l, ValueRange{convertScalar(nb, l, sum, acc, false, false)});
          })
      .getResult(0);
}

/// Broadcasts `value` to `type` (batch dimensions of a MatMul operand).
Value materializeBroadcast(OpBuilder &b, Location loc, Value value,
                           RankedTensorType type,
                           ArrayRef<OpFoldResult> sizes) {
  if (value.getType() == type)
    return value;
  SmallVector<OpFoldResult> mixed(sizes);
  Value init = emptyTensor(b, loc, type, mixed);
  int64_t rank = type.getRank();
  auto valueType = cast<RankedTensorType>(value.getType());
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < valueType.getRank(); ++i) {
    int64_t dim = i + rank - valueType.getRank();
    exprs.push_back(valueType.getDimSize(i) == 1 && type.getDimSize(dim) != 1
                        ? b.getAffineConstantExpr(0)
                        : b.getAffineDimExpr(dim));
  }
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, ValueRange{value}, ValueRange{init},
          SmallVector<AffineMap>{
              AffineMap::get(rank, 0, exprs, b.getContext()),
              b.getMultiDimIdentityMap(rank)},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::parallel),
          [](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, args[0]);
          })
      .getResult(0);
}

struct MatMulOpLowering : public OpConversionPattern<MatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getA(), rhs = adaptor.getB();
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Type storage = resultType.getElementType();
    if (isUnsignedInt(getElementTypeOrSelf(op.getType())))
      return notLowerable(op, "unsigned integer MatMul");
    Type acc = accumulatorType(op, storage);
    // fp32-accumulating low-precision GEMMs run as fp32 GEMMs on the
    // widened operands (exact) and round once.
    if (acc != storage) {
      lhs = convertTensor(rewriter, loc, lhs, acc);
      rhs = convertTensor(rewriter, loc, rhs, acc);
    }
    Value result = matmul(rewriter, loc, lhs, rhs, resultType.clone(acc));
    result = convertTensor(rewriter, loc, result, storage);
    rewriter.replaceOp(op, result);
    return success();
  }

  static Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                      RankedTensorType resultType) {
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    Type acc = resultType.getElementType();
    SmallVector<OpFoldResult> lhsSizes = getSizes(b, loc, lhs);
    SmallVector<OpFoldResult> rhsSizes = getSizes(b, loc, rhs);
    // 1-D operands become matrices.
    bool vectorLhs = lhsType.getRank() == 1, vectorRhs = rhsType.getRank() == 1;
    if (vectorLhs) {
      lhsType = RankedTensorType::get({1, lhsType.getDimSize(0)},
                                      lhsType.getElementType());
      lhsSizes.insert(lhsSizes.begin(), b.getIndexAttr(1));
      lhs = reshapeTensor(b, loc, lhs, lhsType, lhsSizes);
    }
    if (vectorRhs) {
      rhsType = RankedTensorType::get({rhsType.getDimSize(0), 1},
                                      rhsType.getElementType());
      rhsSizes.push_back(b.getIndexAttr(1));
      rhs = reshapeTensor(b, loc, rhs, rhsType, rhsSizes);
    }
    int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
    OpFoldResult m = lhsSizes[lhsRank - 2], k = lhsSizes[lhsRank - 1];
    OpFoldResult n = rhsSizes[rhsRank - 1];
    int64_t staticM = lhsType.getDimSize(lhsRank - 2);
    int64_t staticK = lhsType.getDimSize(lhsRank - 1);
    int64_t staticN = rhsType.getDimSize(rhsRank - 1);
    Value zero = constantScalar(b, loc, acc, 0);
    // Result dims before removing vector dimensions.
    SmallVector<int64_t> fullShape;
    SmallVector<OpFoldResult> fullSizes;
    Value product;
    if (rhsRank == 2) {
      // [..., M, K] x [K, N]: one GEMM over the collapsed rows.
      int64_t rows = 1;
      Value rowCount = b.create<arith::ConstantIndexOp>(loc, 1);
      for (int64_t i = 0; i < lhsRank - 1; ++i) {
        int64_t size = lhsType.getDimSize(i);
        rows = (rows == ShapedType::kDynamic || ShapedType::isDynamic(size))
                   ? ShapedType::kDynamic
                   : rows * size;
        rowCount = b.create<arith::MulIOp>(
            loc, rowCount,
            getValueOrCreateConstantIndexOp(b, loc, lhsSizes[i]));
        fullShape.push_back(size);
        fullSizes.push_back(lhsSizes[i]);
      }
      fullShape.push_back(staticN);
      fullSizes.push_back(n);
      auto flatLhsType =
          RankedTensorType::get({rows, staticK}, lhsType.getElementType());
      Value flatLhs = reshapeTensor(b, loc, lhs, flatLhsType,
                                    {OpFoldResult(rowCount), k});
      auto flatType = RankedTensorType::get({rows, staticN}, acc);
      Value init = filledTensor(b, loc, flatType,
                                {OpFoldResult(rowCount), n}, zero);
      Value flat = buildMatmul(b, loc, flatLhs, rhs, init, false);
      product = reshapeTensor(b, loc, flat,
                              RankedTensorType::get(fullShape, acc),
                              fullSizes);
    } else {
      // Batched: broadcast the batch dimensions, collapse them to one.
      int64_t batchRank = std::max(lhsRank, rhsRank) - 2;
      SmallVector<int64_t> lhsAmbiguous, rhsAmbiguous;
      SmallVector<int64_t> batchShape;
      SmallVector<OpFoldResult> batchSizes;
      for (int64_t i = 0; i < batchRank; ++i) {
        int64_t li = i - (batchRank - (lhsRank - 2));
        int64_t ri = i - (batchRank - (rhsRank - 2));
        int64_t ls = li >= 0 ? lhsType.getDimSize(li) : 1;
        int64_t rs = ri >= 0 ? rhsType.getDimSize(ri) : 1;
        bool lhsDynamic = li >= 0 && ShapedType::isDynamic(ls);
        bool rhsDynamic = ri >= 0 && ShapedType::isDynamic(rs);
        if ((lhsDynamic && rs != 1) || (rhsDynamic && ls != 1)) {
          // Either side may be 1 at run time: the larger size, and the
          // dynamic sides broadcast at run time.
          if (lhsDynamic)
            lhsAmbiguous.push_back(li);
          if (rhsDynamic)
            rhsAmbiguous.push_back(ri);
          if (!lhsDynamic || !rhsDynamic) {
            int64_t known = lhsDynamic ? rs : ls;
            batchShape.push_back(known);
            batchSizes.push_back(b.getIndexAttr(known));
          } else {
            batchShape.push_back(ShapedType::kDynamic);
            batchSizes.push_back(
                b.create<arith::MaxSIOp>(
                     loc, getValueOrCreateConstantIndexOp(b, loc, lhsSizes[li]),
                     getValueOrCreateConstantIndexOp(b, loc, rhsSizes[ri]))
                    .getResult());
          }
        } else if (ls != 1) {
          batchShape.push_back(ls);
          batchSizes.push_back(lhsSizes[li]);
        } else if (ri >= 0) {
          batchShape.push_back(rs);
          batchSizes.push_back(rhsSizes[ri]);
        } else {
          batchShape.push_back(1);
          batchSizes.push_back(b.getIndexAttr(1));
        }
      }
      auto broadcastTo = [&](Value v, RankedTensorType type, OpFoldResult r,
                             OpFoldResult c, int64_t rs, int64_t cs,
                             ArrayRef<int64_t> ambiguous) {
        SmallVector<int64_t> shape(batchShape);
        shape.append({rs, cs});
        SmallVector<OpFoldResult> sizes(batchSizes);
        sizes.append({r, c});
        auto target = RankedTensorType::get(shape, type.getElementType());
        if (!ambiguous.empty())
          v = broadcastAtRunTime(b, loc, v, ambiguous, target, sizes);
        return materializeBroadcast(b, loc, v, target, sizes);
      };
      lhs = broadcastTo(lhs, lhsType, m, k, staticM, staticK, lhsAmbiguous);
      rhs = broadcastTo(rhs, rhsType, k, n, staticK, staticN, rhsAmbiguous);
      int64_t batch = 1;
      Value batchCount = b.create<arith::ConstantIndexOp>(loc, 1);
      for (auto [size, mixed] : llvm::zip(batchShape, batchSizes)) {
        batch = (batch == ShapedType::kDynamic || ShapedType::isDynamic(size))
                    ? ShapedType::kDynamic
                    : batch * size;
        batchCount = b.create<arith::MulIOp>(
            loc, batchCount, getValueOrCreateConstantIndexOp(b, loc, mixed));
      }
      auto collapse = [&](Value v, int64_t rs, int64_t cs, OpFoldResult r,
                          OpFoldResult c) {
        auto type = RankedTensorType::get({batch, rs, cs}, elementTypeOf(v));
        return reshapeTensor(b, loc, v, type, {OpFoldResult(batchCount), r, c});
      };
      Value batchLhs = collapse(lhs, staticM, staticK, m, k);
      Value batchRhs = collapse(rhs, staticK, staticN, k, n);
      auto batchType = RankedTensorType::get({batch, staticM, staticN}, acc);
      Value init = filledTensor(b, loc, batchType,
                                {OpFoldResult(batchCount), m, n}, zero);
      Value batched = buildMatmul(b, loc, batchLhs, batchRhs, init, false);
      fullShape.assign(batchShape);
      fullShape.append({staticM, staticN});
      fullSizes.assign(batchSizes);
      fullSizes.append({m, n});
      product = reshapeTensor(b, loc, batched,
                              RankedTensorType::get(fullShape, acc),
                              fullSizes);
    }
    // Drop the dimensions added for vector operands.
    SmallVector<OpFoldResult> finalSizes;
    for (int64_t i = 0; i < static_cast<int64_t>(fullSizes.size()); ++i) {
      if (vectorLhs && i == static_cast<int64_t>(fullSizes.size()) - 2)
        continue;
      if (vectorRhs && i == static_cast<int64_t>(fullSizes.size()) - 1)
        continue;
      finalSizes.push_back(fullSizes[i]);
    }
    return reshapeTensor(b, loc, product, resultType, finalSizes);
  }
};

struct GemmOpLowering : public OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Type storage = resultType.getElementType();
    Type acc = accumulatorType(op, storage);
    if (isUnsignedInt(getElementTypeOrSelf(op.getType())))
      return notLowerable(op, "unsigned integer Gemm");
    Value a = adaptor.getA(), bMat = adaptor.getB();
    if (acc != storage) {
      a = convertTensor(rewriter, loc, a, acc);
      bMat = convertTensor(rewriter, loc, bMat, acc);
    }
    if (op.getTransA() != 0)
      a = transpose2d(rewriter, loc, a);
    bool transposeB = op.getTransB() != 0;
    auto accType = resultType.clone(acc);
    SmallVector<OpFoldResult> aSizes = getSizes(rewriter, loc, a);
    SmallVector<OpFoldResult> bSizes = getSizes(rewriter, loc, bMat);
    SmallVector<OpFoldResult> sizes = {aSizes[0],
                                       transposeB ? bSizes[0] : bSizes[1]};
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    Value c = adaptor.getC();
    bool hasC = !isNone(c) && beta != 0;
    Value init;
    if (hasC && alpha == 1) {
      // Y = beta * C + A x B, accumulated into the broadcast C.
      init = buildElementwise(
          rewriter, loc, {c}, accType,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value v = convertScalar(b, l, args[0], getComputeType(acc), false,
                                    false);
            if (beta == 1)
              return v;
            return b.create<arith::MulFOp>(
                l, v, constantScalar(b, l, v.getType(), beta));
          },
          /*resultUnsigned=*/false, sizes);
    } else {
      init = filledTensor(rewriter, loc, accType, sizes,
                          constantScalar(rewriter, loc, acc, 0));
    }
    Value product = buildMatmul(rewriter, loc, a, bMat, init, transposeB);
    if (alpha != 1) {
      SmallVector<Value> inputs = {product};
      if (hasC)
        inputs.push_back(c);
      product = buildElementwise(
          rewriter, loc, inputs, accType,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Type t = args[0].getType();
            Value scaled = b.create<arith::MulFOp>(
                l, args[0], constantScalar(b, l, t, alpha));
            if (args.size() == 1)
              return scaled;
            Value cv = convertScalar(b, l, args[1], t, false, false);
            return b.create<arith::AddFOp>(
                l, scaled,
                b.create<arith::MulFOp>(l, cv, constantScalar(b, l, t, beta)));
          },
          /*resultUnsigned=*/false, sizes);
    }
    rewriter.replaceOp(op, convertTensor(rewriter, loc, product, storage));
    return success();
  }

  static Value transpose2d(OpBuilder &b, Location loc, Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, value);
    auto transposedType = RankedTensorType::get(
        {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
    Value init = emptyTensor(b, loc, transposedType, {sizes[1], sizes[0]});
    return b
        .create<linalg::TransposeOp>(loc, value, init,
                                     ArrayRef<int64_t>{1, 0})
        .getResult()[0];
  }
};

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Begin and end padding of each spatial dimension, resolving auto_pad.
FailureOr<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
resolvePads(Operation *op, RankedTensorType inputType, StringRef autoPad,
            std::optional<ArrayRef<int64_t>> pads, ArrayRef<int64_t> kernel,
            ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  int64_t spatial = kernel.size();
  SmallVector<int64_t> begin(spatial, 0), end(spatial, 0);
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = inputType.getDimSize(i + 2);
      if (ShapedType::isDynamic(in)) {
        (void)notLowerable(op, "auto_pad with a dynamic spatial size");
        return failure();
      }
      int64_t out = (in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in);
      int64_t small = total / 2;
      begin[i] = autoPad == "SAME_UPPER" ? small : total - small;
      end[i] = total - begin[i];
    }
  } else if (autoPad != "VALID" && pads) {
    for (int64_t i = 0; i < spatial; ++i) {
      begin[i] = (*pads)[i];
      end[i] = (*pads)[i + spatial];
    }
  }
  return std::make_pair(begin, end);
}

/// Pads the spatial dimensions of an N, C, spatial... tensor.
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> begin, ArrayRef<int64_t> end,
                 Value padValue) {
  if (llvm::all_of(begin, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(end, [](int64_t v) { return v == 0; }))
    return input;
  SmallVector<int64_t> low = {0, 0}, high = {0, 0};
  low.append(begin.begin(), begin.end());
  high.append(end.begin(), end.end());
  return padTensor(b, loc, input, low, high, padValue);
}

SmallVector<int64_t> attrOr(std::optional<ArrayRef<int64_t>> attr,
                            int64_t count, int64_t fallback) {
  if (attr)
    return SmallVector<int64_t>(attr->begin(), attr->end());
  return SmallVector<int64_t>(count, fallback);
}

/// A convolution's output initialisation: the bias broadcast over
/// (N, F, spatial...) or zeros, marked for the runtime call (which then
/// passes the bias to oneDNN instead).
Value buildConvInit(OpBuilder &b, Location loc, Value bias,
                    RankedTensorType accType, ArrayRef<OpFoldResult> outSizes,
                    int64_t filters) {
  Value init;
  if (!isNone(bias)) {
    SmallVector<int64_t> biasShape(accType.getRank() - 1, 1);
    biasShape[0] = filters;
    Value shaped = reshapeTensor(
        b, loc, bias, RankedTensorType::get(biasShape, elementTypeOf(bias)),
        {});
    init = buildElementwise(
        b, loc, {shaped}, accType,
        [](OpBuilder &, Location, ValueRange a) { return a[0]; }, false,
        outSizes);
  } else {
    Type acc = accType.getElementType();
    init = filledTensor(b, loc, accType, outSizes,
                        constantScalar(b, loc, acc, 0));
  }
  // A distinct value per convolution: CSE must not merge two inits (each
  // convolution then writes its own buffer, initialised right before it).
  static std::atomic<int64_t> nextInit{0};
  init.getDefiningOp()->setAttr(kConvInitAttr,
                                b.getI64IntegerAttr(nextInit++));
  return init;
}

struct ConvOpLowering : public OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX(), w = adaptor.getW();
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t spatial = xType.getRank() - 2;
    if (spatial < 1)
      return notLowerable(op, "input of rank < 3");
    if (!wType.hasStaticShape())
      return notLowerable(op, "weights with a dynamic shape");
    SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
    SmallVector<int64_t> strides = attrOr(op.getStrides(), spatial, 1);
    SmallVector<int64_t> dilations = attrOr(op.getDilations(), spatial, 1);
    auto pads = resolvePads(op, xType, op.getAutoPad(), op.getPads(), kernel,
                            strides, dilations);
    if (failed(pads))
      return failure();
    RankedTensorType convertedType =
        convertedResultType(getTypeConverter(), op);
    int64_t groups = op.getGroup();
    // The channel counts follow from the weights (C = W.dim1 * group,
    // M = W.dim0) even where shape inference lost them.
    if (xType.isDynamicDim(1)) {
      SmallVector<int64_t> shape(xType.getShape());
      shape[1] = wType.getDimSize(1) * groups;
      xType = RankedTensorType::get(shape, xType.getElementType());
      x = rewriter.create<tensor::CastOp>(loc, xType, x);
    }
    SmallVector<int64_t> resultShape(convertedType.getShape());
    resultShape[1] = wType.getDimSize(0);
    auto resultType =
        RankedTensorType::get(resultShape, convertedType.getElementType());
    Type storage = resultType.getElementType();
    Type acc = accumulatorType(op, storage);
    // Spatial output sizes: static where known, else
    // (in + pads - dilation * (kernel - 1) - 1) / stride + 1 at run time.
    SmallVector<OpFoldResult> outSizes;
    outSizes.push_back(rewriter.create<tensor::DimOp>(loc, x, 0).getResult());
    outSizes.push_back(rewriter.getIndexAttr(resultShape[1]));
    for (int64_t i = 0; i < spatial; ++i) {
      if (!resultType.isDynamicDim(i + 2)) {
        outSizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(i + 2)));
        continue;
      }
      int64_t span = dilations[i] * (kernel[i] - 1) + 1;
      int64_t padding = pads->first[i] + pads->second[i];
      Value in = rewriter.create<tensor::DimOp>(loc, x, i + 2);
      Value reach = rewriter.create<arith::AddIOp>(
          loc, in,
          rewriter.create<arith::ConstantIndexOp>(loc, padding - span));
      Value steps = rewriter.create<arith::FloorDivSIOp>(
          loc, reach, rewriter.create<arith::ConstantIndexOp>(loc, strides[i]));
      outSizes.push_back(
          rewriter
              .create<arith::AddIOp>(
                  loc, steps, rewriter.create<arith::ConstantIndexOp>(loc, 1))
              .getResult());
    }
    if (acc != storage) {
      x = convertTensor(rewriter, loc, x, acc);
      w = convertTensor(rewriter, loc, w, acc);
    }
    Value padded = padSpatial(rewriter, loc, x, pads->first, pads->second,
                              constantScalar(rewriter, loc, acc, 0));
    // Output initialised with the bias (or zeros); the conv accumulates.
    auto accType = resultType.clone(acc);
    Value init = buildConvInit(rewriter, loc, adaptor.getB(), accType,
                               outSizes, wType.getDimSize(0));
    Value result = buildConv(rewriter, loc, padded, w, init, strides,
                             dilations, groups);
    result = convertTensor(rewriter, loc, result, storage);
    if (result.getType() != convertedType)
      result = rewriter.create<tensor::CastOp>(loc, convertedType, result);
    rewriter.replaceOp(op, result);
    return success();
  }

  static Value buildConv(OpBuilder &b, Location loc, Value x, Value w,
                         Value init, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> dilations, int64_t groups) {
    MLIRContext *context = b.getContext();
    auto xType = cast<RankedTensorType>(x.getType());
    auto outType = cast<RankedTensorType>(init.getType());
    int64_t spatial = xType.getRank() - 2;
    Type acc = outType.getElementType();
    // Grouped: split the channel dimensions into (group, channels/group).
    bool grouped = groups > 1;
    auto splitDim = [&](Value v, int64_t dim) -> Value {
      if (!grouped)
        return v;
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape;
      SmallVector<OpFoldResult> sizes;
      SmallVector<OpFoldResult> oldSizes = getSizes(b, loc, v);
      for (int64_t i = 0; i < type.getRank(); ++i) {
        if (i == dim) {
          shape.append({groups, type.getDimSize(i) / groups});
          sizes.append({b.getIndexAttr(groups),
                        b.getIndexAttr(type.getDimSize(i) / groups)});
        } else {
          shape.push_back(type.getDimSize(i));
          sizes.push_back(oldSizes[i]);
        }
      }
      return reshapeTensor(
          b, loc, v, RankedTensorType::get(shape, type.getElementType()),
          sizes);
    };
    Value gx = splitDim(x, 1), gw = splitDim(w, 0), ginit = splitDim(init, 1);
    // Loops: n, [g], f, o_1..o_S, c, k_1..k_S.
    int64_t g = grouped ? 1 : 0;
    int64_t nLoops = 2 + g + spatial + 1 + spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, context); };
    int64_t fDim = 1 + g, oDim = 2 + g, cDim = 2 + g + spatial,
            kDim = cDim + 1;
    SmallVector<AffineExpr> xExprs = {d(0)}, wExprs, outExprs = {d(0)};
    if (grouped) {
      xExprs.push_back(d(1));
      wExprs.push_back(d(1));
      outExprs.push_back(d(1));
    }
    xExprs.push_back(d(cDim));
    wExprs.append({d(fDim), d(cDim)});
    outExprs.push_back(d(fDim));
    for (int64_t i = 0; i < spatial; ++i) {
      xExprs.push_back(d(oDim + i) * strides[i] + d(kDim + i) * dilations[i]);
      wExprs.push_back(d(kDim + i));
      outExprs.push_back(d(oDim + i));
    }
    SmallVector<utils::IteratorType> iterators(nLoops,
                                               utils::IteratorType::parallel);
    for (int64_t i = cDim; i < nLoops; ++i)
      iterators[i] = utils::IteratorType::reduction;
    auto ginitType = cast<RankedTensorType>(ginit.getType());
    auto generic = b.create<linalg::GenericOp>(
        loc, TypeRange{ginitType}, ValueRange{gx, gw}, ValueRange{ginit},
        SmallVector<AffineMap>{AffineMap::get(nLoops, 0, xExprs, context),
                               AffineMap::get(nLoops, 0, wExprs, context),
                               AffineMap::get(nLoops, 0, outExprs, context)},
        iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
          Value xv = toComputeType(nb, l, args[0]);
          Value wv = toComputeType(nb, l, args[1]);
          Value av = toComputeType(nb, l, args[2]);
          Value sum;
          if (isa<FloatType>(xv.getType()))
            sum = nb.create<arith::AddFOp>(
                l, av, nb.create<arith::MulFOp>(l, xv, wv));
          else
            sum = nb.create<arith::AddIOp>(
                l, av, nb.create<arith::MulIOp>(l, xv, wv));
          nb.create<linalg::YieldOp>(
              l, ValueRange{convertScalar(nb, l, sum, acc, false, false)});
        });
    if (acc.isF32() && spatial <= 3) {
      generic->setAttr(kRuntimeCallAttr, b.getStringAttr("conv"));
      generic->setAttr(kConvStridesAttr, b.getDenseI64ArrayAttr(strides));
      generic->setAttr(kConvDilationsAttr, b.getDenseI64ArrayAttr(dilations));
    }
    Value result = generic.getResult(0);
    if (grouped)
      result = reshapeTensor(b, loc, result, outType, getSizes(b, loc, init));
    return result;
  }
};

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
  SmallVector<AffineExpr> inExprs = {d(0), d(1)}, winExprs, outExprs = {d(0),
                                                                        d(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(d(2 + i) * strides[i] + d(2 + spatial + i) * dilations[i]);
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
  SmallVector<OpFoldResult> outSizes;
};

template <typename OpTy>
FailureOr<PoolParams> getPoolParams(OpTy op, Value x,
                                    RankedTensorType resultType,
                                    OpBuilder &b) {
  PoolParams p;
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t spatial = xType.getRank() - 2;
  p.kernel.assign(op.getKernelShape().begin(), op.getKernelShape().end());
  p.strides = attrOr(op.getStrides(), spatial, 1);
  p.dilations = attrOr(op.getDilations(), spatial, 1);
  auto pads = resolvePads(op, xType, op.getAutoPad(), op.getPads(), p.kernel,
                          p.strides, p.dilations);
  if (failed(pads))
    return failure();
  p.begin = pads->first;
  p.end = pads->second;
  // ceil_mode: pad the end so that the last window fits.
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = xType.getDimSize(i + 2), out = resultType.getDimSize(i + 2);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out)) {
      (void)notLowerable(op, "pooling over a dynamic spatial size");
      return failure();
    }
    int64_t needed = (out - 1) * p.strides[i] +
                     (p.kernel[i] - 1) * p.dilations[i] + 1;
    int64_t have = in + p.begin[i] + p.end[i];
    if (needed > have)
      p.end[i] += needed - have;
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
    if (!op.getIndices().use_empty())
      return notLowerable(op, "the Indices output is used");
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
    rewriter.replaceOp(op, {result, Value()});
    return success();
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
    auto pads = resolvePads(op, xType, op.getAutoPad(), op.getPads(),
                            params.kernel, params.strides, params.dilations);
    if (failed(pads))
      return failure();
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{resultType}, ValueRange{sum},
        ValueRange{emptyTensor(rewriter, loc, resultType, p->outSizes)},
        SmallVector<AffineMap>(2, rewriter.getMultiDimIdentityMap(
                                      resultType.getRank())),
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
              int64_t lo = includePad ? -pads->first[i] : 0;
              int64_t hi = includePad ? inSizes[i] + pads->second[i]
                                      : inSizes[i];
              Value o = b.create<linalg::IndexOp>(l, 2 + i);
              count = b.create<arith::MulIOp>(
                  l, count,
                  windowCount(b, l, o, params.strides[i], params.dilations[i],
                              params.kernel[i], params.begin[i], lo, hi));
            }
            Value countF = convertScalar(
                b, l, b.create<arith::IndexCastOp>(l, b.getI64Type(), count),
                v.getType(), false, false);
            r = b.create<arith::DivFOp>(l, v, countF);
          }
          b.create<linalg::YieldOp>(
              l, ValueRange{convertScalar(b, l, r, storage, false, false)});
        }).getResult(0);
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

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

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

struct BatchNormOpLowering
    : public OpConversionPattern<BatchNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getTrainingMode() != 0)
      return notLowerable(op, "training_mode = 1");
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    double epsilon = op.getEpsilon().convertToDouble();
    SmallVector<Value> inputs = {x};
    for (Value v : {adaptor.getScale(), adaptor.getB(),
                    adaptor.getInputMean(), adaptor.getInputVar()})
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
};

/// Normalises `x` over `axes` in `compute` precision: returns (x - mean),
/// mean and 1/sqrt(var + eps) (the latter two with kept dimensions).
struct Moments {
  Value centered, mean, invStdDev;
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
    Value mean = buildElementwise(
        b, loc, {sum}, withElementType(sum, compute),
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
  Value squares = buildReduction(
      b, loc, centered, axes, compute, zero, add,
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return nb.create<arith::MulFOp>(l, a[0], a[0]);
      });
  Value inv = buildElementwise(
      b, loc, {squares}, withElementType(squares, compute),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value var = nb.create<arith::DivFOp>(l, a[0], count);
        Value eps = constantScalar(nb, l, compute, epsilon);
        Value root = nb.create<math::SqrtOp>(
            l, nb.create<arith::AddFOp>(l, var, eps));
        return nb.create<arith::DivFOp>(
            l, constantScalar(nb, l, compute, 1), root);
      });
  return {centered, meanKept, keepDims(b, loc, inv, rank, axes)};
}

struct LayerNormOpLowering
    : public OpConversionPattern<LayerNormalizationOp> {
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
        {m.centered, m.invStdDev, perChannel(rewriter, loc, adaptor.getScale(), rank),
         perChannel(rewriter, loc, adaptor.getB(), rank)},
        convertedResultType(getTypeConverter(), op),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          auto conv = [&](Value v) {
            return convertScalar(b, l, v, compute, false, false);
          };
          return b.create<arith::AddFOp>(
              l,
              b.create<arith::MulFOp>(
                  l, b.create<arith::MulFOp>(l, a[0], a[1]), conv(a[2])),
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


//===----------------------------------------------------------------------===//
// ConvTranspose and Einsum
//===----------------------------------------------------------------------===//

/// ConvTranspose as a convolution over the zero-stuffed, padded input with
/// the kernel flipped and its channel dimensions swapped (per group).
struct ConvTransposeOpLowering : public OpConversionPattern<ConvTransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvTransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX(), w = adaptor.getW();
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(w.getType());
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    int64_t spatial = xType.getRank() - 2;
    if (!wType.hasStaticShape())
      return notLowerable(op, "weights with a dynamic shape");
    for (int64_t i = 0; i < spatial; ++i)
      if (xType.isDynamicDim(i + 2) || resultType.isDynamicDim(i + 2))
        return notLowerable(op, "a dynamic spatial size");
    int64_t groups = op.getGroup();
    int64_t channels = wType.getDimSize(0), perGroupOut = wType.getDimSize(1);
    SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
    SmallVector<int64_t> strides = attrOr(op.getStrides(), spatial, 1);
    SmallVector<int64_t> dilations = attrOr(op.getDilations(), spatial, 1);
    SmallVector<int64_t> outPad = attrOr(op.getOutputPadding(), spatial, 0);
    Type storage = resultType.getElementType();
    Type acc = accumulatorType(op, storage);
    if (acc != storage) {
      x = convertTensor(rewriter, loc, x, acc);
      w = convertTensor(rewriter, loc, w, acc);
    }
    Type element = elementTypeOf(x);
    Value zero = constantScalar(rewriter, loc, element, 0);
    // 1. Zero-stuffed input: (in - 1) * stride + 1 per spatial dim.
    SmallVector<int64_t> stuffedShape = {xType.getDimSize(0),
                                         xType.getDimSize(1)};
    SmallVector<OpFoldResult> stuffedSizes = {
        rewriter.create<tensor::DimOp>(loc, x, 0).getResult(),
        rewriter.getIndexAttr(xType.getDimSize(1))};
    SmallVector<OpFoldResult> offsets(xType.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> insertStrides = {rewriter.getIndexAttr(1),
                                               rewriter.getIndexAttr(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = xType.getDimSize(i + 2);
      stuffedShape.push_back((in - 1) * strides[i] + 1);
      stuffedSizes.push_back(rewriter.getIndexAttr(stuffedShape.back()));
      insertStrides.push_back(rewriter.getIndexAttr(strides[i]));
    }
    Value stuffed = filledTensor(
        rewriter, loc, RankedTensorType::get(stuffedShape, element),
        stuffedSizes, zero);
    stuffed = rewriter.create<tensor::InsertSliceOp>(
        loc, x, stuffed, offsets, getSizes(rewriter, loc, x), insertStrides);
    // 2. Padding: low = d*(K-1) - pad_begin, high = out - stuffed + pad_begin
    //    (a negative amount crops).
    SmallVector<int64_t> begin(spatial, 0);
    auto pads = op.getPads();
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = xType.getDimSize(i + 2), out = resultType.getDimSize(i + 2);
      int64_t total = strides[i] * (in - 1) + outPad[i] +
                      (kernel[i] - 1) * dilations[i] + 1 - out;
      StringRef autoPad = op.getAutoPad();
      if (autoPad == "SAME_UPPER")
        begin[i] = total / 2;
      else if (autoPad == "SAME_LOWER")
        begin[i] = total - total / 2;
      else if (pads && autoPad != "VALID")
        begin[i] = (*pads)[i];
    }
    SmallVector<int64_t> low(spatial), high(spatial);
    for (int64_t i = 0; i < spatial; ++i) {
      low[i] = dilations[i] * (kernel[i] - 1) - begin[i];
      high[i] = resultType.getDimSize(i + 2) - stuffedShape[i + 2] + begin[i];
    }
    SmallVector<int64_t> padLow, padHigh;
    for (int64_t i = 0; i < spatial; ++i) {
      padLow.push_back(std::max<int64_t>(low[i], 0));
      padHigh.push_back(std::max<int64_t>(high[i], 0));
    }
    Value padded = padSpatial(rewriter, loc, stuffed, padLow, padHigh, zero);
    if (llvm::any_of(low, [](int64_t v) { return v < 0; }) ||
        llvm::any_of(high, [](int64_t v) { return v < 0; })) {
      auto paddedType = cast<RankedTensorType>(padded.getType());
      SmallVector<OpFoldResult> cropOffsets(paddedType.getRank(),
                                            rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> cropSizes = getSizes(rewriter, loc, padded);
      SmallVector<int64_t> cropShape(paddedType.getShape());
      for (int64_t i = 0; i < spatial; ++i) {
        int64_t cutLow = std::max<int64_t>(-low[i], 0);
        int64_t cutHigh = std::max<int64_t>(-high[i], 0);
        cropShape[i + 2] -= cutLow + cutHigh;
        cropOffsets[i + 2] = rewriter.getIndexAttr(cutLow);
        cropSizes[i + 2] = rewriter.getIndexAttr(cropShape[i + 2]);
      }
      SmallVector<OpFoldResult> ones(paddedType.getRank(),
                                     rewriter.getIndexAttr(1));
      padded = rewriter.create<tensor::ExtractSliceOp>(
          loc, RankedTensorType::get(cropShape, element), padded, cropOffsets,
          cropSizes, ones);
    }
    // 3. Kernel: W[C, F/G, k] -> W'[F, C/G, k] with k flipped.
    int64_t perGroupIn = channels / groups;
    SmallVector<int64_t> flippedShape = {perGroupOut * groups, perGroupIn};
    flippedShape.append(kernel.begin(), kernel.end());
    auto flippedType = RankedTensorType::get(flippedShape, element);
    int64_t wRank = flippedType.getRank();
    Value flipped = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{flippedType}, ValueRange{},
        ValueRange{rewriter.create<tensor::EmptyOp>(loc, flippedShape,
                                                    element)},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(wRank)},
        SmallVector<utils::IteratorType>(wRank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          auto c = [&](int64_t v) {
            return b.create<arith::ConstantIndexOp>(l, v);
          };
          Value f = b.create<linalg::IndexOp>(l, 0);
          Value ci = b.create<linalg::IndexOp>(l, 1);
          Value g = b.create<arith::DivUIOp>(l, f, c(perGroupOut));
          Value fi = b.create<arith::RemUIOp>(l, f, c(perGroupOut));
          SmallVector<Value> at = {
              b.create<arith::AddIOp>(
                  l, b.create<arith::MulIOp>(l, g, c(perGroupIn)), ci),
              fi};
          for (int64_t i = 0; i < spatial; ++i)
            at.push_back(b.create<arith::SubIOp>(
                l, c(kernel[i] - 1), b.create<linalg::IndexOp>(l, 2 + i)));
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<tensor::ExtractOp>(l, w, at)});
        }).getResult(0);
    // 4. Output initialised with the bias, then a stride-1 convolution.
    auto accType = resultType.clone(acc);
    SmallVector<OpFoldResult> outSizes = {
        rewriter.create<tensor::DimOp>(loc, x, 0).getResult()};
    for (int64_t i = 1; i < resultType.getRank(); ++i)
      outSizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(i)));
    Value init = buildConvInit(rewriter, loc, adaptor.getB(), accType,
                               outSizes, perGroupOut * groups);
    SmallVector<int64_t> unitStrides(spatial, 1);
    Value result = ConvOpLowering::buildConv(rewriter, loc, padded, flipped,
                                             init, unitStrides, dilations,
                                             groups);
    rewriter.replaceOp(op, convertTensor(rewriter, loc, result, storage));
    return success();
  }
};

/// Einsum as one linalg.generic: a loop per letter, output letters
/// parallel, the others reduced.
struct EinsumOpLowering : public OpConversionPattern<EinsumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::string equation;
    for (char c : op.getEquation())
      if (c != ' ')
        equation.push_back(c);
    StringRef eq(equation);
    auto [lhs, rhs] = eq.split("->");
    bool explicitOutput = eq.contains("->");
    SmallVector<StringRef> terms;
    lhs.split(terms, ',');
    ValueRange inputs = adaptor.getInputs();
    if (terms.size() != inputs.size())
      return notLowerable(op, "malformed equation");
    // Ellipses become fresh upper-case letters (right-aligned).
    int64_t ellipsisRank = 0;
    for (auto [term, input] : llvm::zip(terms, inputs)) {
      int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
      if (term.contains("..."))
        ellipsisRank = std::max<int64_t>(
            ellipsisRank, rank - static_cast<int64_t>(term.size() - 3));
    }
    auto expand = [&](StringRef term, int64_t rank) {
      std::string out;
      size_t at = term.find("...");
      if (at == StringRef::npos)
        return term.str();
      int64_t count = rank - static_cast<int64_t>(term.size() - 3);
      std::string fresh;
      for (int64_t i = ellipsisRank - count; i < ellipsisRank; ++i)
        fresh.push_back(static_cast<char>('A' + i));
      return (term.take_front(at) + fresh + term.drop_front(at + 3)).str();
    };
    SmallVector<std::string> expanded;
    for (auto [term, input] : llvm::zip(terms, inputs))
      expanded.push_back(
          expand(term, cast<RankedTensorType>(input.getType()).getRank()));
    std::string output;
    if (explicitOutput) {
      std::string fresh;
      for (int64_t i = 0; i < ellipsisRank; ++i)
        fresh.push_back(static_cast<char>('A' + i));
      size_t at = rhs.find("...");
      output = at == StringRef::npos
                   ? rhs.str()
                   : (rhs.take_front(at) + fresh + rhs.drop_front(at + 3)).str();
    } else {
      // Implicit: ellipsis dims, then letters seen once, alphabetically.
      std::map<char, int> counts;
      for (const std::string &t : expanded)
        for (char c : t)
          ++counts[c];
      for (int64_t i = 0; i < ellipsisRank; ++i)
        output.push_back(static_cast<char>('A' + i));
      for (auto [c, n] : counts)
        if (n == 1 && std::islower(c))
          output.push_back(c);
    }
    // Loop order: output letters, then the reduced ones.
    std::string letters = output;
    for (const std::string &t : expanded)
      for (char c : t)
        if (letters.find(c) == std::string::npos)
          letters.push_back(c);
    int64_t loops = letters.size();
    MLIRContext *context = rewriter.getContext();
    auto mapOf = [&](const std::string &term) {
      SmallVector<AffineExpr> exprs;
      for (char c : term)
        exprs.push_back(getAffineDimExpr(letters.find(c), context));
      return AffineMap::get(loops, 0, exprs, context);
    };
    SmallVector<AffineMap> maps;
    for (const std::string &t : expanded)
      maps.push_back(mapOf(t));
    maps.push_back(mapOf(output));
    SmallVector<utils::IteratorType> iterators;
    for (int64_t i = 0; i < loops; ++i)
      iterators.push_back(i < static_cast<int64_t>(output.size())
                              ? utils::IteratorType::parallel
                              : utils::IteratorType::reduction);
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Type storage = resultType.getElementType();
    Type acc = accumulatorType(op, storage);
    SmallVector<OpFoldResult> sizes;
    for (char c : output) {
      OpFoldResult size = rewriter.getIndexAttr(1);
      for (auto [t, input] : llvm::zip(expanded, inputs)) {
        size_t at = t.find(c);
        if (at != std::string::npos) {
          size = rewriter.create<tensor::DimOp>(loc, input, at).getResult();
          break;
        }
      }
      sizes.push_back(size);
    }
    auto accType = resultType.clone(acc);
    Value init = filledTensor(rewriter, loc, accType, sizes,
                              constantScalar(rewriter, loc, acc, 0));
    Value result = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{accType}, inputs, ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Type compute = getComputeType(acc);
          Value product;
          for (Value arg : args.drop_back()) {
            Value v = convertScalar(b, l, toComputeType(b, l, arg), compute,
                                    false, false);
            product = !product ? v
                      : isa<FloatType>(compute)
                          ? b.create<arith::MulFOp>(l, product, v).getResult()
                          : b.create<arith::MulIOp>(l, product, v).getResult();
          }
          Value a = toComputeType(b, l, args.back());
          Value sum = isa<FloatType>(compute)
                          ? b.create<arith::AddFOp>(l, a, product).getResult()
                          : b.create<arith::AddIOp>(l, a, product).getResult();
          b.create<linalg::YieldOp>(
              l, ValueRange{convertScalar(b, l, sum, acc, false, false)});
        }).getResult(0);
    rewriter.replaceOp(op, convertTensor(rewriter, loc, result, storage));
    return success();
  }
};


//===----------------------------------------------------------------------===//
// Losses and more normalisations
//===----------------------------------------------------------------------===//

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
        // Out-of-range targets are clamped (never read out of bounds).
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
            nb, l, toComputeType(nb, l, nb.create<tensor::ExtractOp>(l, logProb, at)),
            acc, false, false);
        Value w = constantScalar(nb, l, acc, 1);
        if (weight)
          w = convertScalar(
              nb, l,
              toComputeType(nb, l, nb.create<tensor::ExtractOp>(
                                       l, weight, ValueRange{index})),
              acc, false, false);
        w = nb.create<arith::SelectOp>(l, ignored, zero, w);
        Value loss = nb.create<arith::NegFOp>(
            l, nb.create<arith::MulFOp>(l, lp, w));
        nb.create<linalg::YieldOp>(l, ValueRange{loss, w});
      });
  Value losses = generic.getResult(0), weights = generic.getResult(1);
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
  return buildElementwise(
      b, loc, {total, weightSum}, RankedTensorType::get({}, storage),
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
          Value isZero = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ,
                                                 n, zero);
          return b.create<arith::SelectOp>(
              l, isZero, zero, b.create<arith::DivFOp>(l, a[0], n));
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
    Value result = buildElementwise(
        rewriter, loc, {m.centered, m.invStdDev},
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
    Value normalized = buildElementwise(
        rewriter, loc, {m.centered, m.invStdDev},
        withElementType(m.centered, compute),
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return b.create<arith::MulFOp>(l, a[0], a[1]);
        });
    Value back = reshapeTensor(rewriter, loc, normalized,
                               xType.clone(compute),
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
            {reshapeTensor(rewriter, loc, v,
                           RankedTensorType::get({groups, 1},
                                                 t.getElementType()),
                           {})},
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
    Value squares = buildElementwise(
        rewriter, loc, {x}, xType.clone(compute),
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
    SmallVector<AffineExpr> inExprs, winExprs = {getAffineDimExpr(rank, context)},
                                     outExprs;
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
    Value sums = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{xType.clone(compute)}, ValueRange{padded, window},
        ValueRange{filledTensor(rewriter, loc, xType.clone(compute),
                                getSizes(rewriter, loc, x),
                                constantScalar(rewriter, loc, compute, 0))},
        SmallVector<AffineMap>{AffineMap::get(loops, 0, inExprs, context),
                               AffineMap::get(loops, 0, winExprs, context),
                               AffineMap::get(loops, 0, outExprs, context)},
        iterators, [](OpBuilder &b, Location l, ValueRange args) {
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::AddFOp>(l, args[0], args[2])});
        }).getResult(0);
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

void populateReductionAndNNPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
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
               ArgReduceOpLowering<ArgMinOp, false>,
               SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>,
               SoftmaxLowering<HardmaxOp>, MatMulOpLowering, GemmOpLowering,
               ConvOpLowering, MaxPoolOpLowering,
               AvgLpPoolOpLowering<AveragePoolOp, false>,
               AvgLpPoolOpLowering<LpPoolOp, true>,
               GlobalPoolOpLowering<GlobalAveragePoolOp>,
               GlobalPoolOpLowering<GlobalMaxPoolOp>,
               GlobalPoolOpLowering<GlobalLpPoolOp>, BatchNormOpLowering,
               LayerNormOpLowering, InstanceNormOpLowering, RMSNormOpLowering,
               ConvTransposeOpLowering, EinsumOpLowering, NllLossOpLowering,
               SoftmaxCrossEntropyLossOpLowering, LpNormalizationOpLowering,
               MeanVarianceNormalizationOpLowering,
               GroupNormalizationOpLowering, LRNOpLowering>(
      converter, context);
}

} // namespace mlir::amp::lowering
