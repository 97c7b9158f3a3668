//===- AutocastCLOptions.cpp - the tools' --amp-* autocast flags ----------===//

#include "amp/Pipelines/AutocastCLOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;
using namespace mlir::amp;
namespace cl = llvm::cl;

static std::string defaultAutocastType = "f16";

namespace {
struct AutocastCLOptions {
  cl::OptionCategory category{"amp autocast options"};
  cl::opt<std::string> type{
      "amp-type",
      cl::desc("Low-precision type: f16 or bf16 (amp-run: none = run the "
               "model as it is)"),
      cl::init(defaultAutocastType), cl::cat(category)};
  cl::opt<unsigned> optLevel{
      "amp-opt-level",
      cl::desc("0: no change, 1: policy lists (default), 2: all low "
               "precision except what needs fp32 accumulation and cannot "
               "get it, 3: pure low precision"),
      cl::init(1), cl::cat(category)};
  cl::opt<std::string> policy{"amp-policy",
                              cl::desc("Policy file (YAML or JSON)"),
                              cl::value_desc("file"), cl::cat(category)};
  cl::list<std::string> allow{"amp-allow",
                              cl::desc("Add ONNX op types to the allow class"),
                              cl::CommaSeparated, cl::cat(category)};
  cl::list<std::string> deny{"amp-deny",
                             cl::desc("Add ONNX op types to the deny class"),
                             cl::CommaSeparated, cl::cat(category)};
  cl::list<std::string> infer{"amp-infer",
                              cl::desc("Add ONNX op types to the infer class"),
                              cl::CommaSeparated, cl::cat(category)};
  cl::list<std::string> clear{"amp-clear",
                              cl::desc("Add ONNX op types to the clear class"),
                              cl::CommaSeparated, cl::cat(category)};
  cl::list<std::string> unlist{
      "amp-unlist", cl::desc("Remove ONNX op types from every class"),
      cl::CommaSeparated, cl::cat(category)};
  cl::list<std::string> nodeRules{
      "amp-node-rule",
      cl::desc("Per-node rule regex=allow|deny|infer|clear (repeatable)"),
      cl::cat(category)};
  cl::opt<bool> keepIOTypes{
      "amp-keep-io-types",
      cl::desc("Keep the graph inputs' and outputs' element types"),
      cl::init(true), cl::cat(category)};
  cl::opt<bool> fp32Accumulate{
      "amp-fp32-accumulate",
      cl::desc("Accumulate low-precision GEMMs, reductions, norms and "
               "softmax in fp32"),
      cl::init(true), cl::cat(category)};
  cl::opt<bool> clampConstants{
      "amp-clamp-constants",
      cl::desc("Clamp constants beyond the low-precision range (warns) "
               "instead of keeping their consumers in fp32"),
      cl::cat(category)};
  cl::opt<std::string> report{"amp-report",
                              cl::desc("Write the autocast report (JSON)"),
                              cl::value_desc("file"), cl::cat(category)};
  cl::opt<std::string> dot{
      "amp-dot", cl::desc("Write the graph coloured by precision (dot)"),
      cl::value_desc("file"), cl::cat(category)};
  cl::opt<bool> noConstantFolding{
      "amp-no-constant-folding",
      cl::desc("Do not evaluate constant-only ops with the CPU backend "
               "(amp-fold-constants) before and after autocast"),
      cl::cat(category)};
};
} // namespace

static llvm::ManagedStatic<AutocastCLOptions> clOptions;

void mlir::amp::registerAutocastCLOptions(llvm::StringRef defaultType) {
  defaultAutocastType = defaultType.str();
  // Constructing the options registers them.
  (void)*clOptions;
}

cl::OptionCategory &mlir::amp::getAutocastCLCategory() {
  return clOptions->category;
}

AmpAutocastOptions mlir::amp::getAutocastCLOptions() {
  AmpAutocastOptions options;
  if (!clOptions.isConstructed())
    return options;
  options.type = clOptions->type;
  options.optLevel = clOptions->optLevel;
  options.policyFile = clOptions->policy;
  // Unary & on a cl::list gives its std::vector storage, which the
  // (static) options keep alive.
  options.allowOps = *&clOptions->allow;
  options.denyOps = *&clOptions->deny;
  options.inferOps = *&clOptions->infer;
  options.clearOps = *&clOptions->clear;
  options.unlistOps = *&clOptions->unlist;
  options.nodeRules = *&clOptions->nodeRules;
  options.keepIOTypes = clOptions->keepIOTypes;
  options.fp32Accumulate = clOptions->fp32Accumulate;
  options.clampConstants = clOptions->clampConstants;
  options.reportFile = clOptions->report;
  options.dotFile = clOptions->dot;
  return options;
}

bool mlir::amp::getConstantFoldingCLOption() {
  return !clOptions.isConstructed() || !clOptions->noConstantFolding;
}
