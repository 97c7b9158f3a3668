//===- Views.h - the buffer a memref view reads -----------------*- C++ -*-===//

#ifndef AMP_CONVERSION_LINALGTOCUDA_VIEWS_H
#define AMP_CONVERSION_LINALGTOCUDA_VIEWS_H

#include "mlir/IR/Value.h"

namespace mlir::amp::cuda {

/// The operand `op` is a view of (ViewLikeOpInterface ops and
/// memref.transpose), or null if `op` makes no view.
Value getViewSource(Operation *op);

/// The buffer (allocation, argument or global) `value` is a view of.
Value getRootBuffer(Value value);

} // namespace mlir::amp::cuda

#endif // AMP_CONVERSION_LINALGTOCUDA_VIEWS_H
