//===- Passes.h - passes backed by the CPU backend --------------*- C++ -*-===//

#ifndef AMP_EXECUTION_PASSES_H
#define AMP_EXECUTION_PASSES_H

#include "amp/Target/ONNX/ModelLimits.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Execution/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Execution/Passes.h.inc"

/// Registers amp-fold-constants as the front-end pipeline's constant folder
/// (see setConstantFolder), with the front end's budget as its max-bytes.
void registerConstantFolding();

} // namespace mlir::amp

#endif // AMP_EXECUTION_PASSES_H
