//===- Quantization.cpp - DynamicQuantizeLinear as a graph ----------------===//
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
} // namespace

void mlir::amp::registerAmpQuantizationDecompositions(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, AmpDialect *) {
    DynamicQuantizeLinearOp::attachInterface<
        DynamicQuantizeLinearDecomposition>(*context);
  });
}
