//===- Tensor.cpp - precision models of tensor data movement --------------===//
//
// Reshapes, slices, concatenation and padding move data without computing:
// every float tensor operand and the result follow the op's precision
// (ONNX Reshape, Slice, Concat, Pad, Identity in the policy), so a chain of
// low-precision ops stays low through them. tensor.pad's yielded padding
// value is truncated to the new element type.
//
//===----------------------------------------------------------------------===//

#include "ModelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::precision_models;

namespace {

template <typename OpTy>
struct DataMovementModel : ArithCastModel<DataMovementModel<OpTy>, OpTy> {
  StringRef getOnnxOpType(Operation *op) const {
    return llvm::StringSwitch<StringRef>(op->getName().getStringRef())
        .Cases("tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape",
               "Reshape")
        .Case("tensor.extract_slice", "Slice")
        .Cases("tensor.insert_slice", "tensor.concat", "Concat")
        .Case("tensor.pad", "Pad")
        .Default("Identity");
  }
  bool hasPayloadRegions(Operation *) const { return true; }
  SmallVector<Value> finishInPrecision(Operation *op, OpBuilder &builder,
                                       Type lowType) const {
    if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      auto yield =
          cast<tensor::YieldOp>(pad.getRegion().front().getTerminator());
      Type elementType = pad.getResultType().getElementType();
      if (yield.getValue().getType() != elementType) {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(yield);
        yield.getValueMutable().assign(buildArithCast(
            builder, pad.getLoc(), yield.getValue(), elementType));
      }
    }
    return {};
  }
  double estimateFlops(Operation *) const { return 0; }
};

} // namespace

void mlir::amp::precision_models::registerTensorModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    attachModels<DataMovementModel, tensor::ExpandShapeOp,
                 tensor::CollapseShapeOp, tensor::ExtractSliceOp,
                 tensor::InsertSliceOp, tensor::ConcatOp, tensor::PadOp,
                 tensor::CastOp>(context);
  });
}
