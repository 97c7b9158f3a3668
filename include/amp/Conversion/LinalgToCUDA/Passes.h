//===- Passes.h - linalg -> CUDA backend passes -----------------*- C++ -*-===//

#ifndef AMP_CONVERSION_LINALGTOCUDA_PASSES_H
#define AMP_CONVERSION_LINALGTOCUDA_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Conversion/LinalgToCUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Conversion/LinalgToCUDA/Passes.h.inc"

} // namespace mlir::amp

#endif // AMP_CONVERSION_LINALGTOCUDA_PASSES_H
