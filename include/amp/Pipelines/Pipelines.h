//===- Pipelines.h - amp's named pass pipelines -----------------*- C++ -*-===//
//
// Every pipeline amp runs is built here, once, and registered by name so
// that textual pass pipelines (`amp-opt --pass-pipeline=...`, or another
// compiler that links the library) get the same passes as the tools:
//
//   amp-import-cleanup  canonicalize + CSE of an imported graph
//   amp-front-end       import cleanup -> [constant folding] -> amp-autocast
//                       -> amp-cast-cleanup -> [constant folding], with
//                       amp-autocast's options (type=bf16, ...)
//   amp-lower-to-llvm   amp -> linalg -> LLVM dialect for the CPU JIT
//
// amp-opt, amp-run (and the Python package) build their pipelines through
// these functions; the training and CUDA pipelines plug in here next.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_PIPELINES_H
#define AMP_PIPELINES_PIPELINES_H

#include "amp/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <memory>

namespace mlir::amp {

/// Options of the front end: what runs between import and lowering.
struct FrontEndOptions {
  /// Canonicalize + CSE first (what every imported graph needs).
  bool importCleanup = true;
  /// Run amp-autocast (and amp-cast-cleanup) with `autocast`.
  bool runAutocast = true;
  AmpAutocastOptions autocast;
  /// amp-cast-cleanup's release-weights: drop fp32 weights that autocast
  /// replaced (off when the fp32 module is still needed).
  bool releaseWeights = true;
  /// Run the registered constant folder (setConstantFolder) after the
  /// import cleanup and after autocast.
  bool foldConstants = true;
};

/// The constant folder of the front end: a pass factory that a library
/// above this one registers (lib/Execution's amp-fold-constants evaluates
/// with the CPU backend). Without one, only the ops' folders fold.
void setConstantFolder(std::function<std::unique_ptr<Pass>()> factory);

/// Canonicalize + CSE of an imported graph (no region simplification:
/// graphs have no control flow between blocks).
void buildImportCleanupPipeline(OpPassManager &pm);

/// Import cleanup -> amp-autocast -> amp-cast-cleanup, as `options` say.
void buildFrontEndPipeline(OpPassManager &pm, const FrontEndOptions &options);

/// amp -> linalg -> bufferized loops and oneDNN calls -> LLVM dialect, for
/// the CPU JIT.
void buildCpuLoweringPipeline(OpPassManager &pm);

/// Registers the pipelines above under their names (see the file comment).
void registerAmpPipelines();

/// Registers every dialect and interface the CPU pipeline needs.
void registerAmpCpuDialects(DialectRegistry &registry);

} // namespace mlir::amp

#endif // AMP_PIPELINES_PIPELINES_H
