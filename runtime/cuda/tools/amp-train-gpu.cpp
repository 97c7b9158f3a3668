//===- amp-train-gpu.cpp - data-parallel training on CUDA devices ---------===//
//
//   mpirun -np N amp-train-gpu --init init.ampgpu --compute compute.ampgpu \
//       --apply apply.ampgpu --data x.npy --labels y.npy --batch-size B \
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

#include "ToolSupport.h"
#include "amp/Runtime/BatchOrder.h"
#include "amp/Runtime/HostTensor.h"
#include "amp_gpu/Artifact.h"
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

bool launchedByMpi() {
  for (const char *name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(name))
      return true;
  return false;
}

int localRank() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "SLURM_LOCALID", "LOCAL_RANK"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  return 0;
}

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
  std::string init, compute, apply, loadState, saveState, data, labels, logCsv;
  int64_t batchSize = 0, accumulate = 1, steps = 0, logEvery = 10;
  int64_t replicaIndex = 0;
  uint64_t shuffleSeed = 0;
  bool shuffle = true, nccl = false;
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
      o.logCsv = text();
    else if (arg == "--batch-size")
      o.batchSize = int64_t(number(1));
    else if (arg == "--accumulate")
      o.accumulate = int64_t(number(1));
    else if (arg == "--steps")
      o.steps = int64_t(number(1));
    else if (arg == "--log-every")
      o.logEvery = int64_t(number(1));
    else if (arg == "--replica-index")
      o.replicaIndex = int64_t(number(0));
    else if (arg == "--shuffle-seed")
      o.shuffleSeed = uint64_t(number(0));
    else if (arg == "--no-shuffle")
      o.shuffle = false;
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
  if (o.batchSize < 1 || o.steps < 1)
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

/// Reads a data file and checks its rows against the compute input.
Tensor readRows(const std::string &path, const amp_gpu::TensorSignature &sig) {
  Tensor tensor;
  std::string error;
  if (!amp_runtime::readNpy(path, tensor, error))
    die(error);
  ElementType type;
  if (!amp_gpu::toElementType(sig.dtype, type))
    die("input '" + sig.name + "' has a type amp-train-gpu cannot feed");
  if (type == ElementType::BF16 && tensor.elementType == ElementType::F32)
    tensor = amp_runtime::convertF32Tensor(tensor, type);
  std::vector<int64_t> row(sig.shape.begin() + 1, sig.shape.end());
  if (tensor.elementType != type || tensor.shape.size() != sig.shape.size() ||
      !std::equal(row.begin(), row.end(), tensor.shape.begin() + 1))
    die("'" + path + "': input '" + sig.name + "' takes rows of " +
        amp_runtime::getElementTypeName(type) + amp_runtime::formatShape(row) +
        ", the file holds " +
        amp_runtime::getElementTypeName(tensor.elementType) +
        amp_runtime::formatShape(tensor.shape));
  return tensor;
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

double scalarAsDouble(const std::vector<char> &bytes, DType type) {
  switch (type) {
  case DType::F32: {
    float v;
    std::memcpy(&v, bytes.data(), 4);
    return v;
  }
  case DType::F64: {
    double v;
    std::memcpy(&v, bytes.data(), 8);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, bytes.data(), 8);
    return double(v);
  }
  default: {
    Tensor t;
    amp_gpu::toElementType(type, t.elementType);
    t.bytes = bytes;
    return t.getAsDouble(0);
  }
  }
}

std::vector<char> scalarBytes(double value, DType type) {
  std::vector<char> bytes(amp_gpu::dtypeSize(type));
  if (type == DType::F64)
    std::memcpy(bytes.data(), &value, 8);
  else if (type == DType::I64) {
    int64_t v = int64_t(value);
    std::memcpy(bytes.data(), &v, 8);
  } else {
    float v = float(value);
    std::memcpy(bytes.data(), &v, 4);
  }
  return bytes;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);

  if (launchedByMpi()) {
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
  if (!amp_gpu::checkBatchSplit(options.batchSize, ranks, plan.microBatch,
                                error))
    die(error);
  Tensor data = readRows(options.data, compute.inputs[plan.dataInput]);
  Tensor labels = readRows(options.labels, compute.inputs[plan.labelsInput]);
  int64_t samples = data.shape[0];
  if (labels.shape[0] != samples)
    die("'" + options.labels + "' has " + std::to_string(labels.shape[0]) +
        " samples, '" + options.data + "' " + std::to_string(samples));
  if (options.batchSize > samples)
    die("--batch-size " + std::to_string(options.batchSize) +
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
  checkRanksAgree({{"--batch-size", options.batchSize},
                   {"--accumulate", options.accumulate},
                   {"the number of steps", options.steps},
                   {"the number of samples", samples},
                   {"the starting state", int64_t(digest(loaded) >> 1)},
                   {"the starting batch", batchesDone}});

  // The device, the programs and the communicator.
  int device = options.device >= 0 ? options.device : localRank();
  AmpContext *context = nullptr;
  check(ampCreateContext(device, &context),
        "CUDA device " + std::to_string(device));
  AmpProgram *computeProgram = nullptr, *applyProgram = nullptr,
             *initProgram = nullptr;
  check(ampLoad(context, options.compute.c_str(), &computeProgram), "loading");
  check(ampLoad(context, options.apply.c_str(), &applyProgram), "loading");
  if (!options.init.empty())
    check(ampLoad(context, options.init.c_str(), &initProgram), "loading");

  AmpCommunicator *comm = nullptr;
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
    check(ampCreateCommunicator(context, ranks, rank, id, &comm), "NCCL");
  }
  if (rank == 0) {
    if (comm)
      std::printf("collective: NCCL %d.%d.%d, %d rank(s), one all-reduce of "
                  "%llu bytes per step\n",
                  ncclVersion / 10000, ncclVersion / 100 % 100,
                  ncclVersion % 100, ranks,
                  (unsigned long long)plan.flatBytes());
    else
      std::printf("collective: none (one process)\n");
    std::fflush(stdout);
  }

  auto address = [&](AmpProgram *program, int isOutput, int index) {
    void *pointer = nullptr;
    check(ampGetTensorAddress(program, isOutput, index, &pointer),
          "addressing a tensor");
    return pointer;
  };
  auto copy = [&](void *dst, const void *src, uint64_t bytes) {
    check(ampCopyDevice(context, dst, src, bytes), "copying state");
  };
  auto toDevice = [&](void *dst, const std::vector<char> &bytes) {
    check(ampCopyToDevice(context, dst, bytes.data(), bytes.size()),
          "copying to the device");
  };
  auto toHost = [&](const void *src, uint64_t bytes) {
    std::vector<char> out(bytes);
    check(ampCopyToHost(context, out.data(), src, bytes), "reading a result");
    return out;
  };

  // The starting state into both programs.
  if (initProgram)
    check(ampExecute(initProgram), "@initial_state");
  for (size_t s = 0; s < plan.state.size(); ++s) {
    const TrainPlan::State &state = plan.state[s];
    std::vector<void *> targets;
    if (state.computeInput >= 0)
      targets.push_back(address(computeProgram, 0, state.computeInput));
    if (state.applyInput >= 0)
      targets.push_back(address(applyProgram, 0, state.applyInput));
    for (void *target : targets) {
      if (initProgram)
        copy(target, address(initProgram, 1, state.initOutput), state.bytes);
      else
        toDevice(target, loaded[s]);
    }
  }
  check(ampContextSynchronize(context), "@initial_state");
  if (initProgram) {
    ampUnload(initProgram);
    initProgram = nullptr;
  }

  void *flat = nullptr;
  uint64_t flatElement = amp_gpu::dtypeSize(plan.flatType);
  check(ampDeviceAlloc(context, plan.flatBytes(), &flat),
        "the all-reduce buffer");
  char *flatBytes = static_cast<char *>(flat);

  FILE *csv = nullptr;
  std::string csvPartial = options.logCsv + ".partial";
  if (rank == 0 && !options.logCsv.empty()) {
    csv = std::fopen(csvPartial.c_str(), "w");
    if (!csv)
      die("cannot write '" + options.logCsv + "'");
    std::fprintf(csv, "step,loss,loss_scale,lr,found_inf,skipped\n");
  }

  const TrainPlan::State *scaleState =
      plan.lossScaleState >= 0 ? &plan.state[plan.lossScaleState] : nullptr;
  const TrainPlan::State *stepState =
      plan.stepState >= 0 ? &plan.state[plan.stepState] : nullptr;
  auto readState = [&](const TrainPlan::State &s) {
    return toHost(address(applyProgram, 0, s.applyInput), s.bytes);
  };
  double scale =
      scaleState ? scalarAsDouble(readState(*scaleState), DType::F32) : 1.0;
  amp_runtime::BatchSchedule schedule(samples, options.batchSize,
                                      options.shuffleSeed, options.shuffle);
  const amp_gpu::TensorSignature &lossSig = compute.outputs[plan.lossOutput];
  int64_t K = options.accumulate, skipped = 0;
  double lastLoss = 0, lastLr = 0;
  const char *zeroFlag = "\0\0\0\0";
  auto start = std::chrono::steady_clock::now();
  double allReduceSeconds = 0;
  for (int64_t n = 0; n < options.steps; ++n, batchesDone += K) {
    double scaleIn = scale;
    int64_t stepValue =
        stepState ? int64_t(scalarAsDouble(readState(*stepState), DType::I64))
                  : 0;
    toDevice(address(computeProgram, 0, plan.gradScaleInput),
             scalarBytes(scale / double(K * ranks), DType::F32));
    for (const TrainPlan::Gradient &g : plan.gradients)
      check(ampDeviceZero(context, address(computeProgram, 0, g.computeInput),
                          g.bytes),
            "zeroing the gradients");
    if (plan.dropoutReplicaInput >= 0)
      toDevice(address(computeProgram, 0, plan.dropoutReplicaInput),
               scalarBytes(double(options.replicaIndex + rank), DType::I64));
    double lossSum = 0;
    for (int64_t k = 0; k < K; ++k) {
      std::vector<int64_t> rows = schedule.rows(batchesDone + k, rank, ranks);
      Tensor x = amp_runtime::gatherRows(data, rows);
      Tensor y = amp_runtime::gatherRows(labels, rows);
      check(ampSetInput(computeProgram, plan.dataInput, x.bytes.data()),
            "input");
      check(ampSetInput(computeProgram, plan.labelsInput, y.bytes.data()),
            "labels");
      if (plan.dropoutCounterInput >= 0)
        toDevice(address(computeProgram, 0, plan.dropoutCounterInput),
                 scalarBytes(double(stepValue * K + k), DType::I64));
      check(ampExecute(computeProgram),
            "step " + std::to_string(n + 1) + ": @compute_gradients");
      lossSum +=
          scalarAsDouble(toHost(address(computeProgram, 1, plan.lossOutput),
                                lossSig.byteSize()),
                         lossSig.dtype);
      // The accumulators and the buffers go round for the next micro-batch.
      for (const TrainPlan::Gradient &g : plan.gradients)
        if (k + 1 < K)
          copy(address(computeProgram, 0, g.computeInput),
               address(computeProgram, 1, g.computeOutput), g.bytes);
      for (const TrainPlan::State &s : plan.state)
        if (s.computeOutput >= 0 && k + 1 < K)
          copy(address(computeProgram, 0, s.computeInput),
               address(computeProgram, 1, s.computeOutput), s.bytes);
    }
    double loss = lossSum / double(K);

    // One all-reduce: [gradients (sum)] [float buffers, loss (mean)].
    for (const TrainPlan::Gradient &g : plan.gradients)
      copy(flatBytes + g.flatOffset * flatElement,
           address(computeProgram, 1, g.computeOutput), g.bytes);
    for (const TrainPlan::State &s : plan.state)
      if (s.averaged)
        copy(flatBytes + s.flatOffset * flatElement,
             address(computeProgram, 1, s.computeOutput), s.bytes);
    toDevice(flatBytes + plan.lossOffset * flatElement,
             scalarBytes(loss, plan.flatType));
    if (comm) {
      auto reduceStart = std::chrono::steady_clock::now();
      uint64_t counts[2] = {plan.summedCount, plan.averagedCount};
      int ops[2] = {AMP_REDUCE_SUM, AMP_REDUCE_AVG};
      check(ampAllReduce(comm, flat, int(plan.flatType), 2, counts, ops),
            "step " + std::to_string(n + 1));
      check(ampCommunicatorWait(comm, options.rankTimeout),
            "step " + std::to_string(n + 1));
      allReduceSeconds += std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - reduceStart)
                              .count();
    }
    for (const TrainPlan::Gradient &g : plan.gradients)
      copy(address(applyProgram, 0, g.applyInput),
           flatBytes + g.flatOffset * flatElement, g.bytes);
    for (const TrainPlan::State &s : plan.state) {
      if (s.averaged)
        copy(address(computeProgram, 0, s.computeInput),
             flatBytes + s.flatOffset * flatElement, s.bytes);
      else if (s.computeOutput >= 0)
        copy(address(computeProgram, 0, s.computeInput),
             address(computeProgram, 1, s.computeOutput), s.bytes);
    }
    loss = scalarAsDouble(
        toHost(flatBytes + plan.lossOffset * flatElement, flatElement),
        plan.flatType);

    // A non-finite gradient of any rank is non-finite in the sum, which
    // @apply_gradients checks itself: no flag of its own to pass in.
    check(ampCopyToDevice(context, address(applyProgram, 0, plan.foundInfInput),
                          zeroFlag, 4),
          "found_inf");
    check(ampExecute(applyProgram),
          "step " + std::to_string(n + 1) + ": @apply_gradients");
    bool overflow =
        scalarAsDouble(toHost(address(applyProgram, 1, plan.foundInfOutput), 4),
                       DType::F32) != 0;
    if (plan.lrOutput >= 0)
      lastLr = scalarAsDouble(toHost(address(applyProgram, 1, plan.lrOutput),
                                     apply.outputs[plan.lrOutput].byteSize()),
                              apply.outputs[plan.lrOutput].dtype);
    for (const TrainPlan::State &s : plan.state) {
      if (s.applyOutput < 0)
        continue;
      void *updated = address(applyProgram, 1, s.applyOutput);
      copy(address(applyProgram, 0, s.applyInput), updated, s.bytes);
      if (s.computeInput >= 0)
        copy(address(computeProgram, 0, s.computeInput), updated, s.bytes);
    }
    if (scaleState)
      scale = scalarAsDouble(readState(*scaleState), DType::F32);
    if (overflow && !scaleState)
      die("step " + std::to_string(n + 1) +
          ": non-finite gradients (no loss scaling to back off; the "
          "parameters are not updated)");
    skipped += overflow;
    lastLoss = loss;
    if (csv)
      std::fprintf(csv, "%lld,%.9g,%.9g,%.9g,%d,%lld\n", (long long)(n + 1),
                   loss, scaleIn, lastLr, int(overflow), (long long)skipped);
    if (rank == 0 &&
        ((n + 1) % options.logEvery == 0 || n + 1 == options.steps)) {
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      std::printf("step %lld  loss %.6f  scale %g  lr %.6g  skipped %lld  "
                  "%.2f steps/s\n",
                  (long long)(n + 1), lastLoss, scaleIn, lastLr,
                  (long long)skipped, (n + 1) / std::max(seconds, 1e-9));
      std::fflush(stdout);
    }
  }
  if (rank == 0) {
    std::printf("done: %lld steps, %lld skipped, final loss scale %g\n",
                (long long)options.steps, (long long)skipped, scale);
    if (comm)
      std::printf("all-reduce: %.3f ms per step (waiting for the slowest "
                  "rank included), %llu bytes\n",
                  1e3 * allReduceSeconds / double(options.steps),
                  (unsigned long long)plan.flatBytes());
  }
  if (csv) {
    std::fclose(csv);
    if (std::rename(csvPartial.c_str(), options.logCsv.c_str()) != 0)
      die("cannot write '" + options.logCsv + "'");
  }
#ifdef AMP_GPU_HAVE_NPZ
  if (rank == 0 && !options.saveState.empty()) {
    amp_runtime::NamedTensors arrays;
    for (const TrainPlan::State &s : plan.state) {
      Tensor t;
      amp_gpu::toElementType(s.dtype, t.elementType);
      t.shape = s.shape;
      t.bytes =
          s.applyInput >= 0
              ? readState(s)
              : toHost(address(computeProgram, 0, s.computeInput), s.bytes);
      arrays.emplace_back(s.name, std::move(t));
    }
    Tensor done;
    done.elementType = ElementType::I64;
    done.bytes = scalarBytes(double(batchesDone), DType::I64);
    arrays.emplace_back("amp_run.batches_done", std::move(done));
    if (!amp_runtime::writeNpz(options.saveState, arrays, error))
      die(error);
  }
#endif
  ampDeviceFree(context, flat);
  ampDestroyCommunicator(comm);
  ampUnload(computeProgram);
  ampUnload(applyProgram);
  ampDestroyContext(context);
#ifdef AMP_GPU_HAVE_MPI
  if (world.mpi)
    MPI_Finalize();
#endif
  return 0;
}
