//===- Shape.cpp - shape rules of the shape ops ---------------------------===//

#include "ShapeInferenceUtils.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

LogicalResult shape::inferShapeOp(InferenceContext &ctx,
                                  std::optional<int64_t> startAttr,
                                  std::optional<int64_t> endAttr,
                                  Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  int64_t start = clampIndex(startAttr.value_or(0));
  int64_t end = clampIndex(endAttr.value_or(rank));
  results.push_back(tensorOf({std::max<int64_t>(end - start, 0)},
                             IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferSize(InferenceContext &ctx, Types &results) {
  if (failed(requireTensor(ctx, 0)))
    return failure();
  results.push_back(tensorOf({}, IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferReshape(InferenceContext &ctx, bool allowZero,
                                  Types &results) {
  auto x = requireTensor(ctx, 0);
  auto shapeType = requireTensor(ctx, 1);
  if (failed(x) || failed(shapeType))
    return failure();
  if (shapeType->getRank() != 1)
    return ctx.emitError("Reshape 'shape' must be 1-d");
  std::optional<SmallVector<int64_t>> target = ctx.getConstantInts(1);
  if (!target) {
    if (shapeType->isDynamicDim(0))
      return ctx.emitError(
          "Reshape 'shape' must be constant or have a static length");
    if (failed(checkRankFromLength(ctx, shapeType->getDimSize(0),
                                   "Reshape 'shape'")))
      return failure();
    SmallVector<int64_t> shape(shapeType->getDimSize(0), kDynamic);
    // Reshape(x, Shape(y)) (PyTorch's GroupNorm, view_as): y's sizes where
    // they are static, unless one is 0 (which would copy x's size).
    if (auto source = ctx.getOperands()[1].getDefiningOp<ShapeOp>()) {
      auto sourceType = dyn_cast<RankedTensorType>(source.getData().getType());
      if (sourceType) {
        int64_t rank = sourceType.getRank();
        auto clamp = [&](int64_t i) {
          return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
        };
        int64_t start = clamp(source.getStart().value_or(0));
        int64_t end = clamp(source.getEnd().value_or(rank));
        ArrayRef<int64_t> sizes =
            sourceType.getShape().slice(start, std::max<int64_t>(end - start, 0));
        if (sizes.size() == shape.size() &&
            (allowZero || !llvm::is_contained(sizes, 0)))
          shape.assign(sizes.begin(), sizes.end());
        auto target = RankedTensorType::get(shape, x->getElementType());
        if (x->hasStaticShape() && target.hasStaticShape() &&
            target.getNumElements() != x->getNumElements())
          return ctx.emitError("cannot reshape " +
                               llvm::Twine(x->getNumElements()) +
                               " elements into " +
                               llvm::Twine(target.getNumElements()));
      }
    }
    results.push_back(tensorOf(shape, x->getElementType()));
    return success();
  }
  SmallVector<int64_t> shape;
  int64_t inferredIndex = -1;
  for (auto [i, dim] : llvm::enumerate(*target)) {
    if (dim == -1) {
      if (inferredIndex >= 0)
        return ctx.emitError("Reshape 'shape' has more than one -1");
      inferredIndex = i;
      shape.push_back(kDynamic);
    } else if (dim == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= x->getRank())
        return ctx.emitError("Reshape 'shape' copies dimension " +
                             llvm::Twine(i) + " which the input lacks");
      shape.push_back(x->getDimSize(i));
    } else if (dim < 0) {
      return ctx.emitError("Reshape 'shape' has invalid dimension " +
                           llvm::Twine(dim));
    } else {
      shape.push_back(dim);
    }
  }
  if (x->hasStaticShape()) {
    int64_t known = 1;
    for (auto [i, dim] : llvm::enumerate(shape))
      if (static_cast<int64_t>(i) != inferredIndex) {
        if (ShapedType::isDynamic(dim)) {
          known = -1;
          break;
        }
        known *= dim;
      }
    int64_t total = x->getNumElements();
    if (known > 0 && inferredIndex >= 0) {
      if (total % known != 0)
        return ctx.emitError("cannot reshape " + llvm::Twine(total) +
                             " elements with a -1 dimension");
      shape[inferredIndex] = total / known;
    } else if (known >= 0 && inferredIndex < 0 && known != total) {
      return ctx.emitError("cannot reshape " + llvm::Twine(total) +
                           " elements into " + llvm::Twine(known));
    }
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferFlatten(InferenceContext &ctx, int64_t axis,
                                  Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  if (axis < -rank || axis > rank)
    return ctx.emitError("Flatten axis " + llvm::Twine(axis) +
                         " is out of range for rank " + llvm::Twine(rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) =
        mulDims(i < axis ? outer : inner, x->getDimSize(i));
  results.push_back(tensorOf({outer, inner}, x->getElementType()));
  return success();
}

/// The number of axes of a Squeeze/Unsqueeze whose axes input is not a
/// constant: its static length (a 1-D tensor), which fixes the result's rank.
static FailureOr<int64_t> runtimeAxesCount(InferenceContext &ctx,
                                           llvm::StringRef op) {
  RankedTensorType axesType = ctx.getTensorType(1);
  if (!axesType || axesType.getRank() != 1 || axesType.isDynamicDim(0))
    return ctx.emitError(op + " axes must be constant or a 1-D tensor of "
                              "static length (the result's rank depends on "
                              "it)");
  return axesType.getDimSize(0);
}

LogicalResult shape::inferSqueeze(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<bool> drop(rank, false);
  if (ctx.isAbsent(1)) {
    for (int64_t i = 0; i < rank; ++i) {
      if (x->isDynamicDim(i))
        return ctx.emitError("Squeeze without axes needs static dimensions");
      drop[i] = x->getDimSize(i) == 1;
    }
  } else {
    std::optional<SmallVector<int64_t>> axes = ctx.getConstantInts(1);
    if (!axes) {
      // Axes known at run time: only the result's rank is known.
      FailureOr<int64_t> count = runtimeAxesCount(ctx, "Squeeze");
      if (failed(count))
        return failure();
      if (*count > rank)
        return ctx.emitError("Squeeze has " + llvm::Twine(*count) +
                             " axes for a rank-" + llvm::Twine(rank) +
                             " input");
      results.push_back(tensorOf(SmallVector<int64_t>(rank - *count, kDynamic),
                                 x->getElementType()));
      return success();
    }
    for (int64_t axis : *axes) {
      auto normalized = ctx.normalizeAxis(axis, rank, "Squeeze axis");
      if (failed(normalized))
        return failure();
      int64_t dim = x->getDimSize(*normalized);
      if (!ShapedType::isDynamic(dim) && dim != 1)
        return ctx.emitError("cannot squeeze dimension " +
                             llvm::Twine(*normalized) + " of size " +
                             llvm::Twine(dim));
      drop[*normalized] = true;
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      shape.push_back(x->getDimSize(i));
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferUnsqueeze(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> axes = ctx.getConstantInts(1);
  if (!axes) {
    // Axes known at run time: only the result's rank is known.
    FailureOr<int64_t> count = runtimeAxesCount(ctx, "Unsqueeze");
    if (failed(count))
      return failure();
    results.push_back(
        tensorOf(SmallVector<int64_t>(x->getRank() + *count, kDynamic),
                 x->getElementType()));
    return success();
  }
  int64_t rank = x->getRank() + axes->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    auto normalized = ctx.normalizeAxis(axis, rank, "Unsqueeze axis");
    if (failed(normalized))
      return failure();
    if (inserted[*normalized])
      return ctx.emitError("Unsqueeze axes repeat " + llvm::Twine(axis));
    inserted[*normalized] = true;
  }
  SmallVector<int64_t> shape;
  auto dims = x->getShape().begin();
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(inserted[i] ? 1 : *dims++);
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferTranspose(InferenceContext &ctx,
                                    std::optional<ArrayRef<int64_t>> permAttr,
                                    Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<int64_t> perm;
  if (permAttr) {
    perm.assign(permAttr->begin(), permAttr->end());
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    return ctx.emitError("Transpose perm has " + llvm::Twine(perm.size()) +
                         " entries for rank " + llvm::Twine(rank));
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return ctx.emitError("Transpose perm is not a permutation");
    seen[p] = true;
    shape.push_back(x->getDimSize(p));
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferConcat(InferenceContext &ctx, int64_t axisAttr,
                                 Types &results) {
  auto first = requireTensor(ctx, 0);
  if (failed(first) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())))
    return failure();
  int64_t rank = first->getRank();
  auto axis = ctx.normalizeAxis(axisAttr, rank, "Concat axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first->getShape());
  for (unsigned i = 1; i < ctx.getNumOperands(); ++i) {
    RankedTensorType type = ctx.getTensorType(i);
    if (!type || type.getRank() != rank)
      return ctx.emitError("Concat inputs must have the same rank");
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = type.getDimSize(d);
      if (d == *axis) {
        shape[d] =
            ShapedType::isDynamic(size) || ShapedType::isDynamic(shape[d])
                ? kDynamic
                : shape[d] + size;
      } else if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
      } else if (!ShapedType::isDynamic(size) && size != shape[d]) {
        return ctx.emitError("Concat inputs differ in dimension " +
                             llvm::Twine(d) + ": " + llvm::Twine(shape[d]) +
                             " vs " + llvm::Twine(size));
      }
    }
  }
  results.push_back(tensorOf(shape, first->getElementType()));
  return success();
}

LogicalResult shape::inferSplit(InferenceContext &ctx, int64_t axisAttr,
                                int64_t numOutputsAttr, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  auto axis = ctx.normalizeAxis(axisAttr, x->getRank(), "Split axis");
  if (failed(axis))
    return failure();
  std::optional<int64_t> numOutputs = numOutputsAttr;
  if (*numOutputs <= 0)
    return ctx.emitError("Split requires a positive 'num_outputs'");
  int64_t dim = x->getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (!ctx.isAbsent(1)) {
    std::optional<SmallVector<int64_t>> split = ctx.getConstantInts(1);
    if (split) {
      if (static_cast<int64_t>(split->size()) != *numOutputs)
        return ctx.emitError("Split has " + llvm::Twine(split->size()) +
                             " sizes for " + llvm::Twine(*numOutputs) +
                             " outputs");
      int64_t total = 0;
      for (int64_t s : *split) {
        if (s < 0)
          return ctx.emitError("Split sizes must be non-negative");
        total += s;
      }
      if (!ShapedType::isDynamic(dim) && total != dim)
        return ctx.emitError("Split sizes add up to " + llvm::Twine(total) +
                             " but the dimension is " + llvm::Twine(dim));
      sizes = *split;
    } else {
      RankedTensorType splitType = ctx.getTensorType(1);
      if (splitType && splitType.getRank() == 1 && !splitType.isDynamicDim(0) &&
          splitType.getDimSize(0) != *numOutputs)
        return ctx.emitError(
            "Split has " + llvm::Twine(splitType.getDimSize(0)) +
            " sizes for " + llvm::Twine(*numOutputs) + " outputs");
      sizes.assign(*numOutputs, kDynamic);
    }
  } else if (ShapedType::isDynamic(dim)) {
    sizes.assign(*numOutputs, kDynamic);
  } else {
    int64_t chunk = ceilDiv(dim, *numOutputs);
    for (int64_t i = 0; i < *numOutputs; ++i)
      sizes.push_back(
          std::max<int64_t>(0, std::min<int64_t>(chunk, dim - i * chunk)));
  }
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(x->getShape());
    shape[*axis] = size;
    results.push_back(tensorOf(shape, x->getElementType()));
  }
  return success();
}

LogicalResult shape::inferSlice(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (failed(requireTensor(ctx, 1)) || failed(requireTensor(ctx, 2)))
    return failure();
  if (ctx.getTensorType(1).getRank() != 1 ||
      ctx.getTensorType(2).getRank() != 1)
    return ctx.emitError("Slice starts and ends must be 1-d");
  int64_t rank = x->getRank();
  auto starts = ctx.getConstantInts(1);
  auto ends = ctx.getConstantInts(2);
  std::optional<SmallVector<int64_t>> axes, steps;
  bool axesKnown = true, stepsKnown = true;
  if (!ctx.isAbsent(3))
    axesKnown = (axes = ctx.getConstantInts(3)).has_value();
  if (!ctx.isAbsent(4))
    stepsKnown = (steps = ctx.getConstantInts(4)).has_value();
  SmallVector<int64_t> shape(x->getShape());
  if (!axesKnown) {
    results.push_back(
        tensorOf(SmallVector<int64_t>(rank, kDynamic), x->getElementType()));
    return success();
  }
  size_t count = starts ? starts->size()
                        : (ctx.getTensorType(1).isDynamicDim(0)
                               ? 0
                               : ctx.getTensorType(1).getDimSize(0));
  if (!axes) {
    axes.emplace(count);
    std::iota(axes->begin(), axes->end(), 0);
  }
  if ((starts && ends && starts->size() != ends->size()) ||
      (starts && axes->size() != starts->size()) ||
      (steps && steps->size() != axes->size()))
    return ctx.emitError("Slice starts, ends, axes and steps must have the "
                         "same length");
  for (size_t i = 0; i < axes->size(); ++i) {
    auto axis = ctx.normalizeAxis((*axes)[i], rank, "Slice axis");
    if (failed(axis))
      return failure();
    int64_t dim = x->getDimSize(*axis);
    if (!starts || !ends || !stepsKnown || ShapedType::isDynamic(dim)) {
      shape[*axis] = kDynamic;
      continue;
    }
    int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0)
      return ctx.emitError("Slice step must not be 0");
    shape[*axis] =
        semantics::resolveSliceRange(dim, (*starts)[i], (*ends)[i], step).size;
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferExpand(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto shapeType = requireTensor(ctx, 1);
  if (failed(x) || failed(shapeType))
    return failure();
  std::optional<SmallVector<int64_t>> target = ctx.getConstantInts(1);
  if (!target) {
    if (shapeType->getRank() != 1 || shapeType->isDynamicDim(0))
      return ctx.emitError("Expand shape must be constant or have a static "
                           "length");
    if (failed(checkRankFromLength(ctx, shapeType->getDimSize(0),
                                   "Expand shape")))
      return failure();
    int64_t rank = std::max<int64_t>(x->getRank(), shapeType->getDimSize(0));
    results.push_back(
        tensorOf(SmallVector<int64_t>(rank, kDynamic), x->getElementType()));
    return success();
  }
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(x->getShape(), *target, shape))
    return ctx.emitError("Expand input does not broadcast to the shape");
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferTile(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> repeats = ctx.getConstantInts(1);
  SmallVector<int64_t> shape(x->getRank(), kDynamic);
  if (repeats) {
    if (static_cast<int64_t>(repeats->size()) != x->getRank())
      return ctx.emitError("Tile repeats must have one entry per dimension");
    for (int64_t i = 0; i < x->getRank(); ++i)
      shape[i] = mulDims(x->getDimSize(i), (*repeats)[i]);
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferPad(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  std::optional<SmallVector<int64_t>> pads = ctx.getConstantInts(1);
  std::optional<SmallVector<int64_t>> axes;
  if (!ctx.isAbsent(3))
    axes = ctx.getConstantInts(3);
  SmallVector<int64_t> shape(rank, kDynamic);
  if (pads && (ctx.isAbsent(3) || axes)) {
    if (!axes) {
      axes.emplace(rank);
      std::iota(axes->begin(), axes->end(), 0);
    }
    size_t n = axes->size();
    if (pads->size() != 2 * n)
      return ctx.emitError("Pad pads must have 2 x " + llvm::Twine(n) +
                           " entries, got " + llvm::Twine(pads->size()));
    shape.assign(x->getShape().begin(), x->getShape().end());
    for (size_t i = 0; i < n; ++i) {
      auto axis = ctx.normalizeAxis((*axes)[i], rank, "Pad axis");
      if (failed(axis))
        return failure();
      if (!ShapedType::isDynamic(shape[*axis]))
        shape[*axis] += (*pads)[i] + (*pads)[i + n];
    }
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

/// DepthToSpace and SpaceToDepth order the block's channels depth-column-row
/// (DCR) or column-row-depth (CRD).
static LogicalResult checkBlockMode(InferenceContext &ctx, StringRef op,
                                    StringRef mode) {
  if (mode == "DCR" || mode == "CRD")
    return success();
  return ctx.emitError(op + " mode must be 'DCR' or 'CRD', not '" + mode + "'");
}

LogicalResult shape::inferDepthToSpace(InferenceContext &ctx, int64_t b,
                                       StringRef mode, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x) || failed(checkBlockMode(ctx, "DepthToSpace", mode)))
    return failure();
  if (x->getRank() != 4 || b <= 0)
    return ctx.emitError("DepthToSpace expects a 4-d input and a positive "
                         "blocksize");
  int64_t c = x->getDimSize(1);
  int64_t bb = mulDims(b, b);
  if (!ShapedType::isDynamic(c) && c % bb != 0)
    return ctx.emitError("DepthToSpace channels must divide blocksize^2");
  results.push_back(tensorOf(
      {x->getDimSize(0), ShapedType::isDynamic(c) ? kDynamic : c / bb,
       mulDims(x->getDimSize(2), b), mulDims(x->getDimSize(3), b)},
      x->getElementType()));
  return success();
}

LogicalResult shape::inferSpaceToDepth(InferenceContext &ctx, int64_t b,
                                       StringRef mode, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x) || failed(checkBlockMode(ctx, "SpaceToDepth", mode)))
    return failure();
  if (x->getRank() != 4 || b <= 0)
    return ctx.emitError("SpaceToDepth expects a 4-d input and a positive "
                         "blocksize");
  for (int64_t d : {x->getDimSize(2), x->getDimSize(3)})
    if (!ShapedType::isDynamic(d) && d % b != 0)
      return ctx.emitError("SpaceToDepth blocksize must divide the height and "
                           "the width");
  auto divide = [&](int64_t d) {
    return ShapedType::isDynamic(d) ? kDynamic : d / b;
  };
  results.push_back(
      tensorOf({x->getDimSize(0), mulDims(x->getDimSize(1), mulDims(b, b)),
                divide(x->getDimSize(2)), divide(x->getDimSize(3))},
               x->getElementType()));
  return success();
}
