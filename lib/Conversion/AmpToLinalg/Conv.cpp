//===- Conv.cpp - Conv and ConvTranspose ----------------------------------===//
//
// A convolution is one linalg.generic (grouped: channels split into
// (group, channels/group)) accumulating into its initialised output. It
// and its output initialisation carry the backend-neutral markers of
// amp/Conversion/AmpToLinalg/Markers.h, whatever the element type.
// ConvTranspose is a stride-1 convolution over the zero-stuffed input
// with the kernel flipped. amp.conv_weight_grad is one generic marked as
// a weight gradient.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "amp/Conversion/AmpToLinalg/Markers.h"

#include <atomic>

namespace mlir::amp::lowering {

namespace {

/// Marks the op defining a convolution's output initialisation.
void markConvInit(OpBuilder &b, Value init) {
  // A distinct value per convolution: CSE must not merge two inits (each
  // convolution then writes its own buffer, initialised right before it).
  static std::atomic<int64_t> nextInit{0};
  init.getDefiningOp()->setAttr(marker::kConvInitAttr,
                                b.getI64IntegerAttr(nextInit++));
}

/// A convolution's output initialisation: the bias broadcast over
/// (N, F, spatial...) or zeros, marked as such (a backend that calls a
/// library for the convolution may pass the bias to it instead).
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
    init =
        filledTensor(b, loc, accType, outSizes, constantScalar(b, loc, acc, 0));
  }
  markConvInit(b, init);
  return init;
}

/// Splits dimension `dim` of `v` into (groups, size/groups); `v` itself
/// when there is one group.
Value splitGroups(OpBuilder &b, Location loc, Value v, int64_t dim,
                  int64_t groups) {
  if (groups <= 1)
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
  return reshapeTensor(b, loc, v,
                       RankedTensorType::get(shape, type.getElementType()),
                       sizes);
}

/// Marks a convolution-like generic for the backends (Markers.h).
void markConv(OpBuilder &b, Operation *generic, StringRef kind,
              ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  generic->setAttr(marker::kKindAttr, b.getStringAttr(kind));
  generic->setAttr(marker::kConvStridesAttr, b.getDenseI64ArrayAttr(strides));
  generic->setAttr(marker::kConvDilationsAttr,
                   b.getDenseI64ArrayAttr(dilations));
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
    auto window = resolveWindowForLowering(
        op, semantics::WindowAttrs::getConv(op), xType, kernel);
    if (failed(window))
      return failure();
    SmallVector<int64_t> strides = window->strides;
    SmallVector<int64_t> dilations = window->dilations;
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
      int64_t padding = window->padBegin[i] + window->padEnd[i];
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
    Value padded =
        padSpatial(rewriter, loc, x, window->padBegin, window->padEnd,
                   constantScalar(rewriter, loc, acc, 0));
    // Output initialised with the bias (or zeros); the conv accumulates.
    auto accType = resultType.clone(acc);
    Value init = buildConvInit(rewriter, loc, adaptor.getB(), accType, outSizes,
                               wType.getDimSize(0));
    Value result =
        buildConv(rewriter, loc, padded, w, init, strides, dilations, groups);
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
    Value gx = splitGroups(b, loc, x, 1, groups),
          gw = splitGroups(b, loc, w, 0, groups),
          ginit = splitGroups(b, loc, init, 1, groups);
    // Loops: n, [g], f, o_1..o_S, c, k_1..k_S.
    int64_t g = grouped ? 1 : 0;
    int64_t nLoops = 2 + g + spatial + 1 + spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, context); };
    int64_t fDim = 1 + g, oDim = 2 + g, cDim = 2 + g + spatial, kDim = cDim + 1;
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
            sum = nb.create<arith::AddFOp>(l, av,
                                           nb.create<arith::MulFOp>(l, xv, wv));
          else
            sum = nb.create<arith::AddIOp>(l, av,
                                           nb.create<arith::MulIOp>(l, xv, wv));
          nb.create<linalg::YieldOp>(
              l, ValueRange{convertScalar(nb, l, sum, acc, false, false)});
        });
    // Backend-neutral markers: a backend may call a library for it.
    markConv(b, generic, marker::kConvKind, strides, dilations);
    Value result = generic.getResult(0);
    if (grouped)
      result = reshapeTensor(b, loc, result, outType, getSizes(b, loc, init));
    return result;
  }
};

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
    auto window = semantics::resolveTransposedWindow(
        semantics::WindowAttrs::getConvTranspose(op),
        xType.getShape().drop_front(2), kernel,
        [&](const Twine &message) { (void)op->emitError(message); });
    if (failed(window))
      return failure();
    SmallVector<int64_t> strides = window->strides;
    SmallVector<int64_t> dilations = window->dilations;
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
    SmallVector<OpFoldResult> offsets(xType.getRank(),
                                      rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> insertStrides = {rewriter.getIndexAttr(1),
                                               rewriter.getIndexAttr(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = xType.getDimSize(i + 2);
      stuffedShape.push_back((in - 1) * strides[i] + 1);
      stuffedSizes.push_back(rewriter.getIndexAttr(stuffedShape.back()));
      insertStrides.push_back(rewriter.getIndexAttr(strides[i]));
    }
    Value stuffed = filledTensor(rewriter, loc,
                                 RankedTensorType::get(stuffedShape, element),
                                 stuffedSizes, zero);
    stuffed = rewriter.create<tensor::InsertSliceOp>(
        loc, x, stuffed, offsets, getSizes(rewriter, loc, x), insertStrides);
    // 2. Padding: low = d*(K-1) - pad_begin, high = out - stuffed + pad_begin
    //    (a negative amount crops).
    ArrayRef<int64_t> begin = window->padBegin;
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
    Value flipped = buildIndexGenerated(
        rewriter, loc, flippedType, {},
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          auto c = [&](int64_t v) {
            return b.create<arith::ConstantIndexOp>(l, v);
          };
          Value f = indices[0];
          Value ci = indices[1];
          Value g = b.create<arith::DivUIOp>(l, f, c(perGroupOut));
          Value fi = b.create<arith::RemUIOp>(l, f, c(perGroupOut));
          SmallVector<Value> at = {
              b.create<arith::AddIOp>(
                  l, b.create<arith::MulIOp>(l, g, c(perGroupIn)), ci),
              fi};
          for (int64_t i = 0; i < spatial; ++i)
            at.push_back(
                b.create<arith::SubIOp>(l, c(kernel[i] - 1), indices[2 + i]));
          return b.create<tensor::ExtractOp>(l, w, at);
        });
    // 4. Output initialised with the bias, then a stride-1 convolution.
    auto accType = resultType.clone(acc);
    SmallVector<OpFoldResult> outSizes = {
        rewriter.create<tensor::DimOp>(loc, x, 0).getResult()};
    for (int64_t i = 1; i < resultType.getRank(); ++i)
      outSizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(i)));
    Value init = buildConvInit(rewriter, loc, adaptor.getB(), accType, outSizes,
                               perGroupOut * groups);
    SmallVector<int64_t> unitStrides(spatial, 1);
    Value result = ConvOpLowering::buildConv(
        rewriter, loc, padded, flipped, init, unitStrides, dilations, groups);
    rewriter.replaceOp(op, convertTensor(rewriter, loc, result, storage));
    return success();
  }
};

/// The weight gradient as one generic over (group, filter, channel,
/// kernel..., batch, output...), reading the zero-padded X like the Conv
/// does, accumulating into a zero-initialised dW.
struct ConvWeightGradOpLowering
    : public OpConversionPattern<ConvWeightGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvWeightGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX(), dy = adaptor.getDY();
    auto xType = cast<RankedTensorType>(x.getType());
    auto dyType = cast<RankedTensorType>(dy.getType());
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    int64_t spatial = xType.getRank() - 2;
    if (!resultType.hasStaticShape())
      return notLowerable(op, "a weight gradient with a dynamic shape");
    for (int64_t i = 0; i < spatial; ++i)
      if (dyType.isDynamicDim(i + 2))
        return notLowerable(op, "a dynamic spatial size");
    SmallVector<int64_t> kernel(op.getKernelShape());
    auto window = resolveWindowForLowering(
        op, semantics::WindowAttrs::getConv(op), xType, kernel);
    if (failed(window))
      return failure();
    int64_t groups = op.getGroup();
    // The channel counts follow from dW (C = dW.dim1 * group, M = dW.dim0)
    // even where shape inference lost them on the operands.
    auto withChannels = [&](Value v, int64_t channels) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      if (!type.isDynamicDim(1))
        return v;
      SmallVector<int64_t> shape(type.getShape());
      shape[1] = channels;
      return rewriter
          .create<tensor::CastOp>(
              loc, RankedTensorType::get(shape, type.getElementType()), v)
          .getResult();
    };
    x = withChannels(x, resultType.getDimSize(1) * groups);
    dy = withChannels(dy, resultType.getDimSize(0));
    Type storage = resultType.getElementType();
    Type acc = accumulatorType(op, storage);
    if (acc != storage) {
      x = convertTensor(rewriter, loc, x, acc);
      dy = convertTensor(rewriter, loc, dy, acc);
    }
    Value padded =
        padSpatial(rewriter, loc, x, window->padBegin, window->padEnd,
                   constantScalar(rewriter, loc, acc, 0));
    auto accType = resultType.clone(acc);
    SmallVector<OpFoldResult> outSizes;
    for (int64_t size : accType.getShape())
      outSizes.push_back(rewriter.getIndexAttr(size));
    Value init = filledTensor(rewriter, loc, accType, outSizes,
                              constantScalar(rewriter, loc, acc, 0));
    markConvInit(rewriter, init);
    Value result = buildWeightGrad(rewriter, loc, padded, dy, init,
                                   window->strides, window->dilations, groups);
    rewriter.replaceOp(op, convertTensor(rewriter, loc, result, storage));
    return success();
  }

  static Value buildWeightGrad(OpBuilder &b, Location loc, Value x, Value dy,
                               Value init, ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations, int64_t groups) {
    MLIRContext *context = b.getContext();
    auto outType = cast<RankedTensorType>(init.getType());
    int64_t spatial = outType.getRank() - 2;
    Type acc = outType.getElementType();
    bool grouped = groups > 1;
    Value gx = splitGroups(b, loc, x, 1, groups),
          gdy = splitGroups(b, loc, dy, 1, groups),
          ginit = splitGroups(b, loc, init, 0, groups);
    // Loops: [g], m, c, k_1..k_S, n, o_1..o_S.
    int64_t g = grouped ? 1 : 0;
    int64_t mDim = g, cDim = g + 1, kDim = g + 2, nDim = kDim + spatial,
            oDim = nDim + 1;
    int64_t nLoops = oDim + spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, context); };
    SmallVector<AffineExpr> xExprs = {d(nDim)}, dyExprs = {d(nDim)},
                            outExprs;
    if (grouped) {
      xExprs.push_back(d(0));
      dyExprs.push_back(d(0));
      outExprs.push_back(d(0));
    }
    xExprs.push_back(d(cDim));
    dyExprs.push_back(d(mDim));
    outExprs.append({d(mDim), d(cDim)});
    for (int64_t i = 0; i < spatial; ++i) {
      xExprs.push_back(d(oDim + i) * strides[i] + d(kDim + i) * dilations[i]);
      dyExprs.push_back(d(oDim + i));
      outExprs.push_back(d(kDim + i));
    }
    SmallVector<utils::IteratorType> iterators(nLoops,
                                               utils::IteratorType::parallel);
    for (int64_t i = nDim; i < nLoops; ++i)
      iterators[i] = utils::IteratorType::reduction;
    auto generic = b.create<linalg::GenericOp>(
        loc, TypeRange{ginit.getType()}, ValueRange{gx, gdy},
        ValueRange{ginit},
        SmallVector<AffineMap>{AffineMap::get(nLoops, 0, xExprs, context),
                               AffineMap::get(nLoops, 0, dyExprs, context),
                               AffineMap::get(nLoops, 0, outExprs, context)},
        iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
          Value xv = toComputeType(nb, l, args[0]);
          Value gv = toComputeType(nb, l, args[1]);
          Value av = toComputeType(nb, l, args[2]);
          Value sum = nb.create<arith::AddFOp>(
              l, av, nb.create<arith::MulFOp>(l, xv, gv));
          nb.create<linalg::YieldOp>(
              l, ValueRange{convertScalar(nb, l, sum, acc, false, false)});
        });
    markConv(b, generic, marker::kConvWeightGradKind, strides, dilations);
    Value result = generic.getResult(0);
    if (grouped)
      result = reshapeTensor(b, loc, result, outType, getSizes(b, loc, init));
    return result;
  }
};

} // namespace

void populateConvPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns) {
  patterns.add<ConvOpLowering, ConvTransposeOpLowering,
               ConvWeightGradOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
