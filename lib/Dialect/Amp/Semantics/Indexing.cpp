//===- Indexing.cpp - axes, broadcasting and slice bounds -----------------===//

#include "amp/Dialect/Amp/Semantics/Indexing.h"

#include "mlir/Dialect/Traits.h"
#include <algorithm>

using namespace mlir;
using namespace mlir::amp::semantics;

std::optional<int64_t> mlir::amp::semantics::normalizeAxis(int64_t axis,
                                                           int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

FailureOr<int64_t> mlir::amp::semantics::normalizeAxis(int64_t axis,
                                                       int64_t rank,
                                                       StringRef what,
                                                       ErrorFn error) {
  if (std::optional<int64_t> normalized = normalizeAxis(axis, rank))
    return *normalized;
  error(llvm::Twine(what) + " " + llvm::Twine(axis) +
        " is out of range for rank " + llvm::Twine(rank));
  return failure();
}

std::optional<SmallVector<int64_t>>
mlir::amp::semantics::broadcastShapes(ArrayRef<int64_t> lhs,
                                      ArrayRef<int64_t> rhs) {
  SmallVector<int64_t> result;
  if (!OpTrait::util::getBroadcastedShape(lhs, rhs, result))
    return std::nullopt;
  return result;
}

SliceRange mlir::amp::semantics::resolveSliceRange(int64_t dim, int64_t start,
                                                   int64_t end, int64_t step) {
  if (start < 0)
    start = std::max<int64_t>(start, -dim) + dim;
  if (end < 0)
    end = std::max<int64_t>(end, -dim - 1) + dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? ceilDiv(end - start, step) : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? ceilDiv(start - end, -step) : 0};
}
