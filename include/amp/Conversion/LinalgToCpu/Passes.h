//===- Passes.h - linalg -> CPU backend passes ------------------*- C++ -*-===//

#ifndef AMP_CONVERSION_LINALGTOCPU_PASSES_H
#define AMP_CONVERSION_LINALGTOCPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Conversion/LinalgToCpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Conversion/LinalgToCpu/Passes.h.inc"

} // namespace mlir::amp

#endif // AMP_CONVERSION_LINALGTOCPU_PASSES_H
