//===- Resize.cpp - the gradient rule of Resize ---------------------------===//
//
// Resize is separable and linear in X: along each resized axis it is
// y = M x for an (out x in) matrix M that the mode (nearest, linear,
// cubic) and the coordinate transform decide. The rule does not restate
// those formulas: it builds M^T as the same Resize, along that one axis,
// of an (in x in) identity (its row j is the image of the unit vector
// e_j), so the forward and the backward cannot disagree. dX is then dY
// contracted with it along each axis in turn. Sizes must be static.
//
//===----------------------------------------------------------------------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/Semantics/Indexing.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {
namespace {
/// The float elements of a constant `value`, or std::nullopt.
std::optional<SmallVector<float>> constantFloats(Value value) {
  Attribute attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  SmallVector<float> values;
  for (const APFloat &v : dense.getValues<APFloat>())
    values.push_back(static_cast<float>(v.convertToDouble()));
  return values;
}

/// An (n x n) identity of `elementType`.
Value identity(GradientBuilder &gb, int64_t n, FloatType elementType) {
  auto type = RankedTensorType::get({n, n}, elementType);
  SmallVector<APFloat> values(n * n, APFloat::getZero(
                                         elementType.getFloatSemantics()));
  for (int64_t i = 0; i < n; ++i)
    values[i * n + i] = APFloat::getOne(elementType.getFloatSemantics());
  return gb.constant(DenseElementsAttr::get(type, values));
}
} // namespace

bool isDifferentiable(ResizeOp op, unsigned index, Overload) {
  return index == 0 && isa<FloatType>(tensorType(op.getX()).getElementType());
}
void gradient(ResizeOp op, GradientBuilder &gb, In rg, Grads og) {
  Value x = op.getX(), g = rg[0];
  RankedTensorType xType = tensorType(x), yType = tensorType(op.getY());
  int64_t rank = xType.getRank();
  if (!xType.hasStaticShape() || !yType.hasStaticShape()) {
    gb.fail("needs static input and output shapes");
    return;
  }
  SmallVector<int64_t> axes;
  if (std::optional<ArrayRef<int64_t>> given = op.getAxes()) {
    for (int64_t a : *given) {
      std::optional<int64_t> axis = semantics::normalizeAxis(a, rank);
      if (!axis) {
        gb.fail("has an axis out of range");
        return;
      }
      axes.push_back(*axis);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  // Per axis, the scale or the size the forward used.
  std::optional<SmallVector<float>> scales;
  if (!isa<NoneType>(op.getScales().getType()) &&
      tensorType(op.getScales()).getNumElements() != 0) {
    scales = constantFloats(op.getScales());
    if (!scales || scales->size() != axes.size()) {
      gb.fail("needs constant scales");
      return;
    }
  } else if (op.getKeepAspectRatioPolicy() != "stretch") {
    // The common scale would have to be re-derived per axis.
    gb.fail("needs keep_aspect_ratio_policy = stretch");
    return;
  }
  StringRef transform = op.getCoordinateTransformationMode();
  std::optional<SmallVector<float>> roi;
  if (transform == "tf_crop_and_resize") {
    roi = constantFloats(op.getRoi());
    if (!roi || roi->size() != 2 * axes.size()) {
      gb.fail("needs a constant roi with two entries per resized axis");
      return;
    }
  }
  // Computed in f32 (f64 for f64 data), like the forward's blend.
  Type elementType = xType.getElementType();
  auto compute = elementType.isF64() ? cast<FloatType>(elementType)
                                     : Float32Type::get(op.getContext());
  for (auto [k, axis] : llvm::enumerate(axes)) {
    int64_t in = xType.getDimSize(axis), out = yType.getDimSize(axis);
    // Same size at scale 1: every mode and transform is the identity.
    if (in == out && (!scales || (*scales)[k] == 1.0f) && !roi)
      continue;
    SmallVector<NamedAttribute> attrs{
        gb.attr("axes", ArrayRef<int64_t>{1}),
        gb.attr("antialias", static_cast<int64_t>(op.getAntialias())),
        gb.attr("coordinate_transformation_mode", transform),
        gb.attr("cubic_coeff_a",
                static_cast<float>(op.getCubicCoeffA().convertToDouble())),
        gb.attr("exclude_outside", static_cast<int64_t>(op.getExcludeOutside())),
        // Outside the crop Y is a constant: no gradient there.
        gb.attr("extrapolation_value", 0.0f),
        gb.attr("mode", op.getMode()),
        gb.attr("nearest_mode", op.getNearestMode())};
    Value axisRoi = roi ? gb.f32s({(*roi)[k], (*roi)[axes.size() + k]})
                        : gb.none();
    Value axisScales = scales ? gb.f32s({(*scales)[k]}) : gb.none();
    Value axisSizes = scales ? gb.none() : gb.i64s({out});
    // (in, out): row j is Resize(e_j), that is column j of M.
    Value mT = gb.create<ResizeOp>(
        {identity(gb, in, compute), axisRoi, axisScales, axisSizes}, attrs);
    // dX along the axis: g (..., out) times M (out, in), axis moved last.
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        perm.push_back(i);
    perm.push_back(axis);
    SmallVector<int64_t> inverse(rank);
    for (int64_t i = 0; i < rank; ++i)
      inverse[perm[i]] = i;
    bool last = axis == rank - 1;
    Value moved = last ? g : gb.transpose(g, perm);
    Value m = gb.castLike(gb.transpose(mT, {1, 0}), g);
    Value back = gb.create<MatMulOp>({moved, m});
    g = last ? back : gb.transpose(back, inverse);
    if (!g)
      return;
  }
  og[0] = g;
}

void registerResizeGradients(MLIRContext *context) {
  attachGradientModels<ResizeOp>(context);
}

} // namespace mlir::amp::gradients
