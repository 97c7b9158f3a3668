//===- Shape.cpp - gradient rules of the layout and indexing ops ----------===//
//
// Layout ops move gradients back by the inverse layout change; Gather's
// gradient is a scatter-add (embeddings); Slice's is a zero Pad; Concat's
// are Slices.
//
//===----------------------------------------------------------------------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include "amp/Dialect/Amp/Semantics/Indexing.h"

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
  // Zero-pad the gradient back to the input (static sizes, positive
  // steps). A step s first interleaves s - 1 zeros after each element.
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
      llvm::any_of(*steps, [](int64_t s) { return s < 1; })) {
    gb.fail("needs constant starts, ends, axes and steps, and positive "
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
void gradient(PadOp op, GradientBuilder &gb, In rg, Grads og) {
  // Constant padding with constant, non-negative pads: the gradient is the
  // slice of the padded gradient that holds the input.
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
  if (op.getMode() != "constant" || !pads || !axes ||
      pads->size() != 2 * axes->size() ||
      llvm::any_of(*pads, [](int64_t p) { return p < 0; })) {
    gb.fail("needs constant mode and constant, non-negative pads");
    return;
  }
  SmallVector<int64_t> starts, ends, sliceAxes;
  for (auto [k, rawAxis] : llvm::enumerate(*axes)) {
    auto axis = semantics::normalizeAxis(rawAxis, rank);
    if (!axis || type.isDynamicDim(*axis)) {
      gb.fail("needs static sizes along the padded axes");
      return;
    }
    starts.push_back((*pads)[k]);
    ends.push_back((*pads)[k] + type.getDimSize(*axis));
    sliceAxes.push_back(*axis);
  }
  og[0] = gb.create<SliceOp>({rg[0], gb.i64s(starts), gb.i64s(ends),
                              gb.i64s(sliceAxes), gb.none()});
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

void registerShapeGradients(MLIRContext *context) {
  attachGradientModels<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp,
                       TransposeOp, ExpandOp, ConcatOp, SplitOp, SliceOp,
                       PadOp, GatherOp>(context);
}

} // namespace mlir::amp::gradients
