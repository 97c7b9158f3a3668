//===- InitAllDialects.h - register every dialect amp tools use -*- C++ -*-===//
#ifndef AMP_INITALLDIALECTS_H
#define AMP_INITALLDIALECTS_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::amp {
/// Registers the amp dialect and the upstream dialects amp programs use.
inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<AmpDialect, func::FuncDialect>();
}
} // namespace mlir::amp

#endif // AMP_INITALLDIALECTS_H
