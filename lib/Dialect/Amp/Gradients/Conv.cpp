//===- Conv.cpp - gradient rules of convolutions and pools ----------------===//
//
// Conv: the input gradient is a ConvTranspose of the output gradient with
// the same weights (and a ConvTranspose's is a Conv); the weight gradient is amp.conv_weight_grad, the
// backward-weights convolution that backends hand to their libraries
// (oneDNN, cuDNN). Groups are kept as groups: a depthwise convolution's
// weight gradient is depthwise-sized, not dense.
//
//===----------------------------------------------------------------------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/Semantics/Window.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {
namespace {
/// The resolved window of a Conv/pool with static spatial sizes.
FailureOr<semantics::Window> staticWindow(GradientBuilder &gb,
                                          const semantics::WindowAttrs &attrs,
                                          RankedTensorType input,
                                          ArrayRef<int64_t> kernel) {
  ArrayRef<int64_t> spatial = input.getShape().drop_front(2);
  if (ShapedType::isDynamicShape(spatial))
    return gb.fail("needs static spatial sizes"), failure();
  auto window = semantics::resolveWindow(
      attrs, spatial, kernel, [&](const Twine &message) { gb.fail(message); });
  if (failed(window))
    return gb.fail("invalid window"), failure();
  return window;
}
/// The gradient of a per-filter bias: dY summed over the batch and the
/// spatial dimensions.
Value biasGradient(GradientBuilder &gb, Value g, int64_t spatialRank) {
  SmallVector<int64_t> axes{0};
  for (int64_t i = 0; i < spatialRank; ++i)
    axes.push_back(2 + i);
  return gb.reduceSum(g, axes, /*keepDims=*/false);
}
} // namespace

void gradient(ConvOp op, GradientBuilder &gb, In rg, Grads og) {
  Value x = op.getX(), w = op.getW(), g = rg[0];
  RankedTensorType xType = tensorType(x), wType = tensorType(w);
  if (!wType.hasStaticShape()) {
    gb.fail("needs static weight shapes");
    return;
  }
  int64_t spatialRank = xType.getRank() - 2;
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  auto window =
      staticWindow(gb, semantics::WindowAttrs::getConv(op), xType, kernel);
  if (failed(window))
    return;
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  int64_t groups = op.getGroup();
  SmallVector<int64_t> pads(window->padBegin);
  pads.append(window->padEnd.begin(), window->padEnd.end());

  // dX: ConvTranspose(g, W); output_padding restores the rows the forward
  // strides skipped at the end.
  SmallVector<int64_t> outputPadding;
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t out = window->outputSizes[i];
    int64_t covered = (out - 1) * window->strides[i] - window->padBegin[i] -
                      window->padEnd[i] + window->getSpan(i);
    outputPadding.push_back(spatial[i] - covered);
  }
  og[0] = gb.create<ConvTransposeOp>(
      {g, w, gb.none()},
      {gb.attr("strides", ArrayRef<int64_t>(window->strides)),
       gb.attr("dilations", ArrayRef<int64_t>(window->dilations)),
       gb.attr("pads", ArrayRef<int64_t>(pads)),
       gb.attr("group", groups),
       gb.attr("output_padding", ArrayRef<int64_t>(outputPadding))});

  // dW: the backward-weights convolution of the same window. Its filter
  // count comes from dY, so dY gets the static (filters, output) sizes
  // where the reverse pass lost them (a Reshape keeping the batch).
  Value dy = g;
  RankedTensorType gType = tensorType(g);
  SmallVector<int64_t> dyShape{0, wType.getDimSize(0)};
  dyShape.append(window->outputSizes.begin(), window->outputSizes.end());
  if (gType.getRank() != xType.getRank() ||
      !llvm::equal(gType.getShape().drop_front(), ArrayRef(dyShape).drop_front()))
    dy = gb.create<ReshapeOp>({g, gb.i64s(dyShape)});
  og[1] = gb.create<ConvWeightGradOp>(
      {x, dy}, {gb.attr("strides", ArrayRef<int64_t>(window->strides)),
               gb.attr("dilations", ArrayRef<int64_t>(window->dilations)),
               gb.attr("pads", ArrayRef<int64_t>(pads)),
               gb.attr("group", groups),
               gb.attr("kernel_shape", kernel)});

  if (!isa<NoneType>(op.getB().getType())) {
    og[2] = biasGradient(gb, g, spatialRank);
  }
}

void gradient(ConvTransposeOp op, GradientBuilder &gb, In rg, Grads og) {
  // Y[o] = sum over i, k with o = i s + k d - padBegin of X[i] W[k]: the
  // Conv of the same window with X and Y swapped. So dX = Conv(dY, W) and
  // dW = conv_weight_grad(dY, X) (dY as the Conv's input, X as its output
  // gradient). Rows of Y that no input reaches (output_padding, a larger
  // output_shape) are cut from dY first; the Conv's end padding brings the
  // output back to X's sizes.
  Value x = op.getX(), w = op.getW(), g = rg[0];
  RankedTensorType xType = tensorType(x), wType = tensorType(w);
  if (!wType.hasStaticShape() || xType.getRank() < 3) {
    gb.fail("needs static weight shapes");
    return;
  }
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  if (ShapedType::isDynamicShape(spatial)) {
    gb.fail("needs static spatial sizes");
    return;
  }
  int64_t spatialRank = xType.getRank() - 2;
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  auto window = semantics::resolveTransposedWindow(
      semantics::WindowAttrs::getConvTranspose(op), spatial, kernel,
      [&](const Twine &message) { gb.fail(message); });
  if (failed(window)) {
    gb.fail("invalid window");
    return;
  }
  SmallVector<int64_t> padBegin, padEnd, keep;
  bool cut = false;
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t begin = window->padBegin[i], out = window->outputSizes[i];
    int64_t span = (kernel[i] - 1) * window->dilations[i] + 1;
    if (ShapedType::isDynamic(begin) || ShapedType::isDynamic(out) ||
        begin < 0) {
      gb.fail("needs static, non-negative padding");
      return;
    }
    // Y rows past the last one an input reaches: full - begin.
    int64_t reached = window->strides[i] * (spatial[i] - 1) + span - begin;
    padBegin.push_back(begin);
    padEnd.push_back(std::max<int64_t>(reached - out, 0));
    keep.push_back(std::min(reached, out));
    cut |= keep.back() < out;
  }
  Value dy = g;
  if (cut) {
    SmallVector<int64_t> starts(spatialRank, 0), axes;
    for (int64_t i = 0; i < spatialRank; ++i)
      axes.push_back(2 + i);
    dy = gb.create<SliceOp>(
        {g, gb.i64s(starts), gb.i64s(keep), gb.i64s(axes), gb.none()});
  }
  SmallVector<int64_t> pads(padBegin);
  pads.append(padEnd.begin(), padEnd.end());
  int64_t groups = op.getGroup();
  auto windowAttrs = [&](StringRef last, ArrayRef<int64_t> value) {
    return SmallVector<NamedAttribute>{
        gb.attr("strides", ArrayRef<int64_t>(window->strides)),
        gb.attr("dilations", ArrayRef<int64_t>(window->dilations)),
        gb.attr("pads", ArrayRef<int64_t>(pads)), gb.attr("group", groups),
        gb.attr(last, value)};
  };
  og[0] = gb.create<ConvOp>({dy, w, gb.none()},
                            windowAttrs("kernel_shape", kernel));
  og[1] = gb.create<ConvWeightGradOp>({dy, x},
                                      windowAttrs("kernel_shape", kernel));
  if (!isa<NoneType>(op.getB().getType())) {
    og[2] = biasGradient(gb, g, spatialRank);
  }
}

void gradient(MaxPoolOp op, GradientBuilder &gb, In rg, Grads og) {
  // Scatter-add the gradient to the argmax positions (Indices are flat
  // positions in X, NCHW order, as ONNX defines them).
  if (op.getStorageOrder() != 0) {
    gb.fail("needs storage_order = 0");
    return;
  }
  Value x = op.getX(), g = rg[0];
  Value flatIndices =
      gb.create<ReshapeOp>({op.getIndices(), gb.i64s({-1})});
  Value flatGrad = gb.create<ReshapeOp>({g, gb.i64s({-1})});
  Value flatZeros = gb.create<ReshapeOp>({gb.zerosLike(x), gb.i64s({-1})});
  Value scattered = gb.create<ScatterElementsOp>(
      {flatZeros, flatIndices, flatGrad},
      {gb.attr("axis", int64_t(0)), gb.attr("reduction", StringRef("add"))});
  og[0] = gb.reshapeLike(scattered, x);
}

void gradient(AveragePoolOp op, GradientBuilder &gb, In rg, Grads og) {
  // Each output spreads g / count evenly over its window: a depthwise
  // ConvTranspose with a kernel of ones. Without count_include_pad the
  // count per window is the number of real inputs it covers, found as the
  // same pool over ones with count_include_pad = 1, times the window size.
  Value x = op.getX(), g = rg[0];
  RankedTensorType xType = tensorType(x);
  int64_t channels = xType.getDimSize(1);
  if (ShapedType::isDynamic(channels)) {
    gb.fail("needs a static channel count");
    return;
  }
  auto window = staticWindow(gb, semantics::WindowAttrs::getPool(op), xType,
                             op.getKernelShape());
  if (failed(window))
    return;
  int64_t spatialRank = xType.getRank() - 2;
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  int64_t windowSize = 1;
  SmallVector<int64_t> pads(window->padBegin), outputPadding,
      kernelShape{channels, 1};
  pads.append(window->padEnd.begin(), window->padEnd.end());
  for (int64_t i = 0; i < spatialRank; ++i) {
    windowSize *= window->kernel[i];
    kernelShape.push_back(window->kernel[i]);
    int64_t covered = (window->outputSizes[i] - 1) * window->strides[i] -
                      window->padBegin[i] - window->padEnd[i] +
                      window->getSpan(i);
    if (covered > spatial[i]) {
      gb.fail("needs windows inside the padded input (ceil_mode windows "
              "that run past it are not supported)");
      return;
    }
    outputPadding.push_back(spatial[i] - covered);
  }
  bool padded = llvm::any_of(pads, [](int64_t p) { return p != 0; });
  Value scaled;
  if (op.getCountIncludePad() || !padded) {
    scaled = gb.div(g, gb.scalar(g, static_cast<double>(windowSize)));
  } else {
    SmallVector<NamedAttribute> attrs(op->getAttrs());
    llvm::erase_if(attrs, [](NamedAttribute a) {
      return a.getName() == "count_include_pad";
    });
    attrs.push_back(gb.attr("count_include_pad", int64_t(1)));
    Value ones = gb.create<AddOp>({gb.zerosLike(x), gb.scalar(x, 1.0)});
    Value share = gb.create<AveragePoolOp>({ones}, attrs);
    scaled = gb.div(g, gb.mulScalar(share, static_cast<double>(windowSize)));
  }
  auto kernelType = RankedTensorType::get(kernelShape, xType.getElementType());
  Value kernel = gb.getBuilder().create<ConstantOp>(
      op.getLoc(), DenseElementsAttr::get(
                       kernelType, gb.getBuilder().getFloatAttr(
                                       xType.getElementType(), 1.0)));
  og[0] = gb.create<ConvTransposeOp>(
      {scaled, kernel, gb.none()},
      {gb.attr("strides", ArrayRef<int64_t>(window->strides)),
       gb.attr("dilations", ArrayRef<int64_t>(window->dilations)),
       gb.attr("pads", ArrayRef<int64_t>(pads)), gb.attr("group", channels),
       gb.attr("output_padding", ArrayRef<int64_t>(outputPadding))});
}

void gradient(GlobalAveragePoolOp op, GradientBuilder &gb, In rg, Grads og) {
  Value x = op.getX();
  // g / (spatial size), broadcast over the window.
  Value count = gb.castLike(
      gb.div(gb.create<SizeOp>({x}), gb.create<SizeOp>({op.getY()})), x);
  og[0] = gb.create<ExpandOp>(
      {gb.div(rg[0], count), gb.shapeOf(x)});
}

void registerConvGradients(MLIRContext *context) {
  attachGradientModels<ConvOp, ConvTransposeOp, MaxPoolOp, AveragePoolOp, GlobalAveragePoolOp>(
      context);
}

} // namespace mlir::amp::gradients
