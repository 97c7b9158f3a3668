//===- AmpGradientInterface.h - reverse-mode gradient rules -----*- C++ -*-===//
//
// GradientOpInterface (see AmpGradientInterface.td).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACE_H
#define AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include "amp/Dialect/Amp/IR/AmpGradientInterface.h.inc"

#endif // AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACE_H
