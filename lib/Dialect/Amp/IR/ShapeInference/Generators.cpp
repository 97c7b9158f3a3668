//===- Generators.cpp - shape rules of the generators ops -----------------===//

#include "ShapeInferenceUtils.h"

#include "amp/Dialect/Amp/Semantics/Generators.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferConstantOfShape(InferenceContext &ctx,
                                          ElementsAttr valueAttr,
                                          Types &results) {
  auto shapeType = requireTensor(ctx, 0);
  if (failed(shapeType))
    return failure();
  Type elementType = Float32Type::get(ctx.getContext());
  if (auto value = valueAttr) {
    if (value.getNumElements() != 1)
      return ctx.emitError("ConstantOfShape value must have one element");
    elementType = value.getElementType();
  }
  if (shapeType->getRank() != 1)
    return ctx.emitError("ConstantOfShape input must be 1-d");
  if (auto dims = ctx.getConstantInts(0)) {
    if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }))
      return ctx.emitError("ConstantOfShape dimensions must be >= 0");
    results.push_back(tensorOf(*dims, elementType));
    return success();
  }
  if (shapeType->isDynamicDim(0))
    return ctx.emitError("ConstantOfShape shape must be constant or have a "
                         "static length");
  if (failed(checkRankFromLength(ctx, shapeType->getDimSize(0),
                                 "ConstantOfShape shape")))
    return failure();
  results.push_back(tensorOf(
      SmallVector<int64_t>(shapeType->getDimSize(0), kDynamic), elementType));
  return success();
}

LogicalResult shape::inferRange(InferenceContext &ctx, int64_t stashType,
                                Types &results) {
  auto start = requireTensor(ctx, 0);
  if (failed(start) || failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  if (!semantics::getRangeComputeType(start->getElementType(), stashType))
    return ctx.emitError("Range stash_type " + Twine(stashType) +
                         " is not supported (1 float or 11 double)");
  for (unsigned i = 0; i < 3; ++i)
    if (!ctx.getTensorType(i) || !ctx.getTensorType(i).hasStaticShape() ||
        ctx.getTensorType(i).getNumElements() != 1)
      return ctx.emitError("Range operands must be scalars");
  int64_t count = kDynamic;
  auto s = ctx.getConstantInts(0), l = ctx.getConstantInts(1),
       d = ctx.getConstantInts(2);
  if (s && l && d) {
    if ((*d)[0] == 0)
      return ctx.emitError("Range delta must not be 0");
    // In double: limit - start overflows int64 for extreme values, and a
    // count beyond int64 is no size (the importer's cap refuses it).
    double steps = std::ceil(
        (static_cast<double>((*l)[0]) - static_cast<double>((*s)[0])) /
        static_cast<double>((*d)[0]));
    count = steps <= 0 ? 0
            : steps >= 0x1p62 ? semantics::kInvalidDim
                              : static_cast<int64_t>(steps);
  }
  results.push_back(tensorOf({count}, start->getElementType()));
  return success();
}

LogicalResult shape::inferEyeLike(InferenceContext &ctx,
                                  std::optional<Type> dtype, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() != 2)
    return ctx.emitError("EyeLike input must be 2-d");
  results.push_back(
      tensorOf(x->getShape(), dtype.value_or(x->getElementType())));
  return success();
}

LogicalResult shape::inferOneHot(InferenceContext &ctx, int64_t axisAttr,
                                 Types &results) {
  auto indices = requireTensor(ctx, 0);
  auto values = requireTensor(ctx, 2);
  if (failed(indices) || failed(values) || failed(requireTensor(ctx, 1)))
    return failure();
  int64_t rank = indices->getRank() + 1;
  auto axis = ctx.normalizeAxis(axisAttr, rank, "OneHot axis");
  if (failed(axis))
    return failure();
  int64_t depth = kDynamic;
  Attribute depthAttr;
  if (matchPattern(ctx.getOperands()[1], m_Constant(&depthAttr))) {
    if (auto ints = getIntValues(depthAttr))
      depth = (*ints)[0];
    else if (auto floats = dyn_cast<DenseFPElementsAttr>(depthAttr))
      depth = static_cast<int64_t>(
          (*floats.getValues<APFloat>().begin()).convertToDouble());
  }
  SmallVector<int64_t> shape(indices->getShape());
  shape.insert(shape.begin() + *axis, depth);
  results.push_back(tensorOf(shape, values->getElementType()));
  return success();
}
