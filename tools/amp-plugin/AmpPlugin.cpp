//===- AmpPlugin.cpp - amp as a plugin of an upstream mlir-opt ------------===//
//
// libAmpPlugin.so carries amp's dialect, passes and named pipelines into an
// mlir-opt built elsewhere (Debian's mlir-opt-19, or any tool linked with
// MLIR 19's MlirOptMain):
//
//   mlir-opt-19 --load-dialect-plugin=libAmpPlugin.so \
//               --load-pass-plugin=libAmpPlugin.so \
//               --pass-pipeline='builtin.module(amp-front-end{...})' x.mlir
//
// The library holds amp's code only. The MLIR symbols it uses are left
// undefined and bound to the host tool's own copy at load time, so the
// process has one MLIRContext implementation, one pass registry and one set
// of command-line options (docs/Embedding.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/AmpToLinalg/Passes.h"
#include "amp/Conversion/LinalgToCpu/Passes.h"
#include "amp/Dialect/Amp/Decompositions/Decompositions.h"
#include "amp/Dialect/Amp/Gradients/GradientModels.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Training/Passes.h"
#include "amp/Training/TrainStep.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/PrecisionModels.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

/// The dialects amp's programs and pipelines use, with the amp ops'
/// gradient and decomposition models, and the precision models that let
/// amp-autocast work on linalg, TOSA, tensor, arith and math programs.
static void registerAmpPluginDialects(DialectRegistry *registry) {
  amp::registerAmpCpuDialects(*registry);
  amp::registerAmpGradientModels(*registry);
  amp::registerAmpDecompositions(*registry);
  amp::registerUpstreamPrecisionModels(*registry);
}

/// Every pass and named pipeline that needs no JIT or GPU tool chain:
/// amp-autocast and the other transforms, the CPU lowerings, amp-front-end,
/// amp-lower-to-llvm and the train-step passes. amp-fold-constants (it JIT-
/// compiles its folds) and the CUDA passes (the NVPTX back end) stay in
/// amp-opt.
static void registerAmpPluginPasses() {
  amp::registerAmpPasses();
  amp::registerAmpToLinalgPasses();
  amp::registerAmpLinalgToCpuPasses();
  amp::registerAmpPipelines();
  amp::training::registerAmpTrainingPasses();
  amp::training::registerAmpTrainStepPipeline();
}

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Amp", LLVM_VERSION_STRING,
          registerAmpPluginDialects};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AmpPasses", LLVM_VERSION_STRING,
          registerAmpPluginPasses};
}
