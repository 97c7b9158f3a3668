//===- Autodiff.h - reverse-mode differentiation of amp graphs --*- C++ -*-===//
//
// Builds the gradient of a scalar value with respect to chosen values of the
// same block, as new ops appended before the block's terminator. The rules
// come from GradientOpInterface; this code has no per-op knowledge.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRAINING_AUTODIFF_H
#define AMP_TRAINING_AUTODIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::amp::training {

/// Which values of a block carry gradients: float values that depend on one
/// of `wrt` and that `target` depends on.
class Activity {
public:
  Activity(Block &block, Value target, ArrayRef<Value> wrt);
  bool isActive(Value value) const { return active.contains(value); }
  /// The values of `wrt` that `target` depends on.
  bool reaches(Value wrtValue) const { return active.contains(wrtValue); }

private:
  llvm::DenseSet<Value> active;
};

/// Appends the reverse pass of `block` (before its terminator) and returns
/// d(target)/d(wrt[i]) for each i, seeded with `seed` (same type as
/// `target`). A value of `wrt` the target does not depend on gets zeros.
/// Fails, after an error naming the op and node, when an active op has no
/// gradient rule or its rule fails. New ops that can accumulate in fp32
/// inherit `amp.accumulate` from the forward op they differentiate.
FailureOr<SmallVector<Value>> buildGradients(Block &block, Value target,
                                             Value seed, ArrayRef<Value> wrt);

} // namespace mlir::amp::training

#endif // AMP_TRAINING_AUTODIFF_H
