//===- TrainCLOptions.cpp - the tools' training flags ---------------------===//

#include "common/TrainCLOptions.h"

#include "amp/Support/BoundCLOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;
namespace cl = llvm::cl;

namespace {
struct TrainCLOptions {
  cl::OptionCategory category{"amp training options (--train)"};
  /// TrainStepOptions::bind's options as flags named like them (--lr, ...).
  BoundCLOptions<TrainStepOptions> flags{
      category, TrainStepOptions(),
      [](TrainStepOptions &o, OptionsBinder &b) { o.bind(b); },
      /*spellings=*/{}, /*prefix=*/""};
};
} // namespace

static llvm::ManagedStatic<TrainCLOptions> clOptions;

void mlir::amp::training::registerTrainCLOptions() { *clOptions; }

cl::OptionCategory &mlir::amp::training::getTrainCLCategory() {
  return clOptions->category;
}

llvm::Expected<TrainStepOptions> mlir::amp::training::getTrainCLOptions() {
  TrainStepOptions options = clOptions->flags.get();
  if (llvm::Error error = options.validate())
    return std::move(error);
  return options;
}
