//===- Passes.h - amp transformation passes ---------------------*- C++ -*-===//

#ifndef AMP_TRANSFORMS_PASSES_H
#define AMP_TRANSFORMS_PASSES_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Transforms/Passes.h.inc"

} // namespace mlir::amp

#endif // AMP_TRANSFORMS_PASSES_H
