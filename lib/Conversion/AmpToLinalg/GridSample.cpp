//===- GridSample.cpp - GridSample ----------------------------------------===//
//
// One generic over Y = [N, C, D1..Dk] (k spatial dimensions, 2 or more).
// For each output position the body reads the grid's k coordinates
// (grid[n, o1..ok, j] holds the coordinate of spatial dimension k-1-j:
// x first), maps each from [-1, 1] to pixels
//
//   align_corners = 1: (g + 1) / 2 * (L - 1)
//   align_corners = 0: ((g + 1) * L - 1) / 2
//
// and samples X[n, c] there as ONNX's reference does:
//
//  - `nearest` rounds half to even; `linear` weighs the 2 neighbours
//    (1 - t, t) and `cubic` the 4 (Keys, alpha = -0.75) of floor(x) in each
//    dimension, the taps' weights multiplied across dimensions and summed
//    dimension by dimension (the last innermost);
//  - a coordinate outside [-0.5, L - 0.5] ([0, L - 1] with align_corners)
//    is first clamped into [0, L - 1] (`border`, but not in `cubic` mode,
//    where PyTorch and onnxruntime clamp only the taps) or reflected into
//    that range (`reflection`); then each tap outside the image reads 0
//    (`zeros`), the nearest edge pixel (`border`) or its reflection
//    (`reflection`). Every read is clamped into the image, so no grid value
//    reads outside X.
//
// Computed in f32 (f64 for f64 data); the result is rounded once to X's
// type.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <functional>

namespace mlir::amp::lowering {

namespace {

enum class Padding { Zeros, Border, Reflection };

/// Scalar float arithmetic on one type, for the sampling formulas.
struct Real {
  OpBuilder &b;
  Location loc;
  Type type;
  Value c(double v) { return constantScalar(b, loc, type, v); }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(loc, x, y); }
  Value lt(Value x, Value y) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, y);
  }
  Value gt(Value x, Value y) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, cond, x, y);
  }
  Value clamp(Value x, Value low, Value high) {
    return b.create<arith::MinimumFOp>(
        loc, b.create<arith::MaximumFOp>(loc, x, low), high);
  }
  Value floor(Value x) { return b.create<math::FloorOp>(loc, x); }

  /// Reflects x by the nearer border until it lies in [low, high] (ONNX's
  /// reference: the number of whole ranges crossed decides the side).
  Value reflect(Value x, Value low, Value high) {
    Value range = sub(high, low);
    // A one-pixel image with align_corners has an empty range: low.
    Value safeRange = select(gt(range, c(0)), range, c(1));
    auto fold = [&](Value distance, Value nearSide, Value farSide,
                    bool fromLow) {
      Value crossed = b.create<math::TruncOp>(loc, div(distance, safeRange));
      Value rest = sub(distance, mul(crossed, safeRange));
      // Even: measured from the border crossed; odd: from the other one.
      Value half = mul(crossed, c(0.5));
      Value even = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                           floor(half), half);
      Value fromNear = fromLow ? add(nearSide, rest) : sub(nearSide, rest);
      Value fromFar = fromLow ? sub(farSide, rest) : add(farSide, rest);
      return select(even, fromNear, fromFar);
    };
    Value below = fold(sub(low, x), low, high, /*fromLow=*/true);
    Value above = fold(sub(x, high), high, low, /*fromLow=*/false);
    Value r = select(lt(x, low), below, select(gt(x, high), above, x));
    return select(gt(range, c(0)), r, low);
  }
};

/// Keys' cubic convolution weights for the taps at -1, 0, 1, 2 from
/// floor(x), t = x - floor(x) (alpha = -0.75, as ONNX's reference).
SmallVector<Value> cubicWeights(Real &r, Value t) {
  double a = -0.75;
  auto outer = [&](Value s) { // |s| in [1, 2]
    Value v = r.sub(r.mul(r.c(a), s), r.c(5 * a));
    v = r.add(r.mul(v, s), r.c(8 * a));
    return r.sub(r.mul(v, s), r.c(4 * a));
  };
  auto inner = [&](Value s) { // |s| in [0, 1]
    Value v = r.sub(r.mul(r.c(a + 2), s), r.c(a + 3));
    return r.add(r.mul(r.mul(v, s), s), r.c(1));
  };
  Value one = r.c(1);
  return {outer(r.add(t, one)), inner(t), inner(r.sub(one, t)),
          outer(r.sub(r.c(2), t))};
}

struct GridSampleOpLowering : public OpConversionPattern<GridSampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    StringRef mode = op.getMode();
    if (mode != "linear" && mode != "nearest" && mode != "cubic")
      return notLowerable(op, "mode '" + mode.str() + "'");
    StringRef paddingName = op.getPaddingMode();
    Padding padding;
    if (paddingName == "zeros")
      padding = Padding::Zeros;
    else if (paddingName == "border")
      padding = Padding::Border;
    else if (paddingName == "reflection")
      padding = Padding::Reflection;
    else
      return notLowerable(op, "padding_mode '" + paddingName.str() + "'");
    bool alignCorners = op.getAlignCorners() != 0;
    Value x = adaptor.getX();
    Value grid = adaptor.getGrid();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    int64_t k = rank - 2;
    if (mode == "cubic" && k != 2)
      return notLowerable(op, "cubic mode of a non-2-D image");
    RankedTensorType type = convertedResultType(getTypeConverter(), op);
    Type storage = type.getElementType();
    Type compute = getComputeType(storage);
    if (!isa<FloatType>(compute))
      return notLowerable(op, "integer data");

    SmallVector<OpFoldResult> sizes = {getSizes(rewriter, loc, x)[0],
                                       getSizes(rewriter, loc, x)[1]};
    SmallVector<OpFoldResult> gridSizes = getSizes(rewriter, loc, grid);
    for (int64_t d = 1; d <= k; ++d)
      sizes.push_back(gridSizes[d]);
    SmallVector<Value> dims; // spatial sizes of X, as index
    for (int64_t d = 0; d < k; ++d)
      dims.push_back(rewriter.create<tensor::DimOp>(loc, x, d + 2));

    auto build = [&](OpBuilder &gb, Location gl) {
      return buildIndexGenerated(
          gb, gl, type, sizes,
          [&](OpBuilder &b, Location l, ValueRange out) -> Value {
            Real r{b, l, compute};
            auto toIndex = [&](Value v) -> Value {
              return b.create<arith::IndexCastOp>(
                  l, b.getIndexType(),
                  b.create<arith::FPToSIOp>(l, b.getI64Type(), v));
            };
            auto toReal = [&](Value index) -> Value {
              return b.create<arith::SIToFPOp>(
                  l, compute,
                  b.create<arith::IndexCastOp>(l, b.getI64Type(), index));
            };
            // Pixel coordinates and their borders, per spatial dimension.
            SmallVector<Value> coords, sizeReal;
            SmallVector<Value> lows, highs;
            for (int64_t d = 0; d < k; ++d) {
              SmallVector<Value> at = {out[0]};
              for (int64_t j = 0; j < k; ++j)
                at.push_back(out[j + 2]);
              at.push_back(b.create<arith::ConstantIndexOp>(l, k - 1 - d));
              Value g = b.create<tensor::ExtractOp>(l, grid, at);
              g = convertScalar(b, l, toComputeType(b, l, g), compute, false,
                                false);
              Value size = toReal(dims[d]);
              sizeReal.push_back(size);
              Value one = r.c(1);
              Value v =
                  alignCorners
                      ? r.mul(r.div(r.add(g, one), r.c(2)), r.sub(size, one))
                      : r.div(r.sub(r.mul(r.add(g, one), size), one), r.c(2));
              if (mode == "nearest")
                v = b.create<math::RoundEvenOp>(l, v);
              Value low = alignCorners ? r.c(0) : r.c(-0.5);
              Value high =
                  alignCorners ? r.sub(size, one) : r.sub(size, r.c(0.5));
              // Cubic with border padding clamps each tap, not the
              // coordinate: as PyTorch and onnxruntime (onnx's reference
              // clamps the coordinate too; they differ by up to 0.26 here).
              if (padding == Padding::Border && mode != "cubic")
                v = r.select(
                    b.create<arith::OrIOp>(l, r.lt(v, low), r.gt(v, high)),
                    r.clamp(v, r.c(0), r.sub(size, one)), v);
              else if (padding == Padding::Reflection)
                v = r.reflect(v, low, high);
              coords.push_back(v);
              lows.push_back(low);
              highs.push_back(high);
            }
            // Taps per dimension: (index as float, weight).
            SmallVector<SmallVector<std::pair<Value, Value>>> taps(k);
            for (int64_t d = 0; d < k; ++d) {
              Value v = coords[d];
              if (mode == "nearest") {
                // Truncated, as the reference's astype(int32).
                taps[d].push_back({b.create<math::TruncOp>(l, v), Value()});
                continue;
              }
              Value base = r.floor(v);
              Value t = r.sub(v, base);
              if (mode == "linear") {
                taps[d].push_back({base, r.sub(r.c(1), t)});
                taps[d].push_back({r.add(base, r.c(1)), t});
              } else {
                SmallVector<Value> w = cubicWeights(r, t);
                for (int64_t j = 0; j < 4; ++j)
                  taps[d].push_back({r.add(base, r.c(j - 1)), w[j]});
              }
            }
            // The pixel at tap indices `at` (floats), with the padding rule.
            auto pixel = [&](ArrayRef<Value> at) -> Value {
              SmallVector<Value> indices = {out[0], out[1]};
              Value inside = b.create<arith::ConstantIntOp>(l, 1, 1);
              for (int64_t d = 0; d < k; ++d) {
                Value i = at[d];
                Value last = r.sub(sizeReal[d], r.c(1));
                if (padding == Padding::Zeros)
                  inside = b.create<arith::AndIOp>(
                      l, inside,
                      b.create<arith::AndIOp>(
                          l,
                          b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE,
                                                  i, r.c(0)),
                          b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE,
                                                  i, last)));
                else if (padding == Padding::Reflection)
                  i = b.create<math::TruncOp>(l,
                                              r.reflect(i, lows[d], highs[d]));
                // Never outside the image (not empty: see guardEmptyAxes).
                i = r.clamp(i, r.c(0), last);
                indices.push_back(toIndex(i));
              }
              Value v = convertScalar(
                  b, l,
                  toComputeType(b, l,
                                b.create<tensor::ExtractOp>(l, x, indices)),
                  compute, false, false);
              if (padding == Padding::Zeros)
                v = r.select(inside, v, r.c(0));
              return v;
            };
            // Sum over the taps, the last dimension innermost.
            SmallVector<Value> at(k);
            std::function<Value(int64_t)> sample = [&](int64_t d) -> Value {
              if (d == k)
                return pixel(at);
              Value sum;
              for (auto [index, weight] : taps[d]) {
                at[d] = index;
                Value v = sample(d + 1);
                if (weight)
                  v = r.mul(weight, v);
                sum = sum ? r.add(sum, v) : v;
              }
              return sum;
            };
            return convertScalar(b, l, sample(0), storage, false, false);
          });
    };
    // An empty image has no pixel to read: the result is zeros.
    SmallVector<int64_t> spatial;
    for (int64_t d = 2; d < rank; ++d)
      spatial.push_back(d);
    Value result = guardEmptyAxes(rewriter, loc, x, spatial, build,
                                  zeroFilled(type, sizes));
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateGridSamplePatterns(TypeConverter &converter,
                                RewritePatternSet &patterns) {
  patterns.add<GridSampleOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
