//===- AmpGradientInterface.td - reverse-mode gradient rules -*- tablegen -*-===//
//
// GradientOpInterface: how an op propagates gradients backwards. The
// autodiff of lib/Training reads it and never switches on op types itself.
// amp's ops get it as external models (lib/Dialect/Amp/Gradients, one file
// per op family, registered by registerAmpGradientModels); any other
// dialect can attach it to its own ops the same way, as Enzyme-MLIR does
// with its ReverseAutoDiffOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACE_TD
#define AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACE_TD

include "mlir/IR/OpBase.td"

def Amp_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    Reverse-mode rule of an op: given the gradients of the loss with respect
    to the op's results, build (at the builder's insertion point, after the
    forward op) the gradients with respect to its operands. A rule may read
    every operand and result of the forward op. Gradients have exactly the
    type of the value they belong to (the same element type and shape).
  }];
  let methods = [
    InterfaceMethod<
      "Returns true if gradients flow into operand `index` (float data "
      "operands; not indices, shapes, running statistics, ...).",
      "bool", "isDifferentiableOperand", (ins "unsigned":$index), [{}],
      [{
        auto type = ::llvm::dyn_cast<::mlir::RankedTensorType>(
            $_op->getOperand(index).getType());
        return type && ::llvm::isa<::mlir::FloatType>(type.getElementType());
      }]>,
    InterfaceMethod<
      "Builds the operand gradients. `resultGrads[i]` is null when result "
      "`i` does not reach the loss. Set `operandGrads[j]` (pre-sized to the "
      "number of operands, all null) for each differentiable operand whose "
      "gradient is not zero. Emits an error at the op and fails for a case "
      "the rule does not handle.",
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::MutableArrayRef<::mlir::Value>":$operandGrads)>,
  ];
}

#endif // AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACE_TD
