//===- Shape.cpp - gradient rules of the layout and indexing ops ----------===//
//
// Layout ops move gradients back by the inverse layout change; the
// gathers' gradients are scatter-adds (embeddings) and the scatters' are
// gathers; Slice's is a zero Pad; Concat's are Slices; Tile's sums the
// copies; CumSum's is the cumulative sum the other way.
//
//===----------------------------------------------------------------------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include "amp/Dialect/Amp/Semantics/Indexing.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

namespace mlir::amp::gradients {
namespace {
void reshapeBack(GradientBuilder &gb, In rg, Grads og) {
  og[0] = gb.reshapeLike(rg[0], gb.getForward()->getOperand(0));
}
} // namespace

bool isDifferentiable(ReshapeOp, unsigned index, Overload) {
  return index == 0;
}
void gradient(ReshapeOp, GradientBuilder &gb, In rg, Grads og) {
  reshapeBack(gb, rg, og);
}
void gradient(FlattenOp, GradientBuilder &gb, In rg, Grads og) {
  reshapeBack(gb, rg, og);
}
bool isDifferentiable(SqueezeOp, unsigned index, Overload) {
  return index == 0;
}
void gradient(SqueezeOp, GradientBuilder &gb, In rg, Grads og) {
  reshapeBack(gb, rg, og);
}
bool isDifferentiable(UnsqueezeOp, unsigned index, Overload) {
  return index == 0;
}
void gradient(UnsqueezeOp, GradientBuilder &gb, In rg, Grads og) {
  reshapeBack(gb, rg, og);
}
void gradient(TransposeOp op, GradientBuilder &gb, In rg, Grads og) {
  int64_t rank = tensorType(op.getData()).getRank();
  SmallVector<int64_t> perm, inverse(rank);
  if (auto given = op.getPerm())
    perm.assign(given->begin(), given->end());
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  for (int64_t i = 0; i < rank; ++i)
    inverse[perm[i]] = i;
  og[0] = gb.transpose(rg[0], inverse);
}
bool isDifferentiable(ExpandOp, unsigned index, Overload) {
  return index == 0;
}
void gradient(ExpandOp op, GradientBuilder &gb, In rg, Grads og) {
  og[0] = gb.sumToShape(rg[0], op.getInput());
}

void gradient(ConcatOp op, GradientBuilder &gb, In rg, Grads og) {
  int64_t rank = tensorType(op.getResult()).getRank();
  int64_t axis =
      semantics::normalizeAxis(static_cast<int64_t>(op.getAxis()), rank)
          .value_or(0);
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    int64_t size = tensorType(input).getDimSize(axis);
    if (ShapedType::isDynamic(size)) {
      gb.fail("needs static sizes along the concatenation axis");
      return;
    }
    if (isa<FloatType>(tensorType(input).getElementType()))
      og[i] = gb.create<SliceOp>({rg[0], gb.i64s({offset}),
                                  gb.i64s({offset + size}), gb.i64s({axis}),
                                  gb.none()});
    offset += size;
  }
}

void gradient(SplitOp op, GradientBuilder &gb, In rg, Grads og) {
  SmallVector<Value> parts;
  for (auto [grad, result] : llvm::zip(rg, op.getOutputs()))
    parts.push_back(grad ? grad : gb.zerosLike(result));
  og[0] = gb.create<ConcatOp>(parts, {gb.attr("axis", static_cast<int64_t>(op.getAxis()))});
}

bool isDifferentiable(SliceOp, unsigned index, Overload) { return index == 0; }
void gradient(SliceOp op, GradientBuilder &gb, In rg, Grads og) {
  // Zero-pad the gradient back to the input (static sizes). A step s
  // first interleaves s - 1 zeros after each element; a negative step
  // picks the elements of the positive one in reverse, so the gradient is
  // reversed first.
  RankedTensorType type = tensorType(op.getData());
  int64_t rank = type.getRank();
  auto starts = getConstantIntValues(op.getStarts());
  auto ends = getConstantIntValues(op.getEnds());
  std::optional<SmallVector<int64_t>> axes, steps;
  if (!isa<NoneType>(op.getAxes().getType()))
    axes = getConstantIntValues(op.getAxes());
  else {
    axes.emplace();
    for (size_t i = 0; starts && i < starts->size(); ++i)
      axes->push_back(i);
  }
  if (!isa<NoneType>(op.getSteps().getType()))
    steps = getConstantIntValues(op.getSteps());
  else if (axes)
    steps.emplace(axes->size(), 1);
  if (!starts || !ends || !axes || !steps ||
      llvm::any_of(*steps, [](int64_t s) { return s == 0; })) {
    gb.fail("needs constant starts, ends, axes and steps, and non-zero "
            "steps");
    return;
  }
  Value g = rg[0];
  for (auto [k, rawAxis] : llvm::enumerate(*axes)) {
    auto axis = semantics::normalizeAxis(rawAxis, rank);
    int64_t dim = axis ? type.getDimSize(*axis) : ShapedType::kDynamic;
    if (!axis || ShapedType::isDynamic(dim) || !g ||
        !tensorType(g).hasStaticShape()) {
      gb.fail("needs static sizes");
      return;
    }
    int64_t step = (*steps)[k];
    semantics::SliceRange range =
        semantics::resolveSliceRange(dim, (*starts)[k], (*ends)[k], step);
    if (step < 0) {
      // Elements start, start + step, ...: those of the positive step
      // -step from the lowest of them, in reverse order.
      step = -step;
      if (range.size > 0) {
        g = gb.create<SliceOp>(
            {g, gb.i64s({range.size - 1}),
             gb.i64s({std::numeric_limits<int64_t>::min()}), gb.i64s({*axis}),
             gb.i64s({-1})});
        range.start -= (range.size - 1) * step;
      } else {
        range.start = 0;
      }
    }
    int64_t length = range.size;
    if (step > 1 && range.size > 0) {
      // (.., n, ..) -> (.., n, 1, ..) -> (.., n, s, ..) -> (.., n*s, ..).
      SmallVector<int64_t> shape(tensorType(g).getShape());
      Value t = gb.create<UnsqueezeOp>({g, gb.i64s({*axis + 1})});
      SmallVector<int64_t> pads(2 * (rank + 1), 0);
      pads[rank + 1 + *axis + 1] = step - 1;
      t = gb.create<PadOp>({t, gb.i64s(pads), gb.none(), gb.none()});
      shape[*axis] *= step;
      g = gb.create<ReshapeOp>({t, gb.i64s(shape)});
      length = range.size * step;
      // The trailing zeros may run past the input's end.
      if (range.start + length > dim) {
        length = dim - range.start;
        g = gb.create<SliceOp>({g, gb.i64s({0}), gb.i64s({length}),
                                gb.i64s({*axis}), gb.none()});
      }
    }
    SmallVector<int64_t> pads(2 * rank, 0);
    pads[*axis] = range.start;
    pads[rank + *axis] = dim - range.start - length;
    g = gb.create<PadOp>({g, gb.i64s(pads), gb.none(), gb.none()});
  }
  og[0] = g;
}

bool isDifferentiable(PadOp, unsigned index, Overload) { return index == 0; }
namespace {
/// `g` sliced to [start, end) along `axis` (`step` -1: reversed, `start`
/// the last element).
Value sliceAxis(GradientBuilder &gb, Value g, int64_t axis, int64_t start,
                int64_t end, int64_t step = 1) {
  return gb.create<SliceOp>({g, gb.i64s({start}), gb.i64s({end}),
                             gb.i64s({axis}), gb.i64s({step})});
}

/// `g` with `before` and `after` zeros along `axis` (of a rank-`rank` value).
Value zeroPad(GradientBuilder &gb, Value g, int64_t axis, int64_t rank,
              int64_t before, int64_t after) {
  if (!before && !after)
    return g;
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[axis] = before;
  pads[rank + axis] = after;
  return gb.create<PadOp>(
      {g, gb.i64s(pads), gb.scalar(g, 0.0), gb.none()});
}

/// The gradient of padding one axis of size `n` by `before`/`after` in
/// `mode`: the copied input's slice plus each padded element's gradient at
/// the input element it copies. Null after an error.
Value padAxisGradient(GradientBuilder &gb, Value g, int64_t axis, int64_t rank,
                      int64_t n, int64_t before, int64_t after,
                      StringRef mode) {
  constexpr int64_t kToFront = std::numeric_limits<int64_t>::min();
  if (mode == "constant") {
    // Negative pads crop: the cropped elements get zeros.
    int64_t start = std::max<int64_t>(before, 0);
    int64_t kept = n + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0);
    return zeroPad(gb, sliceAxis(gb, g, axis, start, start + kept), axis, rank,
                   std::max<int64_t>(-before, 0), std::max<int64_t>(-after, 0));
  }
  if (before < 0 || after < 0)
    return gb.fail("needs non-negative pads in " + mode + " mode");
  Value grad = sliceAxis(gb, g, axis, before, before + n);
  auto add = [&](Value part) { grad = gb.add(grad, part); };
  if (mode == "edge") {
    // Every padded element copies the first or last input element.
    if (before)
      add(zeroPad(gb, gb.reduceSum(sliceAxis(gb, g, axis, 0, before), {axis},
                                   /*keepDims=*/true),
                  axis, rank, 0, n - 1));
    if (after)
      add(zeroPad(gb,
                  gb.reduceSum(sliceAxis(gb, g, axis, before + n,
                                         before + n + after),
                               {axis}, true),
                  axis, rank, n - 1, 0));
    return grad;
  }
  if (mode == "reflect") {
    // Padded element o < before copies x[before - o]; after the input,
    // element k copies x[n - 2 - k]: reversed slices onto x[1..before] and
    // x[n-1-after .. n-2].
    if (before >= n || after >= n)
      return gb.fail("needs reflect pads smaller than the padded size");
    if (before)
      add(zeroPad(gb, sliceAxis(gb, g, axis, before - 1, kToFront, -1), axis,
                  rank, 1, n - 1 - before));
    if (after)
      add(zeroPad(gb,
                  sliceAxis(gb, g, axis, before + n + after - 1,
                            before + n - 1, -1),
                  axis, rank, n - 1 - after, 1));
    return grad;
  }
  if (mode == "wrap") {
    // Padded element o < before copies x[n - before + o]; after the input,
    // element k copies x[k].
    if (before > n || after > n)
      return gb.fail("needs wrap pads no larger than the padded size");
    if (before)
      add(zeroPad(gb, sliceAxis(gb, g, axis, 0, before), axis, rank,
                  n - before, 0));
    if (after)
      add(zeroPad(gb, sliceAxis(gb, g, axis, before + n, before + n + after),
                  axis, rank, 0, n - after));
    return grad;
  }
  return gb.fail("mode '" + mode + "' has no gradient rule");
}
} // namespace

void gradient(PadOp op, GradientBuilder &gb, In rg, Grads og) {
  // Padding is separable: one padded axis at a time, each giving the
  // gradient with that axis back at the input's size.
  RankedTensorType type = tensorType(op.getData());
  int64_t rank = type.getRank();
  auto pads = getConstantIntValues(op.getPads());
  std::optional<SmallVector<int64_t>> axes;
  if (!isa<NoneType>(op.getAxes().getType()))
    axes = getConstantIntValues(op.getAxes());
  else if (pads) {
    axes.emplace();
    for (int64_t i = 0; i < rank; ++i)
      axes->push_back(i);
  }
  if (!pads || !axes || pads->size() != 2 * axes->size()) {
    gb.fail("needs constant pads and axes");
    return;
  }
  Value g = rg[0];
  int64_t count = static_cast<int64_t>(axes->size());
  for (auto [k, rawAxis] : llvm::enumerate(*axes)) {
    auto axis = semantics::normalizeAxis(rawAxis, rank);
    if (!axis || type.isDynamicDim(*axis)) {
      gb.fail("needs static sizes along the padded axes");
      return;
    }
    int64_t before = (*pads)[k], after = (*pads)[count + k];
    if (!before && !after)
      continue;
    g = padAxisGradient(gb, g, *axis, rank, type.getDimSize(*axis), before,
                        after, op.getMode());
    if (!g)
      return;
  }
  og[0] = g;
}

bool isDifferentiable(GatherOp, unsigned index, Overload) {
  return index == 0;
}
void gradient(GatherOp op, GradientBuilder &gb, In rg, Grads og) {
  // Scatter-add of the output gradient rows into zeros of the data shape
  // (the embedding gradient). Other axes are moved to the front first.
  Value data = op.getData(), g = rg[0];
  int64_t rank = tensorType(data).getRank();
  int64_t axis =
      semantics::normalizeAxis(static_cast<int64_t>(op.getAxis()), rank)
          .value_or(0);
  int64_t indexRank = tensorType(op.getIndices()).getRank();
  SmallVector<int64_t> toFront{axis}, fromFront(rank);
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis)
      toFront.push_back(i);
  for (int64_t i = 0; i < rank; ++i)
    fromFront[toFront[i]] = i;
  Value base = axis == 0 ? data : gb.transpose(data, toFront);
  if (axis != 0) {
    // g is (data[:axis], indices..., data[axis+1:]): bring the indices first.
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < indexRank; ++i)
      perm.push_back(axis + i);
    for (int64_t i = 0; i < axis; ++i)
      perm.push_back(i);
    for (int64_t i = axis + indexRank; i < tensorType(g).getRank(); ++i)
      perm.push_back(i);
    g = gb.transpose(g, perm);
  }
  Value indices = gb.castTo(op.getIndices(), gb.getBuilder().getI64Type());
  indices = gb.create<UnsqueezeOp>({indices, gb.i64s({-1})});
  Value scattered = gb.create<ScatterNDOp>(
      {gb.zerosLike(base), indices, g},
      {gb.attr("reduction", StringRef("add"))});
  og[0] = axis == 0 ? scattered : gb.transpose(scattered, fromFront);
}

bool isDifferentiable(TileOp, unsigned index, Overload) { return index == 0; }
void gradient(TileOp op, GradientBuilder &gb, In rg, Grads og) {
  // g (r0 d0, r1 d1, ...) as (r0, d0, r1, d1, ...), summed over the r axes.
  RankedTensorType type = tensorType(op.getInput());
  auto repeats = getConstantIntValues(op.getRepeats());
  if (!repeats || static_cast<int64_t>(repeats->size()) != type.getRank() ||
      !type.hasStaticShape()) {
    gb.fail("needs constant repeats and a static input shape");
    return;
  }
  SmallVector<int64_t> split, repeatAxes;
  for (auto [i, size] : llvm::enumerate(type.getShape())) {
    repeatAxes.push_back(static_cast<int64_t>(split.size()));
    split.push_back((*repeats)[i]);
    split.push_back(size);
  }
  Value parts = gb.create<ReshapeOp>({rg[0], gb.i64s(split)});
  og[0] = gb.reshapeLike(gb.reduceSum(parts, repeatAxes, /*keepDims=*/false),
                         op.getInput());
}

bool isDifferentiable(CumSumOp op, unsigned index, Overload) {
  return index == 0 &&
         isa<FloatType>(tensorType(op.getX()).getElementType());
}
void gradient(CumSumOp op, GradientBuilder &gb, In rg, Grads og) {
  // dx_i = the sum of g_j over the j whose sums include x_i: the cumulative
  // sum in the other direction, exclusive as the forward is.
  og[0] = gb.create<CumSumOp>(
      {rg[0], op.getAxis()},
      {gb.attr("exclusive", static_cast<int64_t>(op.getExclusive())),
       gb.attr("reverse", static_cast<int64_t>(!op.getReverse()))});
}

bool isDifferentiable(GatherElementsOp op, unsigned index, Overload) {
  return index == 0 &&
         isa<FloatType>(tensorType(op.getData()).getElementType());
}
void gradient(GatherElementsOp op, GradientBuilder &gb, In rg, Grads og) {
  // Scatter-add into zeros (an element gathered twice gets both).
  og[0] = gb.create<ScatterElementsOp>(
      {gb.zerosLike(op.getData()), op.getIndices(), rg[0]},
      {gb.attr("axis", static_cast<int64_t>(op.getAxis())),
       gb.attr("reduction", StringRef("add"))});
}

bool isDifferentiable(GatherNDOp op, unsigned index, Overload) {
  return index == 0 &&
         isa<FloatType>(tensorType(op.getData()).getElementType());
}
void gradient(GatherNDOp op, GradientBuilder &gb, In rg, Grads og) {
  if (op.getBatchDims() != 0) {
    gb.fail("needs batch_dims = 0");
    return;
  }
  og[0] = gb.create<ScatterNDOp>(
      {gb.zerosLike(op.getData()), op.getIndices(), rg[0]},
      {gb.attr("reduction", StringRef("add"))});
}

namespace {
/// Scatter*: data's gradient is g where no update lands (all of g for
/// reduction "add"); the updates' gradient is g gathered at their
/// indices. The other reductions (mul, max, min) have no rule.
template <typename ScatterOpT, typename GatherOpT>
void scatterGradient(ScatterOpT op, GradientBuilder &gb, Value g, Grads og,
                     ArrayRef<NamedAttribute> axisAttr) {
  StringRef reduction = op.getReduction();
  if (reduction != "none" && reduction != "add") {
    gb.fail("reduction '" + reduction + "' has no gradient rule");
    return;
  }
  Value indices = op.getIndices(), updates = op.getUpdates();
  if (reduction == "add") {
    og[0] = g;
  } else {
    SmallVector<NamedAttribute> attrs(axisAttr);
    attrs.push_back(gb.attr("reduction", StringRef("none")));
    og[0] = gb.create<ScatterOpT>({g, indices, gb.zerosLike(updates)}, attrs);
  }
  og[2] = gb.create<GatherOpT>({g, indices}, axisAttr);
}
} // namespace

bool isDifferentiable(ScatterNDOp op, unsigned index, Overload) {
  return index != 1 &&
         isa<FloatType>(tensorType(op.getData()).getElementType());
}
void gradient(ScatterNDOp op, GradientBuilder &gb, In rg, Grads og) {
  scatterGradient<ScatterNDOp, GatherNDOp>(op, gb, rg[0], og, {});
}
bool isDifferentiable(ScatterElementsOp op, unsigned index, Overload) {
  return index != 1 &&
         isa<FloatType>(tensorType(op.getData()).getElementType());
}
void gradient(ScatterElementsOp op, GradientBuilder &gb, In rg, Grads og) {
  scatterGradient<ScatterElementsOp, GatherElementsOp>(
      op, gb, rg[0], og,
      {gb.attr("axis", static_cast<int64_t>(op.getAxis()))});
}

void registerShapeGradients(MLIRContext *context) {
  attachGradientModels<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp,
                       TransposeOp, ExpandOp, ConcatOp, SplitOp, SliceOp,
                       PadOp, GatherOp, TileOp, CumSumOp, GatherElementsOp,
                       GatherNDOp, ScatterNDOp, ScatterElementsOp>(context);
}

} // namespace mlir::amp::gradients
