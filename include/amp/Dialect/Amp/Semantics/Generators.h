//===- Generators.h - ops that generate values (Range) ----------*- C++ -*-===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_GENERATORS_H
#define AMP_DIALECT_AMP_SEMANTICS_GENERATORS_H

#include "amp/Dialect/Amp/Semantics/Common.h"

#include "mlir/IR/Types.h"

namespace mlir::amp::semantics {

/// The type Range computes `start + i * delta` in: for float16 and bfloat16
/// ranges the type its `stash_type` attribute names (an ONNX data type code:
/// 1 float, the default, or 11 double, as ONNX's reference implementation
/// allows), the result rounded once to the element type; for other element
/// types the element type itself (stash_type has no effect). Returns
/// nullptr for any other stash_type.
Type getRangeComputeType(Type elementType, int64_t stashType);

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_GENERATORS_H
