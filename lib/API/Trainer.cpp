//===- Trainer.cpp - build a train step and take steps --------------------===//

#include "APIInternal.h"

#include "amp/Execution/TrainSession.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "amp/Target/ONNX/ONNXWeights.h"
#include "amp/Training/TrainStep.h"
#include "amp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace amp::api;
using namespace mlir;
using mlir::amp::execution::TrainSession;

struct Trainer::State {
  /// The module whose context the program lives in (and the program).
  std::shared_ptr<Module::State> module;
  std::unique_ptr<TrainSession> session;
  std::vector<TensorInfo> batchInputs;
  /// The ONNX model trained (a file, or its bytes).
  std::string sourcePath, sourceBytes;
  int64_t steps = 0;
  /// Micro-batches per step.
  int64_t accumulate = 1;
  std::mutex mutex;
};

Trainer::Trainer() = default;
Trainer::~Trainer() = default;

/// The train-step options by name, checked as amp-run --train checks them.
/// `binder` owns the lists the options point to (the caller keeps it while
/// they are used).
static Status stepOptions(const OptionList &given, KeywordBinder &binder,
                          const mlir::amp::ModelLimits &limits,
                          mlir::amp::training::TrainStepOptions &options) {
  options.bind(binder);
  options.frontEnd.bind(binder);
  if (std::string error = binder.finish(); !error.empty())
    return Status::error("train step: " + error);
  // Autocast only with a type given (amp-run --train without --amp-type
  // trains in fp32).
  options.frontEnd.runAutocast = false;
  for (const auto &[name, value] : given)
    if (name == "type")
      options.frontEnd.runAutocast = true;
  options.frontEnd.foldMaxBytes = limits.maxFoldBytes;
  if (llvm::Error err = options.validate())
    return Status::error("train step: " + llvm::toString(std::move(err)));
  if (options.frontEnd.runAutocast)
    if (llvm::Error err =
            mlir::amp::checkAutocastOptions(options.frontEnd.autocast))
      return Status::error("train step: " + llvm::toString(std::move(err)));
  return Status();
}

/// Compiles `program` (in the context of `trainer->module`) into
/// `trainer`.
static Status compileSession(std::shared_ptr<Trainer::State> &trainer,
                             OwningOpRef<ModuleOp> program,
                             DiagnosticCapture &capture) {
  TrainSession::Options options;
  options.split = trainer->accumulate > 1;
  auto session = TrainSession::create(*program, options);
  if (failed(session))
    return capture.finish(failure());
  trainer->session = std::move(*session);
  if (trainer->accumulate > 1 && !trainer->session->canAccumulate())
    return Status::error("accumulation needs @compute_gradients and "
                         "@apply_gradients (build the program with amp-opt "
                         "--train --split-step)");
  trainer->module->module = std::move(program);
  const mlir::amp::execution::TrainLayout &layout =
      trainer->session->getLayout();
  auto inputs = trainer->session->getStep().getInputs();
  trainer->batchInputs = {describeTensor(inputs[layout.inputArgs[0]]),
                          describeTensor(inputs[layout.labelsArg])};
  return capture.finish(success());
}

Status Trainer::build(const Module &module, const OptionList &options,
                      int64_t accumulate, Trainer &result) {
  const std::shared_ptr<Module::State> &source = module.getState();
  if (!source)
    return Status::error("the module is empty");
  if (accumulate < 1)
    return Status::error("accumulate must be >= 1");
  auto trainer = std::make_shared<State>();
  trainer->accumulate = accumulate;
  if (!source->fromOnnx && !source->fromTorch) {
    // A training program built by amp-opt --train, copied into a context
    // of its own (the module stays usable).
    if (!options.empty())
      return Status::error("the module is a training program already (built "
                           "by amp-opt --train): its options are fixed");
    Module copy = module.clone();
    if (copy.isNull())
      return Status::error("cannot copy the module");
    trainer->module = copy.getState();
    OwningOpRef<ModuleOp> program = std::move(trainer->module->module);
    DiagnosticCapture capture(trainer->module->context.get());
    if (!program->lookupSymbol("train_step"))
      return Status::error("the module is neither an ONNX import nor a "
                           "training program (@train_step)");
    if (std::optional<std::string> bytes = mlir::amp::getONNXSource(*program)) {
      trainer->sourceBytes = std::move(*bytes);
      trainer->sourcePath = "the training program's ONNX model";
    }
    (*program)->removeAttr(mlir::amp::kONNXSourceAttrName);
    Status status = compileSession(trainer, std::move(program), capture);
    if (status.ok)
      result.state = std::move(trainer);
    return status;
  }

  mlir::amp::training::TrainStepOptions step;
  KeywordBinder binder(options);
  if (Status status = stepOptions(options, binder, source->limits, step);
      !status.ok)
    return status;
  if (accumulate > 1)
    step.splitStep = true;
  std::lock_guard<std::mutex> lock(source->mutex);
  // The model again, imported for training (weights marked, no cleanup),
  // in a context of its own: the ONNX file or bytes, or the torch graph.
  trainer->module = std::make_shared<Module::State>();
  trainer->module->context = makeContext();
  MLIRContext *context = trainer->module->context.get();
  DiagnosticCapture capture(context);
  OwningOpRef<ModuleOp> program;
  if (source->fromTorch) {
    mlir::amp::TorchImportOptions importOpts;
    importOpts.markInitializers = true;
    importOpts.training = source->torchTraining;
    program = mlir::amp::importTorchGraph(
        source->torchGraph, source->torchWeights, context, importOpts);
  } else {
    mlir::amp::ONNXImportOptions importOpts;
    importOpts.foldConstants = source->importFolded;
    importOpts.markInitializers = true;
    importOpts.limits = source->limits;
    program = source->sourceBytes.empty()
                  ? mlir::amp::importONNXFile(source->sourcePath, context,
                                              importOpts)
                  : mlir::amp::importONNXBuffer(source->sourceBytes,
                                                source->sourcePath, context,
                                                importOpts);
  }
  if (!program || failed(mlir::amp::training::buildTrainStep(*program, step)))
    return capture.finish(failure());
  trainer->sourcePath = source->sourcePath;
  trainer->sourceBytes = source->sourceBytes;
  Status status = compileSession(trainer, std::move(program), capture);
  if (status.ok)
    result.state = std::move(trainer);
  return status;
}

const std::vector<TensorInfo> &Trainer::getBatchInputs() const {
  static const std::vector<TensorInfo> none;
  return state ? state->batchInputs : none;
}

int64_t Trainer::getStepCount() const { return state ? state->steps : 0; }

/// Rows [begin, end) of a tensor (samples along dimension 0).
static Tensor rowsOf(const Tensor &tensor, int64_t begin, int64_t end) {
  Tensor part;
  part.elementType = tensor.elementType;
  part.shape = tensor.shape;
  part.shape[0] = end - begin;
  size_t rowBytes = tensor.shape[0] ? tensor.bytes.size() / tensor.shape[0] : 0;
  part.bytes.assign(tensor.bytes.begin() + begin * rowBytes,
                    tensor.bytes.begin() + end * rowBytes);
  return part;
}

Status Trainer::step(Tensor input, Tensor labels, StepResult &result) {
  if (!state)
    return Status::error("the trainer is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  TrainSession &session = *state->session;
  std::vector<Tensor> results;
  mlir::amp::execution::StepOutcome outcome;
  int64_t K = state->accumulate;
  if (K == 1) {
    if (llvm::Error err = session.checkBatch(input, labels, "input", "labels"))
      return Status::error(llvm::toString(std::move(err)));
    llvm::Expected<mlir::amp::execution::StepOutcome> stepped =
        session.step(std::move(input), std::move(labels), results);
    if (!stepped)
      return Status::error(llvm::toString(stepped.takeError()));
    outcome = *stepped;
  } else {
    int64_t rows = input.shape.empty() ? 0 : input.shape[0];
    if (input.shape.empty() || labels.shape.empty() ||
        labels.shape[0] != rows || rows % K != 0)
      return Status::error(
          "with accumulate=" + std::to_string(K) +
          ", a step takes input and labels whose first dimension (the same "
          "in both) splits into " +
          std::to_string(K) + " equal micro-batches");
    int64_t micro = rows / K;
    std::vector<std::pair<Tensor, Tensor>> batches;
    for (int64_t k = 0; k < K; ++k) {
      batches.emplace_back(rowsOf(input, k * micro, (k + 1) * micro),
                           rowsOf(labels, k * micro, (k + 1) * micro));
      if (llvm::Error err = session.checkBatch(
              batches.back().first, batches.back().second,
              "input (micro-batch " + std::to_string(k) + ")",
              "labels (micro-batch " + std::to_string(k) + ")"))
        return Status::error(llvm::toString(std::move(err)));
    }
    llvm::Expected<mlir::amp::execution::StepOutcome> stepped =
        session.accumulatedStep(
            [&](int64_t k) { return std::move(batches[k]); }, K, results);
    if (!stepped)
      return Status::error(llvm::toString(stepped.takeError()));
    outcome = *stepped;
  }
  ++state->steps;
  result.loss = outcome.loss;
  result.lossScale = outcome.lossScale;
  result.lr = outcome.lr;
  result.skipped = outcome.overflow;
  if (llvm::Error err = session.checkOverflow(outcome, results, state->steps))
    return Status::error(llvm::toString(std::move(err)));
  return Status();
}

Status Trainer::predict(Tensor input, std::vector<Tensor> &outputs) const {
  if (!state)
    return Status::error("the trainer is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  const TrainSession &session = *state->session;
  unsigned arg = session.getLayout().mainState.size();
  if (llvm::Error err = session.getMain().checkInput(arg, input, "input"))
    return Status::error(llvm::toString(std::move(err)));
  if (llvm::Error err = session.predict(std::move(input), outputs))
    return Status::error(llvm::toString(std::move(err)));
  return Status();
}

NamedTensors Trainer::getState() const {
  if (!state)
    return {};
  std::lock_guard<std::mutex> lock(state->mutex);
  return state->session->getNamedState();
}

Status Trainer::setState(const NamedTensors &given) {
  if (!state)
    return Status::error("the trainer is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  if (llvm::Error err = state->session->setNamedState(given, "the state given"))
    return Status::error(llvm::toString(std::move(err)));
  return Status();
}

Status Trainer::exportOnnx(const std::string &path) const {
  if (!state)
    return Status::error("the trainer is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  if (state->sourceBytes.empty() && state->sourcePath.empty())
    return Status::error("the training program carries no ONNX model to "
                         "write (build it from an ONNX model)");
  if (llvm::Error err = state->session->exportOnnx(path, state->sourcePath,
                                                   state->sourceBytes))
    return Status::error(llvm::toString(std::move(err)));
  return Status();
}
