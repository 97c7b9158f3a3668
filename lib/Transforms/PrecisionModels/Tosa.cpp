//===- Tosa.cpp - precision models of TOSA ops ----------------------------===//
//
// TOSA ops are retyped in place, with tosa.cast at the boundaries:
//   * matmul, conv2d, conv3d, depthwise_conv2d, transpose_conv2d and
//     fully_connected take low-precision input and weight and keep their
//     bias and result in fp32 (TOSA's f16 x f16 -> f32 form: the fp32
//     accumulator), so the result is converted only for low consumers;
//   * avg_pool2d accumulates in fp32 through its acc_type;
//   * elementwise, reduction and data-movement ops follow their inputs.
// reduce_sum and reduce_prod accumulate in their result type, so a policy
// that asks fp32 accumulation for them keeps them in fp32.
//
//===----------------------------------------------------------------------===//

#include "ModelUtils.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::precision_models;

namespace {

/// Ops whose result is an fp32 accumulator of low-precision input and
/// weight (operands 0 and 1; a bias, operand 2, stays fp32).
bool isAccumulating(Operation *op) {
  return isa<tosa::MatMulOp, tosa::Conv2DOp, tosa::Conv3DOp,
             tosa::DepthwiseConv2DOp, tosa::TransposeConv2DOp,
             tosa::FullyConnectedOp>(op);
}

StringRef onnxName(Operation *op) {
  return llvm::StringSwitch<StringRef>(op->getName().getStringRef())
      .Case("tosa.matmul", "MatMul")
      .Cases("tosa.conv2d", "tosa.conv3d", "tosa.depthwise_conv2d", "Conv")
      .Case("tosa.transpose_conv2d", "ConvTranspose")
      .Case("tosa.fully_connected", "Gemm")
      .Case("tosa.avg_pool2d", "AveragePool")
      .Case("tosa.max_pool2d", "MaxPool")
      .Case("tosa.reduce_sum", "ReduceSum")
      .Case("tosa.reduce_max", "ReduceMax")
      .Case("tosa.reduce_min", "ReduceMin")
      .Case("tosa.reduce_prod", "ReduceProd")
      .Case("tosa.clamp", "Clip")
      .Case("tosa.sigmoid", "Sigmoid")
      .Case("tosa.tanh", "Tanh")
      .Case("tosa.erf", "Erf")
      .Case("tosa.add", "Add")
      .Case("tosa.sub", "Sub")
      .Case("tosa.mul", "Mul")
      .Case("tosa.pow", "Pow")
      .Case("tosa.maximum", "Max")
      .Case("tosa.minimum", "Min")
      .Case("tosa.abs", "Abs")
      .Case("tosa.ceil", "Ceil")
      .Case("tosa.floor", "Floor")
      .Case("tosa.cos", "Cos")
      .Case("tosa.sin", "Sin")
      .Case("tosa.exp", "Exp")
      .Case("tosa.log", "Log")
      .Case("tosa.negate", "Neg")
      .Cases("tosa.reciprocal", "tosa.rsqrt", "Reciprocal")
      .Case("tosa.select", "Where")
      .Case("tosa.equal", "Equal")
      .Case("tosa.greater", "Greater")
      .Case("tosa.greater_equal", "GreaterOrEqual")
      .Case("tosa.concat", "Concat")
      .Case("tosa.pad", "Pad")
      .Case("tosa.reshape", "Reshape")
      .Case("tosa.slice", "Slice")
      .Case("tosa.tile", "Tile")
      .Case("tosa.transpose", "Transpose")
      .Case("tosa.gather", "Gather")
      .Case("tosa.scatter", "ScatterND")
      .Default("Unknown");
}

template <typename OpTy>
struct TosaModel : ArithCastModel<TosaModel<OpTy>, OpTy> {
  StringRef getOnnxOpType(Operation *op) const { return onnxName(op); }
  bool isPrecisionOperand(Operation *op, unsigned index) const {
    if (!isFloatTensor(op->getOperand(index).getType()))
      return false;
    return !isAccumulating(op) || index < 2;
  }
  bool isPrecisionResult(Operation *op, unsigned) const {
    return !isAccumulating(op);
  }
  bool supportsF32Accumulation(Operation *op) const {
    return isAccumulating(op) || isa<tosa::AvgPool2dOp>(op);
  }
  Value buildCast(Operation *, OpBuilder &builder, Location loc, Value value,
                  Type elementType) const {
    auto type = cast<ShapedType>(value.getType()).clone(elementType);
    return builder.create<tosa::CastOp>(loc, type, value);
  }
  SmallVector<Value> finishInPrecision(Operation *op, OpBuilder &builder,
                                       Type lowType) const {
    if (auto pool = dyn_cast<tosa::AvgPool2dOp>(op))
      pool.setAccType(builder.getF32Type());
    return {};
  }
  double estimateFlops(Operation *op) const {
    double results = staticElements(op->getResult(0).getType());
    if (!isAccumulating(op))
      return results;
    // 2 * outputs * the products summed into each.
    auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
    auto weight = cast<RankedTensorType>(op->getOperand(1).getType());
    if (isa<tosa::MatMulOp>(op))
      return 2 * results * std::max<int64_t>(lhs.getDimSize(2), 1);
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t channels = std::max<int64_t>(result.getShape().back(), 1);
    double perOutput = staticElements(weight) / channels;
    if (isa<tosa::DepthwiseConv2DOp>(op))
      perOutput =
          staticElements(weight) /
          std::max<int64_t>(weight.getDimSize(2) * weight.getDimSize(3), 1);
    return 2 * results * std::max(perOutput, 1.0);
  }
};

} // namespace

void mlir::amp::precision_models::registerTosaModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tosa::TosaDialect *) {
    using namespace tosa;
    attachModels<TosaModel, MatMulOp, Conv2DOp, Conv3DOp, DepthwiseConv2DOp,
                 TransposeConv2DOp, FullyConnectedOp, AvgPool2dOp, MaxPool2dOp,
                 ReduceSumOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp, ClampOp,
                 SigmoidOp, TanhOp, ErfOp, AddOp, SubOp, MulOp, PowOp,
                 MaximumOp, MinimumOp, AbsOp, CeilOp, FloorOp, CosOp, SinOp,
                 ExpOp, LogOp, NegateOp, ReciprocalOp, RsqrtOp, SelectOp,
                 EqualOp, GreaterOp, GreaterEqualOp, ConcatOp, PadOp, ReshapeOp,
                 SliceOp, TileOp, TransposeOp, GatherOp, ScatterOp>(context);
  });
}
