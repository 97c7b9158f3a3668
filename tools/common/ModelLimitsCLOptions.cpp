//===- ModelLimitsCLOptions.cpp - the tools' --amp-max-* flags ------------===//

#include "common/ModelLimitsCLOptions.h"

#include "amp/Support/BoundCLOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir::amp;
namespace cl = llvm::cl;

namespace {
struct ModelLimitsCLOptions {
  cl::OptionCategory category{"amp resource caps (models from files)"};
  /// ModelLimits::bind's caps as --amp-<name> flags.
  BoundCLOptions<ModelLimits> flags{
      category, ModelLimits(),
      [](ModelLimits &limits, OptionsBinder &b) { limits.bind(b); }};
};
} // namespace

static llvm::ManagedStatic<ModelLimitsCLOptions> clOptions;

void mlir::amp::registerModelLimitsCLOptions() {
  // Constructing the options registers them.
  (void)*clOptions;
}

ModelLimits mlir::amp::getModelLimitsCLOptions() {
  if (!clOptions.isConstructed())
    return ModelLimits();
  ModelLimits limits = clOptions->flags.get();
  std::string error = limits.validate();
  if (!error.empty()) {
    // A command-line error, reported as the parser reports its own.
    llvm::errs() << "error: --amp-" << error << "\n";
    std::exit(1);
  }
  return limits;
}
