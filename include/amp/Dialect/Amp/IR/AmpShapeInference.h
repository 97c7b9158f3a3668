//===- AmpShapeInference.h - result-type inference for amp ops --*- C++ -*-===//
//
// Every amp op implements InferTypeOpInterface by calling one function of
// this header (named by `shapeFn` in AmpBase.td). The functions validate the
// operands and attributes, report problems at the op's location, and compute
// result types; dimensions they cannot know are dynamic. Operands produced by
// constants (shape tensors, axes, pads, ...) are read so that static shapes
// stay static.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPSHAPEINFERENCE_H
#define AMP_DIALECT_AMP_IR_AMPSHAPEINFERENCE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Region.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::amp {

/// Returns the integer elements of `attr` (dense or dense_resource, any
/// integer width) or std::nullopt if it holds no integers.
std::optional<llvm::SmallVector<int64_t>> getIntValues(Attribute attr);

/// Returns the integer elements of `value` if a constant-like op produces it.
std::optional<llvm::SmallVector<int64_t>> getConstantIntValues(Value value);

namespace shape {

/// Arguments of an inferReturnTypes call, with typed accessors.
class InferenceContext {
public:
  InferenceContext(MLIRContext *context, std::optional<Location> loc,
                   ValueRange operands, DictionaryAttr attributes,
                   RegionRange regions)
      : context(context), loc(loc), operands(operands), attributes(attributes),
        regions(regions) {}

  MLIRContext *getContext() const { return context; }
  ValueRange getOperands() const { return operands; }
  RegionRange getRegions() const { return regions; }
  unsigned getNumOperands() const { return operands.size(); }

  /// The ranked tensor type of operand `i`; null when absent or `none`.
  RankedTensorType getTensorType(unsigned i) const;
  /// Whether operand `i` is absent or `none`.
  bool isAbsent(unsigned i) const { return !getTensorType(i); }
  /// Integer elements of operand `i` when it is a constant.
  std::optional<llvm::SmallVector<int64_t>> getConstantInts(unsigned i) const;

  /// Attribute accessors. Defaults mirror the ODS defaults of the op.
  int64_t getInt(StringRef name, int64_t defaultValue) const;
  std::optional<int64_t> getOptionalInt(StringRef name) const;
  std::optional<llvm::SmallVector<int64_t>> getInts(StringRef name) const;
  StringRef getString(StringRef name, StringRef defaultValue) const;
  /// The type held by a TypeAttr attribute (`to`, `dtype`, ...).
  Type getTypeAttr(StringRef name, Type defaultType) const;
  Attribute getAttr(StringRef name) const;

  /// Reports an error at the op (if a location was given); returns failure.
  LogicalResult emitError(const llvm::Twine &message) const;

  /// Normalises an axis in [-rank, rank) to [0, rank); fails if out of range.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   StringRef what = "axis") const;

private:
  MLIRContext *context;
  std::optional<Location> loc;
  ValueRange operands;
  DictionaryAttr attributes;
  RegionRange regions;
};

using Types = llvm::SmallVectorImpl<Type>;

/// Result types are compatible when element types agree and shapes agree up
/// to dynamic dimensions.
bool areCompatibleTypes(TypeRange lhs, TypeRange rhs);

// Shape functions, one per family of ops (see AmpOps.td).
LogicalResult inferConstant(InferenceContext &ctx, Types &results);
LogicalResult inferSameAsFirst(InferenceContext &ctx, Types &results);
LogicalResult inferBoolLikeFirst(InferenceContext &ctx, Types &results);
LogicalResult inferDropout(InferenceContext &ctx, Types &results);
LogicalResult inferBroadcast(InferenceContext &ctx, Types &results);
LogicalResult inferBroadcastMixed(InferenceContext &ctx, Types &results);
LogicalResult inferBroadcastBool(InferenceContext &ctx, Types &results);
LogicalResult inferWhere(InferenceContext &ctx, Types &results);
LogicalResult inferReduce(InferenceContext &ctx, Types &results);
LogicalResult inferArgReduce(InferenceContext &ctx, Types &results);
LogicalResult inferMatMul(InferenceContext &ctx, Types &results);
LogicalResult inferGemm(InferenceContext &ctx, Types &results);
LogicalResult inferEinsum(InferenceContext &ctx, Types &results);
LogicalResult inferConv(InferenceContext &ctx, Types &results);
LogicalResult inferConvTranspose(InferenceContext &ctx, Types &results);
LogicalResult inferPool(InferenceContext &ctx, Types &results);
LogicalResult inferMaxPool(InferenceContext &ctx, Types &results);
LogicalResult inferGlobalPool(InferenceContext &ctx, Types &results);
LogicalResult inferBatchNorm(InferenceContext &ctx, Types &results);
LogicalResult inferLayerNorm(InferenceContext &ctx, Types &results);
LogicalResult inferShapeOp(InferenceContext &ctx, Types &results);
LogicalResult inferSize(InferenceContext &ctx, Types &results);
LogicalResult inferCast(InferenceContext &ctx, Types &results);
LogicalResult inferCastLike(InferenceContext &ctx, Types &results);
LogicalResult inferReshape(InferenceContext &ctx, Types &results);
LogicalResult inferFlatten(InferenceContext &ctx, Types &results);
LogicalResult inferSqueeze(InferenceContext &ctx, Types &results);
LogicalResult inferUnsqueeze(InferenceContext &ctx, Types &results);
LogicalResult inferTranspose(InferenceContext &ctx, Types &results);
LogicalResult inferConcat(InferenceContext &ctx, Types &results);
LogicalResult inferSplit(InferenceContext &ctx, Types &results);
LogicalResult inferSlice(InferenceContext &ctx, Types &results);
LogicalResult inferGather(InferenceContext &ctx, Types &results);
LogicalResult inferGatherElements(InferenceContext &ctx, Types &results);
LogicalResult inferGatherND(InferenceContext &ctx, Types &results);
LogicalResult inferExpand(InferenceContext &ctx, Types &results);
LogicalResult inferTile(InferenceContext &ctx, Types &results);
LogicalResult inferPad(InferenceContext &ctx, Types &results);
LogicalResult inferDepthToSpace(InferenceContext &ctx, Types &results);
LogicalResult inferSpaceToDepth(InferenceContext &ctx, Types &results);
LogicalResult inferResize(InferenceContext &ctx, Types &results);
LogicalResult inferConstantOfShape(InferenceContext &ctx, Types &results);
LogicalResult inferRange(InferenceContext &ctx, Types &results);
LogicalResult inferEyeLike(InferenceContext &ctx, Types &results);
LogicalResult inferOneHot(InferenceContext &ctx, Types &results);
LogicalResult inferTopK(InferenceContext &ctx, Types &results);
LogicalResult inferNonZero(InferenceContext &ctx, Types &results);
LogicalResult inferCompress(InferenceContext &ctx, Types &results);
LogicalResult inferGridSample(InferenceContext &ctx, Types &results);
LogicalResult inferFromRegions(InferenceContext &ctx, Types &results);
LogicalResult inferDet(InferenceContext &ctx, Types &results);
LogicalResult inferLoss(InferenceContext &ctx, Types &results);
LogicalResult inferSoftmaxCrossEntropyLoss(InferenceContext &ctx,
                                           Types &results);
LogicalResult inferAttention(InferenceContext &ctx, Types &results);
LogicalResult inferQuantizeLinear(InferenceContext &ctx, Types &results);
LogicalResult inferDequantizeLinear(InferenceContext &ctx, Types &results);
LogicalResult inferDynamicQuantizeLinear(InferenceContext &ctx,
                                         Types &results);
LogicalResult inferRecurrent(InferenceContext &ctx, Types &results);
LogicalResult inferLSTM(InferenceContext &ctx, Types &results);
LogicalResult inferRandomLike(InferenceContext &ctx, Types &results);
LogicalResult inferMaxUnpool(InferenceContext &ctx, Types &results);

} // namespace shape
} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_AMPSHAPEINFERENCE_H
