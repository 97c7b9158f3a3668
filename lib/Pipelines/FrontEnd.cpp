//===- FrontEnd.cpp - import cleanup, autocast and cast cleanup -----------===//

#include "amp/Pipelines/Pipelines.h"

#include "amp/Pipelines/BoundPipelineOptions.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::amp;

void mlir::amp::buildImportCleanupPipeline(OpPassManager &pm) {
  // Graphs have no control flow between blocks: skip region simplification
  // (dead-block and liveness analysis), a third of the canonicalizer's time
  // on large graphs.
  GreedyRewriteConfig cleanup;
  cleanup.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  pm.addPass(createCanonicalizerPass(cleanup));
  pm.addPass(createCSEPass());
  // Constants in the order of first use, however they were stored.
  pm.addPass(createAmpSortConstants());
}

using FolderFactory = std::function<std::unique_ptr<Pass>(int64_t)>;

static FolderFactory &constantFolder() {
  static FolderFactory factory;
  return factory;
}

void mlir::amp::setConstantFolder(FolderFactory factory) {
  constantFolder() = std::move(factory);
}

void mlir::amp::buildFrontEndPipeline(OpPassManager &pm,
                                      const FrontEndOptions &options) {
  bool fold = options.foldConstants && constantFolder();
  if (options.importCleanup)
    buildImportCleanupPipeline(pm);
  // Constant math (an attention scale 1/sqrt(d), ...) becomes constants
  // before autocast decides, so that autocast sees values it can convert.
  // Folding makes constants where the folded ops were; with the cleanup
  // on, the cleanup runs again: result types whose shape operands just
  // became constants are refined (a no-op Expand goes), and CSE merges
  // constants equal to one already there. Otherwise the writer would keep
  // what a re-import of its own output then simplifies.
  if (fold) {
    pm.addPass(constantFolder()(options.foldMaxBytes));
    if (options.importCleanup)
      buildImportCleanupPipeline(pm);
  }
  if (!options.runAutocast)
    return;
  pm.addPass(createAmpAutocast(options.autocast));
  // Exact cast chains fold; dead fp32 weights go (unless still needed).
  AmpCastCleanupOptions castCleanup;
  castCleanup.releaseWeights = options.releaseWeights;
  pm.addPass(createAmpCastCleanup(castCleanup));
  if (fold) {
    pm.addPass(constantFolder()(options.foldMaxBytes));
    if (options.importCleanup)
      pm.addPass(createCSEPass());
  }
}

void FrontEndOptions::bind(OptionsBinder &binder) {
  binder.bind({"import-cleanup", "Canonicalize + CSE first"}, importCleanup);
  bindOptions(autocast, binder);
  binder.bind({"release-weights", "Drop fp32 weights that autocast replaced"},
              releaseWeights);
  binder.bind({"fold-constants",
               "Run the registered constant folder (amp-fold-constants) "
               "before and after autocast"},
              foldConstants);
  binder.bind({"fold-max-bytes", "Bytes each constant-folding run may "
                                 "materialise"},
              foldMaxBytes);
}

void mlir::amp::registerAmpPipelines() {
  PassPipelineRegistration<>(
      "amp-import-cleanup",
      "Canonicalize + CSE of an imported graph (no region simplification), "
      "then its constants in the order of first use (amp-sort-constants)",
      [](OpPassManager &pm) { buildImportCleanupPipeline(pm); });
  PassPipelineRegistration<BoundPipelineOptions<FrontEndOptions>>(
      "amp-front-end",
      "Import cleanup, amp-autocast and amp-cast-cleanup (what amp-opt runs "
      "on an ONNX model)",
      [](OpPassManager &pm,
         const BoundPipelineOptions<FrontEndOptions> &options) {
        buildFrontEndPipeline(pm, options.get());
      });
  PassPipelineRegistration<>(
      "amp-lower-to-llvm",
      "Lower an amp module to the LLVM dialect for the CPU JIT (amp-run)",
      [](OpPassManager &pm) { buildCpuLoweringPipeline(pm); });
}
