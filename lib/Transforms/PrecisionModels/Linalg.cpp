//===- Linalg.cpp - precision models of linalg structured ops -------------===//
//
// A linalg op reads its inputs in low precision; what it writes depends on
// its loops:
//   * with a reduction loop (matmul, convolutions, pooling, a reducing
//     linalg.generic) the output is the accumulator: it stays fp32, so the
//     op accumulates in fp32 and its result is fp32 (autocast converts it
//     for low-precision consumers);
//   * with parallel loops only (elementwise, broadcast, transpose) the
//     output follows the op's precision.
// Inputs the payload never reads (pooling's window shape, an init that is
// only overwritten) are not data and are never converted.
//
// A linalg.generic is fixed in place: block arguments take the new element
// types and are extended to fp32 at the top of the payload, values yielded
// into low-precision outputs are truncated; the payload itself computes in
// fp32 exactly as before. A named op is rebuilt with its builder, which
// generates the payload for the new types (inputs extended to the output
// type).
//
//===----------------------------------------------------------------------===//

#include "ModelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::precision_models;

namespace {

bool hasReduction(linalg::LinalgOp op) {
  return op.getNumReductionLoops() != 0;
}

/// The ONNX operator a named op computes.
StringRef namedOnnxName(StringRef name) {
  name.consume_front("linalg.");
  if (name.contains("matmul") || name.contains("matvec") ||
      name.contains("vecmat") || name == "dot" || name.contains("mmt4d"))
    return "MatMul";
  if (name.starts_with("conv") || name.starts_with("depthwise_conv"))
    return "Conv";
  if (name.starts_with("pooling") && name.contains("sum"))
    return "AveragePool";
  if (name.starts_with("pooling"))
    return "MaxPool";
  static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
      kElementwise[] = {{"add", "Add"},
                        {"sub", "Sub"},
                        {"mul", "Mul"},
                        {"div", "Div"},
                        {"max", "Max"},
                        {"min", "Min"},
                        {"exp", "Exp"},
                        {"log", "Log"},
                        {"abs", "Abs"},
                        {"ceil", "Ceil"},
                        {"floor", "Floor"},
                        {"negf", "Neg"},
                        {"sqrt", "Sqrt"},
                        {"rsqrt", "Reciprocal"},
                        {"square", "Mul"},
                        {"tanh", "Tanh"},
                        {"erf", "Erf"},
                        {"powf", "Pow"},
                        {"round", "Round"},
                        {"reciprocal", "Reciprocal"},
                        {"select", "Where"},
                        {"copy", "Identity"},
                        {"transpose", "Transpose"},
                        {"broadcast", "Expand"}};
  for (const auto &[linalgName, onnxName] : kElementwise)
    if (name == linalgName)
      return onnxName;
  return "Unknown";
}

/// The ONNX name of a linalg.generic, from its payload: a contraction is a
/// MatMul, a reduction is named by its combiner (ReduceSum, ReduceMax, ...),
/// an elementwise payload by its most range-sensitive op (an exp, log, pow,
/// ... wherever it sits), otherwise by its first op; a payload that only
/// yields is a copy (Identity).
StringRef genericOnnxName(linalg::GenericOp op) {
  if (hasReduction(op) && linalg::isaContractionOpInterface(op))
    return "MatMul";
  if (hasReduction(op) && linalg::isaConvolutionOpInterface(op))
    return "Conv";
  Block &body = op.getRegion().front();
  // A select by a comparison (ReLU as torch-mlir and amp lower it) is a
  // max or min: it picks values without computing.
  if (llvm::all_of(
          body.without_terminator(),
          [](Operation &inner) {
            return isa<arith::CmpFOp, arith::SelectOp, arith::ConstantOp,
                       arith::ExtFOp, arith::TruncFOp>(inner);
          }) &&
      llvm::any_of(body.without_terminator(),
                   [](Operation &inner) { return isa<arith::CmpFOp>(inner); }))
    return hasReduction(op) ? "ReduceMax" : "Max";
  StringRef first;
  for (Operation &inner : body.without_terminator()) {
    if (isa<arith::ExtFOp, arith::TruncFOp, arith::ConstantOp>(inner))
      continue;
    StringRef name = inner.getName().getStringRef();
    StringRef onnx = llvm::StringSwitch<StringRef>(name)
                         .Case("math.exp", "Exp")
                         .Case("math.exp2", "Exp")
                         .Case("math.expm1", "Exp")
                         .Case("math.log", "Log")
                         .Case("math.log1p", "Log")
                         .Case("math.log2", "Log")
                         .Case("math.powf", "Pow")
                         .Case("math.erf", "Erf")
                         .Case("math.tanh", "Tanh")
                         .Case("math.sqrt", "Sqrt")
                         .Case("math.rsqrt", "Reciprocal")
                         .Case("arith.divf", "Div")
                         .Default("");
    if (!onnx.empty() && !hasReduction(op))
      return onnx;
    if (!first.empty())
      continue;
    first = llvm::StringSwitch<StringRef>(name)
                .Case("arith.addf", "Add")
                .Case("arith.subf", "Sub")
                .Case("arith.mulf", "Mul")
                .Case("arith.divf", "Div")
                .Cases("arith.maximumf", "arith.maxnumf", "Max")
                .Cases("arith.minimumf", "arith.minnumf", "Min")
                .Case("arith.negf", "Neg")
                .Case("arith.select", "Where")
                .Case("math.absf", "Abs")
                .Default("Unknown");
  }
  if (hasReduction(op)) {
    if (first == "Add")
      return "ReduceSum";
    if (first == "Max")
      return "ReduceMax";
    if (first == "Min")
      return "ReduceMin";
    if (first == "Mul")
      return "ReduceProd";
    return "ReduceSum";
  }
  return first.empty() ? StringRef("Identity") : first;
}

/// A fresh `tensor.empty` shaped like `like`, with element type
/// `elementType` (for an output the payload only writes).
Value emptyLike(OpBuilder &builder, Location loc, Value like,
                Type elementType) {
  auto type = cast<RankedTensorType>(like.getType());
  SmallVector<Value> dynamicSizes;
  for (auto [i, dim] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(dim))
      dynamicSizes.push_back(builder.create<tensor::DimOp>(loc, like, i));
  return builder.create<tensor::EmptyOp>(loc, type.clone(elementType),
                                         dynamicSizes);
}

template <typename OpTy>
struct LinalgModel : ArithCastModel<LinalgModel<OpTy>, OpTy> {
  StringRef getOnnxOpType(Operation *op) const {
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      return genericOnnxName(generic);
    return namedOnnxName(op->getName().getStringRef());
  }

  bool isPrecisionOperand(Operation *op, unsigned index) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    OpOperand &operand = op->getOpOperand(index);
    if (!isFloatTensor(operand.get().getType()) ||
        !linalgOp.payloadUsesValueFromOperand(&operand))
      return false;
    // An accumulator stays fp32.
    return !linalgOp.isDpsInit(&operand) || !hasReduction(linalgOp);
  }
  bool isPrecisionResult(Operation *op, unsigned) const {
    return !hasReduction(cast<linalg::LinalgOp>(op));
  }
  bool supportsF32Accumulation(Operation *op) const { return true; }
  bool hasPayloadRegions(Operation *) const { return true; }

  /// Outputs whose result autocast retyped but whose init is still fp32:
  /// the payload never reads them (else autocast would have converted
  /// them), so a fresh tensor.empty of the new type replaces the init.
  static void retypeUnreadInits(OpBuilder &builder, linalg::LinalgOp op) {
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Type resultType =
          op->getResult(init.getOperandNumber() - op.getNumDpsInputs())
              .getType();
      if (init.get().getType() == resultType)
        continue;
      init.set(emptyLike(builder, op.getLoc(), init.get(),
                         getElementTypeOrSelf(resultType)));
    }
  }

  SmallVector<Value> finishInPrecision(Operation *op, OpBuilder &builder,
                                       Type lowType) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(op);
    retypeUnreadInits(builder, linalgOp);
    if constexpr (std::is_same_v<OpTy, linalg::GenericOp>) {
      finishGeneric(builder, cast<linalg::GenericOp>(op));
      return {};
    } else {
      // A named op: rebuilt; its builder generates the payload for the new
      // types.
      SmallVector<NamedAttribute> attributes;
      for (NamedAttribute attribute : op->getAttrs())
        if (attribute.getName() != "operandSegmentSizes")
          attributes.push_back(attribute);
      auto rebuilt = builder.create<OpTy>(op->getLoc(), op->getResultTypes(),
                                          linalgOp.getDpsInputs(),
                                          linalgOp.getDpsInits(), attributes);
      return SmallVector<Value>(rebuilt->getResults());
    }
  }

  static void finishGeneric(OpBuilder &builder, linalg::GenericOp op) {
    Block &body = op.getRegion().front();
    builder.setInsertionPointToStart(&body);
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      Type elementType = getElementTypeOrSelf(operand.get().getType());
      Type argType = arg.getType();
      if (argType == elementType || !isa<FloatType>(argType))
        continue;
      arg.setType(elementType);
      if (arg.use_empty())
        continue;
      Value extended = buildArithCast(builder, op.getLoc(), arg, argType);
      arg.replaceAllUsesExcept(extended, extended.getDefiningOp());
    }
    Operation *yield = body.getTerminator();
    builder.setInsertionPoint(yield);
    for (auto [index, result] : llvm::enumerate(op->getResults())) {
      Type elementType = getElementTypeOrSelf(result.getType());
      Value yielded = yield->getOperand(index);
      if (yielded.getType() != elementType)
        yield->setOperand(
            index, buildArithCast(builder, op.getLoc(), yielded, elementType));
    }
  }

  /// 2 * iterations for a contraction or convolution; otherwise one
  /// operation per payload op per iteration.
  double estimateFlops(Operation *op) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    double iterations = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      iterations *= ShapedType::isDynamic(range) ? 1 : range;
    if (hasReduction(linalgOp) &&
        (linalg::isaContractionOpInterface(linalgOp) ||
         linalg::isaConvolutionOpInterface(linalgOp)))
      return 2 * iterations;
    double payloadOps = 0;
    for (Operation &inner : linalgOp.getBlock()->without_terminator())
      payloadOps += !isa<arith::ExtFOp, arith::TruncFOp>(inner);
    return iterations * std::max(payloadOps, 1.0);
  }
};

} // namespace

void mlir::amp::precision_models::registerLinalgModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, linalg::LinalgDialect *) {
    using namespace linalg;
    attachModels<
        LinalgModel, GenericOp,
        // Elementwise.
        AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, ExpOp, LogOp, AbsOp, CeilOp,
        FloorOp, NegFOp, SqrtOp, RsqrtOp, SquareOp, TanhOp, ErfOp, PowFOp,
        ReciprocalOp, RoundOp, CopyOp,
        // Contractions.
        MatmulOp, MatmulTransposeAOp, MatmulTransposeBOp, BatchMatmulOp,
        BatchMatmulTransposeAOp, BatchMatmulTransposeBOp, BatchReduceMatmulOp,
        MatvecOp, VecmatOp, BatchMatvecOp, BatchVecmatOp, DotOp,
        // Convolutions.
        Conv1DOp, Conv2DOp, Conv3DOp, Conv1DNwcWcfOp, Conv1DNcwFcwOp,
        Conv2DNhwcHwcfOp, Conv2DNhwcFhwcOp, Conv2DNchwFchwOp,
        Conv2DNgchwFgchwOp, Conv2DNgchwGfchwOp, Conv3DNdhwcDhwcfOp,
        Conv3DNcdhwFcdhwOp, DepthwiseConv1DNwcWcOp, DepthwiseConv1DNcwCwOp,
        DepthwiseConv1DNwcWcmOp, DepthwiseConv2DNhwcHwcOp,
        DepthwiseConv2DNchwChwOp, DepthwiseConv2DNhwcHwcmOp,
        DepthwiseConv3DNdhwcDhwcOp, DepthwiseConv3DNcdhwCdhwOp,
        DepthwiseConv3DNdhwcDhwcmOp,
        // Pooling.
        PoolingNhwcSumOp, PoolingNchwSumOp, PoolingNhwcMaxOp, PoolingNchwMaxOp,
        PoolingNhwcMinOp, PoolingNwcSumOp, PoolingNcwSumOp, PoolingNwcMaxOp,
        PoolingNcwMaxOp, PoolingNwcMinOp, PoolingNdhwcSumOp, PoolingNdhwcMaxOp,
        PoolingNdhwcMinOp>(context);
  });
}
