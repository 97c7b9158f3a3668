//===- Reduction.h - reduction axes of Reduce*, ArgMax/ArgMin ---*- C++ -*-===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_REDUCTION_H
#define AMP_DIALECT_AMP_SEMANTICS_REDUCTION_H

#include "amp/Dialect/Amp/Semantics/Common.h"

namespace mlir::amp::semantics {

/// keepdims and noop_with_empty_axes of the Reduce* ops.
struct ReduceAttrs {
  bool keepDims = true;
  bool noopWithEmptyAxes = false;

  template <typename ReduceLike> static ReduceAttrs get(ReduceLike op) {
    return {op.getKeepdims() != 0, op.getNoopWithEmptyAxes() != 0};
  }
};

/// The axes a Reduce* op reduces over input rank `rank`, given the
/// constant `axes` input (empty when absent): sorted, unique and
/// non-negative; all axes when empty; std::nullopt when the reduction is a
/// no-op (empty axes with noop_with_empty_axes). Fails on an axis out of
/// range.
FailureOr<std::optional<SmallVector<int64_t>>>
resolveReduceAxes(int64_t rank, ArrayRef<int64_t> axes,
                  const ReduceAttrs &attrs, ErrorFn error);

/// The shape of a reduction of `shape` over `axes` (as resolveReduceAxes
/// returns them).
SmallVector<int64_t> getReducedShape(ArrayRef<int64_t> shape,
                                     ArrayRef<int64_t> axes, bool keepDims);

/// axis, keepdims and select_last_index of ArgMax/ArgMin.
struct ArgReduceAttrs {
  int64_t axis = 0;
  bool keepDims = true;
  bool selectLastIndex = false;

  template <typename ArgReduceLike>
  static ArgReduceAttrs get(ArgReduceLike op) {
    return {static_cast<int64_t>(op.getAxis()), op.getKeepdims() != 0,
            op.getSelectLastIndex() != 0};
  }
};

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_REDUCTION_H
