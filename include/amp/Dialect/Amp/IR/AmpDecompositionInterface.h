//===- AmpDecompositionInterface.h - ops defined by graphs ------*- C++ -*-===//
//
// DecomposableOpInterface (see AmpDecompositionInterface.td).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPDECOMPOSITIONINTERFACE_H
#define AMP_DIALECT_AMP_IR_AMPDECOMPOSITIONINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include "amp/Dialect/Amp/IR/AmpDecompositionInterface.h.inc"

#endif // AMP_DIALECT_AMP_IR_AMPDECOMPOSITIONINTERFACE_H
