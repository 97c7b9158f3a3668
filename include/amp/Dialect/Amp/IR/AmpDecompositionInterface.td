//===- AmpDecompositionInterface.td - ops defined by graphs -*- tablegen -*-===//
//
// DecomposableOpInterface: an op whose meaning is a graph of simpler amp ops
// (ONNX calls such operators functions: Attention, ...). Autocast and the
// ONNX writer keep the op whole; amp-decompose replaces it by its graph
// before the backends lower it and before the autodiff differentiates it,
// so one definition gives the CPU and CUDA lowerings and the gradients.
// amp's ops get it as external models (lib/Dialect/Amp/Decompositions,
// registered by registerAmpDecompositions).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPDECOMPOSITIONINTERFACE_TD
#define AMP_DIALECT_AMP_IR_AMPDECOMPOSITIONINTERFACE_TD

include "mlir/IR/OpBase.td"

def Amp_DecomposableOpInterface : OpInterface<"DecomposableOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    Builds, at the builder's insertion point (before the op), the graph of
    simpler ops that computes the op's results, and returns one value per
    result (each of exactly the result's type). The op is left in place;
    the caller replaces and erases it. Emits an error at the op and fails
    for a case the decomposition does not handle (the ops it built are
    then dead and go with the next cleanup).
  }];
  let methods = [
    InterfaceMethod<
      "Builds the op's graph; fills `results` (one per result).",
      "::llvm::LogicalResult", "decompose",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$results)>,
  ];
}

#endif // AMP_DIALECT_AMP_IR_AMPDECOMPOSITIONINTERFACE_TD
