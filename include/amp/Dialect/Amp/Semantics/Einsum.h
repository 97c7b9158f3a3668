//===- Einsum.h - Einsum equations ------------------------------*- C++ -*-===//

#ifndef AMP_DIALECT_AMP_SEMANTICS_EINSUM_H
#define AMP_DIALECT_AMP_SEMANTICS_EINSUM_H

#include "amp/Dialect/Amp/Semantics/Common.h"

#include <string>

namespace mlir::amp::semantics {

/// An Einsum equation resolved against its operands' ranks, with one letter
/// per dimension: spaces dropped; an ellipsis replaced by letters the
/// equation does not use, right-aligned so that broadcast ellipsis
/// dimensions share letters; an implicit output made explicit (the
/// ellipsis letters, then the letters used once, in ASCII order).
struct EinsumEquation {
  SmallVector<std::string> inputs;
  std::string output;

  /// "ab,bc->ac".
  std::string str() const;
};

/// Resolves `equation` for operands of ranks `ranks`; fails, reporting
/// through `error`, on characters other than letters, ',', '->' and
/// '...', a term count or rank that does not match, an output letter no
/// input has, or more ellipsis dimensions than unused letters.
FailureOr<EinsumEquation> resolveEinsum(StringRef equation,
                                        ArrayRef<int64_t> ranks,
                                        ErrorFn error);

} // namespace mlir::amp::semantics

#endif // AMP_DIALECT_AMP_SEMANTICS_EINSUM_H
