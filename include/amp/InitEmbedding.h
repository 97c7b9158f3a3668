//===- InitEmbedding.h - what amp brings into another tool -----*- C++ -*-===//
//
// The dialects, models, passes and pipelines that amp registers in a tool
// it does not own: the mlir-opt plugin (tools/amp-plugin) and the C API
// (lib/CAPI). Header-only, so that each links only what it calls.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INITEMBEDDING_H
#define AMP_INITEMBEDDING_H

#include "amp/Conversion/AmpToLinalg/Passes.h"
#include "amp/Conversion/LinalgToCpu/Passes.h"
#include "amp/Dialect/Amp/Decompositions/Decompositions.h"
#include "amp/Dialect/Amp/Gradients/GradientModels.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Training/Passes.h"
#include "amp/Training/TrainStep.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/PrecisionModels.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::amp {

/// The dialects amp's programs and pipelines use, TOSA, the amp ops'
/// gradient and decomposition models, and the precision models that let
/// amp-autocast decide linalg, TOSA, tensor, arith and math programs.
inline void registerEmbeddedDialects(DialectRegistry &registry) {
  registerAmpCpuDialects(registry);
  registry.insert<tosa::TosaDialect>();
  registerAmpGradientModels(registry);
  registerAmpDecompositions(registry);
  registerUpstreamPrecisionModels(registry);
}

/// Every pass and named pipeline that needs no JIT or GPU tool chain:
/// amp-autocast and the other transforms, the CPU lowerings, amp-front-end,
/// amp-lower-to-llvm and the train-step passes. amp-fold-constants (it
/// JIT-compiles its folds) and the CUDA passes (the NVPTX back end) are
/// amp-opt's. Not idempotent: call once.
inline void registerEmbeddedPasses() {
  registerAmpPasses();
  registerAmpToLinalgPasses();
  registerAmpLinalgToCpuPasses();
  registerAmpPipelines();
  training::registerAmpTrainingPasses();
  training::registerAmpTrainStepPipeline();
}

} // namespace mlir::amp

#endif // AMP_INITEMBEDDING_H
