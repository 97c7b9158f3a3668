//===- AutocastCLOptions.cpp - the tools' --amp-* autocast flags ----------===//

#include "common/AutocastCLOptions.h"

#include "amp/Support/BoundCLOptions.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::amp;
namespace cl = llvm::cl;

namespace {
struct AutocastCLOptions {
  explicit AutocastCLOptions(AmpAutocastOptions defaults)
      : flags(category, std::move(defaults),
              [](AmpAutocastOptions &o, OptionsBinder &b) { bindOptions(o, b); },
              {// A regex may contain commas; one rule per flag.
               {"node-rules", {"amp-node-rule", /*commaSeparated=*/false}},
               // The tools decide these themselves.
               {"summary", {""}},
               {"annotate", {""}}}) {}

  cl::OptionCategory category{"amp autocast options"};
  /// amp-autocast's options (Passes.td), as flags: --amp-type, ...
  BoundCLOptions<AmpAutocastOptions> flags;
  cl::opt<bool> noConstantFolding{
      "amp-no-constant-folding",
      cl::desc("Do not evaluate constant-only ops with the CPU backend "
               "(amp-fold-constants) before and after autocast"),
      cl::cat(category)};
};
} // namespace

static std::unique_ptr<AutocastCLOptions> clOptions;

void mlir::amp::registerAutocastCLOptions(llvm::StringRef defaultType) {
  if (clOptions)
    return;
  AmpAutocastOptions defaults;
  defaults.type = defaultType.str();
  clOptions = std::make_unique<AutocastCLOptions>(std::move(defaults));
}

cl::OptionCategory &mlir::amp::getAutocastCLCategory() {
  return clOptions->category;
}

AmpAutocastOptions mlir::amp::getAutocastCLOptions() {
  return clOptions ? clOptions->flags.get() : AmpAutocastOptions();
}

bool mlir::amp::getConstantFoldingCLOption() {
  return !clOptions || !clOptions->noConstantFolding;
}
