//===- AmpPrecisionInterface.h - PrecisionOpInterface ----------*- C++ -*-===//
//
// The op interface autocast reads (AmpInterfaces.td), without the amp ops:
// what the external models of upstream ops (lib/Transforms/PrecisionModels)
// include.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPPRECISIONINTERFACE_H
#define AMP_DIALECT_AMP_IR_AMPPRECISIONINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include "amp/Dialect/Amp/IR/AmpInterfaces.h.inc"

#endif // AMP_DIALECT_AMP_IR_AMPPRECISIONINTERFACE_H
