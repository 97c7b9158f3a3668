//===- Passes.h - passes backed by the CPU backend --------------*- C++ -*-===//

#ifndef AMP_EXECUTION_PASSES_H
#define AMP_EXECUTION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Execution/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Execution/Passes.h.inc"

/// Registers amp-fold-constants (with its default options) as the
/// front-end pipeline's constant folder (see setConstantFolder).
void registerConstantFolding();

} // namespace mlir::amp

#endif // AMP_EXECUTION_PASSES_H
