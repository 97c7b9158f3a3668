//===- AmpOps.h - amp dialect operations ------------------------*- C++ -*-===//
#ifndef AMP_DIALECT_AMP_IR_AMPOPS_H
#define AMP_DIALECT_AMP_IR_AMPOPS_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "amp/Dialect/Amp/IR/AmpOps.h.inc"

#endif // AMP_DIALECT_AMP_IR_AMPOPS_H
