//===- FrontEnd.cpp - import cleanup, autocast and cast cleanup -----------===//

#include "amp/Pipelines/Pipelines.h"

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

namespace {
/// The options of the registered `amp-front-end` pipeline: amp-autocast's
/// (same names and defaults) and amp-cast-cleanup's release-weights.
struct FrontEndPipelineOptions
    : public PassPipelineOptions<FrontEndPipelineOptions> {
  Option<bool> importCleanup{*this, "import-cleanup",
                             llvm::cl::desc("Canonicalize + CSE first"),
                             llvm::cl::init(true)};
  Option<std::string> type{*this, "type",
                           llvm::cl::desc("Low-precision type: f16 or bf16"),
                           llvm::cl::init("f16")};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("amp-autocast's opt level (0-3)"),
                            llvm::cl::init(1)};
  Option<std::string> policy{*this, "policy",
                             llvm::cl::desc("Policy file (YAML or JSON)")};
  ListOption<std::string> allow{*this, "allow",
                                llvm::cl::desc("ONNX op types to allow")};
  ListOption<std::string> deny{*this, "deny",
                               llvm::cl::desc("ONNX op types to deny")};
  ListOption<std::string> infer{*this, "infer",
                                llvm::cl::desc("ONNX op types to infer")};
  ListOption<std::string> clear{*this, "clear",
                                llvm::cl::desc("ONNX op types to clear")};
  ListOption<std::string> unlist{*this, "unlist",
                                 llvm::cl::desc("ONNX op types to unlist")};
  ListOption<std::string> nodeRules{
      *this, "node-rules",
      llvm::cl::desc("Per-node rules regex=allow|deny|infer|clear")};
  Option<bool> keepIOTypes{*this, "keep-io-types",
                           llvm::cl::desc("Keep graph I/O element types"),
                           llvm::cl::init(true)};
  Option<bool> fp32Accumulate{*this, "fp32-accumulate",
                              llvm::cl::desc("Accumulate in fp32"),
                              llvm::cl::init(true)};
  Option<bool> clampConstants{
      *this, "clamp-constants",
      llvm::cl::desc("Clamp constants beyond the low-precision range")};
  Option<std::string> report{*this, "report",
                             llvm::cl::desc("Write the report (JSON)")};
  Option<std::string> dot{*this, "dot",
                          llvm::cl::desc("Write the coloured graph (dot)")};
  Option<bool> annotate{*this, "annotate",
                        llvm::cl::desc("Record each op's reason (amp.reason)")};
  Option<bool> releaseWeights{
      *this, "release-weights",
      llvm::cl::desc("Drop fp32 weights that autocast replaced"),
      llvm::cl::init(true)};
  Option<bool> foldConstants{
      *this, "fold-constants",
      llvm::cl::desc("Run the registered constant folder (amp-fold-constants) "
                     "before and after autocast"),
      llvm::cl::init(true)};
  Option<int64_t> foldMaxBytes{
      *this, "fold-max-bytes",
      llvm::cl::desc("Bytes each constant-folding run may materialise"),
      llvm::cl::init(FrontEndOptions().foldMaxBytes)};

  FrontEndOptions toFrontEndOptions() const {
    FrontEndOptions options;
    options.importCleanup = importCleanup;
    AmpAutocastOptions &a = options.autocast;
    a.type = type;
    a.optLevel = optLevel;
    a.policyFile = policy;
    a.allowOps = allow;
    a.denyOps = deny;
    a.inferOps = infer;
    a.clearOps = clear;
    a.unlistOps = unlist;
    a.nodeRules = nodeRules;
    a.keepIOTypes = keepIOTypes;
    a.fp32Accumulate = fp32Accumulate;
    a.clampConstants = clampConstants;
    a.reportFile = report;
    a.dotFile = dot;
    a.annotate = annotate;
    options.releaseWeights = releaseWeights;
    options.foldConstants = foldConstants;
    options.foldMaxBytes = foldMaxBytes;
    return options;
  }
};
} // namespace

void mlir::amp::registerAmpPipelines() {
  PassPipelineRegistration<>(
      "amp-import-cleanup",
      "Canonicalize + CSE of an imported graph (no region simplification)",
      [](OpPassManager &pm) { buildImportCleanupPipeline(pm); });
  PassPipelineRegistration<FrontEndPipelineOptions>(
      "amp-front-end",
      "Import cleanup, amp-autocast and amp-cast-cleanup (what amp-opt runs "
      "on an ONNX model)",
      [](OpPassManager &pm, const FrontEndPipelineOptions &options) {
        buildFrontEndPipeline(pm, options.toFrontEndOptions());
      });
  PassPipelineRegistration<>(
      "amp-lower-to-llvm",
      "Lower an amp module to the LLVM dialect for the CPU JIT (amp-run)",
      [](OpPassManager &pm) { buildCpuLoweringPipeline(pm); });
}
