//===- LinearAlgebra.cpp - Det
//---------------------------------------------===//
//
// Det(X): the determinants of X's trailing square matrices ([..., M, M] ->
// [...]), by LU decomposition with partial pivoting (LAPACK's getrf, which
// numpy.linalg.det calls): for each column k, the row with the largest
// |a_ik| (i >= k, the first on ties) is swapped into place (each swap
// flips the sign), the determinant takes the pivot as a factor, and the
// rows below are eliminated. A zero pivot makes the determinant 0 (the
// column is then skipped instead of dividing by zero). Every matrix is
// copied into f64 and decomposed there in sequential scf loops over a
// loop-carried tensor (bufferized in place); the result is rounded once
// to X's type. M = 0 gives 1, the empty product.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {

namespace {

struct DetOpLowering : public OpConversionPattern<DetOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DetOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    if (rank < 2)
      return notLowerable(op, "an input of rank below 2");
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    Type f64 = rewriter.getF64Type();
    auto c = [&](OpBuilder &b, Location l, int64_t v) -> Value {
      return b.create<arith::ConstantIndexOp>(l, v);
    };

    // [..., M, M] -> [B, M, M] in f64.
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, x);
    Value batch = c(rewriter, loc, 1);
    for (int64_t d = 0; d < rank - 2; ++d)
      batch = rewriter.create<arith::MulIOp>(
          loc, batch, indexValue(rewriter, loc, sizes[d]));
    Value m = indexValue(rewriter, loc, sizes[rank - 1]);
    int64_t staticBatch = 1;
    for (int64_t d = 0; d < rank - 2; ++d) {
      if (ShapedType::isDynamic(xType.getDimSize(d))) {
        staticBatch = ShapedType::kDynamic;
        break;
      }
      staticBatch *= xType.getDimSize(d);
    }
    auto matricesType = RankedTensorType::get(
        {staticBatch, xType.getDimSize(rank - 2), xType.getDimSize(rank - 1)},
        xType.getElementType());
    Value matrices = reshapeTensor(rewriter, loc, x, matricesType,
                                   {batch, sizes[rank - 2], sizes[rank - 1]});
    matrices = convertTensor(rewriter, loc, matrices, f64);

    auto detsType = RankedTensorType::get({staticBatch}, f64);
    Value dets = emptyTensor(rewriter, loc, detsType, {batch});
    Value zeroF = constantScalar(rewriter, loc, f64, 0);
    Value oneF = constantScalar(rewriter, loc, f64, 1);
    Value one = c(rewriter, loc, 1);
    Value zero = c(rewriter, loc, 0);

    auto perMatrix = rewriter.create<scf::ForOp>(
        loc, zero, batch, one, ValueRange{matrices, dets},
        [&](OpBuilder &b, Location l, Value n, ValueRange carried) {
          auto at = [&](OpBuilder &nb, Location nl, Value a, Value i,
                        Value j) -> Value {
            return nb.create<tensor::ExtractOp>(nl, a, ValueRange{n, i, j});
          };
          auto columns = b.create<scf::ForOp>(
              l, zero, m, one, ValueRange{carried[0], oneF},
              [&](OpBuilder &kb, Location kl, Value k, ValueRange state) {
                Value a = state[0], det = state[1];
                // The pivot row: the first largest |a_ik|, i >= k.
                auto search = kb.create<scf::ForOp>(
                    kl, k, m, one,
                    ValueRange{
                        k, kb.create<math::AbsFOp>(kl, at(kb, kl, a, k, k))},
                    [&](OpBuilder &sb, Location sl, Value i, ValueRange best) {
                      Value v =
                          sb.create<math::AbsFOp>(sl, at(sb, sl, a, i, k));
                      Value better = sb.create<arith::CmpFOp>(
                          sl, arith::CmpFPredicate::OGT, v, best[1]);
                      sb.create<scf::YieldOp>(
                          sl, ValueRange{sb.create<arith::SelectOp>(sl, better,
                                                                    i, best[0]),
                                         sb.create<arith::SelectOp>(
                                             sl, better, v, best[1])});
                    });
                Value p = search.getResult(0);
                // Swap rows k and p (columns k.. suffice: the ones before
                // are eliminated and no longer read).
                Value swapped =
                    kb.create<arith::CmpIOp>(kl, arith::CmpIPredicate::ne, p, k)
                        .getResult();
                auto swap = kb.create<scf::IfOp>(
                    kl, swapped,
                    [&](OpBuilder &tb, Location tl) {
                      auto rows = tb.create<scf::ForOp>(
                          tl, k, m, one, ValueRange{a},
                          [&](OpBuilder &rb, Location rl, Value j,
                              ValueRange cur) {
                            Value top = at(rb, rl, cur[0], k, j);
                            Value pivotRow = at(rb, rl, cur[0], p, j);
                            Value out = rb.create<tensor::InsertOp>(
                                rl, pivotRow, cur[0], ValueRange{n, k, j});
                            out = rb.create<tensor::InsertOp>(
                                rl, top, out, ValueRange{n, p, j});
                            rb.create<scf::YieldOp>(rl, out);
                          });
                      tb.create<scf::YieldOp>(tl, rows.getResult(0));
                    },
                    [&](OpBuilder &eb, Location el) {
                      eb.create<scf::YieldOp>(el, a);
                    });
                a = swap.getResult(0);
                Value pivot = at(kb, kl, a, k, k);
                Value sign = kb.create<arith::SelectOp>(
                    kl, swapped, constantScalar(kb, kl, f64, -1), oneF);
                det = kb.create<arith::MulFOp>(
                    kl, det, kb.create<arith::MulFOp>(kl, sign, pivot));
                // A zero pivot: the determinant is 0; eliminate nothing.
                Value isZero = kb.create<arith::CmpFOp>(
                    kl, arith::CmpFPredicate::OEQ, pivot, zeroF);
                Value divisor =
                    kb.create<arith::SelectOp>(kl, isZero, oneF, pivot);
                Value next = kb.create<arith::AddIOp>(kl, k, one);
                auto below = kb.create<scf::ForOp>(
                    kl, next, m, one, ValueRange{a},
                    [&](OpBuilder &ib, Location il, Value i, ValueRange cur) {
                      Value factor = ib.create<arith::DivFOp>(
                          il, at(ib, il, cur[0], i, k), divisor);
                      factor =
                          ib.create<arith::SelectOp>(il, isZero, zeroF, factor);
                      auto row = ib.create<scf::ForOp>(
                          il, next, m, one, ValueRange{cur[0]},
                          [&](OpBuilder &jb, Location jl, Value j,
                              ValueRange r) {
                            Value v = jb.create<arith::SubFOp>(
                                jl, at(jb, jl, r[0], i, j),
                                jb.create<arith::MulFOp>(
                                    jl, factor, at(jb, jl, r[0], k, j)));
                            jb.create<scf::YieldOp>(
                                jl, ValueRange{jb.create<tensor::InsertOp>(
                                        jl, v, r[0], ValueRange{n, i, j})});
                          });
                      ib.create<scf::YieldOp>(il, row.getResults());
                    });
                kb.create<scf::YieldOp>(kl,
                                        ValueRange{below.getResult(0), det});
              });
          Value out = b.create<tensor::InsertOp>(l, columns.getResult(1),
                                                 carried[1], ValueRange{n});
          b.create<scf::YieldOp>(l, ValueRange{columns.getResult(0), out});
        });
    Value result = convertTensor(rewriter, loc, perMatrix.getResult(1),
                                 resultType.getElementType());
    SmallVector<OpFoldResult> outSizes(sizes.begin(), sizes.end() - 2);
    result = reshapeTensor(rewriter, loc, result,
                           RankedTensorType::get(resultType.getShape(),
                                                 resultType.getElementType()),
                           outSizes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLinearAlgebraPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<DetOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
