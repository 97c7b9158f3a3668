//===- Recurrent.cpp - shape rules: RNN, GRU and LSTM ---------------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

/// Y and Y_h (and LSTM's Y_c, shaped like Y_h), after checking every
/// operand and the activations (semantics::resolveRecurrentDims).
LogicalResult shape::inferRecurrent(InferenceContext &ctx,
                                    const semantics::RecurrentAttrs &attrs,
                                    Types &results) {
  auto x = requireTensor(ctx, 0);
  auto w = requireTensor(ctx, 1);
  auto r = requireTensor(ctx, 2);
  if (failed(x) || failed(w) || failed(r))
    return failure();
  semantics::RecurrentShapes shapes{x->getShape(), w->getShape(),
                                    r->getShape()};
  auto optional = [&](unsigned i) -> std::optional<ArrayRef<int64_t>> {
    if (i >= ctx.getNumOperands())
      return std::nullopt;
    if (RankedTensorType type = ctx.getTensorType(i))
      return type.getShape();
    return std::nullopt;
  };
  shapes.b = optional(3);
  shapes.sequenceLens = optional(4);
  shapes.initialH = optional(5);
  bool lstm = attrs.kind == semantics::RecurrentKind::LSTM;
  if (lstm) {
    shapes.initialC = optional(6);
    shapes.p = optional(7);
  }
  FailureOr<semantics::RecurrentDims> dims =
      semantics::resolveRecurrentDims(attrs, shapes, ctx.getErrorFn());
  if (failed(dims) || failed(semantics::resolveActivations(
                          attrs, dims->directions, ctx.getErrorFn())))
    return failure();
  // Every float operand shares X's type (autocast converts them together).
  Type elementType = x->getElementType();
  static constexpr const char *kNames[] = {
      "X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  for (unsigned i = 1; i < ctx.getNumOperands() && i < 8; ++i) {
    RankedTensorType type = ctx.getTensorType(i);
    if (i == 4 || !type || type.getElementType() == elementType)
      continue;
    return ctx.emitError(Twine(kNames[i]) + " has element type " +
                         typeToString(type.getElementType()) + " but X has " +
                         typeToString(elementType));
  }
  results.push_back(tensorOf(dims->getYShape(), elementType));
  results.push_back(tensorOf(dims->getStateShape(), elementType));
  if (lstm)
    results.push_back(results.back());
  return success();
}
