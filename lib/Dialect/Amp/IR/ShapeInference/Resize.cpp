//===- Resize.cpp - shape rules: Resize and GridSample --------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferResize(InferenceContext &ctx, ResizeOpAdaptor adaptor,
                                 Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<int64_t> axes;
  if (std::optional<ArrayRef<int64_t>> attr = adaptor.getAxes()) {
    for (int64_t a : *attr) {
      auto axis = ctx.normalizeAxis(a, rank, "Resize axis");
      if (failed(axis))
        return failure();
      axes.push_back(*axis);
    }
  } else {
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), 0);
  }
  SmallVector<int64_t> shape(x->getShape());
  if (auto sizes = ctx.getConstantInts(3)) {
    if (sizes->size() != axes.size())
      return ctx.emitError("Resize sizes must have one entry per axis");
    if (adaptor.getKeepAspectRatioPolicy() != "stretch") {
      for (int64_t axis : axes)
        shape[axis] = kDynamic;
    } else {
      for (auto [axis, size] : llvm::zip(axes, *sizes))
        shape[axis] = size;
    }
  } else if (!ctx.isAbsent(2)) {
    Attribute scalesAttr;
    auto scales = dyn_cast_or_null<DenseFPElementsAttr>(
        matchPattern(ctx.getOperands()[2], m_Constant(&scalesAttr))
            ? scalesAttr
            : Attribute());
    RankedTensorType scalesType = ctx.getTensorType(2);
    if (scalesType.getRank() == 1 && scalesType.getDimSize(0) == 0) {
      // Empty scales: sizes decide, but they are not constant.
      for (int64_t axis : axes)
        shape[axis] = kDynamic;
    } else if (scales) {
      if (scales.getNumElements() != static_cast<int64_t>(axes.size()))
        return ctx.emitError("Resize scales must have one entry per axis");
      for (auto [axis, scale] : llvm::zip(axes, scales.getValues<APFloat>()))
        if (!ShapedType::isDynamic(shape[axis]))
          shape[axis] = static_cast<int64_t>(
              std::floor(shape[axis] * scale.convertToFloat()));
    } else {
      for (int64_t axis : axes)
        shape[axis] = kDynamic;
    }
  } else if (!ctx.isAbsent(3)) {
    for (int64_t axis : axes)
      shape[axis] = kDynamic;
  } else {
    return ctx.emitError("Resize needs 'scales' or 'sizes'");
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferGridSample(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto grid = requireTensor(ctx, 1);
  if (failed(x) || failed(grid))
    return failure();
  if (x->getRank() < 3 || grid->getRank() != x->getRank())
    return ctx.emitError("GridSample grid must have the rank of X");
  int64_t spatial = x->getRank() - 2;
  int64_t coordinates = grid->getDimSize(grid->getRank() - 1);
  if (!ShapedType::isDynamic(coordinates) && coordinates != spatial)
    return ctx.emitError("GridSample grid holds " + Twine(coordinates) +
                         " coordinates per point but X has " + Twine(spatial) +
                         " spatial dimensions");
  if (!x->isDynamicDim(0) && !grid->isDynamicDim(0) &&
      x->getDimSize(0) != grid->getDimSize(0))
    return ctx.emitError("GridSample grid has batch size " +
                         Twine(grid->getDimSize(0)) + " but X has " +
                         Twine(x->getDimSize(0)));
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1)};
  shape.append(grid->getShape().begin() + 1, grid->getShape().end() - 1);
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}
