//===- AmpDialect.h - amp dialect declaration -------------------*- C++ -*-===//
#ifndef AMP_DIALECT_AMP_IR_AMPDIALECT_H
#define AMP_DIALECT_AMP_IR_AMPDIALECT_H

#include "mlir/IR/Dialect.h"

#include <string>

#include "amp/Dialect/Amp/IR/AmpOpsDialect.h.inc"

namespace mlir::amp {
/// The unit attribute that marks a constant made from a model's weights (an
/// ONNX initializer, a torch parameter or buffer) for the train-step
/// builder: its parameters and buffers. Importers set it when asked to.
constexpr llvm::StringLiteral kInitializerAttrName = "amp.initializer";

/// The `dense_resource` key importers give a weight named `name`:
/// identifier characters only (MLIR prints the key bare), a leading digit
/// prefixed with 'w' ("0.weight" -> "w0.weight").
std::string getWeightResourceKey(llvm::StringRef name);
} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_AMPDIALECT_H
