//===- CudaTrainEmulation.cpp - amp-train-gpu's loop on the CPU -----------===//
//
// amp-run --train --amp-cuda-emulate trains the split step's three CUDA
// artifacts (@initial_state, @compute_gradients, @apply_gradients), built
// in memory with their kernels compiled for the CPU, with the loop that
// amp-train-gpu runs on GPUs (amp_gpu::runTraining): host memory is the
// device, amp_gpu::HostProgram runs each artifact's schedule, and under
// mpirun the flat buffer goes through the MPI all-reduce where NCCL's would
// be. So the GPU driver's loop, state hand-offs, flat-buffer layout and
// collective are exercised without a GPU.
//
//===----------------------------------------------------------------------===//

#include "amp/Execution/CudaTrainEmulation.h"
#include "amp/Execution/CudaEmulation.h"
#include "amp/Runtime/Npz.h"
#include "amp_gpu/DataParallelTrainer.h"
#include "amp_gpu/HostExecutor.h"
#include "amp_gpu/TrainPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <cstring>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::execution;

namespace {

/// Host memory as the trainer's device: per program, one buffer per input
/// (kept between executions) and per output.
class HostTrainDevice final : public amp_gpu::TrainDevice {
public:
  struct Program {
    std::shared_ptr<EmulatedArtifact> code;
    std::vector<std::vector<char>> inputs, outputs;
  };
  Program programs[3];
  Communicator *communicator = nullptr;
  std::vector<std::unique_ptr<double[]>> allocations;

  void attach(amp_gpu::TrainProgram which,
              std::shared_ptr<EmulatedArtifact> code) {
    Program &p = programs[int(which)];
    const amp_gpu::Artifact &artifact = code->host->getArtifact();
    for (const amp_gpu::TensorSignature &sig : artifact.inputs)
      p.inputs.emplace_back(sig.byteSize(), 0);
    for (const amp_gpu::TensorSignature &sig : artifact.outputs)
      p.outputs.emplace_back(sig.byteSize(), 0);
    p.code = std::move(code);
  }

  bool address(amp_gpu::TrainProgram which, bool output, int index,
               void *&pointer, std::string &error) override {
    Program &p = programs[int(which)];
    auto &list = output ? p.outputs : p.inputs;
    if (!p.code || index < 0 || size_t(index) >= list.size()) {
      error = "no such tensor";
      return false;
    }
    pointer = list[index].data();
    return true;
  }
  bool execute(amp_gpu::TrainProgram which, std::string &error) override {
    Program &p = programs[int(which)];
    std::vector<const void *> in;
    std::vector<void *> out;
    for (auto &bytes : p.inputs)
      in.push_back(bytes.data());
    for (auto &bytes : p.outputs)
      out.push_back(bytes.data());
    return p.code->host->run(in, out, error);
  }
  bool copy(void *dst, const void *src, uint64_t bytes,
            std::string &) override {
    std::memmove(dst, src, bytes);
    return true;
  }
  bool zero(void *dst, uint64_t bytes, std::string &) override {
    std::memset(dst, 0, bytes);
    return true;
  }
  bool toHost(void *host, const void *src, uint64_t bytes,
              std::string &) override {
    std::memcpy(host, src, bytes);
    return true;
  }
  bool toDevice(void *dst, const void *host, uint64_t bytes,
                std::string &) override {
    std::memcpy(dst, host, bytes);
    return true;
  }
  bool allocate(uint64_t bytes, void *&pointer, std::string &) override {
    allocations.emplace_back(new double[(bytes + 7) / 8 + 1]());
    pointer = allocations.back().get();
    return true;
  }
  bool hasCollective() const override { return communicator != nullptr; }
  bool allReduce(void *flat, amp_gpu::DType type, uint64_t summed,
                 uint64_t averaged, std::string &error) override {
    // NCCL's ncclAvg is the sum times 1/N: the same here.
    double scale = 1.0 / communicator->getSize();
    llvm::Error err = llvm::Error::success();
    if (type == amp_gpu::DType::F32) {
      float *data = static_cast<float *>(flat);
      err = communicator->allReduceSum(data, summed + averaged);
      for (uint64_t i = summed; !err && i < summed + averaged; ++i)
        data[i] = float(data[i] * scale);
    } else if (type == amp_gpu::DType::F64) {
      double *data = static_cast<double *>(flat);
      err = communicator->allReduceSum(data, summed + averaged);
      for (uint64_t i = summed; !err && i < summed + averaged; ++i)
        data[i] *= scale;
    } else {
      error = std::string("an all-reduce of ") + amp_gpu::dtypeName(type) +
              " (f32 and f64 only on the CPU)";
      return false;
    }
    if (err) {
      error = llvm::toString(std::move(err));
      return false;
    }
    return true;
  }
};

LogicalResult train(ModuleOp module, const TrainLoopOptions &options,
                    const CudaArtifactOptions &cuda, llvm::raw_ostream &log,
                    int rank, int ranks) {
  auto fail = [&](const llvm::Twine &message) {
    llvm::errs() << "error: ";
    if (ranks > 1)
      llvm::errs() << "rank " << rank << ": ";
    llvm::errs() << message << "\n";
    return failure();
  };
  if (!options.evalData.empty() || !options.exportOnnx.empty())
    return fail("--amp-cuda-emulate trains the CUDA artifacts: no "
                "--eval-data or --export-onnx (train on the CPU path for "
                "those)");
  const char *entries[3] = {"initial_state", "compute_gradients",
                            "apply_gradients"};
  HostTrainDevice device;
  device.communicator = ranks > 1 ? options.communicator : nullptr;
  for (int p = 0; p < 3; ++p) {
    if (!module.lookupSymbol(entries[p]))
      return fail(llvm::Twine("--amp-cuda-emulate trains the split step: "
                              "the program has no @") +
                  entries[p] +
                  " (build it with amp-opt --train --split-step; amp-run "
                  "builds it so from ONNX)");
    // Each entry is lowered on its own copy (the lowering works in place).
    OwningOpRef<ModuleOp> copy = module.clone();
    CudaArtifactOptions entry = cuda;
    entry.entry = entries[p];
    FailureOr<std::shared_ptr<EmulatedArtifact>> artifact =
        compileEmulatedArtifact(*copy, entry);
    if (failed(artifact))
      return failure();
    device.attach(amp_gpu::TrainProgram(p), std::move(*artifact));
  }
  const amp_gpu::Artifact &init = device.programs[0].code->host->getArtifact();
  const amp_gpu::Artifact &compute =
      device.programs[1].code->host->getArtifact();
  const amp_gpu::Artifact &apply = device.programs[2].code->host->getArtifact();
  amp_gpu::TrainPlan plan;
  std::string error;
  if (!amp_gpu::planTraining(&init, compute, apply, plan, error) ||
      !amp_gpu::checkBatchSplit(options.batchSize, ranks, plan.microBatch,
                                error))
    return fail(error);
  amp_runtime::Tensor data, labels;
  if (!amp_gpu::readTrainingData(options.data, compute.inputs[plan.dataInput],
                                 data, error) ||
      !amp_gpu::readTrainingData(
          options.labels, compute.inputs[plan.labelsInput], labels, error))
    return fail(error);
  int64_t samples = data.shape[0];
  if (labels.shape[0] != samples)
    return fail("'" + options.labels + "' has " + llvm::Twine(labels.shape[0]) +
                " samples, '" + options.data + "' " + llvm::Twine(samples));
  if (options.batchSize > samples)
    return fail("--batch-size " + llvm::Twine(options.batchSize) +
                " is larger than the data set (" + llvm::Twine(samples) +
                " samples in '" + options.data + "')");
  int64_t perEpoch = samples / options.batchSize;
  int64_t steps = options.steps > 0
                      ? options.steps
                      : options.epochs * perEpoch / options.accumulate;

  std::vector<std::vector<char>> loaded;
  int64_t batchesDone = 0;
  if (!options.loadState.empty()) {
    amp_runtime::NamedTensors arrays;
    if (!amp_runtime::readNpz(options.loadState, arrays, error))
      return fail(error);
    llvm::StringMap<const amp_runtime::Tensor *> byName;
    for (auto &[name, tensor] : arrays)
      byName[name] = &tensor;
    if (auto *done = byName.lookup("amp_run.batches_done"))
      batchesDone = int64_t(done->getAsDouble(0));
    for (const amp_gpu::TrainPlan::State &state : plan.state) {
      const amp_runtime::Tensor *tensor = byName.lookup(state.name);
      if (!tensor || tensor->bytes.size() != state.bytes ||
          tensor->shape != state.shape)
        return fail("state file '" + options.loadState + "': no '" +
                    state.name + "' of the step's type and shape");
      loaded.push_back(tensor->bytes);
    }
  }
  if (ranks > 1) {
    // Every rank must run the same job (as the CPU path checks).
    for (auto [what, value] :
         {std::pair<const char *, double>{"--batch-size", options.batchSize},
          {"--accumulate", double(options.accumulate)},
          {"the number of steps", double(steps)},
          {"the number of samples", double(samples)},
          {"the starting batch", double(batchesDone)}}) {
      llvm::Expected<double> high = device.communicator->allReduceMax(value);
      if (!high)
        return fail(llvm::toString(high.takeError()));
      llvm::Expected<double> low = device.communicator->allReduceMax(-value);
      if (!low)
        return fail(llvm::toString(low.takeError()));
      if (*high != -*low)
        return fail(llvm::Twine("the ranks disagree on ") + what +
                    " (every rank must run the same job)");
    }
  }
  if (!amp_gpu::loadStartingState(plan, device, loaded, error))
    return fail(error);

  amp_gpu::TrainRunOptions run;
  run.batchSize = options.batchSize;
  run.accumulate = options.accumulate;
  run.steps = steps;
  run.logEvery = options.logEvery;
  run.replicaIndex = options.replicaIndex;
  run.shuffleSeed = options.shuffleSeed;
  run.shuffle = options.shuffle;
  run.rank = rank;
  run.ranks = ranks;
  run.logCsv = options.logCsv;
  run.log = [&log](const std::string &line) {
    log << line;
    log.flush();
  };
  if (rank == 0)
    log << "CUDA emulation: amp-train-gpu's loop over the split step's "
           "artifacts ("
        << (ranks > 1 ? "MPI all-reduce, " + std::to_string(ranks) + " ranks"
                      : std::string("one process"))
        << ")\n";
  amp_gpu::TrainRunResult result;
  if (!amp_gpu::runTraining(plan, compute, apply, device, data, labels,
                            batchesDone, run, result, error))
    return fail(error);
  if (rank == 0 && ranks > 1)
    log << llvm::format("all-reduce: %.3f ms per step (waiting for the "
                        "slowest rank included), %llu bytes\n",
                        1e3 * result.allReduceSeconds / double(steps),
                        (unsigned long long)result.allReduceBytes);
  if (rank == 0 && !options.saveState.empty()) {
    amp_runtime::NamedTensors arrays;
    if (!amp_gpu::readTrainedState(plan, device, arrays, error))
      return fail(error);
    amp_runtime::Tensor done;
    done.elementType = amp_runtime::ElementType::I64;
    done.bytes.resize(8);
    std::memcpy(done.bytes.data(), &result.batchesDone, 8);
    arrays.emplace_back("amp_run.batches_done", std::move(done));
    if (!amp_runtime::writeNpz(options.saveState, arrays, error))
      return fail(error);
  }
  return success();
}

} // namespace

LogicalResult mlir::amp::execution::trainCudaArtifactsEmulated(
    ModuleOp module, const TrainLoopOptions &options,
    const CudaArtifactOptions &cuda, llvm::raw_ostream &log) {
  Communicator *communicator = options.communicator;
  int ranks = communicator ? communicator->getSize() : 1;
  int rank = communicator ? communicator->getRank() : 0;
  LogicalResult result = train(module, options, cuda, log, rank, ranks);
  if (failed(result) && ranks > 1) {
    llvm::errs().flush();
    communicator->abort(1);
  }
  return result;
}
