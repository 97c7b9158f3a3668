//===- Scatter.cpp - ScatterND and ScatterElements ------------------------===//
//
// Scatters write data-dependent positions in order (later updates win, or
// combine with the reduction): they are scf.for loops over the updates with
// tensor iter_args, which one-shot bufferization turns into in-place writes.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {
namespace {

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// Combines an existing and an update scalar per the ONNX reduction.
Value combine(OpBuilder &b, Location loc, StringRef reduction, Value old,
              Value update) {
  bool isFloat = isa<FloatType>(old.getType());
  Value o = toComputeType(b, loc, old), u = toComputeType(b, loc, update);
  Value r = u;
  if (reduction == "add")
    r = isFloat ? b.create<arith::AddFOp>(loc, o, u).getResult()
                : b.create<arith::AddIOp>(loc, o, u).getResult();
  else if (reduction == "mul")
    r = isFloat ? b.create<arith::MulFOp>(loc, o, u).getResult()
                : b.create<arith::MulIOp>(loc, o, u).getResult();
  else if (reduction == "max")
    r = isFloat ? b.create<arith::MaximumFOp>(loc, o, u).getResult()
                : b.create<arith::MaxSIOp>(loc, o, u).getResult();
  else if (reduction == "min")
    r = isFloat ? b.create<arith::MinimumFOp>(loc, o, u).getResult()
                : b.create<arith::MinSIOp>(loc, o, u).getResult();
  return convertScalar(b, loc, r, old.getType(), false, false);
}

/// Nested scf.for loops over `sizes`, threading one tensor; `body` gets the
/// induction variables and the current tensor and returns the next one.
Value loopNest(
    OpBuilder &b, Location loc, ArrayRef<Value> sizes, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> body,
    SmallVector<Value> ivs = {}) {
  if (ivs.size() == sizes.size())
    return body(b, loc, ivs, init);
  auto loop = b.create<scf::ForOp>(
      loc, cIndex(b, loc, 0), sizes[ivs.size()], cIndex(b, loc, 1),
      ValueRange{init},
      [&](OpBuilder &nb, Location l, Value iv, ValueRange args) {
        SmallVector<Value> inner(ivs);
        inner.push_back(iv);
        Value next = loopNest(nb, l, sizes, args[0], body, inner);
        nb.create<scf::YieldOp>(l, next);
      });
  return loop.getResult(0);
}

/// `current` with updates[ivs] written at `at`, combined with the element
/// there per the reduction.
Value writeUpdate(OpBuilder &b, Location loc, StringRef reduction,
                  Value updates, ValueRange ivs, Value current, ValueRange at) {
  Value update = b.create<tensor::ExtractOp>(loc, updates, ivs);
  if (reduction != "none") {
    Value old = b.create<tensor::ExtractOp>(loc, current, at);
    update = combine(b, loc, reduction, old, update);
  }
  return b.create<tensor::InsertOp>(loc, update, current, at).getResult();
}

/// A guardEmptyAxes fallback: the data as it is.
auto unchanged(Value data) {
  return [=](OpBuilder &, Location) { return data; };
}

struct ScatterNDOpLowering : public OpConversionPattern<ScatterNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    int64_t r = dataType.getRank(), q = indicesType.getRank();
    int64_t k = indicesType.getDimSize(q - 1);
    if (ShapedType::isDynamic(k))
      return notLowerable(op, "the index depth is dynamic");
    StringRef reduction = op.getReduction();
    SmallVector<Value> dataDims, loopSizes;
    for (int64_t i = 0; i < r; ++i)
      dataDims.push_back(rewriter.create<tensor::DimOp>(loc, data, i));
    for (int64_t i = 0; i + 1 < q; ++i)
      loopSizes.push_back(rewriter.create<tensor::DimOp>(loc, indices, i));
    // Each update is a slice of data.shape[k:]: loop over its elements too.
    SmallVector<Value> sliceSizes(dataDims.begin() + k, dataDims.end());
    SmallVector<Value> allSizes(loopSizes);
    allSizes.append(sliceSizes);
    checkIndexTuples(rewriter, loc, op, indices,
                     ArrayRef<Value>(dataDims).take_front(k));
    SmallVector<int64_t> indexedAxes;
    for (int64_t j = 0; j < k; ++j)
      indexedAxes.push_back(j);
    auto scatter = [&](OpBuilder &nb, Location nl) -> Value {
      return loopNest(
          nb, nl, allSizes, data,
          [&](OpBuilder &b, Location l, ValueRange ivs, Value current) {
            ValueRange outer = ivs.take_front(q - 1);
            ValueRange inner = ivs.drop_front(q - 1);
            SmallVector<Value> at;
            for (int64_t j = 0; j < k; ++j) {
              SmallVector<Value> position(outer);
              position.push_back(cIndex(b, l, j));
              at.push_back(readIndex(b, l, indices, position, dataDims[j]));
            }
            at.append(inner.begin(), inner.end());
            return writeUpdate(b, l, reduction, updates, ivs, current, at);
          });
    };
    rewriter.replaceOp(op, guardEmptyAxes(rewriter, loc, data, indexedAxes,
                                          scatter, unchanged(data)));
    return success();
  }
};

struct ScatterElementsOpLowering
    : public OpConversionPattern<ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    StringRef reduction = op.getReduction();
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(rewriter.create<tensor::DimOp>(loc, indices, i));
    Value axisDim = rewriter.create<tensor::DimOp>(loc, data, axis);
    checkIndexRange(rewriter, loc, op, indices, axisDim,
                    /*allowNegative=*/true, "index");
    auto scatter = [&](OpBuilder &nb, Location nl) -> Value {
      return loopNest(
          nb, nl, sizes, data,
          [&](OpBuilder &b, Location l, ValueRange ivs, Value current) {
            SmallVector<Value> at(ivs);
            at[axis] = readIndex(b, l, indices, ivs, axisDim);
            return writeUpdate(b, l, reduction, updates, ivs, current, at);
          });
    };
    rewriter.replaceOp(op, guardEmptyAxes(rewriter, loc, data, {axis}, scatter,
                                          unchanged(data)));
    return success();
  }
};

} // namespace

void populateScatterPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<ScatterNDOpLowering, ScatterElementsOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
