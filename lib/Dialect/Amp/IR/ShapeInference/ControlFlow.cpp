//===- ControlFlow.cpp - shape rules of the controlflow ops ---------------===//

#include "ShapeInferenceUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;

/// The types yielded by the single block of `region`.
static FailureOr<SmallVector<Type>> yieldedTypes(InferenceContext &ctx,
                                                 Region *region) {
  if (!region || region->empty() || region->front().empty())
    return (void)ctx.emitError("control-flow body is empty"), failure();
  Operation *terminator = &region->front().back();
  return SmallVector<Type>(terminator->getOperandTypes());
}

Type shape::joinTensorTypes(Type a, Type b) {
  auto at = dyn_cast_or_null<RankedTensorType>(a);
  auto bt = dyn_cast_or_null<RankedTensorType>(b);
  if (!at || !bt || at.getRank() != bt.getRank() ||
      at.getElementType() != bt.getElementType())
    return nullptr;
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(at.getShape(), bt.getShape()))
    shape.push_back(x == y ? x : kDynamic);
  return RankedTensorType::get(shape, at.getElementType());
}

/// If (two regions), Loop, or Scan when `numScanInputs` is set.
static LogicalResult
inferFromBodies(InferenceContext &ctx, std::optional<int64_t> numScanInputs,
                std::optional<ArrayRef<int64_t>> outputAxes, Types &results) {
  RegionRange regions = ctx.getRegions();
  if (regions.size() == 2) { // If
    auto thenTypes = yieldedTypes(ctx, regions[0]);
    auto elseTypes = yieldedTypes(ctx, regions[1]);
    if (failed(thenTypes) || failed(elseTypes))
      return failure();
    if (thenTypes->size() != elseTypes->size())
      return ctx.emitError("If branches yield different numbers of values");
    for (auto [a, b] : llvm::zip(*thenTypes, *elseTypes)) {
      Type joined = joinTensorTypes(a, b);
      if (!joined)
        return ctx.emitError("If branches yield incompatible types " +
                             typeToString(a) + " and " + typeToString(b));
      results.push_back(joined);
    }
    return success();
  }
  if (regions.size() != 1)
    return ctx.emitError("expected a body region");
  auto yielded = yieldedTypes(ctx, regions[0]);
  if (failed(yielded))
    return failure();
  ArrayRef<Type> types = *yielded;
  size_t numStates;
  bool isScan = numScanInputs.has_value();
  if (isScan) {
    if (*numScanInputs < 0 || *numScanInputs > ctx.getNumOperands())
      return ctx.emitError("num_scan_inputs exceeds the operand count");
    numStates = ctx.getNumOperands() - *numScanInputs;
  } else {
    if (types.empty() || ctx.getNumOperands() < 2)
      return ctx.emitError("Loop body must yield its condition");
    types = types.drop_front(); // the condition
    numStates = ctx.getNumOperands() - 2;
  }
  if (types.size() < numStates)
    return ctx.emitError("body yields fewer values than loop-carried values");
  for (auto [i, type] : llvm::enumerate(types)) {
    auto tensor = cast<RankedTensorType>(type);
    if (i < numStates) {
      // The carried value may change shape between iterations.
      Type initial = ctx.getOperands()[isScan ? i : i + 2].getType();
      Type joined = joinTensorTypes(initial, tensor);
      if (!joined)
        return ctx.emitError("loop-carried value #" + llvm::Twine(i) +
                             " changes type in the body");
      results.push_back(joined);
      continue;
    }
    int64_t axis = 0;
    if (isScan && outputAxes && i - numStates < outputAxes->size()) {
      axis = (*outputAxes)[i - numStates];
      if (axis < 0)
        axis += tensor.getRank() + 1;
    }
    SmallVector<int64_t> shape(tensor.getShape());
    if (axis < 0 || axis > static_cast<int64_t>(shape.size()))
      return ctx.emitError("scan output axis out of range");
    shape.insert(shape.begin() + axis, kDynamic);
    results.push_back(tensorOf(shape, tensor.getElementType()));
  }
  return success();
}

LogicalResult shape::inferFromRegions(InferenceContext &ctx, Types &results) {
  return inferFromBodies(ctx, std::nullopt, std::nullopt, results);
}

LogicalResult shape::inferScan(InferenceContext &ctx, int64_t numScanInputs,
                               std::optional<ArrayRef<int64_t>> outputAxes,
                               Types &results) {
  return inferFromBodies(ctx, numScanInputs, outputAxes, results);
}
