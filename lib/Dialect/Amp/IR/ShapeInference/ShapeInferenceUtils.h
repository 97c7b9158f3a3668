//===- ShapeInferenceUtils.h - helpers of the shape functions ---*- C++ -*-===//
//
// Internal to lib/Dialect/Amp/IR/ShapeInference.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_DIALECT_AMP_IR_SHAPEINFERENCE_SHAPEINFERENCEUTILS_H
#define AMP_LIB_DIALECT_AMP_IR_SHAPEINFERENCE_SHAPEINFERENCEUTILS_H

#include "amp/Dialect/Amp/IR/AmpShapeInference.h"
#include "amp/Dialect/Amp/Semantics/Indexing.h"
#include "amp/Dialect/Amp/Semantics/LinearAlgebra.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace mlir::amp::shape {

using semantics::ceilDiv;
using semantics::floorDiv;
using semantics::kDynamic;
using semantics::mulDims;

/// The largest rank a result may take from the static length of a shape
/// operand (Reshape, Expand, ConstantOfShape): far above any model, and it
/// keeps a length declared in a file from sizing a huge vector.
constexpr int64_t kMaxRankFromLength = 1024;

/// Fails with a message when `length` (a shape operand's static length)
/// exceeds kMaxRankFromLength.
inline LogicalResult checkRankFromLength(InferenceContext &ctx,
                                         int64_t length, StringRef what) {
  if (length > kMaxRankFromLength)
    return ctx.emitError(what + " has " + llvm::Twine(length) +
                         " entries, more than the largest rank amp takes (" +
                         llvm::Twine(kMaxRankFromLength) + ")");
  return success();
}

/// Prints a type for a diagnostic.
std::string typeToString(Type type);

/// Operand `i` as a ranked tensor; fails with a message naming the operand
/// when it is missing.
FailureOr<RankedTensorType> requireTensor(InferenceContext &ctx, unsigned i);

inline RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

/// Broadcasts the shapes of the present operands in [first, last) (numpy
/// rules).
LogicalResult broadcastShapes(InferenceContext &ctx, unsigned first,
                              unsigned last, SmallVector<int64_t> &shape);

/// Fails unless the present operands in [first, last) share an element type.
LogicalResult requireSameElementTypes(InferenceContext &ctx, unsigned first,
                                      unsigned last);

/// Fails with "contracting dimensions differ" when static sizes differ.
inline LogicalResult checkContraction(InferenceContext &ctx, int64_t lhs,
                                      int64_t rhs) {
  return semantics::checkContraction(lhs, rhs, ctx.getErrorFn());
}

/// The result shape of a convolution whose X and W are operands `xIndex`
/// and `wIndex` (Conv.cpp).
FailureOr<SmallVector<int64_t>>
inferConvShape(InferenceContext &ctx, StringRef opName,
               const semantics::WindowAttrs &attrs, unsigned xIndex,
               unsigned wIndex);

} // namespace mlir::amp::shape

#endif // AMP_LIB_DIALECT_AMP_IR_SHAPEINFERENCE_SHAPEINFERENCEUTILS_H
