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
  /// The loss-scale mode and static scale in one spelling, parsed here.
  cl::opt<std::string> lossScale{
      "loss-scale",
      cl::desc("dynamic (default for f16), static:S, or none (default for "
               "bf16 and fp32)"),
      cl::cat(category)};
};
} // namespace

static llvm::ManagedStatic<TrainCLOptions> clOptions;

void mlir::amp::training::registerTrainCLOptions() { *clOptions; }

cl::OptionCategory &mlir::amp::training::getTrainCLCategory() {
  return clOptions->category;
}

static llvm::Error badValue(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<TrainStepOptions> mlir::amp::training::getTrainCLOptions() {
  TrainStepOptions options = clOptions->flags.get();
  StringRef mode = clOptions->lossScale;
  if (mode.empty()) {
    options.lossScale = LossScaleMode::Default;
  } else if (mode == "dynamic") {
    options.lossScale = LossScaleMode::Dynamic;
  } else if (mode == "none") {
    options.lossScale = LossScaleMode::None;
  } else if (mode.consume_front("static:")) {
    options.lossScale = LossScaleMode::Static;
    if (mode.getAsDouble(options.staticScale) || !(options.staticScale > 0))
      return badValue("--loss-scale=static:S needs a number S > 0, got '" +
                      clOptions->lossScale + "'");
  } else {
    return badValue("--loss-scale must be dynamic, none or static:S, got '" +
                    clOptions->lossScale + "'");
  }
  if (llvm::Error error = options.validate())
    return std::move(error);
  return options;
}
