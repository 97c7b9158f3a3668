//===- Gemm.cpp - MatMul, Gemm and Einsum ---------------------------------===//
//
// fp32, f64 and integer GEMMs stay named linalg ops (matmul,
// matmul_transpose_b, batch_matmul: library calls for a backend);
// f16/bf16 accumulation is a generic that rounds after every step.
// Einsum is one linalg.generic with a loop per letter.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "amp/Dialect/Amp/Semantics/Einsum.h"

#include <cctype>
#include <map>

namespace mlir::amp::lowering {

Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs, Value init,
                  bool transposeB) {
  auto initType = cast<RankedTensorType>(init.getType());
  bool batched = initType.getRank() == 3;
  Type acc = initType.getElementType();
  if (!isLowPrecisionFloat(acc)) {
    Operation *matmul;
    if (batched)
      matmul = transposeB
                   ? b.create<linalg::BatchMatmulTransposeBOp>(
                          loc, TypeRange{initType}, ValueRange{lhs, rhs},
                          ValueRange{init})
                         .getOperation()
                   : b.create<linalg::BatchMatmulOp>(loc, TypeRange{initType},
                                                     ValueRange{lhs, rhs},
                                                     ValueRange{init})
                         .getOperation();
    else
      matmul = transposeB ? b.create<linalg::MatmulTransposeBOp>(
                                 loc, TypeRange{initType}, ValueRange{lhs, rhs},
                                 ValueRange{init})
                                .getOperation()
                          : b.create<linalg::MatmulOp>(loc, TypeRange{initType},
                                                       ValueRange{lhs, rhs},
                                                       ValueRange{init})
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
  SmallVector<AffineMap> maps = {
      with({m, k}), transposeB ? with({n, k}) : with({k, n}), with({m, n})};
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{initType}, ValueRange{lhs, rhs}, ValueRange{init},
          maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            buildMultiplyAccumulate(nb, l, args, acc);
          })
      .getResult(0);
}

namespace {

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
          SmallVector<AffineMap>{AffineMap::get(rank, 0, exprs, b.getContext()),
                                 b.getMultiDimIdentityMap(rank)},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
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
      Value flatLhs =
          reshapeTensor(b, loc, lhs, flatLhsType, {OpFoldResult(rowCount), k});
      auto flatType = RankedTensorType::get({rows, staticN}, acc);
      Value init =
          filledTensor(b, loc, flatType, {OpFoldResult(rowCount), n}, zero);
      Value flat = buildMatmul(b, loc, flatLhs, rhs, init, false);
      product = reshapeTensor(b, loc, flat,
                              RankedTensorType::get(fullShape, acc), fullSizes);
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
                              RankedTensorType::get(fullShape, acc), fullSizes);
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
    semantics::GemmAttrs attrs = semantics::GemmAttrs::get(op);
    if (attrs.transA)
      a = transpose2d(rewriter, loc, a);
    bool transposeB = attrs.transB;
    auto accType = resultType.clone(acc);
    SmallVector<OpFoldResult> aSizes = getSizes(rewriter, loc, a);
    SmallVector<OpFoldResult> bSizes = getSizes(rewriter, loc, bMat);
    SmallVector<OpFoldResult> sizes = {aSizes[0],
                                       transposeB ? bSizes[0] : bSizes[1]};
    double alpha = attrs.alpha, beta = attrs.beta;
    Value c = adaptor.getC();
    bool hasC = !isNone(c) && beta != 0;
    Value init;
    if (hasC && alpha == 1) {
      // Y = beta * C + A x B, accumulated into the broadcast C.
      init = buildElementwise(
          rewriter, loc, {c}, accType,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value v =
                convertScalar(b, l, args[0], getComputeType(acc), false, false);
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
        .create<linalg::TransposeOp>(loc, value, init, ArrayRef<int64_t>{1, 0})
        .getResult()[0];
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
    ValueRange inputs = adaptor.getInputs();
    SmallVector<int64_t> ranks;
    for (Value input : inputs)
      ranks.push_back(cast<RankedTensorType>(input.getType()).getRank());
    std::string why;
    auto resolved = semantics::resolveEinsum(
        op.getEquation(), ranks, [&](const Twine &message) { why = message.str(); });
    if (failed(resolved))
      return notLowerable(op, why);
    const SmallVector<std::string> &expanded = resolved->inputs;
    const std::string &output = resolved->output;
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
    Value result =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{accType}, inputs, ValueRange{init}, maps,
                iterators,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Type compute = getComputeType(acc);
                  Value product;
                  for (Value arg : args.drop_back()) {
                    Value v = convertScalar(b, l, toComputeType(b, l, arg),
                                            compute, false, false);
                    product =
                        !product ? v
                        : isa<FloatType>(compute)
                            ? b.create<arith::MulFOp>(l, product, v).getResult()
                            : b.create<arith::MulIOp>(l, product, v)
                                  .getResult();
                  }
                  Value a = toComputeType(b, l, args.back());
                  Value sum =
                      isa<FloatType>(compute)
                          ? b.create<arith::AddFOp>(l, a, product).getResult()
                          : b.create<arith::AddIOp>(l, a, product).getResult();
                  b.create<linalg::YieldOp>(
                      l,
                      ValueRange{convertScalar(b, l, sum, acc, false, false)});
                })
            .getResult(0);
    rewriter.replaceOp(op, convertTensor(rewriter, loc, result, storage));
    return success();
  }
};

} // namespace

void populateGemmPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns) {
  patterns.add<MatMulOpLowering, GemmOpLowering, EinsumOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
