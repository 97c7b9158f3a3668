//===- Common.h - shared pieces of the op-semantics helpers -----*- C++ -*-===//
//
// The op-semantics helpers (this folder) are the one place where ONNX
// attributes, their defaults and operand conventions are interpreted. Shape
// inference, the folders, the linalg lowering and the ONNX writer call them;
// gradient rules and the CUDA lowering will. Each family has a small
// attribute struct read through the ODS-generated accessors (the `get`
// templates work with an op or its adaptor, so no attribute is ever read by
// its string name) and plain functions that resolve the attributes against
// operand shapes and report what is wrong through an ErrorFn.
//
// The helpers depend on MLIR's support library only, not on the amp
// dialect: the attribute structs are filled by duck-typed templates.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_COMMON_H
#define AMP_DIALECT_AMP_SEMANTICS_COMMON_H

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include <limits>
#include <optional>

namespace mlir::amp::semantics {

/// Receives the message of a semantic error (shape inference reports it at
/// the op, the lowering as "not lowerable", ...).
using ErrorFn = llvm::function_ref<void(const llvm::Twine &)>;

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// The elements of an optional integer-array attribute.
inline std::optional<SmallVector<int64_t>>
toVector(std::optional<ArrayRef<int64_t>> values) {
  if (!values)
    return std::nullopt;
  return SmallVector<int64_t>(values->begin(), values->end());
}

/// The size mulDims gives when a product is not a size: an operand is
/// negative or the product overflows int64. No tensor has it, so the
/// importer's largest-tensor cap refuses the type it ends up in.
constexpr int64_t kInvalidDim = std::numeric_limits<int64_t>::max();

/// a * b, dynamic if either is; kInvalidDim for a negative operand or an
/// overflow (sizes come from files: no undefined behaviour on any value).
inline int64_t mulDims(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b))
    return kDynamic;
  int64_t product;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &product))
    return kInvalidDim;
  return product;
}

/// ceil(a / b) for b > 0 (any sign of a).
inline int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

/// floor(a / b) for b != 0.
inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_COMMON_H
