//===- Indexing.h - axes, broadcasting and slice bounds ---------*- C++ -*-===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_INDEXING_H
#define AMP_DIALECT_AMP_SEMANTICS_INDEXING_H

#include "amp/Dialect/Amp/Semantics/Common.h"

namespace mlir::amp::semantics {

/// An ONNX axis in [-rank, rank) as a value in [0, rank); std::nullopt
/// when it is out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// As above, reporting "<what> <axis> is out of range for rank <rank>".
FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank, StringRef what,
                                 ErrorFn error);

/// An index of the Gather family (Gather, GatherElements, GatherND,
/// Scatter*) into a dimension of size `dim`: negative indices count from the
/// end, valid in [-dim, dim). Returns the index in [0, dim) or std::nullopt.
inline std::optional<int64_t> normalizeIndex(int64_t index, int64_t dim) {
  return normalizeAxis(index, dim);
}

/// The numpy broadcast of two shapes (dynamic dimensions allowed);
/// std::nullopt when they do not broadcast.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                    ArrayRef<int64_t> rhs);

/// One axis of an ONNX Slice over a dimension of static size `dim`: the
/// first index read and the number of elements (starts and ends clamped as
/// ONNX specifies; `step` != 0).
struct SliceRange {
  int64_t start;
  int64_t size;
};
SliceRange resolveSliceRange(int64_t dim, int64_t start, int64_t end,
                             int64_t step);

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_INDEXING_H
