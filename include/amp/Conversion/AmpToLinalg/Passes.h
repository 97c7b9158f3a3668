//===- Passes.h - the amp -> linalg lowering pass ---------------*- C++ -*-===//

#ifndef AMP_CONVERSION_AMPTOLINALG_PASSES_H
#define AMP_CONVERSION_AMPTOLINALG_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Conversion/AmpToLinalg/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Conversion/AmpToLinalg/Passes.h.inc"

} // namespace mlir::amp

#endif // AMP_CONVERSION_AMPTOLINALG_PASSES_H
