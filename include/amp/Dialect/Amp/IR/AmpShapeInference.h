//===- AmpShapeInference.h - result-type inference for amp ops --*- C++ -*-===//
//
// Every amp op implements InferTypeOpInterface by calling one function of
// this header (named by `shapeFn` in AmpBase.td; the functions live in
// lib/Dialect/Amp/IR/ShapeInference/, one file per op family). The functions
// validate the operands and attributes, report problems at the op's
// location, and compute result types; dimensions they cannot know are
// dynamic. Operands produced by constants (shape tensors, axes, pads, ...)
// are read so that static shapes stay static.
//
// Attributes are read only through the op's ODS adaptor (functions of a
// single op take it) or through the attribute structs of the op-semantics
// helpers (amp/Dialect/Amp/Semantics, for families of ops that share
// attributes); the generated inferReturnTypes fills in attribute defaults
// and checks the attribute constraints before calling them.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPSHAPEINFERENCE_H
#define AMP_DIALECT_AMP_IR_AMPSHAPEINFERENCE_H

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/Semantics/Detection.h"
#include "amp/Dialect/Amp/Semantics/LinearAlgebra.h"
#include "amp/Dialect/Amp/Semantics/Quantization.h"
#include "amp/Dialect/Amp/Semantics/Recurrent.h"
#include "amp/Dialect/Amp/Semantics/Reduction.h"
#include "amp/Dialect/Amp/Semantics/Window.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
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
                   ValueRange operands, RegionRange regions)
      : context(context), loc(loc), operands(operands), regions(regions) {}

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

  /// Reports an error at the op (if a location was given); returns failure.
  LogicalResult emitError(const llvm::Twine &message) const;

  /// Normalises an axis in [-rank, rank) to [0, rank); fails if out of range.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   StringRef what = "axis") const;

  /// Reports the errors of the op-semantics helpers at the op.
  semantics::ErrorFn getErrorFn() const { return reporter; }

private:
  MLIRContext *context;
  std::optional<Location> loc;
  ValueRange operands;
  RegionRange regions;
  struct Reporter {
    const InferenceContext *ctx;
    void operator()(const llvm::Twine &message) const {
      (void)ctx->emitError(message);
    }
  } reporter{this};
};

using Types = llvm::SmallVectorImpl<Type>;

/// Two ranked tensor types joined: equal sizes kept, the others dynamic;
/// null for different ranks or element types (the type of a value that
/// may take either: If results, loop-carried values).
Type joinTensorTypes(Type a, Type b);

/// Result types are compatible when element types agree and shapes agree up
/// to dynamic dimensions.
bool areCompatibleTypes(TypeRange lhs, TypeRange rhs);

/// `attrs` with the ODS default of every default-valued attribute of
/// `opName` that it lacks (what Operation::create adds).
DictionaryAttr withDefaultAttributes(StringRef opName, MLIRContext *context,
                                     DictionaryAttr attrs);

/// Checks the attributes of an op's adaptor against the op's ODS
/// constraints (present when required, of the declared kind), so that the
/// adaptor's typed accessors are safe; reports at `loc` when given.
template <typename AdaptorT>
LogicalResult verifyAttributes(AdaptorT &adaptor, MLIRContext *context,
                               std::optional<Location> loc) {
  if (loc)
    return adaptor.verify(*loc);
  ScopedDiagnosticHandler silence(context,
                                  [](Diagnostic &) { return success(); });
  return adaptor.verify(UnknownLoc::get(context));
}

// Shape functions, one per family of ops (see AmpOps.td for which op calls
// which, and with which attributes). Files in
// lib/Dialect/Amp/IR/ShapeInference/ as named in the comments.

// Elementwise.cpp
LogicalResult inferConstant(InferenceContext &ctx, ElementsAttr value,
                            Types &results);
LogicalResult inferSameAsFirst(InferenceContext &ctx, Types &results);
LogicalResult inferBoolLikeFirst(InferenceContext &ctx, Types &results);
LogicalResult inferDropout(InferenceContext &ctx, Types &results);
LogicalResult inferBroadcast(InferenceContext &ctx, Types &results);
LogicalResult inferBroadcastMixed(InferenceContext &ctx, Types &results);
LogicalResult inferBroadcastBool(InferenceContext &ctx, Types &results);
LogicalResult inferWhere(InferenceContext &ctx, Types &results);
LogicalResult inferCast(InferenceContext &ctx, Type to, Types &results);
LogicalResult inferCastLike(InferenceContext &ctx, Types &results);
LogicalResult inferRandomLike(InferenceContext &ctx, std::optional<Type> dtype,
                              Types &results);
// Reduction.cpp
LogicalResult inferReduce(InferenceContext &ctx,
                          const semantics::ReduceAttrs &attrs, Types &results);
LogicalResult inferArgReduce(InferenceContext &ctx,
                             const semantics::ArgReduceAttrs &attrs,
                             Types &results);
// LinearAlgebra.cpp
LogicalResult inferMatMul(InferenceContext &ctx, Types &results);
LogicalResult inferGemm(InferenceContext &ctx,
                        const semantics::GemmAttrs &attrs, Types &results);
LogicalResult inferEinsum(InferenceContext &ctx, StringRef equation,
                          Types &results);
LogicalResult inferDet(InferenceContext &ctx, Types &results);
// Conv.cpp
LogicalResult inferConv(InferenceContext &ctx,
                        const semantics::WindowAttrs &attrs, Types &results);
LogicalResult inferConvTranspose(InferenceContext &ctx,
                                 const semantics::WindowAttrs &attrs,
                                 Types &results);
LogicalResult inferConvWeightGrad(InferenceContext &ctx,
                                  const semantics::WindowAttrs &attrs,
                                  Types &results);
// Pooling.cpp
LogicalResult inferPool(InferenceContext &ctx,
                        const semantics::WindowAttrs &attrs, Types &results);
LogicalResult inferMaxPool(InferenceContext &ctx,
                           const semantics::WindowAttrs &attrs, Types &results);
LogicalResult inferGlobalPool(InferenceContext &ctx, Types &results);
LogicalResult inferMaxUnpool(InferenceContext &ctx, MaxUnpoolOpAdaptor adaptor,
                             Types &results);
// Normalization.cpp
LogicalResult inferBatchNorm(InferenceContext &ctx, bool trainingMode,
                             Types &results);
LogicalResult inferLayerNorm(InferenceContext &ctx, int64_t axis,
                             int64_t stashType, Types &results);
// Shape.cpp
LogicalResult inferShapeOp(InferenceContext &ctx, std::optional<int64_t> start,
                           std::optional<int64_t> end, Types &results);
LogicalResult inferSize(InferenceContext &ctx, Types &results);
LogicalResult inferReshape(InferenceContext &ctx, bool allowZero,
                           Types &results);
LogicalResult inferFlatten(InferenceContext &ctx, int64_t axis, Types &results);
LogicalResult inferSqueeze(InferenceContext &ctx, Types &results);
LogicalResult inferUnsqueeze(InferenceContext &ctx, Types &results);
LogicalResult inferTranspose(InferenceContext &ctx,
                             std::optional<ArrayRef<int64_t>> perm,
                             Types &results);
LogicalResult inferConcat(InferenceContext &ctx, int64_t axis, Types &results);
LogicalResult inferSplit(InferenceContext &ctx, int64_t axis,
                         int64_t numOutputs, Types &results);
LogicalResult inferSlice(InferenceContext &ctx, Types &results);
LogicalResult inferExpand(InferenceContext &ctx, Types &results);
LogicalResult inferTile(InferenceContext &ctx, Types &results);
LogicalResult inferPad(InferenceContext &ctx, Types &results);
LogicalResult inferDepthToSpace(InferenceContext &ctx, int64_t blocksize,
                                llvm::StringRef mode, Types &results);
LogicalResult inferSpaceToDepth(InferenceContext &ctx, int64_t blocksize,
                                llvm::StringRef mode, Types &results);
// Gather.cpp
LogicalResult inferReverseSequence(InferenceContext &ctx, int64_t batchAxis,
                                   int64_t timeAxis, Types &results);
LogicalResult inferGather(InferenceContext &ctx, int64_t axis, Types &results);
LogicalResult inferGatherElements(InferenceContext &ctx, int64_t axis,
                                  Types &results);
LogicalResult inferGatherND(InferenceContext &ctx, int64_t batchDims,
                            Types &results);
LogicalResult inferCompress(InferenceContext &ctx, std::optional<int64_t> axis,
                            Types &results);
LogicalResult inferNonZero(InferenceContext &ctx, Types &results);
// Detection.cpp
LogicalResult inferNonMaxSuppression(InferenceContext &ctx,
                                     int64_t centerPointBox, Types &results);
LogicalResult inferRoiAlign(InferenceContext &ctx,
                            const semantics::RoiAlignAttrs &attrs,
                            Types &results);
// TopK.cpp
LogicalResult inferTopK(InferenceContext &ctx, int64_t axis, Types &results);
// Generators.cpp
LogicalResult inferConstantOfShape(InferenceContext &ctx, ElementsAttr value,
                                   Types &results);
LogicalResult inferRange(InferenceContext &ctx, int64_t stashType,
                         Types &results);
LogicalResult inferEyeLike(InferenceContext &ctx, std::optional<Type> dtype,
                           Types &results);
LogicalResult inferOneHot(InferenceContext &ctx, int64_t axis, Types &results);
// Resize.cpp
LogicalResult inferResize(InferenceContext &ctx, ResizeOpAdaptor adaptor,
                          Types &results);
LogicalResult inferGridSample(InferenceContext &ctx, Types &results);
// ControlFlow.cpp
LogicalResult inferFromRegions(InferenceContext &ctx, Types &results);
LogicalResult inferScan(InferenceContext &ctx, int64_t numScanInputs,
                        std::optional<ArrayRef<int64_t>> scanOutputAxes,
                        Types &results);
// Loss.cpp
LogicalResult inferLoss(InferenceContext &ctx, StringRef reduction,
                        Types &results);
LogicalResult inferSoftmaxCrossEntropyLoss(InferenceContext &ctx,
                                           StringRef reduction, Types &results);
// Attention.cpp
LogicalResult inferAttention(InferenceContext &ctx,
                             std::optional<int64_t> qNumHeads,
                             std::optional<int64_t> kvNumHeads, Types &results);
// Quantization.cpp
LogicalResult inferQuantizeLinear(InferenceContext &ctx,
                                  const semantics::QuantAttrs &attrs,
                                  std::optional<Type> outputDtype,
                                  Types &results);
LogicalResult inferDequantizeLinear(InferenceContext &ctx,
                                    const semantics::QuantAttrs &attrs,
                                    std::optional<Type> outputDtype,
                                    Types &results);
LogicalResult inferDynamicQuantizeLinear(InferenceContext &ctx, Types &results);
LogicalResult inferMatMulInteger(InferenceContext &ctx, Types &results);
LogicalResult inferQLinearMatMul(InferenceContext &ctx, Types &results);
LogicalResult inferConvInteger(InferenceContext &ctx,
                               const semantics::WindowAttrs &attrs,
                               Types &results);
LogicalResult inferQLinearConv(InferenceContext &ctx,
                               const semantics::WindowAttrs &attrs,
                               Types &results);
// Recurrent.cpp
LogicalResult inferRecurrent(InferenceContext &ctx,
                             const semantics::RecurrentAttrs &attrs,
                             Types &results);
// Training.cpp
LogicalResult inferMultiTensorUnscaleCheck(InferenceContext &ctx,
                                           Types &results);
LogicalResult inferDropoutMask(InferenceContext &ctx, Types &results);
LogicalResult inferGradientSeed(InferenceContext &ctx, Types &results);

} // namespace shape
} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_AMPSHAPEINFERENCE_H
