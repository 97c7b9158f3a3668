//===- LoweringUtils.h - helpers shared by the amp -> linalg patterns -----===//
//
// Internal to lib/Conversion/AmpToLinalg.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_AMPTOLINALG_LOWERINGUTILS_H
#define AMP_LIB_CONVERSION_AMPTOLINALG_LOWERINGUTILS_H

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/IR/AmpShapeInference.h"
#include "amp/Dialect/Amp/Semantics/Indexing.h"
#include "amp/Dialect/Amp/Semantics/LinearAlgebra.h"
#include "amp/Dialect/Amp/Semantics/Reduction.h"
#include "amp/Dialect/Amp/Semantics/Window.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::amp::lowering {

/// fp16 and bf16 values are computed in fp32.
bool isLowPrecisionFloat(Type type);
/// The type an op computes in for a storage element type.
Type getComputeType(Type storage);
/// Whether the (original, amp-level) element type is an unsigned integer.
bool isUnsignedInt(Type type);
/// Element type of a (converted) tensor value.
Type elementTypeOf(Value value);
bool isNone(Value value);

/// Scalar constant of `type` (float, integer or index).
Value constantScalar(OpBuilder &b, Location loc, Type type, double value);
/// The most negative/positive finite-or-infinite value of a type (for max
/// and min reductions): -inf/+inf for floats, min/max for integers.
Value lowestValue(OpBuilder &b, Location loc, Type type, bool isUnsigned);
Value highestValue(OpBuilder &b, Location loc, Type type, bool isUnsigned);

/// Converts a scalar between element types with IEEE and ONNX semantics
/// (float->int truncates toward zero, anything->bool is `!= 0`).
Value convertScalar(OpBuilder &b, Location loc, Value value, Type to,
                    bool fromUnsigned, bool toUnsigned);
/// Whether `type` is a storage type (an 8-bit float or a 4- or 2-bit
/// integer, see Amp_StorageElement): lowered as i8 (see StorageTypes.cpp).
bool isStorageElementType(Type type);
/// ONNX Cast of one scalar when `from` or `to` (the amp-level element
/// types) is a storage type. `value` and the result are in their lowered
/// types (i8 for a storage type, signless integers); `saturate` is Cast's
/// attribute for 8-bit float targets.
Value castStorageScalar(OpBuilder &b, Location loc, Value value, Type from,
                        Type to, bool saturate);

/// Widens a storage-typed scalar to its compute type (f16/bf16 -> f32).
Value toComputeType(OpBuilder &b, Location loc, Value value);
/// The body of a contraction generic (lhs, rhs, accumulator block
/// arguments): yields acc + lhs * rhs in the compute type, stored as `acc`.
void buildMultiplyAccumulate(OpBuilder &b, Location loc, ValueRange args,
                             Type acc);

/// Sizes of a ranked tensor value as OpFoldResults.
SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value tensor);
/// A tensor.empty of `type`, taking dynamic sizes from `sizes`.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<OpFoldResult> sizes);
/// A tensor of `type` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   ArrayRef<OpFoldResult> sizes, Value value);
/// Reshapes `source` to `type` through collapse/expand_shape; `sizes`
/// gives the dynamic result sizes.
Value reshapeTensor(OpBuilder &b, Location loc, Value source,
                    RankedTensorType type, ArrayRef<OpFoldResult> sizes);
/// tensor[..., index, ...] along `axis`, without that dimension (a
/// rank-reducing extract_slice).
Value extractAlongAxis(OpBuilder &b, Location loc, Value tensor, int64_t axis,
                       OpFoldResult index);
/// Inserts `slice` (rank r) into `dest` (rank r + 1) at `index` along
/// `axis` (a rank-reducing insert_slice).
Value insertAlongAxis(OpBuilder &b, Location loc, Value slice, Value dest,
                      int64_t axis, OpFoldResult index);
/// Inserts unit dimensions so that a reduced tensor keeps its rank.
Value keepDims(OpBuilder &b, Location loc, Value reduced, int64_t rank,
               ArrayRef<int64_t> axes);

/// Computes a numpy-broadcast of `inputs` to `resultType` with a
/// linalg.generic whose body is `body` (called with compute-typed scalars,
/// f16/bf16 widened to f32). The body's value is converted to the result
/// element type (fp32 results of a low-precision op are rounded once).
using ScalarBody = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;
/// `input` padded with `low`/`high` elements of `padValue` per dimension,
/// as fill + insert_slice (tensor.pad with a dynamic dimension bufferizes to
/// an allocation whose size reads the allocation itself in MLIR 19).
Value padTensor(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, Value padValue);
/// `input` with its dimensions `dims` broadcast to `sizes` (those of a
/// result of `resultType`, trailing-aligned) when they are 1 at run time:
/// index 0 is read then. For dynamic dimensions that may or may not
/// broadcast.
Value broadcastAtRunTime(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> dims, RankedTensorType resultType,
                         ArrayRef<OpFoldResult> sizes);
/// |x| of a signed integer scalar as select(x < 0, 0 - x, x) (math.absi has
/// no LLVM lowering in MLIR 19).
Value signedIntAbs(OpBuilder &b, Location loc, Value x);
Value buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       RankedTensorType resultType, ScalarBody body,
                       bool resultUnsigned = false,
                       ArrayRef<OpFoldResult> resultSizes = {});
/// Result sizes of a broadcast of `inputs` to `resultType`.
SmallVector<OpFoldResult> broadcastSizes(OpBuilder &b, Location loc,
                                         ValueRange inputs,
                                         RankedTensorType resultType);

/// Reduces `input` over `axes` (sorted, non-negative) into a tensor of the
/// remaining dimensions with element type `accType`. `combine` receives the
/// compute-typed element (after `map`, if given) and accumulator; when
/// `accType` is f16/bf16 the accumulator is rounded after every step.
using ReduceCombine =
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)>;
Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, Type accType, Value init,
                     ReduceCombine combine, ScalarBody map = nullptr);

/// The loop structure of a reduction of `input` over `axes`: the result
/// shape and sizes (reduced dimensions dropped), the result's indexing map
/// and the iterator types.
struct ReductionShape {
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  AffineMap outMap;
  SmallVector<utils::IteratorType> iterators;
};
ReductionShape getReductionShape(OpBuilder &b, Location loc, Value input,
                                 ArrayRef<int64_t> axes);

/// Makes a possibly negative index (an index value) non-negative against
/// `dim`, as ONNX indices are.
Value wrapIndex(OpBuilder &b, Location loc, Value index, Value dim);

/// Reads a constant integer tensor operand (i32 or i64 elements).
FailureOr<SmallVector<int64_t>> getConstantInts(Value value);

/// A verified op's axis in [0, rank), as the op-semantics helper (the one
/// place that interprets ONNX axes) resolves it.
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return semantics::normalizeAxis(axis, rank)
      .value_or(axis < 0 ? axis + rank : axis);
}

/// Emits "<op> is not lowerable to the CPU backend yet: <why>" at the op.
LogicalResult notLowerable(Operation *op, const Twine &why);

/// The converted result type of `op`'s result `index`.
RankedTensorType convertedResultType(const TypeConverter *converter,
                                     Operation *op, unsigned index = 0);

/// Whether `op` accumulates in fp32 (amp.accumulate = f32).
bool accumulatesInF32(Operation *op);

/// The element type an op accumulates in: fp32 for fp32-accumulating
/// low-precision ops, otherwise the storage type.
Type accumulatorType(Operation *op, Type storage);

/// Number of elements of `tensor` over `axes`, as a scalar of `type`'s
/// compute type.
Value countOver(OpBuilder &b, Location loc, Value tensor,
                ArrayRef<int64_t> axes, Type type);

/// Tensor type with the same shape and another element type.
RankedTensorType withElementType(Value tensor, Type element);

/// Elementwise conversion of a whole tensor to `element`.
Value convertTensor(OpBuilder &b, Location loc, Value tensor, Type element);

//===----------------------------------------------------------------------===//
// Indices
//===----------------------------------------------------------------------===//

/// An OpFoldResult as an index value (a constant when it is an attribute).
Value indexValue(OpBuilder &b, Location loc, OpFoldResult size);
/// An integer scalar cast to index.
Value toIndex(OpBuilder &b, Location loc, Value integer);
/// Reads element `i` of a 1-D integer tensor as an index.
Value extractIndex(OpBuilder &b, Location loc, Value tensor, int64_t i);
/// Reads the single element of a 0-d or 1-element tensor.
Value extractScalar(OpBuilder &b, Location loc, Value tensor);
/// An index read from an integer tensor at `position`, made non-negative
/// against `dim` and clamped into it (clampIndex).
Value readIndex(OpBuilder &b, Location loc, Value indices, ValueRange position,
                Value dim);
/// GatherElements' gather: result[p] = data[p with p[axis] = indices[p]],
/// a `type` tensor of `indices`' shape (`sizes`). With `axisDim`, each
/// index is clamped into [0, axisDim) (the caller checks it and guards an
/// empty axis); without, the indices are known to be in range.
Value gatherAlongAxis(OpBuilder &b, Location loc, Value data, Value indices,
                      int64_t axis, RankedTensorType type,
                      ArrayRef<OpFoldResult> sizes, Value axisDim = {});

//===----------------------------------------------------------------------===//
// Run-time checks (amp/Conversion/AmpToLinalg/RuntimeChecks.h)
//===----------------------------------------------------------------------===//

/// "node 'name' (OnnxType)" for messages, or the op type without a name.
std::string describeNode(Operation *op);
/// Whether the module being lowered collects run-time checks.
bool collectsRuntimeChecks(OpBuilder &b);
/// At the insertion point: when the i1 `failed` holds at run time, the
/// runtime is told (check id, `value`, `bound`) and the caller reports
/// `message` with {value} and {bound} filled in. Nothing when the module
/// does not collect checks.
void emitRuntimeCheck(OpBuilder &b, Location loc, Value failed, Value value,
                      Value bound, const Twine &message);
/// The smallest and largest element (i64 scalars) of an integer tensor;
/// INT64_MAX and INT64_MIN when it is empty.
std::pair<Value, Value> getIntegerExtremes(OpBuilder &b, Location loc,
                                           Value tensor);
/// Checks at run time that every element of the integer tensor `indices`
/// lies in [-dim, dim) (`allowNegative`) or [0, dim); `what` names the
/// values in the message ("index", "axis").
void checkIndexRange(OpBuilder &b, Location loc, Operation *op, Value indices,
                     Value dim, bool allowNegative, StringRef what);
/// `index` made non-negative against `dim` and clamped into [0, dim - 1]:
/// an out-of-range index (reported by its check) still reads or writes
/// inside the tensor. Needs dim > 0 (see guardEmptyAxes).
Value clampIndex(OpBuilder &b, Location loc, Value index, Value dim);
/// checkIndexRange for index tuples (GatherND, ScatterND): component j of
/// the last dimension of `indices` against `dims[j]`.
void checkIndexTuples(OpBuilder &b, Location loc, Operation *op, Value indices,
                      ArrayRef<Value> dims);
/// A guardEmptyAxes fallback: a `type` tensor of zeros.
inline auto zeroFilled(RankedTensorType type, ArrayRef<OpFoldResult> sizes) {
  return [=](OpBuilder &b, Location l) -> Value {
    return filledTensor(b, l, type, sizes,
                        constantScalar(b, l, type.getElementType(), 0));
  };
}
/// `build()`, or `fallback()` when one of `axes` of `tensor` is empty at
/// run time (then no index is valid, the check fails, and nothing may be
/// read or written). Axes of a static size > 0 need no test.
Value guardEmptyAxes(OpBuilder &b, Location loc, Value tensor,
                     ArrayRef<int64_t> axes,
                     function_ref<Value(OpBuilder &, Location)> build,
                     function_ref<Value(OpBuilder &, Location)> fallback);
/// The same for ops with several results.
SmallVector<Value> guardEmptyAxesN(
    OpBuilder &b, Location loc, Value tensor, ArrayRef<int64_t> axes,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> build,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> fallback);

/// A tensor of `type` (dynamic sizes from `sizes`) whose elements are
/// computed from their position: a linalg.generic without inputs over a
/// tensor.empty, whose body `body` gets the linalg.index of every dimension
/// and returns the element.
using IndexBody =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange indices)>;
Value buildIndexGenerated(OpBuilder &b, Location loc, RankedTensorType type,
                          ArrayRef<OpFoldResult> sizes, IndexBody body);

//===----------------------------------------------------------------------===//
// Sliding windows (convolution and pooling)
//===----------------------------------------------------------------------===//

/// The window of a Conv or pooling op resolved against its input by the
/// op-semantics helper; "not lowerable" where SAME padding meets a dynamic
/// spatial size.
FailureOr<semantics::Window>
resolveWindowForLowering(Operation *op, const semantics::WindowAttrs &attrs,
                         RankedTensorType inputType, ArrayRef<int64_t> kernel);

/// Pads the spatial dimensions of an N, C, spatial... tensor.
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> begin, ArrayRef<int64_t> end,
                 Value padValue);

//===----------------------------------------------------------------------===//
// Builders that one op family lends another
//===----------------------------------------------------------------------===//

/// ArgMax (`max`) or ArgMin of `input` along `axis` (dropped), as i64; the
/// last extreme index when `last`. In Reduction.cpp; Hardmax uses it.
Value buildArgReduce(OpBuilder &b, Location loc, Value input, int64_t axis,
                     bool max, bool last, bool isUnsigned);

/// C (+)= A x B for [M,K]x[K,N] or batched [B,M,K]x[B,K,N] (`transposeB`:
/// B is [.., N, K]). fp32/f64/integer work uses the named linalg ops (fp32
/// ones become oneDNN calls); f16/bf16 accumulation rounds after every
/// step. In Gemm.cpp; the recurrent ops use it.
Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs, Value init,
                  bool transposeB);

/// softmax(input) or log_softmax(input) along `axis`; intermediates in
/// `acc` (fp32 for fp32-accumulating low-precision ops), the result rounded
/// once to `resultType`. In Softmax.cpp; SoftmaxCrossEntropyLoss uses it.
Value buildSoftmax(OpBuilder &b, Location loc, Value input, int64_t axis,
                   Type acc, RankedTensorType resultType, bool isLog);

//===----------------------------------------------------------------------===//
// Patterns: one function per op family, each in the file of that name
//===----------------------------------------------------------------------===//

void populateControlFlowPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns);
void populateConvPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns);
void populateDetectionPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns);
void populateRoiAlignPatterns(TypeConverter &converter,
                              RewritePatternSet &patterns);
void populateElementwisePatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns);
void populateGatherPatterns(TypeConverter &converter,
                            RewritePatternSet &patterns);
void populateGemmPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns);
void populateGeneratorPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns);
void populateTrainingPatterns(TypeConverter &converter,
                              RewritePatternSet &patterns,
                              bool parallelUnscale = false);
void populateLossPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns);
void populateNormalizationPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns);
void populatePadTilePatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
void populateDataDependentPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns);
void populateGridSamplePatterns(TypeConverter &converter,
                                RewritePatternSet &patterns);
void populateLinearAlgebraPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns);
void populatePoolingPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
void populateQuantizationPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns);
void populateRecurrentPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns);
void populateReductionPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns);
void populateResizePatterns(TypeConverter &converter,
                            RewritePatternSet &patterns);
void populateScatterPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
void populateShapePatterns(TypeConverter &converter,
                           RewritePatternSet &patterns);
void populateSliceConcatPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns);
void populateSoftmaxPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
void populateTopKPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns);

} // namespace mlir::amp::lowering

#endif // AMP_LIB_CONVERSION_AMPTOLINALG_LOWERINGUTILS_H
