//===- Conv.cpp - Conv and ConvTranspose ----------------------------------===//
//
// A convolution is one linalg.generic (grouped: channels split into
// (group, channels/group)) accumulating into its initialised output. It
// and its output initialisation carry the backend-neutral markers of
// amp/Conversion/AmpToLinalg/Markers.h, whatever the element type.
// ConvTranspose is one stride-1 convolution per output phase (sub-pixel
// decomposition), each with the kernel taps that reach the phase, flipped. amp.conv_weight_grad is one generic marked as
// a weight gradient.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "amp/Conversion/AmpToLinalg/Markers.h"

#include <atomic>
#include <numeric>

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

/// Lowers a convolution of X and W (converted operands; `bias` may be
/// none) into `op`'s place; `convertedType` is its converted result type.
/// X and W have the accumulator's type or are converted to it.
struct ConvolutionLowering {
  static LogicalResult lower(Operation *op, Value x, Value w, Value bias,
                             const semantics::WindowAttrs &attrs,
                             RankedTensorType convertedType,
                             ConversionPatternRewriter &rewriter) {
    Location loc = op->getLoc();
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t spatial = xType.getRank() - 2;
    if (spatial < 1)
      return notLowerable(op, "input of rank < 3");
    if (!wType.hasStaticShape())
      return notLowerable(op, "weights with a dynamic shape");
    SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
    auto window = resolveWindowForLowering(op, attrs, xType, kernel);
    if (failed(window))
      return failure();
    SmallVector<int64_t> strides = window->strides;
    SmallVector<int64_t> dilations = window->dilations;
    int64_t groups = attrs.group;
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
    Value init = buildConvInit(rewriter, loc, bias, accType, outSizes,
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
          buildMultiplyAccumulate(nb, l, args, acc);
        });
    // Backend-neutral markers: a backend may call a library for it.
    markConv(b, generic, marker::kConvKind, strides, dilations);
    Value result = generic.getResult(0);
    if (grouped)
      result = reshapeTensor(b, loc, result, outType, getSizes(b, loc, init));
    return result;
  }
};

struct ConvOpLowering : public OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return ConvolutionLowering::lower(
        op, adaptor.getX(), adaptor.getW(), adaptor.getB(),
        semantics::WindowAttrs::getConv(op),
        convertedResultType(getTypeConverter(), op), rewriter);
  }
};

/// `v` - `zeroPoint` in int32 (8-bit operands of either signedness): the
/// zero point is one element (per tensor) or, along `axis`, one per index.
Value subtractZeroPoint(OpBuilder &b, Location loc, Value v, Type vType,
                        Value zeroPoint, Type zeroPointType, int64_t axis) {
  Type i32 = b.getI32Type();
  auto type = cast<RankedTensorType>(v.getType());
  bool vUnsigned = isUnsignedInt(vType);
  if (isNone(zeroPoint))
    return buildElementwise(
        b, loc, {v}, type.clone(i32),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          return convertScalar(nb, l, args[0], i32, vUnsigned, false);
        },
        false, getSizes(b, loc, v));
  auto zpType = cast<RankedTensorType>(zeroPoint.getType());
  // One element: a scalar; else [size] along `axis` of v's rank.
  SmallVector<int64_t> shape;
  if (zpType.getNumElements() != 1) {
    shape.assign(type.getRank() - axis, 1);
    shape[0] = zpType.getDimSize(0);
  }
  Value shaped = reshapeTensor(b, loc, zeroPoint, zpType.clone(shape),
                               getSizes(b, loc, zeroPoint));
  bool zpUnsigned = isUnsignedInt(zeroPointType);
  return buildElementwise(
      b, loc, {v, shaped}, type.clone(i32),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return nb.create<arith::SubIOp>(
            l, convertScalar(nb, l, args[0], i32, vUnsigned, false),
            convertScalar(nb, l, args[1], i32, zpUnsigned, false));
      },
      false, getSizes(b, loc, v));
}

/// ConvInteger: the zero points subtracted in int32, then the int32
/// convolution (the same generic as Conv, accumulating in int32).
struct ConvIntegerOpLowering : public OpConversionPattern<ConvIntegerOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvIntegerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = subtractZeroPoint(
        rewriter, loc, adaptor.getX(), getElementTypeOrSelf(op.getX()),
        adaptor.getXZeroPoint(), getElementTypeOrSelf(op.getXZeroPoint()), 0);
    Value w = subtractZeroPoint(
        rewriter, loc, adaptor.getW(), getElementTypeOrSelf(op.getW()),
        adaptor.getWZeroPoint(), getElementTypeOrSelf(op.getWZeroPoint()), 0);
    return ConvolutionLowering::lower(
        op, x, w, /*bias=*/Value(), semantics::WindowAttrs::getConv(op),
        convertedResultType(getTypeConverter(), op), rewriter);
  }
};

/// Above this many output phases (the product of the strides) a
/// ConvTranspose is one convolution over a zero-stuffed input instead.
constexpr int64_t kMaxTransposedPhases = 64;

/// One output phase of a ConvTranspose along one spatial dimension: the
/// outputs i = q * stride + phase, q < count, each a stride-1 convolution
/// over `taps` kernel taps k0, k0 + tapStep, ... (flipped) with dilation
/// `dilation`, reading X[q + base + j * dilation] for flipped tap j.
struct TransposedPhase {
  int64_t phase = 0, count = 0;
  int64_t k0 = 0, taps = 0, tapStep = 1, dilation = 1, base = 0;
};

/// The phases of one spatial dimension (`stride` of them; a phase without
/// taps or without inputs in reach has taps = 0 and only gets the bias).
SmallVector<TransposedPhase> transposedPhases(int64_t in, int64_t out,
                                              int64_t kernel, int64_t stride,
                                              int64_t dilation,
                                              int64_t padBegin) {
  SmallVector<TransposedPhase> phases;
  int64_t divisor = std::gcd(stride, dilation);
  for (int64_t r = 0; r < stride && r < out; ++r) {
    TransposedPhase p;
    p.phase = r;
    p.count = (out - r + stride - 1) / stride;
    p.tapStep = stride / divisor;
    p.dilation = dilation / divisor;
    // Output i = o * stride + k * dilation - padBegin: tap k reaches
    // phase r when (r + padBegin - k * dilation) is a multiple of stride.
    for (int64_t k = 0; k < kernel; ++k) {
      int64_t offset = r + padBegin - k * dilation;
      if (((offset % stride) + stride) % stride != 0)
        continue;
      if (p.taps == 0)
        p.k0 = k;
      ++p.taps;
    }
    if (p.taps > 0) {
      // Tap k0 reads X[q + e0]; the flipped tap j reads X[q + base + j*d'].
      int64_t e0 = (r + padBegin - p.k0 * dilation) / stride;
      p.base = e0 - (p.taps - 1) * p.dilation;
      // No input in reach of any output of the phase: bias only.
      if (std::min(in, p.count + e0) <= std::max<int64_t>(p.base, 0))
        p.taps = 0;
    }
    phases.push_back(p);
  }
  return phases;
}

/// ConvTranspose by output phases (sub-pixel decomposition): along each
/// spatial dimension the outputs i = q * stride + r form `stride` phases,
/// each a stride-1 convolution of X with the kernel taps that reach it
/// (flipped, channels swapped per group), written into a strided slice of
/// Y. Every multiply-add is one the definition needs (no zero-stuffed
/// input), and each phase is an ordinary marked convolution that backends
/// hand to their libraries; stride 1 is one phase with the whole flipped
/// kernel.
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
    int64_t perGroupIn = channels / groups, filters = perGroupOut * groups;
    SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
    auto window = semantics::resolveTransposedWindow(
        semantics::WindowAttrs::getConvTranspose(op),
        xType.getShape().drop_front(2), kernel,
        [&](const Twine &message) { (void)op->emitError(message); });
    if (failed(window))
      return failure();
    if (xType.isDynamicDim(1)) {
      SmallVector<int64_t> shape(xType.getShape());
      shape[1] = channels;
      xType = RankedTensorType::get(shape, xType.getElementType());
      x = rewriter.create<tensor::CastOp>(loc, xType, x);
    }
    Type storage = resultType.getElementType();
    Type acc = accumulatorType(op, storage);
    if (acc != storage) {
      x = convertTensor(rewriter, loc, x, acc);
      w = convertTensor(rewriter, loc, w, acc);
    }
    int64_t phaseCount = 1;
    for (int64_t s : window->strides)
      phaseCount *= s;
    if (phaseCount > kMaxTransposedPhases) {
      Value result = buildZeroStuffed(rewriter, loc, x, w, adaptor.getB(),
                                      resultType.clone(acc), *window, groups,
                                      acc);
      result = convertTensor(rewriter, loc, result, storage);
      if (result.getType() != resultType)
        result = rewriter.create<tensor::CastOp>(loc, resultType, result);
      rewriter.replaceOp(op, result);
      return success();
    }
    Value zero = constantScalar(rewriter, loc, acc, 0);
    SmallVector<SmallVector<TransposedPhase>> perDim;
    for (int64_t i = 0; i < spatial; ++i)
      perDim.push_back(transposedPhases(
          xType.getDimSize(i + 2), resultType.getDimSize(i + 2), kernel[i],
          window->strides[i], window->dilations[i], window->padBegin[i]));

    OpFoldResult batch = getSizes(rewriter, loc, x)[0];
    SmallVector<int64_t> outShape(resultType.getShape());
    outShape[0] = xType.getDimSize(0);
    outShape[1] = filters;
    SmallVector<OpFoldResult> outSizes = {batch,
                                          rewriter.getIndexAttr(filters)};
    for (int64_t i = 0; i < spatial; ++i)
      outSizes.push_back(rewriter.getIndexAttr(outShape[i + 2]));
    Value y = rewriter.create<tensor::EmptyOp>(loc, outSizes, acc);

    // Every combination of per-dimension phases.
    SmallVector<int64_t> choice(spatial, 0);
    while (true) {
      SmallVector<const TransposedPhase *> phase;
      bool hasTaps = true;
      for (int64_t i = 0; i < spatial; ++i) {
        phase.push_back(&perDim[i][choice[i]]);
        hasTaps &= phase.back()->taps > 0;
      }
      SmallVector<int64_t> phaseShape = {outShape[0], filters};
      SmallVector<OpFoldResult> phaseSizes = {batch,
                                              rewriter.getIndexAttr(filters)};
      for (const TransposedPhase *p : phase) {
        phaseShape.push_back(p->count);
        phaseSizes.push_back(rewriter.getIndexAttr(p->count));
      }
      Value part = buildConvInit(rewriter, loc, adaptor.getB(),
                                 RankedTensorType::get(phaseShape, acc),
                                 phaseSizes, filters);
      if (hasTaps)
        part = buildPhase(rewriter, loc, x, w, part, phase, groups, perGroupIn,
                          perGroupOut, zero);
      SmallVector<OpFoldResult> offsets(2, rewriter.getIndexAttr(0)),
          strides(2, rewriter.getIndexAttr(1));
      for (int64_t i = 0; i < spatial; ++i) {
        offsets.push_back(rewriter.getIndexAttr(phase[i]->phase));
        strides.push_back(rewriter.getIndexAttr(window->strides[i]));
      }
      y = rewriter.create<tensor::InsertSliceOp>(loc, part, y, offsets,
                                                 phaseSizes, strides);
      int64_t d = spatial - 1;
      while (d >= 0 && ++choice[d] == static_cast<int64_t>(perDim[d].size()))
        choice[d--] = 0;
      if (d < 0)
        break;
    }
    Value result = convertTensor(rewriter, loc, y, storage);
    if (result.getType() != resultType)
      result = rewriter.create<tensor::CastOp>(loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Beyond kMaxTransposedPhases phases (large strides: one convolution
  /// per phase would be a huge program), the zero-stuffed formulation:
  /// one stride-1 convolution over the input with stride - 1 zeros between
  /// its elements, padded, with the whole kernel flipped.
  static Value buildZeroStuffed(OpBuilder &b, Location loc, Value x, Value w,
                                Value bias, RankedTensorType resultType,
                                const semantics::TransposedWindow &window,
                                int64_t groups, Type acc) {
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t spatial = xType.getRank() - 2;
    int64_t channels = wType.getDimSize(0), perGroupOut = wType.getDimSize(1);
    SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
    ArrayRef<int64_t> strides = window.strides, dilations = window.dilations;
    Type element = elementTypeOf(x);
    Value zero = constantScalar(b, loc, element, 0);
    // 1. Zero-stuffed input: (in - 1) * stride + 1 per spatial dim.
    SmallVector<int64_t> stuffedShape = {xType.getDimSize(0),
                                         xType.getDimSize(1)};
    SmallVector<OpFoldResult> stuffedSizes = {
        b.create<tensor::DimOp>(loc, x, 0).getResult(),
        b.getIndexAttr(xType.getDimSize(1))};
    SmallVector<OpFoldResult> offsets(xType.getRank(),
                                      b.getIndexAttr(0));
    SmallVector<OpFoldResult> insertStrides = {b.getIndexAttr(1),
                                               b.getIndexAttr(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = xType.getDimSize(i + 2);
      stuffedShape.push_back((in - 1) * strides[i] + 1);
      stuffedSizes.push_back(b.getIndexAttr(stuffedShape.back()));
      insertStrides.push_back(b.getIndexAttr(strides[i]));
    }
    Value stuffed = filledTensor(b, loc,
                                 RankedTensorType::get(stuffedShape, element),
                                 stuffedSizes, zero);
    stuffed = b.create<tensor::InsertSliceOp>(
        loc, x, stuffed, offsets, getSizes(b, loc, x), insertStrides);
    // 2. Padding: low = d*(K-1) - pad_begin, high = out - stuffed + pad_begin
    //    (a negative amount crops).
    ArrayRef<int64_t> begin = window.padBegin;
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
    Value padded = padSpatial(b, loc, stuffed, padLow, padHigh, zero);
    if (llvm::any_of(low, [](int64_t v) { return v < 0; }) ||
        llvm::any_of(high, [](int64_t v) { return v < 0; })) {
      auto paddedType = cast<RankedTensorType>(padded.getType());
      SmallVector<OpFoldResult> cropOffsets(paddedType.getRank(),
                                            b.getIndexAttr(0));
      SmallVector<OpFoldResult> cropSizes = getSizes(b, loc, padded);
      SmallVector<int64_t> cropShape(paddedType.getShape());
      for (int64_t i = 0; i < spatial; ++i) {
        int64_t cutLow = std::max<int64_t>(-low[i], 0);
        int64_t cutHigh = std::max<int64_t>(-high[i], 0);
        cropShape[i + 2] -= cutLow + cutHigh;
        cropOffsets[i + 2] = b.getIndexAttr(cutLow);
        cropSizes[i + 2] = b.getIndexAttr(cropShape[i + 2]);
      }
      SmallVector<OpFoldResult> ones(paddedType.getRank(),
                                     b.getIndexAttr(1));
      padded = b.create<tensor::ExtractSliceOp>(
          loc, RankedTensorType::get(cropShape, element), padded, cropOffsets,
          cropSizes, ones);
    }
    // 3. Kernel: W[C, F/G, k] -> W'[F, C/G, k] with k flipped.
    int64_t perGroupIn = channels / groups;
    SmallVector<int64_t> flippedShape = {perGroupOut * groups, perGroupIn};
    flippedShape.append(kernel.begin(), kernel.end());
    auto flippedType = RankedTensorType::get(flippedShape, element);
    Value flipped = buildIndexGenerated(
        b, loc, flippedType, {},
        [&](OpBuilder &nb, Location l, ValueRange indices) -> Value {
          auto c = [&](int64_t v) {
            return nb.create<arith::ConstantIndexOp>(l, v);
          };
          Value f = indices[0];
          Value ci = indices[1];
          Value g = nb.create<arith::DivUIOp>(l, f, c(perGroupOut));
          Value fi = nb.create<arith::RemUIOp>(l, f, c(perGroupOut));
          SmallVector<Value> at = {
              nb.create<arith::AddIOp>(
                  l, nb.create<arith::MulIOp>(l, g, c(perGroupIn)), ci),
              fi};
          for (int64_t i = 0; i < spatial; ++i)
            at.push_back(
                nb.create<arith::SubIOp>(l, c(kernel[i] - 1), indices[2 + i]));
          return nb.create<tensor::ExtractOp>(l, w, at);
        });
    // 4. Output initialised with the bias, then a stride-1 convolution.
    SmallVector<int64_t> outShape(resultType.getShape());
    outShape[0] = xType.getDimSize(0);
    outShape[1] = perGroupOut * groups;
    auto accType = RankedTensorType::get(outShape, acc);
    SmallVector<OpFoldResult> outSizes = {getSizes(b, loc, x)[0]};
    for (int64_t i = 1; i < accType.getRank(); ++i)
      outSizes.push_back(b.getIndexAttr(outShape[i]));
    Value init = buildConvInit(b, loc, bias, accType, outSizes,
                               perGroupOut * groups);
    SmallVector<int64_t> unitStrides(spatial, 1);
    Value result = ConvolutionLowering::buildConv(
        b, loc, padded, flipped, init, unitStrides, dilations, groups);
    return result;
  }

  /// One phase: the reachable window of X, zero-padded where the phase's
  /// first or last outputs reach outside it, convolved (stride 1) with the
  /// phase's flipped taps W'[F, C/G, j...] = W[g*C/G + c, f, k0 + (J-1-j)*t].
  static Value buildPhase(OpBuilder &b, Location loc, Value x, Value w,
                          Value init, ArrayRef<const TransposedPhase *> phase,
                          int64_t groups, int64_t perGroupIn,
                          int64_t perGroupOut, Value zero) {
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t spatial = phase.size();
    SmallVector<OpFoldResult> offsets(xType.getRank(), b.getIndexAttr(0)),
        sizes = getSizes(b, loc, x),
        unit(xType.getRank(), b.getIndexAttr(1));
    SmallVector<int64_t> windowShape(xType.getShape()), padLow, padHigh,
        dilations;
    bool cropped = false;
    for (int64_t i = 0; i < spatial; ++i) {
      const TransposedPhase &p = *phase[i];
      int64_t in = xType.getDimSize(i + 2);
      int64_t first = std::max<int64_t>(p.base, 0);
      int64_t last = std::min(in, p.count + p.base + (p.taps - 1) * p.dilation);
      cropped |= first != 0 || last != in;
      offsets[i + 2] = b.getIndexAttr(first);
      sizes[i + 2] = b.getIndexAttr(last - first);
      windowShape[i + 2] = last - first;
      padLow.push_back(std::max<int64_t>(-p.base, 0));
      padHigh.push_back(std::max<int64_t>(
          p.count + p.base + (p.taps - 1) * p.dilation - in, 0));
      dilations.push_back(p.dilation);
    }
    Value input = x;
    if (cropped)
      input = b.create<tensor::ExtractSliceOp>(
          loc, RankedTensorType::get(windowShape, xType.getElementType()), x,
          offsets, sizes, unit);
    input = padSpatial(b, loc, input, padLow, padHigh, zero);

    SmallVector<int64_t> kernelShape = {perGroupOut * groups, perGroupIn};
    for (const TransposedPhase *p : phase)
      kernelShape.push_back(p->taps);
    auto kernelType = RankedTensorType::get(
        kernelShape, cast<RankedTensorType>(w.getType()).getElementType());
    Value kernel = buildIndexGenerated(
        b, loc, kernelType, {},
        [&](OpBuilder &nb, Location l, ValueRange indices) -> Value {
          auto c = [&](int64_t v) {
            return nb.create<arith::ConstantIndexOp>(l, v);
          };
          Value f = indices[0];
          Value g = nb.create<arith::DivUIOp>(l, f, c(perGroupOut));
          Value fi = nb.create<arith::RemUIOp>(l, f, c(perGroupOut));
          SmallVector<Value> at = {
              nb.create<arith::AddIOp>(
                  l, nb.create<arith::MulIOp>(l, g, c(perGroupIn)),
                  indices[1]),
              fi};
          for (int64_t i = 0; i < spatial; ++i) {
            const TransposedPhase &p = *phase[i];
            // k0 + (J - 1 - j) * t
            Value flipped =
                nb.create<arith::SubIOp>(l, c(p.taps - 1), indices[2 + i]);
            at.push_back(nb.create<arith::AddIOp>(
                l, c(p.k0),
                nb.create<arith::MulIOp>(l, flipped, c(p.tapStep))));
          }
          return nb.create<tensor::ExtractOp>(l, w, at);
        });
    SmallVector<int64_t> unitStrides(spatial, 1);
    return ConvolutionLowering::buildConv(b, loc, input, kernel, init,
                                          unitStrides, dilations, groups);
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
          buildMultiplyAccumulate(nb, l, args, acc);
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
  patterns.add<ConvOpLowering, ConvIntegerOpLowering, ConvTransposeOpLowering,
               ConvWeightGradOpLowering>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
