//===- DataParallelTrainer.cpp - the split step's training loop -----------===//

#include "amp_gpu/DataParallelTrainer.h"
#include "amp/Runtime/BatchOrder.h"
#include "amp_gpu/HostTypes.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>

using amp_runtime::ElementType;
using amp_runtime::Tensor;

namespace amp_gpu {

TrainDevice::~TrainDevice() = default;

namespace {

double scalarAsDouble(const std::vector<char> &bytes, DType type) {
  Tensor t;
  toElementType(type, t.elementType);
  t.bytes = bytes;
  return t.getAsDouble(0);
}

std::vector<char> scalarBytes(double value, DType type) {
  std::vector<char> bytes(dtypeSize(type));
  if (type == DType::F64) {
    std::memcpy(bytes.data(), &value, 8);
  } else if (type == DType::I64) {
    int64_t v = int64_t(value);
    std::memcpy(bytes.data(), &v, 8);
  } else {
    float v = float(value);
    std::memcpy(bytes.data(), &v, 4);
  }
  return bytes;
}

std::string format(const char *pattern, ...)
    __attribute__((format(printf, 1, 2)));
std::string format(const char *pattern, ...) {
  char text[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(text, sizeof text, pattern, args);
  va_end(args);
  return text;
}

} // namespace

bool readTrainingData(const std::string &path, const TensorSignature &sig,
                      Tensor &tensor, std::string &error) {
  if (!amp_runtime::readNpy(path, tensor, error))
    return false;
  ElementType type = ElementType::F32;
  if (!toElementType(sig.dtype, type)) {
    error = "input '" + sig.name + "' has a type training cannot feed";
    return false;
  }
  if (type == ElementType::BF16 && tensor.elementType == ElementType::F32)
    tensor = amp_runtime::convertF32Tensor(tensor, type);
  std::vector<int64_t> row(sig.shape.begin() + 1, sig.shape.end());
  if (tensor.elementType != type || tensor.shape.size() != sig.shape.size() ||
      !std::equal(row.begin(), row.end(), tensor.shape.begin() + 1)) {
    error = "'" + path + "': input '" + sig.name + "' takes rows of " +
            amp_runtime::getElementTypeName(type) +
            amp_runtime::formatShape(row) + ", the file holds " +
            amp_runtime::getElementTypeName(tensor.elementType) +
            amp_runtime::formatShape(tensor.shape);
    return false;
  }
  return true;
}

bool loadStartingState(const TrainPlan &plan, TrainDevice &device,
                       const std::vector<std::vector<char>> &loaded,
                       std::string &error) {
  bool fromInit = loaded.empty();
  if (fromInit && !device.execute(TrainProgram::Init, error)) {
    error = "@initial_state: " + error;
    return false;
  }
  for (size_t s = 0; s < plan.state.size(); ++s) {
    const TrainPlan::State &state = plan.state[s];
    const void *source = nullptr;
    void *pointer = nullptr;
    if (fromInit) {
      if (!device.address(TrainProgram::Init, true, state.initOutput, pointer,
                          error))
        return false;
      source = pointer;
    } else if (loaded[s].size() != state.bytes) {
      error = "state '" + state.name + "' has the wrong size";
      return false;
    }
    std::pair<TrainProgram, int> targets[] = {
        {TrainProgram::Compute, state.computeInput},
        {TrainProgram::Apply, state.applyInput}};
    for (auto [program, index] : targets) {
      if (index < 0)
        continue;
      if (!device.address(program, false, index, pointer, error))
        return false;
      if (fromInit
              ? !device.copy(pointer, source, state.bytes, error)
              : !device.toDevice(pointer, loaded[s].data(), state.bytes, error))
        return false;
    }
  }
  return true;
}

bool runTraining(const TrainPlan &plan, const Artifact &compute,
                 const Artifact &apply, TrainDevice &device, const Tensor &data,
                 const Tensor &labels, int64_t batchesDone,
                 const TrainRunOptions &options, TrainRunResult &result,
                 std::string &error) {
  result = TrainRunResult();
  // Shorthands that stop at the first failure.
  bool ok = true;
  auto at = [&](TrainProgram program, bool output, int index) -> char * {
    void *pointer = nullptr;
    if (ok && !device.address(program, output, index, pointer, error))
      ok = false;
    return static_cast<char *>(pointer);
  };
  auto copy = [&](void *dst, const void *src, uint64_t bytes) {
    if (ok && !device.copy(dst, src, bytes, error))
      ok = false;
  };
  auto toDevice = [&](void *dst, const std::vector<char> &bytes) {
    if (ok && !device.toDevice(dst, bytes.data(), bytes.size(), error))
      ok = false;
  };
  auto toHost = [&](const void *src, uint64_t bytes) {
    std::vector<char> out(bytes);
    if (ok && !device.toHost(out.data(), src, bytes, error))
      ok = false;
    return out;
  };
  auto execute = [&](TrainProgram program, const std::string &what) {
    if (ok && !device.execute(program, error)) {
      error = what + ": " + error;
      ok = false;
    }
  };
  const auto Compute = TrainProgram::Compute, Apply = TrainProgram::Apply;

  void *flatPointer = nullptr;
  if (!device.allocate(plan.flatBytes(), flatPointer, error))
    return false;
  char *flat = static_cast<char *>(flatPointer);
  uint64_t element = dtypeSize(plan.flatType);
  result.allReduceBytes = plan.flatBytes();

  FILE *csv = nullptr;
  std::string csvPartial = options.logCsv + ".partial";
  if (options.rank == 0 && !options.logCsv.empty()) {
    csv = std::fopen(csvPartial.c_str(), "w");
    if (!csv) {
      error = "cannot write '" + options.logCsv + "'";
      return false;
    }
    std::fprintf(csv, "step,loss,loss_scale,lr,found_inf,skipped\n");
  }
  auto fail = [&]() {
    if (csv) {
      std::fclose(csv);
      std::remove(csvPartial.c_str());
    }
    return false;
  };

  const TrainPlan::State *scaleState =
      plan.lossScaleState >= 0 ? &plan.state[plan.lossScaleState] : nullptr;
  const TrainPlan::State *stepState =
      plan.stepState >= 0 ? &plan.state[plan.stepState] : nullptr;
  auto readState = [&](const TrainPlan::State &s) {
    return toHost(at(Apply, false, s.applyInput), s.bytes);
  };
  double scale =
      scaleState ? scalarAsDouble(readState(*scaleState), DType::F32) : 1.0;
  amp_runtime::BatchSchedule schedule(data.shape[0], options.batchSize,
                                      options.shuffleSeed, options.shuffle);
  const TensorSignature &lossSig = compute.outputs[plan.lossOutput];
  const TensorSignature *lrSig =
      plan.lrOutput >= 0 ? &apply.outputs[plan.lrOutput] : nullptr;
  int64_t K = options.accumulate, ranks = options.ranks;
  double lastLr = 0;
  const std::vector<char> zeroFlag(4, 0);
  auto start = std::chrono::steady_clock::now();
  for (int64_t n = 0; n < options.steps && ok; ++n, batchesDone += K) {
    std::string stepName = "step " + std::to_string(n + 1);
    double scaleIn = scale;
    int64_t stepValue =
        stepState ? int64_t(scalarAsDouble(readState(*stepState), DType::I64))
                  : 0;
    // Pre-divided by K * N, as PyTorch's DDP: the sum is the mean.
    toDevice(at(Compute, false, plan.gradScaleInput),
             scalarBytes(scale / double(K * ranks), DType::F32));
    for (const TrainPlan::Gradient &g : plan.gradients)
      if (ok &&
          !device.zero(at(Compute, false, g.computeInput), g.bytes, error))
        ok = false;
    if (plan.dropoutReplicaInput >= 0)
      toDevice(
          at(Compute, false, plan.dropoutReplicaInput),
          scalarBytes(double(options.replicaIndex + options.rank), DType::I64));
    double lossSum = 0;
    for (int64_t k = 0; k < K && ok; ++k) {
      std::vector<int64_t> rows =
          schedule.rows(batchesDone + k, options.rank, options.ranks);
      Tensor x = amp_runtime::gatherRows(data, rows);
      Tensor y = amp_runtime::gatherRows(labels, rows);
      toDevice(at(Compute, false, plan.dataInput), x.bytes);
      toDevice(at(Compute, false, plan.labelsInput), y.bytes);
      // Micro-batch k's Dropout masks: counter step * K + k.
      if (plan.dropoutCounterInput >= 0)
        toDevice(at(Compute, false, plan.dropoutCounterInput),
                 scalarBytes(double(stepValue * K + k), DType::I64));
      execute(Compute, stepName + ": @compute_gradients");
      lossSum += scalarAsDouble(
          toHost(at(Compute, true, plan.lossOutput), lossSig.byteSize()),
          lossSig.dtype);
      if (k + 1 == K)
        break;
      // The accumulators and the buffers go round to the next micro-batch.
      for (const TrainPlan::Gradient &g : plan.gradients)
        copy(at(Compute, false, g.computeInput),
             at(Compute, true, g.computeOutput), g.bytes);
      for (const TrainPlan::State &s : plan.state)
        if (s.computeOutput >= 0)
          copy(at(Compute, false, s.computeInput),
               at(Compute, true, s.computeOutput), s.bytes);
    }
    double loss = lossSum / double(K);

    // One all-reduce: [gradients (sum)] [float buffers, loss (mean)].
    for (const TrainPlan::Gradient &g : plan.gradients)
      copy(flat + g.flatOffset * element, at(Compute, true, g.computeOutput),
           g.bytes);
    for (const TrainPlan::State &s : plan.state)
      if (s.averaged)
        copy(flat + s.flatOffset * element, at(Compute, true, s.computeOutput),
             s.bytes);
    toDevice(flat + plan.lossOffset * element,
             scalarBytes(loss, plan.flatType));
    if (ok && device.hasCollective()) {
      auto reduceStart = std::chrono::steady_clock::now();
      if (!device.allReduce(flat, plan.flatType, plan.summedCount,
                            plan.averagedCount, error)) {
        error = stepName + ": " + error;
        ok = false;
      }
      result.allReduceSeconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        reduceStart)
              .count();
    }
    for (const TrainPlan::Gradient &g : plan.gradients)
      copy(at(Apply, false, g.applyInput), flat + g.flatOffset * element,
           g.bytes);
    for (const TrainPlan::State &s : plan.state) {
      if (s.averaged)
        copy(at(Compute, false, s.computeInput), flat + s.flatOffset * element,
             s.bytes);
      else if (s.computeOutput >= 0)
        copy(at(Compute, false, s.computeInput),
             at(Compute, true, s.computeOutput), s.bytes);
    }
    loss = scalarAsDouble(toHost(flat + plan.lossOffset * element, element),
                          plan.flatType);

    // A non-finite gradient of any rank is non-finite in the sum, which
    // @apply_gradients checks itself: no flag of its own to pass in.
    toDevice(at(Apply, false, plan.foundInfInput), zeroFlag);
    execute(Apply, stepName + ": @apply_gradients");
    bool overflow =
        scalarAsDouble(toHost(at(Apply, true, plan.foundInfOutput), 4),
                       DType::F32) != 0;
    if (lrSig)
      lastLr = scalarAsDouble(
          toHost(at(Apply, true, plan.lrOutput), lrSig->byteSize()),
          lrSig->dtype);
    for (const TrainPlan::State &s : plan.state) {
      if (s.applyOutput < 0)
        continue;
      char *updated = at(Apply, true, s.applyOutput);
      copy(at(Apply, false, s.applyInput), updated, s.bytes);
      if (s.computeInput >= 0)
        copy(at(Compute, false, s.computeInput), updated, s.bytes);
    }
    if (scaleState)
      scale = scalarAsDouble(readState(*scaleState), DType::F32);
    if (!ok)
      break;
    if (overflow && !scaleState) {
      error = stepName + ": non-finite gradients (no loss scaling to back "
                         "off; the parameters are not updated)";
      return fail();
    }
    result.skipped += overflow;
    if (csv)
      std::fprintf(csv, "%lld,%.9g,%.9g,%.9g,%d,%lld\n", (long long)(n + 1),
                   loss, scaleIn, lastLr, int(overflow),
                   (long long)result.skipped);
    if (options.rank == 0 && options.log &&
        ((n + 1) % options.logEvery == 0 || n + 1 == options.steps)) {
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      options.log(format("step %lld  loss %.6f  scale %g  lr %.6g  skipped "
                         "%lld  %.2f steps/s\n",
                         (long long)(n + 1), loss, scaleIn, lastLr,
                         (long long)result.skipped,
                         (n + 1) / std::max(seconds, 1e-9)));
    }
  }
  if (!ok)
    return fail();
  result.finalScale = scale;
  result.batchesDone = batchesDone;
  if (options.rank == 0 && options.log)
    options.log(format("done: %lld steps, %lld skipped, final loss scale %g\n",
                       (long long)options.steps, (long long)result.skipped,
                       scale));
  if (csv) {
    std::fclose(csv);
    csv = nullptr;
    if (std::rename(csvPartial.c_str(), options.logCsv.c_str()) != 0) {
      std::remove(csvPartial.c_str());
      error = "cannot write '" + options.logCsv + "'";
      return false;
    }
  }
  return true;
}

bool readTrainedState(const TrainPlan &plan, TrainDevice &device,
                      std::vector<std::pair<std::string, Tensor>> &state,
                      std::string &error) {
  state.clear();
  for (const TrainPlan::State &s : plan.state) {
    Tensor t;
    toElementType(s.dtype, t.elementType);
    t.shape = s.shape;
    t.bytes.resize(s.bytes);
    void *pointer = nullptr;
    TrainProgram program =
        s.applyInput >= 0 ? TrainProgram::Apply : TrainProgram::Compute;
    int index = s.applyInput >= 0 ? s.applyInput : s.computeInput;
    if (!device.address(program, false, index, pointer, error) ||
        !device.toHost(t.bytes.data(), pointer, s.bytes, error))
      return false;
    state.emplace_back(s.name, std::move(t));
  }
  return true;
}

} // namespace amp_gpu
