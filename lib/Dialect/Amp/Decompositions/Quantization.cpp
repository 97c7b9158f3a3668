//===- Quantization.cpp - quantized ops as graphs -------------------------===//
//
// MatMulInteger: the zero points subtracted in int32 (Cast, Sub), then an
// int32 MatMul (exact: int32 accumulation, as onnxruntime).
//
// QLinearMatMul and QLinearConv: the int32 product (MatMulInteger /
// ConvInteger, plus QLinearConv's int32 bias), then requantized as
// onnxruntime does: acc converted to f32, times the f32 multiplier
// (x_scale * w_scale) / y_scale (per output channel or column where the
// scales are), rounded half to even, plus y_zero_point, saturated
// (QuantizeLinear with scale 1). Scales of type f16/bf16 are widened to f32
// first.
//
// ONNX DynamicQuantizeLinear (uint8, per tensor), as its function body
// defines it, with onnxruntime's guard for an all-zero input:
//
//   lo = min(0, ReduceMin(x)), hi = max(0, ReduceMax(x))
//   y_scale      = hi == lo ? 1 : (hi - lo) / 255
//   y_zero_point = Cast<uint8>(Round(Clip(-lo / y_scale, 0, 255)))
//   y            = QuantizeLinear(x, y_scale, y_zero_point)
//
// (Round is half to even.) The range always contains 0, so 0 quantizes
// exactly to the zero point.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Decompositions/Decompositions.h"
#include "amp/Dialect/Amp/Gradients/GradientBuilder.h"
#include "amp/Dialect/Amp/IR/AmpDecompositionInterface.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"

#include "amp/Dialect/Amp/Semantics/Quantization.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::amp;
using gradients::GradientBuilder;

namespace {
struct DynamicQuantizeLinearDecomposition
    : public DecomposableOpInterface::ExternalModel<
          DynamicQuantizeLinearDecomposition, DynamicQuantizeLinearOp> {
  LogicalResult decompose(Operation *operation, OpBuilder &builder,
                          SmallVectorImpl<Value> &results) const {
    auto op = cast<DynamicQuantizeLinearOp>(operation);
    GradientBuilder gb(builder, op.getLoc());
    Value x = op.getX();
    NamedAttribute noKeep = gb.attr("keepdims", int64_t{0});
    Value zero = gb.scalar(x, 0.0);
    Value lo = gb.create<MinOp>(
        {gb.create<ReduceMinOp>({x, gb.none()}, {noKeep}), zero});
    Value hi = gb.create<MaxOp>(
        {gb.create<ReduceMaxOp>({x, gb.none()}, {noKeep}), zero});
    Value span = gb.sub(hi, lo);
    Value scale =
        gb.create<WhereOp>({gb.create<EqualOp>({hi, lo}), gb.scalar(x, 1.0),
                            gb.div(span, gb.scalar(x, 255.0))});
    Value zeroPoint = gb.create<ClipOp>(
        {gb.div(gb.neg(lo), scale), zero, gb.scalar(x, 255.0)});
    zeroPoint = gb.castTo(gb.create<RoundOp>({zeroPoint}),
                          getElementTypeOrSelf(op.getYZeroPoint()));
    Value y = gb.create<QuantizeLinearOp>({x, scale, zeroPoint});
    if (gb.hasFailed() || !y)
      return failure();
    results.assign({y, scale, zeroPoint});
    return success();
  }
};

using semantics::QuantParamScope;

/// A zero point or scale of `operand` shaped to broadcast against the
/// tensor it applies to (the operand or the op's result): one element as a
/// scalar; per row as [M, 1]; per column as given ([N] or [..., 1, N];
/// without the 1 when `lhsIsVector`: the result has no row dimension); per
/// output channel as [M] followed by `trailingOnes` ones.
Value shapeQuantParam(GradientBuilder &gb, Value param, Value operand,
                      QuantParamScope allowed, int64_t trailingOnes = 0,
                      bool lhsIsVector = false) {
  auto type = gradients::tensorType(param);
  auto scope = semantics::resolveQuantParam(
      type.getShape(), gradients::tensorType(operand).getShape(), allowed, "",
      [](const Twine &) {});
  if (failed(scope))
    return gb.fail("a quantization parameter of an unsupported shape");
  SmallVector<int64_t> shape;
  switch (*scope) {
  case QuantParamScope::PerTensor:
    if (type.getRank() == 0)
      return param;
    break;
  case QuantParamScope::PerRow:
    shape = {-1, 1};
    break;
  case QuantParamScope::PerColumn:
    if (!lhsIsVector || type.getRank() < 2)
      return param;
    // [..., 1, N] -> [..., N] (Reshape's 0 keeps a dimension).
    shape.assign(type.getRank() - 2, 0);
    shape.push_back(-1);
    break;
  case QuantParamScope::PerOutputChannel:
    shape.assign(trailingOnes + 1, 1);
    shape[0] = -1;
    break;
  }
  return gb.create<ReshapeOp>({param, gb.i64s(shape)});
}

/// `operand` - `zeroPoint` in int32 (just widened without a zero point).
Value shiftToInt32(GradientBuilder &gb, Value operand, Value zeroPoint,
                   QuantParamScope allowed) {
  Type i32 = gb.getBuilder().getI32Type();
  Value wide = gb.castTo(operand, i32);
  if (isa<NoneType>(zeroPoint.getType()))
    return wide;
  // A per-output-channel zero point applies to W [M, C/group, k...].
  int64_t trailingOnes = gradients::tensorType(operand).getRank() - 1;
  return gb.sub(wide, gb.castTo(shapeQuantParam(gb, zeroPoint, operand, allowed,
                                                trailingOnes),
                                i32));
}

/// The int32 `acc` requantized with scales a (of `lhs`) and b (of `rhs`)
/// to y (module comment). `trailingOnes`: the spatial rank of a
/// convolution (its per-channel scales are [M, 1, ...]).
Value requantize(GradientBuilder &gb, Value acc, Value aScale, Value lhs,
                 QuantParamScope aScope, Value bScale, Value rhs,
                 QuantParamScope bScope, Value yScale, Value yZeroPoint,
                 int64_t trailingOnes = 0) {
  Type f32 = gb.getBuilder().getF32Type();
  bool lhsIsVector = gradients::tensorType(lhs).getRank() == 1;
  Value multiplier =
      gb.div(gb.mul(gb.castTo(shapeQuantParam(gb, aScale, lhs, aScope), f32),
                    gb.castTo(shapeQuantParam(gb, bScale, rhs, bScope,
                                              trailingOnes, lhsIsVector),
                              f32)),
             gb.castTo(shapeQuantParam(gb, yScale, yZeroPoint,
                                       QuantParamScope::PerTensor),
                       f32));
  Value scaled = gb.mul(gb.castTo(acc, f32), multiplier);
  return gb.create<QuantizeLinearOp>(
      {scaled, gb.scalar(f32, 1.0),
       shapeQuantParam(gb, yZeroPoint, yZeroPoint,
                       QuantParamScope::PerTensor)});
}

struct MatMulIntegerDecomposition
    : public DecomposableOpInterface::ExternalModel<MatMulIntegerDecomposition,
                                                    MatMulIntegerOp> {
  LogicalResult decompose(Operation *operation, OpBuilder &builder,
                          SmallVectorImpl<Value> &results) const {
    auto op = cast<MatMulIntegerOp>(operation);
    GradientBuilder gb(builder, operation);
    Value y =
        gb.create<MatMulOp>({shiftToInt32(gb, op.getA(), op.getAZeroPoint(),
                                          QuantParamScope::PerRow),
                             shiftToInt32(gb, op.getB(), op.getBZeroPoint(),
                                          QuantParamScope::PerColumn)});
    if (gb.hasFailed() || !y)
      return failure();
    results.assign({y});
    return success();
  }
};

struct QLinearMatMulDecomposition
    : public DecomposableOpInterface::ExternalModel<QLinearMatMulDecomposition,
                                                    QLinearMatMulOp> {
  LogicalResult decompose(Operation *operation, OpBuilder &builder,
                          SmallVectorImpl<Value> &results) const {
    auto op = cast<QLinearMatMulOp>(operation);
    GradientBuilder gb(builder, operation);
    Value acc = gb.create<MatMulIntegerOp>(
        {op.getA(), op.getB(), op.getAZeroPoint(), op.getBZeroPoint()});
    Value y =
        requantize(gb, acc, op.getAScale(), op.getA(), QuantParamScope::PerRow,
                   op.getBScale(), op.getB(), QuantParamScope::PerColumn,
                   op.getYScale(), op.getYZeroPoint());
    if (gb.hasFailed() || !y)
      return failure();
    results.assign({y});
    return success();
  }
};

struct QLinearConvDecomposition
    : public DecomposableOpInterface::ExternalModel<QLinearConvDecomposition,
                                                    QLinearConvOp> {
  LogicalResult decompose(Operation *operation, OpBuilder &builder,
                          SmallVectorImpl<Value> &results) const {
    auto op = cast<QLinearConvOp>(operation);
    GradientBuilder gb(builder, operation);
    // The convolution attributes carry over unchanged (same names).
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : op->getAttrs())
      if (llvm::is_contained(ConvIntegerOp::getAttributeNames(),
                             attr.getName()))
        attrs.push_back(attr);
    Value acc = gb.create<ConvIntegerOp>(
        {op.getX(), op.getW(), op.getXZeroPoint(), op.getWZeroPoint()}, attrs);
    // Per-channel values of the result [N, M, spatial...]: [M, 1, ...].
    int64_t spatial = gradients::tensorType(op.getW()).getRank() - 2;
    if (acc && !isa<NoneType>(op.getB().getType()))
      acc = gb.add(acc,
                   shapeQuantParam(gb, op.getB(), op.getW(),
                                   QuantParamScope::PerOutputChannel, spatial));
    Value y = requantize(gb, acc, op.getXScale(), op.getX(),
                         QuantParamScope::PerTensor, op.getWScale(), op.getW(),
                         QuantParamScope::PerOutputChannel, op.getYScale(),
                         op.getYZeroPoint(), spatial);
    if (gb.hasFailed() || !y)
      return failure();
    results.assign({y});
    return success();
  }
};
} // namespace

void mlir::amp::registerAmpQuantizationDecompositions(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, AmpDialect *) {
    DynamicQuantizeLinearOp::attachInterface<
        DynamicQuantizeLinearDecomposition>(*context);
    MatMulIntegerOp::attachInterface<MatMulIntegerDecomposition>(*context);
    QLinearMatMulOp::attachInterface<QLinearMatMulDecomposition>(*context);
    QLinearConvOp::attachInterface<QLinearConvDecomposition>(*context);
  });
}
