//===- Detection.cpp - NonMaxSuppression, RoiAlign ------------------------===//
//
// NonMaxSuppression (Semantics/Detection.h) as sequential loops: the
// result is allocated for the most rows it can have, B * C * min(N, max),
// and cut to the rows written. Per (batch, class) an i1 vector marks the
// boxes still candidates (score above score_threshold); each round picks
// the candidate of highest score (the lowest index among equal scores),
// writes its row, and drops it and every candidate whose IoU with it is
// above iou_threshold. That selects what the reference's sorted visit
// selects: a candidate survives to its turn exactly when no selected box
// of higher rank suppresses it. O(selected x N) per class.
//
// RoiAlign: one linalg.generic over [num_rois, C, output_height,
// output_width] whose body reads its ROI, sizes the sampling grid (fixed,
// or from the ROI's size at run time) and loops over the samples (scf.for),
// each bilinear sample read from X where it lies inside [-1, size]. Batch
// indices are checked at run time (an index outside [0, N) is an error
// naming the node).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {

namespace {

/// One box's extent: [xMin, xMax] x [yMin, yMax].
struct Extent {
  Value xMin, xMax, yMin, yMax;
};

/// Box `box` of batch `batch` read from boxes [B, N, 4] in either format.
Extent readBox(OpBuilder &b, Location loc, Value boxes, Value batch, Value box,
               bool centerPointBox) {
  Value coords[4];
  for (int64_t i = 0; i < 4; ++i)
    coords[i] = b.create<tensor::ExtractOp>(
        loc, boxes,
        ValueRange{batch, box, b.create<arith::ConstantIndexOp>(loc, i)});
  if (centerPointBox) {
    // [x_center, y_center, width, height].
    Value half = constantScalar(b, loc, b.getF32Type(), 0.5);
    Value halfW = b.create<arith::MulFOp>(loc, coords[2], half);
    Value halfH = b.create<arith::MulFOp>(loc, coords[3], half);
    return {b.create<arith::SubFOp>(loc, coords[0], halfW),
            b.create<arith::AddFOp>(loc, coords[0], halfW),
            b.create<arith::SubFOp>(loc, coords[1], halfH),
            b.create<arith::AddFOp>(loc, coords[1], halfH)};
  }
  // [y1, x1, y2, x2], either corner first.
  return {b.create<arith::MinimumFOp>(loc, coords[1], coords[3]),
          b.create<arith::MaximumFOp>(loc, coords[1], coords[3]),
          b.create<arith::MinimumFOp>(loc, coords[0], coords[2]),
          b.create<arith::MaximumFOp>(loc, coords[0], coords[2])};
}

/// Whether box `other` is suppressed by `kept`: both intersect in both axes
/// with positive areas and union, and their IoU is above `threshold`.
Value suppresses(OpBuilder &b, Location loc, const Extent &kept,
                 const Extent &other, Value threshold) {
  auto gt = [&](Value x, Value y) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, y);
  };
  auto both = [&](Value x, Value y) {
    return b.create<arith::AndIOp>(loc, x, y);
  };
  Value xLo = b.create<arith::MaximumFOp>(loc, kept.xMin, other.xMin);
  Value xHi = b.create<arith::MinimumFOp>(loc, kept.xMax, other.xMax);
  Value yLo = b.create<arith::MaximumFOp>(loc, kept.yMin, other.yMin);
  Value yHi = b.create<arith::MinimumFOp>(loc, kept.yMax, other.yMax);
  auto area = [&](Value x0, Value x1, Value y0, Value y1) -> Value {
    return b.create<arith::MulFOp>(loc, b.create<arith::SubFOp>(loc, x1, x0),
                                   b.create<arith::SubFOp>(loc, y1, y0));
  };
  Value intersection = area(xLo, xHi, yLo, yHi);
  Value keptArea = area(kept.xMin, kept.xMax, kept.yMin, kept.yMax);
  Value otherArea = area(other.xMin, other.xMax, other.yMin, other.yMax);
  Value unionArea = b.create<arith::SubFOp>(
      loc, b.create<arith::AddFOp>(loc, keptArea, otherArea), intersection);
  Value zero = constantScalar(b, loc, b.getF32Type(), 0);
  Value valid = both(both(gt(xHi, xLo), gt(yHi, yLo)),
                     both(both(gt(intersection, zero), gt(keptArea, zero)),
                          both(gt(otherArea, zero), gt(unionArea, zero))));
  Value iou = b.create<arith::DivFOp>(loc, intersection, unionArea);
  return both(valid, gt(iou, threshold));
}

/// The single element of an optional scalar operand, or `fallback`.
Value scalarOr(OpBuilder &b, Location loc, Value operand, Value fallback) {
  return isNone(operand) ? fallback : extractScalar(b, loc, operand);
}

struct NonMaxSuppressionOpLowering
    : public OpConversionPattern<NonMaxSuppressionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NonMaxSuppressionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value boxes = adaptor.getBoxes(), scores = adaptor.getScores();
    bool center = op.getCenterPointBox() == 1;
    auto c = [&](int64_t v) -> Value {
      return rewriter.create<arith::ConstantIndexOp>(loc, v);
    };
    Value zero = c(0), one = c(1);
    Value batches = rewriter.create<tensor::DimOp>(loc, scores, 0);
    Value classes = rewriter.create<tensor::DimOp>(loc, scores, 1);
    Value count = rewriter.create<tensor::DimOp>(loc, scores, 2);
    // Sizes that shape inference could not compare are checked here; the
    // loops then run over the smaller size, so that a mismatch (reported
    // after the run) reads past neither tensor.
    std::string node = describeNode(op);
    for (auto [dim, target, what] :
         {std::make_tuple(0, &batches, "batches"),
          std::make_tuple(1, &count, "boxes per batch")}) {
      Value other = *target;
      if (!cast<RankedTensorType>(boxes.getType()).isDynamicDim(dim) &&
          !cast<RankedTensorType>(scores.getType())
               .isDynamicDim(dim == 0 ? 0 : 2))
        continue;
      Value size = rewriter.create<tensor::DimOp>(loc, boxes, dim);
      emitRuntimeCheck(
          rewriter, loc,
          rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, size,
                                         other),
          size, other,
          node + ": boxes have {value} " + what + " but scores {bound}");
      *target = rewriter.create<arith::MinUIOp>(loc, size, other);
    }
    // The parameters: absent ones select nothing (max 0), suppress any
    // overlap (IoU threshold 0) and keep every score.
    Value maxPerClass = scalarOr(
        rewriter, loc, adaptor.getMaxOutputBoxesPerClass(),
        rewriter.create<arith::ConstantIntOp>(loc, 0, rewriter.getI64Type()));
    maxPerClass = rewriter.create<arith::MaxSIOp>(
        loc, maxPerClass,
        rewriter.create<arith::ConstantIntOp>(loc, 0, rewriter.getI64Type()));
    Value perClass = rewriter.create<arith::MinUIOp>(
        loc, toIndex(rewriter, loc, maxPerClass), count);
    Value iouThreshold =
        scalarOr(rewriter, loc, adaptor.getIouThreshold(),
                 constantScalar(rewriter, loc, rewriter.getF32Type(), 0));
    Value scoreThreshold =
        isNone(adaptor.getScoreThreshold())
            ? Value()
            : extractScalar(rewriter, loc, adaptor.getScoreThreshold());

    Value capacity = rewriter.create<arith::MulIOp>(
        loc, rewriter.create<arith::MulIOp>(loc, batches, classes), perClass);
    auto rowsType =
        RankedTensorType::get({ShapedType::kDynamic, 3}, rewriter.getI64Type());
    Value rows = rewriter.create<tensor::EmptyOp>(loc, rowsType.getShape(),
                                                  rowsType.getElementType(),
                                                  ValueRange{capacity});
    auto maskType =
        RankedTensorType::get({ShapedType::kDynamic}, rewriter.getI1Type());

    auto batchLoop = rewriter.create<scf::ForOp>(
        loc, zero, batches, one, ValueRange{rows, zero},
        [&](OpBuilder &b, Location l, Value batch, ValueRange batchCarried) {
          auto classLoop = b.create<scf::ForOp>(
              l, zero, classes, one, batchCarried,
              [&](OpBuilder &b, Location l, Value cls, ValueRange carried) {
                auto score = [&](OpBuilder &nb, Value box) -> Value {
                  return nb.create<tensor::ExtractOp>(
                      l, scores, ValueRange{batch, cls, box});
                };
                // The candidates.
                Value mask = b.create<tensor::EmptyOp>(
                    l, maskType.getShape(), b.getI1Type(), ValueRange{count});
                auto init = b.create<scf::ForOp>(
                    l, zero, count, one, ValueRange{mask},
                    [&](OpBuilder &nb, Location nl, Value box, ValueRange m) {
                      Value keep =
                          scoreThreshold
                              ? nb.create<arith::CmpFOp>(
                                      nl, arith::CmpFPredicate::OGT,
                                      score(nb, box), scoreThreshold)
                                    .getResult()
                              : nb.create<arith::ConstantIntOp>(nl, 1, 1)
                                    .getResult();
                      nb.create<scf::YieldOp>(
                          nl, ValueRange{nb.create<tensor::InsertOp>(
                                  nl, keep, m[0], ValueRange{box})});
                    });
                Type i64 = b.getI64Type();
                SmallVector<Type> state = {b.getIndexType(), maskType, rowsType,
                                           b.getIndexType()};
                SmallVector<Type> afterTypes(state);
                afterTypes.push_back(b.getIndexType());
                // The results are the condition's operands: the state and
                // the last best index.
                auto rounds =
                    b.create<scf::WhileOp>(l, TypeRange(afterTypes),
                                           ValueRange{zero, init.getResult(0),
                                                      carried[0], carried[1]});
                // Before: the best candidate left (index N when none).
                {
                  Block *before =
                      b.createBlock(&rounds.getBefore(), {}, state,
                                    SmallVector<Location>(state.size(), l));
                  OpBuilder bb = OpBuilder::atBlockBegin(before);
                  Value mask = before->getArgument(1);
                  Value lowest =
                      constantScalar(bb, l, bb.getF32Type(),
                                     -std::numeric_limits<double>::infinity());
                  auto scan = bb.create<scf::ForOp>(
                      l, zero, count, one, ValueRange{count, lowest},
                      [&](OpBuilder &sb, Location sl, Value box,
                          ValueRange best) {
                        Value alive =
                            sb.create<tensor::ExtractOp>(sl, mask, box);
                        Value s = score(sb, box);
                        Value none = sb.create<arith::CmpIOp>(
                            sl, arith::CmpIPredicate::eq, best[0], count);
                        Value higher = sb.create<arith::CmpFOp>(
                            sl, arith::CmpFPredicate::OGT, s, best[1]);
                        Value take = sb.create<arith::AndIOp>(
                            sl, alive,
                            sb.create<arith::OrIOp>(sl, none, higher));
                        sb.create<scf::YieldOp>(
                            sl, ValueRange{sb.create<arith::SelectOp>(
                                               sl, take, box, best[0]),
                                           sb.create<arith::SelectOp>(
                                               sl, take, s, best[1])});
                      });
                  Value found = bb.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::ult, scan.getResult(0), count);
                  Value room = bb.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::ult, before->getArgument(0),
                      perClass);
                  SmallVector<Value> forwarded(before->getArguments());
                  forwarded.push_back(scan.getResult(0));
                  bb.create<scf::ConditionOp>(
                      l, bb.create<arith::AndIOp>(l, found, room), forwarded);
                }
                // After: write (batch, class, best), drop it and the boxes
                // it suppresses.
                {
                  Block *after = b.createBlock(
                      &rounds.getAfter(), {}, afterTypes,
                      SmallVector<Location>(afterTypes.size(), l));
                  OpBuilder ab = OpBuilder::atBlockBegin(after);
                  Value selected = after->getArgument(0);
                  Value mask = after->getArgument(1);
                  Value out = after->getArgument(2);
                  Value written = after->getArgument(3);
                  Value best = after->getArgument(4);
                  SmallVector<Value> row = {batch, cls, best};
                  for (auto [column, v] : llvm::enumerate(row))
                    out = ab.create<tensor::InsertOp>(
                        l, ab.create<arith::IndexCastOp>(l, i64, v), out,
                        ValueRange{written, ab.create<arith::ConstantIndexOp>(
                                                l, column)});
                  Extent kept = readBox(ab, l, boxes, batch, best, center);
                  auto suppress = ab.create<scf::ForOp>(
                      l, zero, count, one, ValueRange{mask},
                      [&](OpBuilder &sb, Location sl, Value box, ValueRange m) {
                        Value alive =
                            sb.create<tensor::ExtractOp>(sl, m[0], box);
                        auto drop = sb.create<scf::IfOp>(
                            sl, alive,
                            [&](OpBuilder &tb, Location tl) {
                              Extent other =
                                  readBox(tb, tl, boxes, batch, box, center);
                              Value gone =
                                  suppresses(tb, tl, kept, other, iouThreshold);
                              Value still = tb.create<arith::XOrIOp>(
                                  tl, gone,
                                  tb.create<arith::ConstantIntOp>(tl, 1, 1));
                              tb.create<scf::YieldOp>(
                                  tl, ValueRange{tb.create<tensor::InsertOp>(
                                          tl, still, m[0], ValueRange{box})});
                            },
                            [&](OpBuilder &eb, Location el) {
                              eb.create<scf::YieldOp>(el, m[0]);
                            });
                        sb.create<scf::YieldOp>(sl, drop.getResults());
                      });
                  Value dropped = ab.create<tensor::InsertOp>(
                      l, ab.create<arith::ConstantIntOp>(l, 0, 1),
                      suppress.getResult(0), ValueRange{best});
                  ab.create<scf::YieldOp>(
                      l, ValueRange{ab.create<arith::AddIOp>(l, selected, one),
                                    dropped, out,
                                    ab.create<arith::AddIOp>(l, written, one)});
                }
                b.setInsertionPointAfter(rounds);
                b.create<scf::YieldOp>(
                    l, ValueRange{rounds.getResult(2), rounds.getResult(3)});
              });
          b.create<scf::YieldOp>(l, classLoop.getResults());
        });
    Value result = rewriter.create<tensor::ExtractSliceOp>(
        loc, batchLoop.getResult(0), ArrayRef<OpFoldResult>{zero, zero},
        ArrayRef<OpFoldResult>{batchLoop.getResult(1),
                               rewriter.getIndexAttr(3)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                               rewriter.getIndexAttr(1)});
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    if (result.getType() != type)
      result = rewriter.create<tensor::CastOp>(loc, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct RoiAlignOpLowering : public OpConversionPattern<RoiAlignOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RoiAlignOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX(), rois = adaptor.getRois();
    Value batchIndices = adaptor.getBatchIndices();
    auto attrs = semantics::RoiAlignAttrs::get(op);
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    // f64 computes in f64, the other float types in f32 (onnxruntime's
    // float kernels).
    Type ct = type.getElementType().isF64() ? Type(rewriter.getF64Type())
                                            : Type(rewriter.getF32Type());
    Value images = rewriter.create<tensor::DimOp>(loc, x, 0);
    Value height = rewriter.create<tensor::DimOp>(loc, x, 2);
    Value width = rewriter.create<tensor::DimOp>(loc, x, 3);
    checkIndexRange(rewriter, loc, op, batchIndices, images,
                    /*allowNegative=*/false, "batch index");
    // rois and batch_indices must have one row per ROI; when either count
    // is only known at run time it is checked, and the result has the
    // smaller count so that no read goes past either.
    Value roiCount = rewriter.create<tensor::DimOp>(loc, rois, 0);
    Value indexCount = rewriter.create<tensor::DimOp>(loc, batchIndices, 0);
    if (cast<RankedTensorType>(rois.getType()).isDynamicDim(0) ||
        cast<RankedTensorType>(batchIndices.getType()).isDynamicDim(0))
      emitRuntimeCheck(rewriter, loc,
                       rewriter.create<arith::CmpIOp>(
                           loc, arith::CmpIPredicate::ne, roiCount, indexCount),
                       roiCount, indexCount,
                       describeNode(op) + ": rois has {value} rows but "
                                          "batch_indices {bound}");
    SmallVector<OpFoldResult> sizes = {
        rewriter.create<arith::MinUIOp>(loc, roiCount, indexCount).getResult(),
        rewriter.create<tensor::DimOp>(loc, x, 1).getResult(),
        rewriter.getIndexAttr(attrs.outputHeight),
        rewriter.getIndexAttr(attrs.outputWidth)};
    Value result = buildIndexGenerated(
        rewriter, loc, type, sizes,
        [&](OpBuilder &b, Location l, ValueRange at) -> Value {
          return sampleCell(b, l, x, rois, batchIndices, images, height, width,
                            at, attrs, ct, type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  /// The value of output cell `at` = (roi, channel, ph, pw).
  static Value sampleCell(OpBuilder &b, Location l, Value x, Value rois,
                          Value batchIndices, Value images, Value height,
                          Value width, ValueRange at,
                          const semantics::RoiAlignAttrs &attrs, Type ct,
                          Type resultType) {
    auto f = [&](double v) { return constantScalar(b, l, ct, v); };
    auto idx = [&](int64_t v) -> Value {
      return b.create<arith::ConstantIndexOp>(l, v);
    };
    auto toFloat = [&](OpBuilder &nb, Value index) -> Value {
      return nb.create<arith::UIToFPOp>(
          l, ct, nb.create<arith::IndexCastUIOp>(l, nb.getI64Type(), index));
    };
    Value roi = at[0], channel = at[1];
    Value coords[4];
    for (int64_t i = 0; i < 4; ++i)
      coords[i] = convertScalar(
          b, l, b.create<tensor::ExtractOp>(l, rois, ValueRange{roi, idx(i)}),
          ct, false, false);
    Value batch = clampIndex(
        b, l, toIndex(b, l, b.create<tensor::ExtractOp>(l, batchIndices, roi)),
        images);
    Value scale = f(attrs.spatialScale);
    Value offset = f(attrs.halfPixel ? 0.5 : 0.0);
    auto scaled = [&](Value v) {
      return b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, v, scale),
                                     offset);
    };
    Value startW = scaled(coords[0]), startH = scaled(coords[1]);
    Value roiW = b.create<arith::SubFOp>(l, scaled(coords[2]), startW);
    Value roiH = b.create<arith::SubFOp>(l, scaled(coords[3]), startH);
    if (!attrs.halfPixel) {
      // Malformed ROIs are forced to 1 x 1.
      roiW = b.create<arith::MaximumFOp>(l, roiW, f(1.0));
      roiH = b.create<arith::MaximumFOp>(l, roiH, f(1.0));
    }
    Value pooledH = f(static_cast<double>(attrs.outputHeight));
    Value pooledW = f(static_cast<double>(attrs.outputWidth));
    Value binH = b.create<arith::DivFOp>(l, roiH, pooledH);
    Value binW = b.create<arith::DivFOp>(l, roiW, pooledW);
    // Samples per axis: sampling_ratio, else ceil(roi / output) (none when
    // that is not positive).
    auto gridSize = [&](Value roiSize, Value pooled) -> Value {
      if (attrs.samplingRatio > 0)
        return idx(attrs.samplingRatio);
      Value n = b.create<arith::FPToSIOp>(
          l, b.getI64Type(),
          b.create<math::CeilOp>(l,
                                 b.create<arith::DivFOp>(l, roiSize, pooled)));
      n = b.create<arith::MaxSIOp>(
          l, n, b.create<arith::ConstantIntOp>(l, 0, b.getI64Type()));
      return b.create<arith::IndexCastOp>(l, b.getIndexType(), n);
    };
    Value gridH = gridSize(roiH, pooledH), gridW = gridSize(roiW, pooledW);
    Value gridHf = toFloat(b, gridH), gridWf = toFloat(b, gridW);
    // The first sample of the cell, then the step between samples.
    Value baseH = b.create<arith::AddFOp>(
        l, startH, b.create<arith::MulFOp>(l, toFloat(b, at[2]), binH));
    Value baseW = b.create<arith::AddFOp>(
        l, startW, b.create<arith::MulFOp>(l, toFloat(b, at[3]), binW));
    Value heightF = toFloat(b, height), widthF = toFloat(b, width);
    Value zero = idx(0), one = idx(1);
    Value fzero = f(0.0);

    auto read = [&](OpBuilder &nb, Value yi, Value xi) -> Value {
      return convertScalar(nb, l,
                           nb.create<tensor::ExtractOp>(
                               l, x, ValueRange{batch, channel, yi, xi}),
                           ct, false, false);
    };
    // One sample's contribution: the four weighted corners.
    auto sample = [&](OpBuilder &nb, Value y, Value xx) -> SmallVector<Value> {
      SmallVector<Value> corners;
      // Clamped into the image (a coordinate beyond its last row or column
      // reads that row or column with weight 1).
      auto axis = [&](Value v, Value size, Value &low, Value &high) -> Value {
        v = nb.create<arith::MaximumFOp>(l, v, fzero);
        Value last = nb.create<arith::SubIOp>(l, size, one);
        Value lowI = nb.create<arith::IndexCastOp>(
            l, nb.getIndexType(),
            nb.create<arith::FPToSIOp>(l, nb.getI64Type(), v));
        Value atEnd =
            nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, lowI, last);
        low = nb.create<arith::SelectOp>(l, atEnd, last, lowI);
        high = nb.create<arith::SelectOp>(
            l, atEnd, last, nb.create<arith::AddIOp>(l, lowI, one));
        Value clamped =
            nb.create<arith::SelectOp>(l, atEnd, toFloat(nb, last), v);
        return nb.create<arith::SubFOp>(l, clamped, toFloat(nb, low));
      };
      Value yLow, yHigh, xLow, xHigh;
      Value ly = axis(y, height, yLow, yHigh);
      Value lx = axis(xx, width, xLow, xHigh);
      Value hy = nb.create<arith::SubFOp>(l, f(1.0), ly);
      Value hx = nb.create<arith::SubFOp>(l, f(1.0), lx);
      auto term = [&](Value wy, Value wx, Value yi, Value xi) -> Value {
        return nb.create<arith::MulFOp>(l, nb.create<arith::MulFOp>(l, wy, wx),
                                        read(nb, yi, xi));
      };
      corners.push_back(term(hy, hx, yLow, xLow));
      corners.push_back(term(hy, lx, yLow, xHigh));
      corners.push_back(term(ly, hx, yHigh, xLow));
      corners.push_back(term(ly, lx, yHigh, xHigh));
      return corners;
    };

    auto rows = b.create<scf::ForOp>(
        l, zero, gridH, one, ValueRange{fzero},
        [&](OpBuilder &rb, Location, Value iy, ValueRange rowAcc) {
          Value y = rb.create<arith::AddFOp>(
              l, baseH,
              rb.create<arith::DivFOp>(
                  l,
                  rb.create<arith::MulFOp>(
                      l, rb.create<arith::AddFOp>(l, toFloat(rb, iy), f(0.5)),
                      binH),
                  gridHf));
          auto cols = rb.create<scf::ForOp>(
              l, zero, gridW, one, rowAcc,
              [&](OpBuilder &cb, Location, Value ix, ValueRange acc) {
                Value xx = cb.create<arith::AddFOp>(
                    l, baseW,
                    cb.create<arith::DivFOp>(
                        l,
                        cb.create<arith::MulFOp>(
                            l,
                            cb.create<arith::AddFOp>(l, toFloat(cb, ix),
                                                     f(0.5)),
                            binW),
                        gridWf));
                auto outside = [&](Value v, Value size) -> Value {
                  return cb.create<arith::OrIOp>(
                      l,
                      cb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, v,
                                               f(-1.0)),
                      cb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, v,
                                               size));
                };
                Value skip = cb.create<arith::OrIOp>(l, outside(y, heightF),
                                                     outside(xx, widthF));
                // An empty image has no sample to read.
                skip = cb.create<arith::OrIOp>(
                    l, skip,
                    cb.create<arith::OrIOp>(
                        l,
                        cb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                                 height, zero),
                        cb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                                 width, zero)));
                auto value = cb.create<scf::IfOp>(
                    l, skip,
                    [&](OpBuilder &tb, Location) {
                      // Out of the image: the sample counts as 0.
                      tb.create<scf::YieldOp>(l, ValueRange{fzero});
                    },
                    [&](OpBuilder &eb, Location) {
                      SmallVector<Value> c = sample(eb, y, xx);
                      Value v;
                      if (attrs.maxMode)
                        v = eb.create<arith::MaximumFOp>(
                            l,
                            eb.create<arith::MaximumFOp>(
                                l, eb.create<arith::MaximumFOp>(l, c[0], c[1]),
                                c[2]),
                            c[3]);
                      else
                        v = eb.create<arith::AddFOp>(
                            l,
                            eb.create<arith::AddFOp>(
                                l, eb.create<arith::AddFOp>(l, c[0], c[1]),
                                c[2]),
                            c[3]);
                      eb.create<scf::YieldOp>(l, ValueRange{v});
                    });
                Value v = value.getResult(0);
                Value next;
                if (attrs.maxMode) {
                  // The first sample replaces the initial 0.
                  Value first = cb.create<arith::AndIOp>(
                      l,
                      cb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, iy,
                                               zero),
                      cb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, ix,
                                               zero));
                  next = cb.create<arith::SelectOp>(
                      l, first, v, cb.create<arith::MaximumFOp>(l, acc[0], v));
                } else {
                  next = cb.create<arith::AddFOp>(l, acc[0], v);
                }
                cb.create<scf::YieldOp>(l, ValueRange{next});
              });
          rb.create<scf::YieldOp>(l, cols.getResults());
        });
    Value total = rows.getResult(0);
    if (!attrs.maxMode) {
      Value count = b.create<arith::MulIOp>(l, gridH, gridW);
      count = b.create<arith::MaxUIOp>(l, count, one);
      total = b.create<arith::DivFOp>(l, total, toFloat(b, count));
    }
    return convertScalar(b, l, total, resultType, false, false);
  }
};

} // namespace

void populateDetectionPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns) {
  patterns.add<NonMaxSuppressionOpLowering>(converter, patterns.getContext());
}

void populateRoiAlignPatterns(TypeConverter &converter,
                              RewritePatternSet &patterns) {
  patterns.add<RoiAlignOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
