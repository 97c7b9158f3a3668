//===- amp-train-gpu.cpp - data-parallel training on CUDA devices ---------===//
//
//   mpirun -np N amp-train-gpu --init init.ampgpu --compute compute.ampgpu
//       --apply apply.ampgpu --data x.npy --labels y.npy --batch-size B
//       --steps S [--accumulate K] [--save-state s.npz] [--log-csv log.csv]
//
// Runs the split train step of one program (amp-opt --train --split-step
// --amp-target=cuda, once per entry: initial_state, compute_gradients,
// apply_gradients) on one GPU per rank: each rank runs @compute_gradients
// on its shard of every global batch (gradients pre-divided by K*N, as
// PyTorch's DDP), the gradients, the float buffers and the loss go through
// one NCCL all-reduce (a flat device buffer; NCCL's id travels over MPI),
// and every rank runs @apply_gradients on the sums, so every rank skips the
// same overflowing steps. The batches, the log lines and the state file are
// amp-run --train's. Without mpirun it is one process (with --nccl, a
// one-rank NCCL communicator). It needs only the runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/BatchOrder.h"
#include "amp/Runtime/HostTensor.h"
#include "amp/Runtime/MpiLaunch.h"
#include "amp_gpu/Artifact.h"
#include "amp_gpu/DataParallelTrainer.h"
#include "amp_gpu/HostTypes.h"
#include "amp_gpu/TrainPlan.h"
#include "amp_gpu/amp_gpu.h"

#ifdef AMP_GPU_HAVE_NPZ
#include "amp/Runtime/Npz.h"
#endif
#ifdef AMP_GPU_HAVE_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using amp_gpu::DType;
using amp_gpu::TrainPlan;
using amp_runtime::ElementType;
using amp_runtime::Tensor;

namespace {

const char *kUsage =
    "usage: [mpirun -np N] amp-train-gpu --compute C.ampgpu --apply A.ampgpu\n"
    "           (--init I.ampgpu | --load-state S.npz) --data X.npy\n"
    "           --labels Y.npy --batch-size B --steps S [options]\n"
    "  --init FILE          the @initial_state artifact (the starting state)\n"
    "  --load-state FILE    a state saved by amp-run or amp-train-gpu (.npz)\n"
    "  --batch-size B       the global batch (split evenly over the ranks)\n"
    "  --accumulate K       micro-batches per optimizer step (default 1)\n"
    "  --steps S            optimizer steps\n"
    "  --no-shuffle         keep the data order (else --shuffle-seed N)\n"
    "  --log-every N        a progress line every N steps (default 10)\n"
    "  --log-csv FILE       step,loss,loss_scale,lr,found_inf,skipped\n"
    "  --save-state FILE    the final state (.npz; amp-run --load-state)\n"
    "  --replica-index R    Dropout replica index of rank 0 (default 0)\n"
    "  --device K           CUDA device (default: the rank on its node)\n"
    "  --nccl               one process: still all-reduce through NCCL\n"
    "  --rank-timeout S     fail an all-reduce waiting S s (default 1800)\n";

/// This process in the job: MPI's rank and size when launched by mpirun.
struct World {
  int rank = 0, size = 1;
  bool mpi = false;
};
World world;

/// Prints the error and ends the job: every rank when there are several
/// (MPI_Abort), so that none waits for this one in a collective.
[[noreturn]] void die(const std::string &message, int code = 1) {
  if (world.size > 1)
    std::fprintf(stderr, "amp-train-gpu: error: rank %d: %s\n", world.rank,
                 message.c_str());
  else
    std::fprintf(stderr, "amp-train-gpu: error: %s\n", message.c_str());
  std::fflush(stderr);
#ifdef AMP_GPU_HAVE_MPI
  if (world.mpi && world.size > 1)
    MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "amp-train-gpu: error: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

void check(AmpStatus status, const std::string &what) {
  if (status != AMP_OK)
    die(what + ": " + ampGetLastError(), status == AMP_NO_DEVICE ? 3 : 1);
}

struct Options {
  std::string init, compute, apply, loadState, saveState, data, labels;
  /// The loop's options (rank and ranks set from MPI).
  amp_gpu::TrainRunOptions run;
  bool nccl = false;
  int device = -1;
  double rankTimeout = 1800;
};

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto text = [&]() -> std::string {
      if (i + 1 >= argc)
        usageError(arg + " needs a value");
      return argv[++i];
    };
    auto number = [&](double low) {
      std::string v = text();
      char *end = nullptr;
      double value = std::strtod(v.c_str(), &end);
      bool whole = value == std::floor(value) || arg == "--rank-timeout";
      if (v.empty() || !end || *end || !(value >= low) || !whole)
        usageError(arg + ": '" + v + "' is not a whole number >= " +
                   std::to_string(int64_t(low)));
      return value;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--init")
      o.init = text();
    else if (arg == "--compute")
      o.compute = text();
    else if (arg == "--apply")
      o.apply = text();
    else if (arg == "--load-state")
      o.loadState = text();
    else if (arg == "--save-state")
      o.saveState = text();
    else if (arg == "--data")
      o.data = text();
    else if (arg == "--labels")
      o.labels = text();
    else if (arg == "--log-csv")
      o.run.logCsv = text();
    else if (arg == "--batch-size")
      o.run.batchSize = int64_t(number(1));
    else if (arg == "--accumulate")
      o.run.accumulate = int64_t(number(1));
    else if (arg == "--steps")
      o.run.steps = int64_t(number(1));
    else if (arg == "--log-every")
      o.run.logEvery = int64_t(number(1));
    else if (arg == "--replica-index")
      o.run.replicaIndex = int64_t(number(0));
    else if (arg == "--shuffle-seed")
      o.run.shuffleSeed = uint64_t(number(0));
    else if (arg == "--no-shuffle")
      o.run.shuffle = false;
    else if (arg == "--nccl")
      o.nccl = true;
    else if (arg == "--device")
      o.device = int(number(0));
    else if (arg == "--rank-timeout")
      o.rankTimeout = number(0);
    else
      usageError("unknown argument '" + arg + "'");
  }
  if (o.compute.empty() || o.apply.empty())
    usageError("--compute and --apply are required");
  if (o.init.empty() == o.loadState.empty())
    usageError("give exactly one of --init and --load-state");
  if (o.data.empty() || o.labels.empty())
    usageError("--data and --labels are required");
  if (o.run.batchSize < 1 || o.run.steps < 1)
    usageError("--batch-size and --steps are required");
#ifndef AMP_GPU_HAVE_NPZ
  if (!o.loadState.empty() || !o.saveState.empty())
    usageError("this amp-train-gpu was built without libzip: no .npz state "
               "files (install libzip-dev and rebuild)");
#endif
  return o;
}

amp_gpu::Artifact readArtifactOrDie(const std::string &path) {
  amp_gpu::Artifact artifact;
  std::string error;
  if (!amp_gpu::readArtifact(path, artifact, error))
    die(error);
  return artifact;
}

/// FNV-1a over the bytes: the ranks compare their starting states.
uint64_t digest(const std::vector<std::vector<char>> &parts) {
  uint64_t h = 1469598103934665603ull;
  for (const auto &part : parts)
    for (char c : part)
      h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

/// Every rank must run the same job: compares the values over MPI.
void checkRanksAgree(
    const std::vector<std::pair<const char *, int64_t>> &items) {
#ifdef AMP_GPU_HAVE_MPI
  if (world.size < 2)
    return;
  std::vector<int64_t> low, high;
  for (const auto &item : items)
    low.push_back(item.second);
  high = low;
  MPI_Allreduce(MPI_IN_PLACE, low.data(), int(low.size()), MPI_INT64_T, MPI_MIN,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, high.data(), int(high.size()), MPI_INT64_T,
                MPI_MAX, MPI_COMM_WORLD);
  for (size_t i = 0; i < items.size(); ++i)
    if (low[i] != high[i])
      die(std::string("the ranks disagree on ") + items[i].first +
          " (every rank must run the same job)");
#else
  (void)items;
#endif
}

/// The CUDA runtime as the trainer's device: one context, the two (three)
/// programs, and an NCCL communicator when there is one.
class CudaTrainDevice final : public amp_gpu::TrainDevice {
public:
  AmpContext *context = nullptr;
  AmpProgram *programs[3] = {nullptr, nullptr, nullptr};
  AmpCommunicator *comm = nullptr;
  double timeout = 0;
  std::vector<void *> allocations;

  ~CudaTrainDevice() override {
    for (void *pointer : allocations)
      ampDeviceFree(context, pointer);
    ampDestroyCommunicator(comm);
    for (AmpProgram *program : programs)
      ampUnload(program);
    ampDestroyContext(context);
  }
  static bool result(AmpStatus status, std::string &error) {
    if (status != AMP_OK)
      error = ampGetLastError();
    return status == AMP_OK;
  }
  bool address(amp_gpu::TrainProgram program, bool output, int index,
               void *&pointer, std::string &error) override {
    return result(
        ampGetTensorAddress(programs[int(program)], output, index, &pointer),
        error);
  }
  bool execute(amp_gpu::TrainProgram program, std::string &error) override {
    return result(ampExecute(programs[int(program)]), error);
  }
  bool copy(void *dst, const void *src, uint64_t bytes,
            std::string &error) override {
    if (dst == src) // an output that is its own input's storage
      return true;
    return result(ampCopyDevice(context, dst, src, bytes), error);
  }
  bool zero(void *dst, uint64_t bytes, std::string &error) override {
    return result(ampDeviceZero(context, dst, bytes), error);
  }
  bool toHost(void *host, const void *src, uint64_t bytes,
              std::string &error) override {
    return result(ampCopyToHost(context, host, src, bytes), error);
  }
  bool toDevice(void *dst, const void *host, uint64_t bytes,
                std::string &error) override {
    return result(ampCopyToDevice(context, dst, host, bytes), error);
  }
  bool allocate(uint64_t bytes, void *&pointer, std::string &error) override {
    if (!result(ampDeviceAlloc(context, bytes, &pointer), error))
      return false;
    allocations.push_back(pointer);
    return true;
  }
  bool hasCollective() const override { return comm != nullptr; }
  bool allReduce(void *flat, DType type, uint64_t summed, uint64_t averaged,
                 std::string &error) override {
    uint64_t counts[2] = {summed, averaged};
    int ops[2] = {AMP_REDUCE_SUM, AMP_REDUCE_AVG};
    return result(ampAllReduce(comm, flat, int(type), 2, counts, ops), error) &&
           result(ampCommunicatorWait(comm, timeout), error);
  }
};

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);

  if (amp_runtime::isLaunchedByMpi()) {
#ifdef AMP_GPU_HAVE_MPI
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS)
      die("MPI_Init failed");
    world.mpi = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world.size);
#else
    const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
    if (size && std::atoi(size) > 1)
      die("this process runs under an MPI launcher, but amp-train-gpu was "
          "built without MPI (install libopenmpi-dev and rebuild)");
#endif
  }
  int rank = world.rank, ranks = world.size;

  // Everything that needs no device first: the artifacts, the plan, the
  // batch split and the data.
  amp_gpu::Artifact compute = readArtifactOrDie(options.compute);
  amp_gpu::Artifact apply = readArtifactOrDie(options.apply);
  amp_gpu::Artifact init;
  if (!options.init.empty())
    init = readArtifactOrDie(options.init);
  TrainPlan plan;
  std::string error;
  if (!amp_gpu::planTraining(options.init.empty() ? nullptr : &init, compute,
                             apply, plan, error))
    die(error);
  if (!amp_gpu::checkBatchSplit(options.run.batchSize, ranks, plan.microBatch,
                                error))
    die(error);
  Tensor data, labels;
  if (!amp_gpu::readTrainingData(options.data, compute.inputs[plan.dataInput],
                                 data, error) ||
      !amp_gpu::readTrainingData(
          options.labels, compute.inputs[plan.labelsInput], labels, error))
    die(error);
  int64_t samples = data.shape[0];
  if (labels.shape[0] != samples)
    die("'" + options.labels + "' has " + std::to_string(labels.shape[0]) +
        " samples, '" + options.data + "' " + std::to_string(samples));
  if (options.run.batchSize > samples)
    die("--batch-size " + std::to_string(options.run.batchSize) +
        " is larger than the data set (" + std::to_string(samples) +
        " samples in '" + options.data + "')");

  // The starting state on the host when it comes from a file.
  std::vector<std::vector<char>> loaded(plan.state.size());
  int64_t batchesDone = 0;
#ifdef AMP_GPU_HAVE_NPZ
  if (!options.loadState.empty()) {
    amp_runtime::NamedTensors arrays;
    if (!amp_runtime::readNpz(options.loadState, arrays, error))
      die(error);
    for (auto &[name, tensor] : arrays)
      if (name == "amp_run.batches_done" && tensor.getNumElements() == 1)
        batchesDone = int64_t(tensor.getAsDouble(0));
    for (size_t s = 0; s < plan.state.size(); ++s) {
      const TrainPlan::State &state = plan.state[s];
      auto it = std::find_if(arrays.begin(), arrays.end(), [&](const auto &a) {
        return a.first == state.name;
      });
      if (it == arrays.end())
        die("state file '" + options.loadState + "' has no '" + state.name +
            "'");
      ElementType type = ElementType::F32;
      amp_gpu::toElementType(state.dtype, type);
      if (it->second.elementType != type || it->second.shape != state.shape)
        die("state file '" + options.loadState + "': '" + state.name + "' is " +
            amp_runtime::getElementTypeName(it->second.elementType) +
            amp_runtime::formatShape(it->second.shape) + ", the step takes " +
            amp_runtime::getElementTypeName(type) +
            amp_runtime::formatShape(state.shape));
      loaded[s] = it->second.bytes;
    }
  }
#endif
  checkRanksAgree({{"--batch-size", options.run.batchSize},
                   {"--accumulate", options.run.accumulate},
                   {"the number of steps", options.run.steps},
                   {"the number of samples", samples},
                   {"the starting state", int64_t(digest(loaded) >> 1)},
                   {"the starting batch", batchesDone}});

  // The device, the programs and the communicator.
  CudaTrainDevice device;
  int deviceIndex =
      options.device >= 0 ? options.device : amp_runtime::getLocalRank();
  check(ampCreateContext(deviceIndex, &device.context),
        "CUDA device " + std::to_string(deviceIndex));
  const std::string *paths[3] = {&options.init, &options.compute,
                                 &options.apply};
  for (int p = 0; p < 3; ++p)
    if (!paths[p]->empty())
      check(ampLoad(device.context, paths[p]->c_str(), &device.programs[p]),
            "loading");
  device.timeout = options.rankTimeout;
  int ncclVersion = 0;
  if (ranks > 1 || options.nccl) {
    check(ampCollectiveVersion(&ncclVersion), "NCCL");
    unsigned char id[AMP_COLLECTIVE_ID_BYTES] = {};
    if (rank == 0)
      check(ampCollectiveUniqueId(id), "NCCL");
#ifdef AMP_GPU_HAVE_MPI
    if (ranks > 1)
      MPI_Bcast(id, AMP_COLLECTIVE_ID_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
    check(ampCreateCommunicator(device.context, ranks, rank, id, &device.comm),
          "NCCL");
  }
  if (rank == 0) {
    if (device.comm)
      std::printf("collective: NCCL %d.%d.%d, %d rank(s), one all-reduce of "
                  "%llu bytes per step\n",
                  ncclVersion / 10000, ncclVersion / 100 % 100,
                  ncclVersion % 100, ranks,
                  (unsigned long long)plan.flatBytes());
    else
      std::printf("collective: none (one process)\n");
    std::fflush(stdout);
  }

  if (!amp_gpu::loadStartingState(
          plan, device, options.init.empty() ? loaded : decltype(loaded)(),
          error))
    die(error);
  if (device.programs[0]) {
    ampUnload(device.programs[0]);
    device.programs[0] = nullptr;
  }

  amp_gpu::TrainRunOptions &run = options.run;
  run.rank = rank;
  run.ranks = ranks;
  run.log = [](const std::string &line) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  };
  amp_gpu::TrainRunResult result;
  if (!amp_gpu::runTraining(plan, compute, apply, device, data, labels,
                            batchesDone, run, result, error))
    die(error);
  if (rank == 0 && device.comm)
    std::printf("all-reduce: %.3f ms per step (waiting for the slowest rank "
                "included), %llu bytes\n",
                1e3 * result.allReduceSeconds / double(options.run.steps),
                (unsigned long long)result.allReduceBytes);
#ifdef AMP_GPU_HAVE_NPZ
  if (rank == 0 && !options.saveState.empty()) {
    amp_runtime::NamedTensors arrays;
    if (!amp_gpu::readTrainedState(plan, device, arrays, error))
      die(error);
    Tensor done;
    done.elementType = ElementType::I64;
    done.bytes.resize(8);
    std::memcpy(done.bytes.data(), &result.batchesDone, 8);
    arrays.emplace_back("amp_run.batches_done", std::move(done));
    if (!amp_runtime::writeNpz(options.saveState, arrays, error))
      die(error);
  }
#endif
#ifdef AMP_GPU_HAVE_MPI
  if (world.mpi)
    MPI_Finalize();
#endif
  return 0;
}
