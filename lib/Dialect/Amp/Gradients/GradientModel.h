//===- GradientModel.h - attaching the gradient rules -----------*- C++ -*-===//

#ifndef AMP_LIB_DIALECT_AMP_GRADIENTS_GRADIENTMODEL_H
#define AMP_LIB_DIALECT_AMP_GRADIENTS_GRADIENTMODEL_H

#include "amp/Dialect/Amp/Gradients/GradientBuilder.h"

namespace mlir::amp::gradients {

// Registration of each family (one per file).
void registerElementwiseGradients(MLIRContext *context);
void registerLinearAlgebraGradients(MLIRContext *context);
void registerConvGradients(MLIRContext *context);
void registerNormalizationGradients(MLIRContext *context);
void registerReductionGradients(MLIRContext *context);
void registerShapeGradients(MLIRContext *context);
void registerResizeGradients(MLIRContext *context);

/// The signature of the rules: `gradient(OpT, GradientBuilder &, In
/// resultGrads, Grads operandGrads)`.
using In = ArrayRef<Value>;
using Grads = MutableArrayRef<Value>;

/// Found by argument-dependent lookup: the families' overloads of
/// `isDifferentiable(OpT, index, Overload)` are declared after this header.
struct Overload {};

/// The default: float operands are differentiable.
template <typename OpT>
bool isDifferentiable(OpT op, unsigned index, Overload) {
  auto type = dyn_cast<RankedTensorType>(op->getOperand(index).getType());
  return type && isa<FloatType>(type.getElementType());
}

/// The external model that attaches `gradient(OpT, GradientBuilder &, ...)`
/// (found by overload resolution in the family's file) and, where the
/// family defines one, `isDifferentiable(OpT, index, Overload)`.
template <typename OpT>
struct GradientModel
    : public GradientOpInterface::ExternalModel<GradientModel<OpT>, OpT> {
  bool isDifferentiableOperand(Operation *op, unsigned index) const {
    return isDifferentiable(cast<OpT>(op), index, Overload{});
  }
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ArrayRef<Value> resultGrads,
                               MutableArrayRef<Value> operandGrads) const {
    GradientBuilder gb(builder, op);
    gradient(cast<OpT>(op), gb, resultGrads, operandGrads);
    return failure(gb.hasFailed());
  }
};

template <typename... OpTs>
void attachGradientModels(MLIRContext *context) {
  (OpTs::template attachInterface<GradientModel<OpTs>>(*context), ...);
}

} // namespace mlir::amp::gradients

#endif // AMP_LIB_DIALECT_AMP_GRADIENTS_GRADIENTMODEL_H
