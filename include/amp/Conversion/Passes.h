//===- Passes.h - amp lowering passes ---------------------------*- C++ -*-===//
//
// Every conversion pass (amp -> linalg, linalg -> CPU and CUDA backends). The
// pipelines that chain them are in amp/Pipelines/Pipelines.h.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_PASSES_H
#define AMP_CONVERSION_PASSES_H

#include "amp/Conversion/AmpToLinalg/Passes.h"
#include "amp/Conversion/LinalgToCUDA/Passes.h"
#include "amp/Conversion/LinalgToCpu/Passes.h"

namespace mlir::amp {

/// Registers every conversion pass.
inline void registerAmpConversionPasses() {
  registerAmpToLinalgPasses();
  registerAmpLinalgToCpuPasses();
  registerAmpLinalgToCUDAPasses();
}

} // namespace mlir::amp

#endif // AMP_CONVERSION_PASSES_H
