//===- TrainLoop.cpp - training on the CPU --------------------------------===//

#include "amp/Execution/TrainLoop.h"

#include "amp/Execution/CpuProgram.h"
#include "amp/Execution/CudaTrainEmulation.h"
#include "amp/Execution/TrainSession.h"
#include "amp/Runtime/BatchOrder.h"
#include "amp/Runtime/Npz.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "amp/Target/ONNX/ONNXWeights.h"
#include "amp/Training/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::execution;
using amp_runtime::gatherRows;

//===----------------------------------------------------------------------===//
// Flags
//===----------------------------------------------------------------------===//

static llvm::Error loopError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

void TrainLoopOptions::bind(OptionsBinder &b) {
  b.bind({"data", "Training inputs (.npy/.pb), samples along dimension 0"},
         data);
  b.bind({"labels", "Training labels/targets"}, labels);
  b.bind({"eval-data", "Evaluation inputs"}, evalData);
  b.bind({"eval-labels", "Evaluation labels/targets"}, evalLabels);
  b.bind({"batch-size", "Samples per step (32)"}, batchSize);
  b.bind({"epochs", "Passes over the data"}, epochs);
  b.bind({"steps", "Steps to run"}, steps);
  int64_t seed = static_cast<int64_t>(shuffleSeed);
  b.bind({"shuffle-seed", "Seed of the per-epoch shuffle (0)"}, seed);
  shuffleSeed = static_cast<uint64_t>(seed);
  bool noShuffle = !shuffle;
  b.bind({"no-shuffle", "Keep the data order"}, noShuffle);
  shuffle = !noShuffle;
  b.bind({"log-every", "Progress line every N steps (10)"}, logEvery);
  b.bind({"accumulate",
          "Micro-batches per optimizer step (needs a program built with "
          "--split-step; amp-run builds it so from ONNX)"},
         accumulate);
  b.bind({"replica-index",
          "This replica's index among data-parallel replicas: its Dropout "
          "masks differ from the others' (0: a single process's masks)"},
         replicaIndex);
  b.bind({"rank-timeout",
          "Data-parallel training (mpirun): end the job when no step "
          "finishes for this many seconds (1800; 0: never)"},
         rankTimeout);
  b.bind({"load-state", "Start from this state (.npz)"}, loadState);
  b.bind({"save-state", "Write the final state (.npz)"}, saveState);
  b.bind({"log-csv", "Per-step log (CSV)"}, logCsv);
  b.bind({"export-onnx",
          "Write the ONNX model with the trained weights (inference mode) to "
          "this file"},
         exportOnnx);
}

llvm::Error TrainLoopOptions::validate() const {
  if (accumulate < 1)
    return loopError("--accumulate must be >= 1");
  if (replicaIndex < 0 || replicaIndex > UINT32_MAX)
    return loopError("--replica-index must be in [0, 2^32)");
  if (data.empty() || labels.empty())
    return loopError("--train needs --data and --labels");
  if ((epochs > 0) == (steps > 0))
    return loopError("give exactly one of --epochs N and --steps N (N > 0)");
  if (batchSize < 1)
    return loopError("--batch-size must be >= 1");
  if (evalData.empty() != evalLabels.empty())
    return loopError("--eval-data and --eval-labels go together");
  if (logEvery < 1)
    return loopError("--log-every must be >= 1");
  if (rankTimeout < 0)
    return loopError("--rank-timeout must be >= 0");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The loop
//===----------------------------------------------------------------------===//

namespace {

int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Trainer {
public:
  Trainer(const TrainLoopOptions &options, llvm::raw_ostream &log)
      : options(options),
        ranks(options.communicator ? options.communicator->getSize() : 1),
        rank(options.communicator ? options.communicator->getRank() : 0),
        log(rank == 0 ? log : llvm::nulls()) {}
  LogicalResult run(ModuleOp module);

private:
  LogicalResult fail(const Twine &message) {
    llvm::errs() << "error: ";
    if (ranks > 1)
      llvm::errs() << "rank " << rank << ": ";
    llvm::errs() << message << "\n";
    return failure();
  }
  LogicalResult readData(MLIRContext *context, StringRef dataPath,
                         StringRef labelsPath, Tensor &data, Tensor &labels,
                         bool forEval);
  LogicalResult loadState();
  LogicalResult saveState();
  LogicalResult evaluate(const Tensor &data, const Tensor &labels);
  /// Data parallelism: every rank must run the same job (the same steps,
  /// batches, data size and starting state); a difference is an error on
  /// every rank.
  LogicalResult checkRanksAgree(int64_t total, int64_t samples);

  const TrainLoopOptions &options;
  /// Data parallelism: this process is rank `rank` of `ranks`.
  int ranks = 1, rank = 0;
  /// The progress (rank 0's; the others write nothing).
  llvm::raw_ostream &log;
  /// The compiled program and its state.
  std::unique_ptr<TrainSession> session;
  TrainLayout layout;
  const CpuFunction *step = nullptr, *main = nullptr;
  int64_t batchesDone = 0;
  int64_t numClasses = 0;
};

LogicalResult Trainer::readData(MLIRContext *context, StringRef dataPath,
                                StringRef labelsPath, Tensor &data,
                                Tensor &labels, bool forEval) {
  auto x = readTensorFile(dataPath, context, options.limits);
  if (!x)
    return fail(llvm::toString(x.takeError()));
  auto y = readTensorFile(labelsPath, context, options.limits);
  if (!y)
    return fail(llvm::toString(y.takeError()));
  data = std::move(*x);
  labels = std::move(*y);
  if (data.shape.empty() || labels.shape.empty())
    return fail("'" + dataPath + "' and '" + labelsPath +
                "' must hold samples along dimension 0");
  if (data.shape[0] != labels.shape[0])
    return fail("'" + dataPath + "' has " + Twine(data.shape[0]) +
                " samples but '" + labelsPath + "' has " +
                Twine(labels.shape[0]));
  if (!forEval && options.batchSize > data.shape[0])
    return fail("--batch-size " + Twine(options.batchSize) +
                " is larger than the data set (" + Twine(data.shape[0]) +
                " samples in '" + dataPath + "')");
  // Shapes and types, checked on a first batch (the train step may have a
  // static batch size, one rank's share of the global batch; @main takes
  // any).
  int64_t shard = options.batchSize / ranks;
  std::vector<int64_t> first;
  for (int64_t i = 0; i < std::min(data.shape[0], shard); ++i)
    first.push_back(i);
  const CpuFunction &fn = forEval ? *main : *step;
  unsigned inputArg = forEval ? layout.mainState.size() : layout.inputArgs[0];
  if (llvm::Error err = fn.checkInput(inputArg, gatherRows(data, first),
                                      dataPath))
    return fail(llvm::toString(std::move(err)));
  if (data.shape[0] >= shard)
    if (llvm::Error err = step->checkInput(
            layout.labelsArg, gatherRows(labels, first), labelsPath))
      return fail(llvm::toString(std::move(err)));
  if (numClasses > 0 && labels.elementType == amp_runtime::ElementType::I64) {
    const int64_t *values = reinterpret_cast<const int64_t *>(labels.bytes.data());
    for (int64_t i = 0; i < labels.getNumElements(); ++i)
      if (values[i] < 0 || values[i] >= numClasses)
        return fail("'" + labelsPath + "': label " + Twine(values[i]) +
                    " at index " + Twine(i) + " is out of range [0, " +
                    Twine(numClasses) + ")");
  }
  return success();
}

/// FNV-1a over the state's bytes, folded to 52 bits (exact in a double).
static double stateDigest(const amp_runtime::NamedTensors &state) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const auto &[name, tensor] : state) {
    for (char c : name)
      hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    for (char c : tensor.bytes)
      hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  }
  return static_cast<double>(hash >> 12);
}

LogicalResult Trainer::checkRanksAgree(int64_t total, int64_t samples) {
  struct Item {
    const char *what;
    double value;
  };
  const Item items[] = {
      {"--batch-size", double(options.batchSize)},
      {"--accumulate", double(options.accumulate)},
      {"the number of steps", double(total)},
      {"the number of samples", double(samples)},
      {"the starting state (--load-state)",
       stateDigest(session->getNamedState())},
  };
  for (const Item &item : items) {
    // The largest value and the largest negated one: equal everywhere
    // exactly when every rank has the same.
    llvm::Expected<double> most =
        options.communicator->allReduceMax(item.value);
    if (!most)
      return fail(llvm::toString(most.takeError()));
    llvm::Expected<double> least =
        options.communicator->allReduceMax(-item.value);
    if (!least)
      return fail(llvm::toString(least.takeError()));
    if (*most != -*least)
      return fail(Twine("the ranks disagree on ") + item.what +
                  " (every rank must run the same job)");
  }
  return success();
}

LogicalResult Trainer::loadState() {
  amp_runtime::NamedTensors arrays;
  std::string error;
  if (!amp_runtime::readNpz(options.loadState, arrays, error))
    return fail(error);
  if (llvm::Error err = session->setNamedState(
          arrays, "state file '" + options.loadState + "'", &batchesDone))
    return fail(llvm::toString(std::move(err)));
  return success();
}

LogicalResult Trainer::saveState() {
  amp_runtime::NamedTensors arrays = session->getNamedState();
  arrays.emplace_back("amp_run.batches_done", scalarTensor(batchesDone));
  std::string error;
  if (!amp_runtime::writeNpz(options.saveState, arrays, error))
    return fail(error);
  return success();
}


LogicalResult Trainer::evaluate(const Tensor &data, const Tensor &labels) {
  int64_t count = data.shape[0];
  double correct = 0, squared = 0;
  int64_t elements = 0;
  for (int64_t start = 0; start < count; start += options.batchSize) {
    std::vector<int64_t> rows;
    for (int64_t i = start; i < std::min(count, start + options.batchSize); ++i)
      rows.push_back(i);
    std::vector<Tensor> results;
    if (llvm::Error err = session->predict(gatherRows(data, rows), results))
      return fail("evaluation: " + llvm::toString(std::move(err)));
    const Tensor &out = results[0];
    Tensor target = gatherRows(labels, rows);
    if (numClasses > 0) {
      int64_t classes = out.shape.size() > 1 ? out.shape[1] : 1;
      for (size_t r = 0; r < rows.size(); ++r) {
        int64_t best = 0;
        for (int64_t c = 1; c < classes; ++c)
          if (out.getAsDouble(r * classes + c) >
              out.getAsDouble(r * classes + best))
            best = c;
        correct += best == static_cast<int64_t>(target.getAsDouble(r));
      }
    } else {
      for (int64_t i = 0; i < out.getNumElements(); ++i) {
        double d = out.getAsDouble(i) - target.getAsDouble(i);
        squared += d * d;
      }
      elements += out.getNumElements();
    }
  }
  if (numClasses > 0)
    log << llvm::format("eval: accuracy %.2f%% (%lld samples)\n",
                        100.0 * correct / count,
                        static_cast<long long>(count));
  else
    log << llvm::format("eval: mse %.6g (%lld samples)\n",
                        elements ? squared / elements : 0.0,
                        static_cast<long long>(count));
  return success();
}

LogicalResult Trainer::run(ModuleOp module) {
  if (options.accumulate > 1)
    if (!module.lookupSymbol("compute_gradients") ||
        !module.lookupSymbol("apply_gradients"))
      return fail("--accumulate needs @compute_gradients and "
                  "@apply_gradients (build the program with amp-opt --train "
                  "--split-step)");
  if (ranks > 1) {
    if (!module.lookupSymbol("compute_gradients") ||
        !module.lookupSymbol("apply_gradients"))
      return fail("data-parallel training needs @compute_gradients and "
                  "@apply_gradients (build the program with amp-opt --train "
                  "--split-step; amp-run builds it so from ONNX)");
    if (options.batchSize % ranks != 0)
      return fail("--batch-size " + Twine(options.batchSize) +
                  " (the global batch) does not split evenly over " +
                  Twine(ranks) + " ranks");
    log << "data-parallel: " << options.communicator->describe() << ", "
        << options.batchSize / ranks << " samples per rank per micro-batch\n";
  }
  TrainSession::Options sessionOptions;
  sessionOptions.split = options.accumulate > 1 || ranks > 1;
  // Each rank draws its own Dropout masks; rank 0 a single process's.
  sessionOptions.replicaIndex = options.replicaIndex + rank;
  sessionOptions.communicator = ranks > 1 ? options.communicator : nullptr;
  sessionOptions.lowering = options.lowering;
  auto created = TrainSession::create(module, sessionOptions);
  if (failed(created))
    return failure();
  session = std::move(*created);
  layout = session->getLayout();
  step = &session->getStep();
  main = &session->getMain();
  numClasses = session->getNumClasses();
  if (!options.loadState.empty() && failed(loadState()))
    return failure();

  Tensor data, labels, evalData, evalLabels;
  MLIRContext *context = module.getContext();
  if (failed(readData(context, options.data, options.labels, data, labels,
                      /*forEval=*/false)))
    return failure();
  int64_t samples = data.shape[0];
  if (options.batchSize > samples)
    return fail("--batch-size " + Twine(options.batchSize) +
                " is larger than the data set (" + Twine(samples) +
                " samples in '" + options.data + "')");
  if (!options.evalData.empty() &&
      failed(readData(context, options.evalData, options.evalLabels,
                      evalData, evalLabels, /*forEval=*/true)))
    return failure();
  int64_t perEpoch = samples / options.batchSize;
  int64_t total = options.steps > 0
                      ? options.steps
                      : options.epochs * perEpoch / options.accumulate;
  if (ranks > 1 && failed(checkRanksAgree(total, samples)))
    return failure();
  // A rank that waits in an all-reduce for one that hung would wait
  // forever: a watchdog ends the job when no step finishes in time.
  std::atomic<int64_t> lastProgress{nowSeconds()};
  std::atomic<bool> finished{false};
  std::thread watchdog;
  if (ranks > 1 && options.rankTimeout > 0)
    watchdog = std::thread([&] {
      while (!finished.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (nowSeconds() - lastProgress.load() > options.rankTimeout) {
          llvm::errs() << "error: rank " << rank << ": no step finished for "
                       << options.rankTimeout
                       << " s (another rank hung or died; --rank-timeout)\n";
          llvm::errs().flush();
          std::_Exit(1); // the launcher then ends the other ranks
        }
      }
    });
  // Only the steps are watched: evaluation and writing may take longer.
  auto stopWatchdog = [&] {
    finished = true;
    if (watchdog.joinable())
      watchdog.join();
  };
  auto stopOnReturn = llvm::make_scope_exit(stopWatchdog);

  std::unique_ptr<llvm::raw_fd_ostream> csv;
  std::string csvPartial = options.logCsv + ".partial";
  if (!options.logCsv.empty() && rank == 0) {
    std::error_code ec;
    csv = std::make_unique<llvm::raw_fd_ostream>(csvPartial, ec);
    if (ec)
      return fail("cannot write '" + options.logCsv + "': " + ec.message());
    *csv << "step,loss,loss_scale,lr,found_inf,skipped\n";
  }
  auto dropCsv = [&] {
    if (csv) {
      csv.reset();
      llvm::sys::fs::remove(csvPartial);
    }
  };

  int64_t skipped = 0;
  double lastLr = 0, lastLoss = 0;
  auto start = std::chrono::steady_clock::now();
  std::vector<Tensor> results;
  amp_runtime::BatchSchedule schedule(samples, options.batchSize,
                                      options.shuffleSeed, options.shuffle);
  int64_t K = options.accumulate;
  for (int64_t n = 0; n < total; ++n, batchesDone += K) {
    double scaleIn = session->getLossScale();
    llvm::Expected<StepOutcome> stepped =
        K == 1 && ranks == 1
            ? session->step(gatherRows(data, schedule.rows(batchesDone)),
                            gatherRows(labels, schedule.rows(batchesDone)),
                            results)
            : session->accumulatedStep(
                  [&](int64_t k) {
                    std::vector<int64_t> rows =
                        schedule.rows(batchesDone + k, rank, ranks);
                    return std::make_pair(gatherRows(data, rows),
                                          gatherRows(labels, rows));
                  },
                  K, results);
    if (!stepped) {
      dropCsv();
      return fail("step " + Twine(n + 1) + ": " +
                  llvm::toString(stepped.takeError()));
    }
    lastProgress = nowSeconds();
    StepOutcome outcome = session->outcomeOf(results, scaleIn);
    lastLoss = outcome.loss;
    bool overflow = outcome.overflow;
    skipped += overflow;
    lastLr = outcome.lr;
    if (csv)
      *csv << n + 1 << "," << llvm::format("%.9g", lastLoss) << ","
           << llvm::format("%.9g", scaleIn) << ","
           << llvm::format("%.9g", lastLr) << "," << int(overflow) << ","
           << skipped << "\n";
    if (llvm::Error err = session->checkOverflow(outcome, results, n + 1)) {
      dropCsv();
      return fail(llvm::toString(std::move(err)));
    }
    if ((n + 1) % options.logEvery == 0 || n + 1 == total) {
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      log << llvm::format("step %lld  loss %.6f  scale %g  lr %.6g  skipped "
                          "%lld  %.2f steps/s\n",
                          static_cast<long long>(n + 1), lastLoss,
                          scaleIn, lastLr, static_cast<long long>(skipped),
                          (n + 1) / std::max(seconds, 1e-9));
    }
  }
  stopWatchdog();
  double finalScale = session->getLossScale();
  log << llvm::format("done: %lld steps, %lld skipped, final loss scale %g\n",
                      static_cast<long long>(total),
                      static_cast<long long>(skipped), finalScale);
  if (ranks > 1) {
    const TrainSession::AllReduceStats &stats = session->getAllReduceStats();
    log << llvm::format("all-reduce: %.3f ms per step (waiting for the "
                        "slowest rank included), %zu bytes\n",
                        stats.calls ? 1e3 * stats.seconds / stats.calls : 0.0,
                        stats.bytes);
  }
  // Every rank holds the same state: rank 0 evaluates and writes.
  if (rank != 0)
    return success();
  if (!options.evalData.empty() && failed(evaluate(evalData, evalLabels))) {
    dropCsv();
    return failure();
  }
  if (!options.saveState.empty() && failed(saveState())) {
    dropCsv();
    return failure();
  }
  if (!options.exportOnnx.empty())
    if (llvm::Error err = session->exportOnnx(
            options.exportOnnx, options.sourceModel, options.sourceModelBytes)) {
      dropCsv();
      return fail(llvm::toString(std::move(err)));
    }
  if (csv) {
    csv->close();
    csv.reset();
    if (std::error_code ec = llvm::sys::fs::rename(csvPartial, options.logCsv))
      return fail("cannot write '" + options.logCsv + "': " + ec.message());
  }
  return success();
}

} // namespace

LogicalResult mlir::amp::execution::runTrainLoop(ModuleOp module,
                                                 const TrainLoopOptions &options,
                                                 llvm::raw_ostream &log) {
  if (options.cudaArtifacts)
    return trainCudaArtifactsEmulated(module, options, *options.cudaArtifacts,
                                      log);
  Trainer trainer(options, log);
  LogicalResult result = trainer.run(module);
  // A failed rank must not leave the others waiting in an all-reduce.
  if (failed(result) && options.communicator &&
      options.communicator->getSize() > 1) {
    llvm::errs().flush();
    options.communicator->abort(1);
  }
  return result;
}

LogicalResult mlir::amp::execution::trainModel(
    StringRef path, MLIRContext &context, llvm::SourceMgr &sourceMgr,
    llvm::raw_ostream &log, TrainLoopOptions loop,
    training::TrainStepOptions stepOptions) {
  auto fail = [](llvm::Error err) {
    llvm::errs() << "error: " << llvm::toString(std::move(err)) << "\n";
    return failure();
  };
  if (llvm::Error err = loop.validate())
    return fail(std::move(err));
  bool isOnnx = isONNXFile(path);
  if (isOnnx) {
    if (llvm::Error err = stepOptions.validate())
      return fail(std::move(err));
    int ranks = loop.communicator ? loop.communicator->getSize() : 1;
    // The step's static batch is one rank's share of the global batch.
    if (stepOptions.batchSize == 0)
      stepOptions.batchSize =
          loop.batchSize % ranks == 0 ? loop.batchSize / ranks : loop.batchSize;
    if (loop.accumulate > 1 || ranks > 1 || loop.cudaArtifacts)
      stepOptions.splitStep = true;
    stepOptions.frontEnd.foldMaxBytes = loop.limits.maxFoldBytes;
    if (stepOptions.frontEnd.runAutocast)
      if (llvm::Error err = checkAutocastOptions(stepOptions.frontEnd.autocast))
        return fail(std::move(err));
  }
  if (!loop.exportOnnx.empty())
    loop.sourceModel = path.str();
  auto module = loadModel(path, context, sourceMgr, /*forTraining=*/isOnnx,
                          loop.limits);
  if (failed(module))
    return failure();
  if (!isOnnx) {
    // A built program carries its ONNX model (amp-opt --train from an
    // .onnx file); the lowering does not need it.
    std::optional<std::string> source = getONNXSource(**module);
    (**module)->removeAttr(kONNXSourceAttrName);
    if (!loop.exportOnnx.empty()) {
      if (!source)
        return fail(llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "--export-onnx: '" + path +
                "' carries no ONNX model to write (build it with amp-opt "
                "--train from an .onnx file, or give the .onnx model)"));
      loop.sourceModelBytes = std::move(*source);
    }
  }
  if (isOnnx && failed(training::buildTrainStep(**module, stepOptions)))
    return failure();
  return runTrainLoop(**module, loop, log);
}

LogicalResult mlir::amp::execution::storeONNXSource(ModuleOp module,
                                                    llvm::StringRef onnxPath) {
  std::vector<std::string> trained;
  auto init = module.lookupSymbol<func::FuncOp>("initial_state");
  for (unsigned i = 0; init && i < init.getNumResults(); ++i) {
    StringRef role = getTrainRole(init.getResultAttrDict(i));
    if (role == "param" || role == "buffer")
      trained.push_back(getTrainName(init.getResultAttrDict(i), i));
  }
  if (llvm::Error err = attachONNXSource(module, onnxPath, trained))
    return module.emitError(llvm::toString(std::move(err)));
  return success();
}
