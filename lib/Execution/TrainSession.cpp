//===- TrainSession.cpp - a compiled training program and its state -------===//

#include "amp/Execution/TrainSession.h"

#include "amp/Target/ONNX/ONNXWeights.h"
#include "amp/Training/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::execution;

static llvm::Error sessionError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

bool mlir::amp::execution::isStateRole(StringRef role) {
  return role == "param" || role == "buffer" || role == "optimizer" ||
         role == "scaler" || role == "step";
}

StringRef mlir::amp::execution::getTrainRole(DictionaryAttr attrs) {
  if (attrs)
    if (auto role = attrs.getAs<StringAttr>(training::kRoleAttrName))
      return role.getValue();
  return "input";
}
std::string mlir::amp::execution::getTrainName(DictionaryAttr attrs,
                                               unsigned i) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("amp.name"))
      return name.str();
  return "value_" + std::to_string(i);
}

FailureOr<TrainLayout> TrainLayout::read(ModuleOp module) {
  TrainLayout layout;
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!step || !module.lookupSymbol<func::FuncOp>("initial_state") || !main)
    return module.emitError("not a training program: expected @train_step, "
                            "@initial_state and @main (build one with "
                            "amp-opt --train)"),
           failure();
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    StringRef role = getTrainRole(step.getArgAttrDict(i));
    layout.argRoles.push_back(role.str());
    layout.argNames.push_back(getTrainName(step.getArgAttrDict(i), i));
    if (isStateRole(role))
      layout.stateArgs.push_back(i);
    else if (role == "labels")
      layout.labelsArg = i;
    else if (role == "dropout_replica")
      layout.replicaArg = i;
    else
      layout.inputArgs.push_back(i);
    if (role == "param")
      layout.paramNames.push_back(layout.argNames.back());
    if (role == "scaler" && layout.argNames.back() == "loss_scale")
      layout.scaleArg = i;
  }
  for (unsigned i = 0; i < step.getNumResults(); ++i) {
    StringRef role = getTrainRole(step.getResultAttrDict(i));
    layout.resultRoles.push_back(role.str());
    layout.resultNames.push_back(getTrainName(step.getResultAttrDict(i), i));
    if (isStateRole(role))
      layout.stateResults.push_back(i);
    else if (role == "loss")
      layout.lossResult = i;
    else if (role == "found_inf")
      layout.foundInfResult = i;
    else if (role == "nonfinite")
      layout.nonfiniteResult = i;
    else if (role == "lr")
      layout.lrResult = i;
  }
  if (layout.stateArgs.size() != layout.stateResults.size() ||
      layout.labelsArg < 0 || layout.lossResult < 0 ||
      layout.foundInfResult < 0 || layout.inputArgs.size() != 1)
    return step.emitError("@train_step does not have the layout of a train "
                          "step built by amp (one input, labels, matching "
                          "state arguments and results)"),
           failure();
  for (unsigned k = 0; k < layout.stateArgs.size(); ++k)
    if (layout.argNames[layout.stateArgs[k]] !=
        layout.resultNames[layout.stateResults[k]])
      return step.emitError("state argument '")
                 << layout.argNames[layout.stateArgs[k]] << "' and result '"
                 << layout.resultNames[layout.stateResults[k]]
                 << "' are out of order",
             failure();
  // @main(params..., buffers..., inputs...).
  llvm::StringMap<unsigned> stateIndex;
  for (unsigned k = 0; k < layout.stateArgs.size(); ++k)
    stateIndex[layout.argNames[layout.stateArgs[k]]] = k;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    StringRef role = getTrainRole(main.getArgAttrDict(i));
    if (role == "param" || role == "buffer") {
      auto it = stateIndex.find(getTrainName(main.getArgAttrDict(i), i));
      if (it == stateIndex.end())
        return main.emitError("argument ") << i << " is not in the state",
               failure();
      layout.mainState.push_back(it->second);
    } else {
      layout.mainInputs.push_back(i);
    }
  }
  auto signature = [](func::FuncOp func) {
    TrainSignature sig;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      sig.args.push_back({getTrainRole(func.getArgAttrDict(i)).str(),
                          getTrainName(func.getArgAttrDict(i), i)});
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      sig.results.push_back({getTrainRole(func.getResultAttrDict(i)).str(),
                             getTrainName(func.getResultAttrDict(i), i)});
    return sig;
  };
  auto compute = module.lookupSymbol<func::FuncOp>("compute_gradients");
  auto apply = module.lookupSymbol<func::FuncOp>("apply_gradients");
  if (compute && apply) {
    layout.compute = signature(compute);
    layout.apply = signature(apply);
  }
  if (auto info =
          module->getAttrOfType<DictionaryAttr>(training::kTrainAttrName)) {
    if (auto min = info.getAs<FloatAttr>("loss_scale_min"))
      layout.scaleMin = min.getValueAsDouble();
    if (auto mode = info.getAs<StringAttr>("loss_scale"))
      layout.scaled = mode.getValue() != "none";
  }
  return layout;
}

/// A rank-0 f32 or i64 tensor holding `value`.
namespace {
template <typename T>
Tensor scalarTensorOf(T value, amp_runtime::ElementType type) {
  Tensor tensor;
  tensor.elementType = type;
  tensor.bytes.resize(sizeof(T));
  std::memcpy(tensor.bytes.data(), &value, sizeof(T));
  return tensor;
}
} // namespace

Tensor mlir::amp::execution::scalarTensor(float value) {
  return scalarTensorOf(value, amp_runtime::ElementType::F32);
}
Tensor mlir::amp::execution::scalarTensor(int64_t value) {
  return scalarTensorOf(value, amp_runtime::ElementType::I64);
}

double mlir::amp::execution::scalarOf(const Tensor &tensor) {
  return tensor.getNumElements() ? tensor.getAsDouble(0) : 0.0;
}

static bool sameSignature(const Tensor &a, const Tensor &b) {
  return a.elementType == b.elementType && a.shape == b.shape;
}

TrainSession::~TrainSession() = default;

FailureOr<std::unique_ptr<TrainSession>>
TrainSession::create(ModuleOp module, const Options &options) {
  auto layout = TrainLayout::read(module);
  if (failed(layout))
    return failure();
  std::unique_ptr<TrainSession> session(new TrainSession());
  session->layout = std::move(*layout);
  session->replicaIndex = options.replicaIndex;
  session->communicator = options.communicator;
  auto main = module.lookupSymbol<func::FuncOp>("main");
  auto outputType = cast<RankedTensorType>(main.getResultTypes()[0]);
  auto labelsType = cast<RankedTensorType>(
      module.lookupSymbol<func::FuncOp>("train_step")
          .getArgumentTypes()[session->layout.labelsArg]);
  if (isa<IntegerType>(labelsType.getElementType()) &&
      outputType.getRank() >= 2 && !outputType.isDynamicDim(1))
    session->numClasses = outputType.getDimSize(1);

  std::vector<std::string> entries{"train_step", "initial_state", "main"};
  if (options.split && session->layout.compute && session->layout.apply) {
    entries.push_back("compute_gradients");
    entries.push_back("apply_gradients");
  }
  auto compiled = CpuProgram::compile(module, "", entries, options.lowering);
  if (failed(compiled))
    return failure();
  session->program = std::move(*compiled);
  session->stepFn = session->program->getFunction("train_step");
  session->mainFn = session->program->getFunction("main");
  if (llvm::Error err = session->program->getFunction("initial_state")
                            ->run({}, session->state))
    return module.emitError(llvm::toString(std::move(err))), failure();
  if (session->state.size() != session->layout.stateArgs.size())
    return module.emitError(
               "@initial_state does not return the train step's state"),
           failure();
  return session;
}

unsigned TrainSession::stateIndex(unsigned arg) const {
  return llvm::find(layout.stateArgs, arg) - layout.stateArgs.begin();
}

double TrainSession::getLossScale() const {
  return layout.scaleArg >= 0 ? scalarOf(state[stateIndex(layout.scaleArg)])
                              : 1.0;
}

Tensor TrainSession::replicaTensor() const {
  return scalarTensor(replicaIndex);
}

llvm::Error TrainSession::checkBatch(const Tensor &input, const Tensor &labels,
                                     StringRef inputName,
                                     StringRef labelsName) const {
  if (llvm::Error err =
          stepFn->checkInput(layout.inputArgs[0], input, inputName))
    return err;
  if (llvm::Error err =
          stepFn->checkInput(layout.labelsArg, labels, labelsName))
    return err;
  if (numClasses > 0 && labels.elementType == amp_runtime::ElementType::I64) {
    const int64_t *values =
        reinterpret_cast<const int64_t *>(labels.bytes.data());
    for (int64_t i = 0; i < labels.getNumElements(); ++i)
      if (values[i] < 0 || values[i] >= numClasses)
        return sessionError("'" + labelsName + "': label " + Twine(values[i]) +
                            " at index " + Twine(i) + " is out of range [0, " +
                            Twine(numClasses) + ")");
  }
  return llvm::Error::success();
}

llvm::Expected<StepOutcome> TrainSession::step(Tensor input, Tensor labels,
                                               std::vector<Tensor> &results) {
  double scale = getLossScale();
  // The state is handed to the step (no copy); every state value comes
  // back as a result, updated in place where the program did so.
  std::vector<Tensor> args(stepFn->getInputs().size());
  for (auto [k, arg] : llvm::enumerate(layout.stateArgs))
    args[arg] = std::move(state[k]);
  args[layout.inputArgs[0]] =
      stepFn->prepareInput(layout.inputArgs[0], std::move(input));
  args[layout.labelsArg] = std::move(labels);
  if (layout.replicaArg >= 0)
    args[layout.replicaArg] = replicaTensor();
  llvm::Error failure = stepFn->runConsuming(std::move(args), results);
  // The state's buffers come back either way (a failed check leaves the
  // step's update, made with clamped indices, in them).
  for (auto [k, result] : llvm::enumerate(layout.stateResults))
    state[k] = std::move(results[result]);
  if (failure)
    return std::move(failure);
  return outcomeOf(results, scale);
}

bool TrainSession::canAccumulate() const {
  return layout.compute && layout.apply && getFunction("compute_gradients") &&
         getFunction("apply_gradients");
}

llvm::Expected<StepOutcome> TrainSession::accumulatedStep(
    llvm::function_ref<std::pair<Tensor, Tensor>(int64_t)> microBatch,
    int64_t count, std::vector<Tensor> &results) {
  double scale = getLossScale();
  llvm::StringMap<unsigned> byName;
  for (auto [k, arg] : llvm::enumerate(layout.stateArgs))
    byName[layout.argNames[arg]] = k;
  llvm::StringMap<Tensor> grads;
  for (auto [k, arg] : llvm::enumerate(layout.stateArgs))
    if (layout.argRoles[arg] == "param") {
      Tensor zero = state[k];
      std::fill(zero.bytes.begin(), zero.bytes.end(), 0);
      grads[layout.argNames[arg] + ".grad"] = std::move(zero);
    }
  const CpuFunction *compute = getFunction("compute_gradients");
  const CpuFunction *apply = getFunction("apply_gradients");
  int64_t K = count;
  int64_t ranks = communicator ? communicator->getSize() : 1;
  // Pre-divided as PyTorch's DDP does: the sum over ranks is the mean.
  Tensor gradScale = scalarTensor(static_cast<float>(scale / (K * ranks)));
  // Dropout masks of micro-batch k of optimizer step `step`: counter
  // step * K + k (K = 1 gives @train_step's masks).
  int64_t stepValue = 0;
  if (auto it = byName.find("step"); it != byName.end())
    std::memcpy(&stepValue, state[it->second].bytes.data(), sizeof(int64_t));
  auto dropoutCounter = [&](int64_t k) { return scalarTensor(stepValue * K + k); };
  double lossSum = 0;
  std::vector<Tensor> args, out;
  for (int64_t k = 0; k < K; ++k) {
    auto [input, labels] = microBatch(k);
    args.assign(layout.compute->args.size(), Tensor());
    for (auto [i, arg] : llvm::enumerate(layout.compute->args)) {
      const auto &[role, name] = arg;
      if (role == "param" || role == "buffer")
        args[i] = state[byName.lookup(name)];
      else if (role == "grad")
        args[i] = grads[name];
      else if (role == "grad_scale")
        args[i] = gradScale;
      else if (role == "dropout_counter")
        args[i] = dropoutCounter(k);
      else if (role == "dropout_replica")
        args[i] = replicaTensor();
      else if (role == "labels")
        args[i] = std::move(labels);
      else
        args[i] = compute->prepareInput(i, std::move(input));
    }
    if (llvm::Error err = compute->run(args, out))
      return std::move(err); // the parameters are not updated
    for (auto [i, result] : llvm::enumerate(layout.compute->results)) {
      const auto &[role, name] = result;
      if (role == "loss")
        lossSum += scalarOf(out[i]);
      else if (role == "buffer")
        state[byName.lookup(name)] = std::move(out[i]);
      else if (role == "grad")
        grads[name] = std::move(out[i]);
    }
  }
  double loss = lossSum / K;
  if (ranks > 1)
    if (llvm::Error err = allReduceStep(grads, byName, loss))
      return std::move(err);
  // A non-finite gradient of any rank is non-finite in the sum, which
  // @apply_gradients checks: no overflow flag of its own to pass in.
  Tensor noFoundInf = scalarTensor(0.0f);
  args.assign(layout.apply->args.size(), Tensor());
  for (auto [i, arg] : llvm::enumerate(layout.apply->args))
    args[i] = arg.first == "grad"        ? grads[arg.second]
              : arg.first == "found_inf" ? noFoundInf
                                         : state[byName.lookup(arg.second)];
  if (llvm::Error err = apply->run(args, out))
    return std::move(err);
  results.assign(layout.resultRoles.size(), Tensor());
  for (auto [i, result] : llvm::enumerate(layout.apply->results)) {
    const auto &[role, name] = result;
    if (isStateRole(role)) {
      state[byName.lookup(name)] = std::move(out[i]);
      continue;
    }
    for (auto [j, trainRole] : llvm::enumerate(layout.resultRoles))
      if (trainRole == role)
        results[j] = std::move(out[i]);
  }
  results[layout.lossResult] = scalarTensor(static_cast<float>(loss));
  return outcomeOf(results, scale);
}

llvm::Error TrainSession::allReduceStep(llvm::StringMap<Tensor> &grads,
                                        const llvm::StringMap<unsigned> &byName,
                                        double &loss) {
  // One flat buffer, in the state's order (the same on every rank): the
  // parameters' gradients, the float buffers, the loss.
  SmallVector<Tensor *> parts;
  SmallVector<bool> averaged;
  for (unsigned arg : layout.stateArgs) {
    StringRef role = layout.argRoles[arg];
    const std::string &name = layout.argNames[arg];
    Tensor *tensor = nullptr;
    if (role == "param")
      tensor = &grads[name + ".grad"];
    else if (role == "buffer")
      tensor = &state[byName.lookup(name)];
    else
      continue;
    if (tensor->elementType != amp_runtime::ElementType::F32) {
      if (role == "buffer")
        continue; // an integer counter: the same on every rank
      return sessionError("data parallelism needs f32 gradients; '" + name +
                          "''s are " +
                          amp_runtime::getElementTypeName(tensor->elementType));
    }
    parts.push_back(tensor);
    averaged.push_back(role == "buffer");
  }
  size_t total = 1;
  for (Tensor *part : parts)
    total += part->bytes.size() / sizeof(float);
  std::vector<float> flat(total);
  size_t offset = 0;
  for (Tensor *part : parts) {
    std::memcpy(flat.data() + offset, part->bytes.data(), part->bytes.size());
    offset += part->bytes.size() / sizeof(float);
  }
  flat[offset] = static_cast<float>(loss);
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error err = communicator->allReduceSum(flat.data(), flat.size()))
    return err;
  allReduceStats.calls += 1;
  allReduceStats.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  allReduceStats.bytes = flat.size() * sizeof(float);
  float ranks = static_cast<float>(communicator->getSize());
  offset = 0;
  for (auto [part, average] : llvm::zip(parts, averaged)) {
    size_t count = part->bytes.size() / sizeof(float);
    if (average)
      for (size_t i = 0; i < count; ++i)
        flat[offset + i] /= ranks;
    std::memcpy(part->bytes.data(), flat.data() + offset, part->bytes.size());
    offset += count;
  }
  loss = flat[offset] / ranks;
  return llvm::Error::success();
}

StepOutcome TrainSession::outcomeOf(const std::vector<Tensor> &results,
                                    double lossScale) const {
  StepOutcome outcome;
  outcome.loss = scalarOf(results[layout.lossResult]);
  outcome.overflow = scalarOf(results[layout.foundInfResult]) > 0;
  outcome.lr = layout.lrResult >= 0 ? scalarOf(results[layout.lrResult]) : 0;
  outcome.lossScale = lossScale;
  return outcome;
}

llvm::Error TrainSession::checkOverflow(const StepOutcome &outcome,
                                        const std::vector<Tensor> &results,
                                        int64_t stepNumber) const {
  if (!outcome.overflow ||
      (layout.scaled && outcome.lossScale > std::max(layout.scaleMin, 0.0)))
    return llvm::Error::success();
  std::string names;
  if (layout.nonfiniteResult >= 0) {
    const Tensor &flags = results[layout.nonfiniteResult];
    for (int64_t i = 0; i < flags.getNumElements(); ++i)
      if (flags.getAsDouble(i) > 0 && i < (int64_t)layout.paramNames.size())
        names += (names.empty() ? "" : ", ") + layout.paramNames[i];
  }
  if (names.empty())
    names = "(none reported)";
  if (!layout.scaled)
    return sessionError("step " + Twine(stepNumber) +
                        " produced non-finite gradients in: " + names +
                        "; without loss scaling the step is not skipped, so "
                        "training stops (try --loss-scale=dynamic or a "
                        "smaller --lr)");
  return sessionError("step " + Twine(stepNumber) +
                      " overflowed with the loss scale at its minimum (" +
                      llvm::formatv("{0}", outcome.lossScale) +
                      "); non-finite gradients in: " + names);
}

amp_runtime::NamedTensors TrainSession::getNamedState() const {
  amp_runtime::NamedTensors arrays;
  for (auto [k, arg] : llvm::enumerate(layout.stateArgs))
    arrays.emplace_back(layout.argNames[arg], state[k]);
  return arrays;
}

llvm::Error TrainSession::setNamedState(const amp_runtime::NamedTensors &arrays,
                                        StringRef source,
                                        int64_t *batchesDone) {
  llvm::StringMap<const Tensor *> byName;
  for (const auto &[name, tensor] : arrays)
    byName[name] = &tensor;
  std::vector<Tensor> loaded = state;
  for (auto [k, arg] : llvm::enumerate(layout.stateArgs)) {
    const std::string &name = layout.argNames[arg];
    const Tensor *given = byName.lookup(name);
    if (!given)
      return sessionError(source + " does not match the program: it has no '" +
                          name + "'");
    if (!sameSignature(*given, state[k]))
      return sessionError(
          source + ": '" + name + "' is " +
          amp_runtime::getElementTypeName(given->elementType) + " " +
          amp_runtime::formatShape(given->shape) + " but the program expects " +
          amp_runtime::getElementTypeName(state[k].elementType) + " " +
          amp_runtime::formatShape(state[k].shape));
    loaded[k] = *given;
    byName.erase(name);
  }
  if (batchesDone)
    if (const Tensor *done = byName.lookup("amp_run.batches_done")) {
      *batchesDone = static_cast<int64_t>(scalarOf(*done));
      byName.erase("amp_run.batches_done");
    }
  if (!byName.empty())
    return sessionError(source + " does not match the program: it has '" +
                        byName.begin()->getKey() +
                        "', which the program lacks");
  state = std::move(loaded);
  return llvm::Error::success();
}

llvm::Error TrainSession::predict(Tensor input,
                                  std::vector<Tensor> &results) const {
  std::vector<Tensor> args;
  for (unsigned k : layout.mainState)
    args.push_back(state[k]);
  args.push_back(
      mainFn->prepareInput(layout.mainState.size(), std::move(input)));
  return mainFn->run(args, results);
}

llvm::Error TrainSession::exportOnnx(StringRef path, StringRef sourceModel,
                                     StringRef sourceModelBytes) const {
  std::vector<std::pair<std::string, Tensor>> weights;
  for (auto [k, arg] : llvm::enumerate(layout.stateArgs))
    if (layout.argRoles[arg] == "param" || layout.argRoles[arg] == "buffer")
      weights.emplace_back(layout.argNames[arg], state[k]);
  if (sourceModelBytes.empty())
    return writeONNXWithWeights(sourceModel, path, weights);
  std::string name = ("'" + sourceModel + "'").str();
  return writeONNXBytesWithWeights(sourceModelBytes, name, path, weights);
}
