//===- Decompositions.h - amp ops defined by graphs of amp ops --*- C++ -*-===//
//
// Attaches DecomposableOpInterface to the amp ops whose meaning is a graph
// of simpler amp ops (ONNX's function ops). The decompositions live in
// lib/Dialect/Amp/Decompositions, one file per op family.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_DECOMPOSITIONS_DECOMPOSITIONS_H
#define AMP_DIALECT_AMP_DECOMPOSITIONS_DECOMPOSITIONS_H

namespace mlir {
class DialectRegistry;
namespace amp {

/// Registers the decompositions of amp's ops (as external interface models,
/// attached when the amp dialect loads). amp-decompose registers them
/// itself, so a pipeline that runs it needs no other call.
void registerAmpDecompositions(DialectRegistry &registry);
/// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul and QLinearConv
/// (called by registerAmpDecompositions).
void registerAmpQuantizationDecompositions(DialectRegistry &registry);

} // namespace amp
} // namespace mlir

#endif // AMP_DIALECT_AMP_DECOMPOSITIONS_DECOMPOSITIONS_H
