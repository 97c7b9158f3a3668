//===- Reduction.cpp - reduction axes of Reduce*, ArgMax/ArgMin -----------===//

#include "amp/Dialect/Amp/Semantics/Reduction.h"
#include "amp/Dialect/Amp/Semantics/Indexing.h"

#include "llvm/ADT/STLExtras.h"
#include <numeric>

using namespace mlir;
using namespace mlir::amp::semantics;

FailureOr<std::optional<SmallVector<int64_t>>>
mlir::amp::semantics::resolveReduceAxes(int64_t rank, ArrayRef<int64_t> axes,
                                        const ReduceAttrs &attrs,
                                        ErrorFn error) {
  SmallVector<int64_t> result;
  if (axes.empty()) {
    if (attrs.noopWithEmptyAxes)
      return std::optional<SmallVector<int64_t>>();
    result.resize(rank);
    std::iota(result.begin(), result.end(), 0);
    return std::optional<SmallVector<int64_t>>(std::move(result));
  }
  for (int64_t axis : axes) {
    auto normalized = normalizeAxis(axis, rank, "reduction axis", error);
    if (failed(normalized))
      return failure();
    result.push_back(*normalized);
  }
  llvm::sort(result);
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return std::optional<SmallVector<int64_t>>(std::move(result));
}

SmallVector<int64_t>
mlir::amp::semantics::getReducedShape(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> axes, bool keepDims) {
  SmallVector<int64_t> result;
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i)))
      result.push_back(size);
    else if (keepDims)
      result.push_back(1);
  }
  return result;
}
