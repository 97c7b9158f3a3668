//===- Resize.cpp - ONNX Resize (nearest, linear, cubic) -> linalg.generic ===//
//
// One linalg.generic over the output: per resized axis the body computes
// the source coordinate (coordinate_transformation_mode), then reads the
// taps (1 for nearest, 2 for linear, 4 for cubic per axis) with
// tensor.extract and blends them in f32 (f64 for f64 data).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::amp::lowering {
namespace {

/// One resized axis; sizes and scale are run-time values (scales and sizes
/// may be graph inputs).
struct AxisPlan {
  int64_t dim;
  Value in, out;          // index
  Value scale;            // compute type
  Value length;           // output length in the coordinate formulas:
                          // in * scale when scales are given
  Value roiStart, roiEnd; // compute type (tf_crop_and_resize)
};

struct ResizeOpLowering : public OpConversionPattern<ResizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    int64_t rank = type.getRank();
    if (op.getAntialias() != 0)
      return notLowerable(op, "antialias = 1");
    StringRef mode = op.getMode();
    StringRef transform = op.getCoordinateTransformationMode();
    StringRef nearestMode = op.getNearestMode();
    Type storage = type.getElementType();
    Type compute = storage.isF64() ? storage : rewriter.getF64Type();
    SmallVector<int64_t> axes;
    if (std::optional<ArrayRef<int64_t>> axesAttr = op.getAxes())
      for (int64_t a : *axesAttr)
        axes.push_back(normalizeAxis(a, rank));
    else
      for (int64_t i = 0; i < rank; ++i)
        axes.push_back(i);
    auto toCompute = [&](Value v) {
      return convertScalar(rewriter, loc, toComputeType(rewriter, loc, v),
                           compute, false, false);
    };
    auto indexToCompute = [&](Value index) {
      return toCompute(rewriter.create<arith::IndexCastOp>(
          loc, rewriter.getI64Type(), index));
    };
    auto computeToIndex = [&](Value v) {
      return rewriter.create<arith::IndexCastOp>(
          loc, rewriter.getIndexType(),
          convertScalar(rewriter, loc, v, rewriter.getI64Type(), false, false));
    };
    auto element = [&](Value tensor, int64_t i) {
      return rewriter.create<tensor::ExtractOp>(
          loc, tensor,
          ValueRange{rewriter.create<arith::ConstantIndexOp>(loc, i)});
    };
    // Scales (when given) drive the coordinate transform; with sizes the
    // scale is out / in (one common scale under keep_aspect_ratio_policy).
    bool hasScales =
        !isNone(adaptor.getScales()) &&
        cast<RankedTensorType>(adaptor.getScales().getType()).getDimSize(0) !=
            0;
    bool hasSizes = !isNone(adaptor.getSizes());
    if (!hasScales && !hasSizes)
      return notLowerable(op, "neither scales nor sizes");
    SmallVector<AxisPlan> plans;
    StringRef policy = op.getKeepAspectRatioPolicy();
    Value common;
    if (!hasScales && policy != "stretch") {
      for (auto [k, dim] : llvm::enumerate(axes)) {
        Value in = indexToCompute(rewriter.create<tensor::DimOp>(loc, x, dim));
        Value ratio = rewriter.create<arith::DivFOp>(
            loc, toCompute(element(adaptor.getSizes(), k)), in);
        common = !common ? ratio
                 : policy == "not_larger"
                     ? rewriter.create<arith::MinimumFOp>(loc, common, ratio)
                           .getResult()
                     : rewriter.create<arith::MaximumFOp>(loc, common, ratio)
                           .getResult();
      }
    }
    for (auto [k, dim] : llvm::enumerate(axes)) {
      AxisPlan plan;
      plan.dim = dim;
      plan.in = rewriter.create<tensor::DimOp>(loc, x, dim);
      Value inF = indexToCompute(plan.in);
      if (hasScales) {
        plan.scale = toCompute(element(adaptor.getScales(), k));
        plan.out = computeToIndex(rewriter.create<math::FloorOp>(
            loc, rewriter.create<arith::MulFOp>(loc, inF, plan.scale)));
      } else if (common) {
        plan.scale = common;
        plan.out = computeToIndex(rewriter.create<math::RoundEvenOp>(
            loc, rewriter.create<arith::MulFOp>(loc, inF, common)));
      } else {
        plan.out = computeToIndex(element(adaptor.getSizes(), k));
        plan.scale =
            rewriter.create<arith::DivFOp>(loc, indexToCompute(plan.out), inF);
      }
      plan.length =
          hasScales
              ? rewriter.create<arith::MulFOp>(loc, inF, plan.scale).getResult()
              : indexToCompute(plan.out);
      if (transform == "tf_crop_and_resize") {
        if (isNone(adaptor.getRoi()))
          return notLowerable(op, "tf_crop_and_resize without roi");
        plan.roiStart = toCompute(element(adaptor.getRoi(), k));
        plan.roiEnd = toCompute(element(adaptor.getRoi(), k + axes.size()));
      }
      plans.push_back(plan);
    }
    if (mode != "nearest" && mode != "linear" && mode != "cubic")
      return notLowerable(op, "mode '" + mode + "'");
    double cubicA = op.getCubicCoeffA().convertToDouble();
    bool excludeOutside = op.getExcludeOutside() != 0;
    double extrapolation = op.getExtrapolationValue().convertToDouble();
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, x);
    for (const AxisPlan &p : plans)
      sizes[p.dim] = p.out;
    Value result = buildIndexGenerated(
        rewriter, loc, type, sizes,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          auto f = [&](double v) { return constantScalar(b, l, compute, v); };
          auto ci = [&](int64_t v) {
            return b.create<arith::ConstantIndexOp>(l, v);
          };
          auto toF = [&](Value index) {
            return convertScalar(
                b, l, b.create<arith::IndexCastOp>(l, b.getI64Type(), index),
                compute, false, false);
          };
          auto add = [&](Value p, Value q) {
            return b.create<arith::AddFOp>(l, p, q).getResult();
          };
          auto sub = [&](Value p, Value q) {
            return b.create<arith::SubFOp>(l, p, q).getResult();
          };
          auto mul = [&](Value p, Value q) {
            return b.create<arith::MulFOp>(l, p, q).getResult();
          };
          auto div = [&](Value p, Value q) {
            return b.create<arith::DivFOp>(l, p, q).getResult();
          };
          SmallVector<Value> base(indices);
          // Per axis: taps (index, weight) and whether it is outside roi.
          struct Tap {
            Value index, weight;
          };
          SmallVector<SmallVector<Tap>> taps;
          Value outside = constantScalar(b, l, b.getI1Type(), 0);
          for (const AxisPlan &p : plans) {
            Value xo = toF(base[p.dim]);
            Value in = toF(p.in), out = p.length, scale = p.scale;
            Value half = f(0.5), one = f(1);
            Value inMinus1 = sub(in, one), outMinus1 = sub(out, one);
            Value outIsOne =
                b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, out, one);
            auto pick = [&](Value c, Value t, Value e) {
              return b.create<arith::SelectOp>(l, c, t, e).getResult();
            };
            Value src;
            if (transform == "asymmetric") {
              src = div(xo, scale);
            } else if (transform == "tf_half_pixel_for_nn") {
              src = div(add(xo, half), scale);
            } else if (transform == "align_corners") {
              src =
                  pick(outIsOne, f(0),
                       mul(xo, div(inMinus1, pick(outIsOne, one, outMinus1))));
            } else if (transform == "pytorch_half_pixel") {
              src = pick(outIsOne, f(0), sub(div(add(xo, half), scale), half));
            } else if (transform == "tf_crop_and_resize") {
              Value span = mul(sub(p.roiEnd, p.roiStart), inMinus1);
              Value many =
                  add(mul(p.roiStart, inMinus1),
                      mul(xo, div(span, pick(outIsOne, one, outMinus1))));
              Value single =
                  mul(mul(half, add(p.roiStart, p.roiEnd)), inMinus1);
              src = pick(outIsOne, single, many);
              Value below = b.create<arith::CmpFOp>(
                  l, arith::CmpFPredicate::OLT, src, f(0));
              Value above = b.create<arith::CmpFOp>(
                  l, arith::CmpFPredicate::OGT, src, inMinus1);
              outside = b.create<arith::OrIOp>(
                  l, outside, b.create<arith::OrIOp>(l, below, above));
            } else if (transform == "half_pixel_symmetric") {
              Value adjustment = div(toF(p.out), out);
              Value offset = mul(mul(in, half), sub(one, adjustment));
              src = add(offset, sub(div(add(xo, half), scale), half));
            } else { // half_pixel
              src = sub(div(add(xo, half), scale), half);
            }
            Value lastIndex = b.create<arith::SubIOp>(l, p.in, ci(1));
            auto clampIndex = [&](Value v) {
              Value idx = b.create<arith::IndexCastOp>(
                  l, b.getIndexType(),
                  convertScalar(b, l, v, b.getI64Type(), false, false));
              return b.create<arith::MaxSIOp>(
                  l, ci(0), b.create<arith::MinSIOp>(l, idx, lastIndex));
            };
            SmallVector<Tap> axisTaps;
            if (mode == "nearest") {
              Value r;
              if (nearestMode == "floor")
                r = b.create<math::FloorOp>(l, src);
              else if (nearestMode == "ceil")
                r = b.create<math::CeilOp>(l, src);
              else if (nearestMode == "round_prefer_ceil")
                r = b.create<math::FloorOp>(l, add(src, half));
              else // round_prefer_floor
                r = b.create<math::CeilOp>(l, sub(src, half));
              axisTaps.push_back({clampIndex(r), f(1)});
            } else if (mode == "linear") {
              Value s = src;
              if (transform != "tf_crop_and_resize")
                s = b.create<arith::MaximumFOp>(l, s, f(0));
              Value lo = b.create<math::FloorOp>(l, s);
              Value frac = sub(s, lo);
              Value hiIndex = b.create<arith::AddFOp>(l, lo, f(1));
              // Past the last element both taps read it.
              axisTaps.push_back({clampIndex(lo), sub(f(1), frac)});
              axisTaps.push_back({clampIndex(hiIndex), frac});
            } else { // cubic
              Value lo = b.create<math::FloorOp>(l, src);
              Value t = sub(src, lo);
              double a = cubicA;
              auto weight = [&](Value d) {
                // |d| in [0,1]: (a+2)|d|^3 - (a+3)|d|^2 + 1;
                // |d| in (1,2): a|d|^3 - 5a|d|^2 + 8a|d| - 4a.
                Value ad = b.create<math::AbsFOp>(l, d);
                Value ad2 = mul(ad, ad), ad3 = mul(ad2, ad);
                Value near =
                    add(sub(mul(f(a + 2), ad3), mul(f(a + 3), ad2)), f(1));
                Value far = sub(add(sub(mul(f(a), ad3), mul(f(5 * a), ad2)),
                                    mul(f(8 * a), ad)),
                                f(4 * a));
                Value isNear = b.create<arith::CmpFOp>(
                    l, arith::CmpFPredicate::OLE, ad, f(1));
                return b.create<arith::SelectOp>(l, isNear, near, far)
                    .getResult();
              };
              SmallVector<Value> weights, positions;
              for (int64_t k = -1; k <= 2; ++k) {
                Value pos = add(lo, f(k));
                positions.push_back(pos);
                weights.push_back(weight(sub(t, f(k))));
              }
              if (excludeOutside) {
                // Taps outside [0, in) get weight 0; renormalise.
                Value total = f(0);
                for (size_t j = 0; j < positions.size(); ++j) {
                  Value inRange = b.create<arith::AndIOp>(
                      l,
                      b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE,
                                              positions[j], f(0)),
                      b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE,
                                              positions[j], inMinus1));
                  weights[j] =
                      b.create<arith::SelectOp>(l, inRange, weights[j], f(0));
                  total = add(total, weights[j]);
                }
                for (Value &w : weights)
                  w = div(w, total);
              }
              for (auto [pos, w] : llvm::zip(positions, weights))
                axisTaps.push_back({clampIndex(pos), w});
            }
            taps.push_back(axisTaps);
          }
          // Sum over the tap combinations.
          Value sum = f(0);
          SmallVector<size_t> choice(taps.size(), 0);
          while (true) {
            SmallVector<Value> at(base);
            Value w = f(1);
            for (auto [k, p] : llvm::enumerate(plans)) {
              at[p.dim] = taps[k][choice[k]].index;
              w = mul(w, taps[k][choice[k]].weight);
            }
            Value v = convertScalar(
                b, l,
                toComputeType(b, l, b.create<tensor::ExtractOp>(l, x, at)),
                compute, false, false);
            sum = add(sum, mul(w, v));
            size_t k = 0;
            for (; k < taps.size(); ++k) {
              if (++choice[k] < taps[k].size())
                break;
              choice[k] = 0;
            }
            if (k == taps.size())
              break;
          }
          if (transform == "tf_crop_and_resize")
            sum = b.create<arith::SelectOp>(l, outside, f(extrapolation), sum);
          Value r = sum;
          if (!isa<FloatType>(storage)) {
            r = b.create<math::RoundEvenOp>(l, r);
          }
          return convertScalar(b, l, r, storage, false, false);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateResizePatterns(TypeConverter &converter,
                            RewritePatternSet &patterns) {
  patterns.add<ResizeOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
