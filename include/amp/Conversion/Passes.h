//===- Passes.h - amp lowering passes ---------------------------*- C++ -*-===//

#ifndef AMP_CONVERSION_PASSES_H
#define AMP_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Conversion/Passes.h.inc"

/// Builds the whole CPU lowering: amp -> linalg on tensors -> one-shot
/// bufferization -> runtime calls and loops -> LLVM dialect. The result
/// can be translated to LLVM IR and run by mlir::ExecutionEngine.
void buildAmpCpuPipeline(OpPassManager &pm);

/// Registers buildAmpCpuPipeline as `amp-lower-to-llvm`.
void registerAmpCpuPipeline();

/// Adds the dialects and interface models (bufferization, LLVM
/// translation) that the CPU pipeline needs.
void registerAmpCpuDialects(DialectRegistry &registry);

} // namespace mlir::amp

#endif // AMP_CONVERSION_PASSES_H
