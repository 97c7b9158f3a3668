//===- TrainStepPipeline.cpp - amp-train-step, a named pipeline -----------===//
//
// `--pass-pipeline='builtin.module(amp-train-step{loss=mse optimizer=adamw
// type=bf16})'` builds the same training program as `amp-opt --train
// --loss=mse --optimizer=adamw --amp-type=bf16`: the options are
// TrainStepOptions::bind's and FrontEndOptions::bind's, and one pass runs
// buildTrainStep with its nested pipelines through runPipeline.
//
//===----------------------------------------------------------------------===//

#include "amp/Training/TrainStep.h"

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Pipelines/BoundPipelineOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include <deque>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;

namespace {
/// The pipeline's options: the train step's and its front end's.
struct TrainStepPipelineOptions {
  TrainStepOptions step;
  void bind(OptionsBinder &binder) {
    step.bind(binder);
    step.frontEnd.bind(binder);
  }
};

/// Copies the lists a struct's ArrayRefs point to into storage of its own
/// (the textual options they point into die with the pipeline's parse).
class ListOwner : public OptionsBinder {
public:
  void bind(const OptionSpec &, bool &) override {}
  void bind(const OptionSpec &, unsigned &) override {}
  void bind(const OptionSpec &, int64_t &) override {}
  void bind(const OptionSpec &, double &) override {}
  void bind(const OptionSpec &, std::string &) override {}
  void bind(const OptionSpec &, std::vector<std::string> &) override {}
  void bind(const OptionSpec &, std::optional<double> &) override {}
  void bind(const OptionSpec &, int &, ArrayRef<OptionChoice>) override {}
  void bind(const OptionSpec &, ArrayRef<std::string> &value) override {
    storage.emplace_back(value.begin(), value.end());
    value = storage.back();
  }

private:
  std::deque<std::vector<std::string>> storage;
};

class TrainStepPass
    : public PassWrapper<TrainStepPass, OperationPass<ModuleOp>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TrainStepPass)

  explicit TrainStepPass(const TrainStepPipelineOptions &given)
      : owner(std::make_shared<ListOwner>()), options(given) {
    options.bind(*owner);
  }

  StringRef getArgument() const override { return "amp-train-step-build"; }
  StringRef getDescription() const override {
    return "Build the training program (amp-train-step's pass)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<AmpDialect, func::FuncDialect>();
  }

  void runOnOperation() override {
    if (llvm::Error error = options.step.validate()) {
      getOperation().emitError(llvm::toString(std::move(error)));
      return signalPassFailure();
    }
    auto run = [this](OpPassManager &pm, ModuleOp module) {
      return runPipeline(pm, module);
    };
    if (failed(buildTrainStep(getOperation(), options.step, run)))
      signalPassFailure();
  }

private:
  /// Shared by the clones the pass manager makes (they point into it).
  std::shared_ptr<ListOwner> owner;
  TrainStepPipelineOptions options;
};
} // namespace

void mlir::amp::training::registerAmpTrainStepPipeline() {
  PassPipelineRegistration<BoundPipelineOptions<TrainStepPipelineOptions>>(
      "amp-train-step",
      "Build the mixed-precision training program (@train_step, "
      "@initial_state, @main in eval mode) from an imported model, as "
      "amp-opt --train does, with its options",
      [](OpPassManager &pm,
         const BoundPipelineOptions<TrainStepPipelineOptions> &options) {
        pm.addPass(std::make_unique<TrainStepPass>(options.get()));
      });
}
