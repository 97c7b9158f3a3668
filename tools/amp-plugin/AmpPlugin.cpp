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

#include "amp/InitEmbedding.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

/// amp's dialects and models (amp/InitEmbedding.h).
static void registerAmpPluginDialects(DialectRegistry *registry) {
  amp::registerEmbeddedDialects(*registry);
}

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Amp", LLVM_VERSION_STRING,
          registerAmpPluginDialects};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AmpPasses", LLVM_VERSION_STRING,
          amp::registerEmbeddedPasses};
}
