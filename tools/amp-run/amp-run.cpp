//===- amp-run.cpp - run amp programs on the CPU through the MLIR JIT -----===//
//
//   amp-run model.onnx --random-inputs --seed 1 --output-dir out/
//   amp-run model.onnx -i x.npy --compare-to ref.npy --amp-type=f16
//   amp-run model.mlir -i input_0.pb --benchmark 20
//   amp-run model.onnx --train --data x.npy --labels y.npy --epochs 5
//
// A driver over the execution library (amp/Execution): the model is loaded
// (ONNX import + cleanup, or an amp-dialect .mlir file), optionally put
// through the front-end pipeline (amp-autocast with the --amp-* flags, the
// same as amp-opt's), compiled by `amp-lower-to-llvm` and the JIT, and run.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Gradients/GradientModels.h"
#include "amp/Execution/CheckNumerics.h"
#include "amp/Execution/CpuProgram.h"
#include "amp/Execution/CudaEmulation.h"
#include "amp/Execution/Passes.h"
#include "amp/Execution/TrainLoop.h"
#include "amp/Pipelines/Pipelines.h"
#include "common/AutocastCLOptions.h"
#include "common/CheckNumericsCLOptions.h"
#include "common/CudaTargetCLOptions.h"
#include "common/ModelLimitsCLOptions.h"
#include "common/TrainCLOptions.h"
#include "common/TrainLoopCLOptions.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>

using namespace mlir;
using namespace mlir::amp::execution;

namespace cl = llvm::cl;

static cl::OptionCategory runCategory("amp-run options");
static cl::opt<std::string> modelFile(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx | model.mlir>"),
                                      cl::cat(runCategory));
static cl::list<std::string>
    inputFiles("i",
               cl::desc("Input tensor file (.npy or ONNX .pb), one per "
                        "graph input, in order"),
               cl::value_desc("file"), cl::cat(runCategory));
static cl::opt<bool> train("train",
                           cl::desc("Train the model (see the training "
                                    "loop and training options)"),
                           cl::cat(runCategory));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Run this function of the module instead of @main "
                       "(e.g. compute_gradients of a training program)"),
              cl::value_desc("name"), cl::cat(runCategory));
static cl::opt<bool> randomInputs(
    "random-inputs",
    cl::desc("Fill the inputs with random values (floats in [-1, 1), "
             "integers in [0, 10), bools 0/1); dynamic dimensions are 1"),
    cl::cat(runCategory));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of --random-inputs"),
                              cl::init(0), cl::cat(runCategory));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write each output as <dir>/<output name>.npy"),
              cl::value_desc("dir"), cl::cat(runCategory));
static cl::list<std::string> compareTo(
    "compare-to",
    cl::desc("Reference files (.npy or .pb), one per output, in order"),
    cl::value_desc("file"), cl::cat(runCategory));
static cl::opt<double> relTolerance("rtol", cl::desc("Relative tolerance"),
                                    cl::init(1e-3), cl::cat(runCategory));
static cl::opt<double> absTolerance("atol", cl::desc("Absolute tolerance"),
                                    cl::init(1e-7), cl::cat(runCategory));
static cl::opt<unsigned>
    benchmarkRuns("benchmark",
                  cl::desc("Run N more times after warm-up and print the "
                           "median latency"),
                  cl::init(0), cl::cat(runCategory));
static cl::opt<std::string> checkNumerics(
    "check-numerics", cl::ValueOptional,
    cl::desc("With --amp-type: run the fp32 program beside the "
             "low-precision one and report, per op, non-finite values, "
             "underflow and the relative error (=FILE.json also writes all "
             "of it as JSON)"),
    cl::value_desc("file.json"), cl::cat(runCategory));
static cl::opt<std::string>
    dumpLowered("dump-llvm-dialect",
                cl::desc("Write the lowered LLVM-dialect module to a file"),
                cl::value_desc("file"), cl::cat(runCategory));

/// Runs the front end's autocast and cast cleanup with the --amp-* flags.
/// For --check-numerics, ops are annotated with their reasons and the fp32
/// weights are kept (the reference module shares them).
static LogicalResult autocastModule(ModuleOp module, bool checkingNumerics) {
  amp::FrontEndOptions options;
  options.importCleanup = false; // loadModel ran it
  options.foldConstants = amp::getConstantFoldingCLOption();
  options.foldMaxBytes = amp::getModelLimitsCLOptions().maxFoldBytes;
  options.autocast = amp::getAutocastCLOptions();
  options.autocast.annotate = checkingNumerics;
  options.releaseWeights = !checkingNumerics;
  if (llvm::Error err = amp::checkAutocastOptions(options.autocast)) {
    llvm::errs() << "error: amp-autocast: " << llvm::toString(std::move(err))
                 << "\n";
    return failure();
  }
  PassManager pm(module->getContext(), ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  amp::buildFrontEndPipeline(pm, options);
  return pm.run(module);
}

/// A file name made of an output's name.
static std::string sanitize(StringRef name) {
  std::string s;
  for (char c : name)
    s.push_back(llvm::isAlnum(c) || c == '_' || c == '-' || c == '.' ? c : '_');
  return s.empty() ? "output" : s;
}

/// --check-numerics: matches the probes of the low-precision program with
/// the reference's by op number and reports.
static LogicalResult reportProbes(ArrayRef<Probe> probes,
                                  const CpuProgram &reference,
                                  const std::vector<Tensor> &inputs,
                                  ArrayRef<Tensor> probeResults) {
  auto stats = compareWithReference(probes, reference, inputs, probeResults);
  if (!stats) {
    llvm::errs() << "error: " << llvm::toString(stats.takeError()) << "\n";
    return failure();
  }
  return reportNumerics(*stats, amp::getAutocastCLOptions().type, checkNumerics,
                        getCheckNumericsCLOptions());
}

/// Compares the outputs with the --compare-to files; prints one line per
/// output. Returns whether all match.
static bool compareOutputs(ArrayRef<TensorSignature> outputs,
                           ArrayRef<Tensor> results,
                           ArrayRef<Tensor> references) {
  bool allOk = true;
  for (auto [sig, got, want] : llvm::zip(outputs, results, references)) {
    Comparison c = compareTensors(got, want, absTolerance, relTolerance);
    if (c.mismatchedType) {
      llvm::outs() << sig.name << ": FAIL " << c.message << "\n";
      allOk = false;
      continue;
    }
    llvm::outs() << sig.name << ": " << (c.mismatches ? "FAIL" : "ok")
                 << " max abs err " << llvm::format("%.3g", c.maxAbsError)
                 << ", max rel err " << llvm::format("%.3g", c.maxRelError);
    if (c.mismatches)
      llvm::outs() << ", " << c.mismatches << " of " << got.getNumElements()
                   << " elements beyond atol " << absTolerance.getValue()
                   << " + rtol " << relTolerance.getValue() << " * |ref|";
    llvm::outs() << "\n";
    allOk &= c.mismatches == 0;
  }
  return allOk;
}

static void benchmark(const CpuProgram &program,
                      const std::vector<Tensor> &inputs,
                      double compileSeconds) {
  std::vector<Tensor> results;
  unsigned warmup = std::max(1u, benchmarkRuns / 10);
  // The first run succeeded, and so do these on the same inputs.
  for (unsigned i = 0; i < warmup; ++i)
    llvm::cantFail(program.run(inputs, results));
  std::vector<double> times;
  for (unsigned i = 0; i < benchmarkRuns; ++i) {
    auto start = std::chrono::steady_clock::now();
    llvm::cantFail(program.run(inputs, results));
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  llvm::outs() << "benchmark: " << benchmarkRuns << " runs after " << warmup
               << " warm-up, median "
               << llvm::format("%.3f", times[times.size() / 2]) << " ms, min "
               << llvm::format("%.3f", times.front()) << " ms; compile "
               << llvm::format("%.2f", compileSeconds) << " s\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Activations are malloc'ed and freed on every run. glibc would serve
  // the large ones with fresh mmaps (a page fault per page, every run);
  // keep them in the heap instead: ResNet-50 runs 1.5x faster.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerPassManagerCLOptions();
  amp::registerAutocastCLOptions(/*defaultType=*/"");
  amp::registerModelLimitsCLOptions();
  amp::registerConstantFolding();
  registerTrainLoopCLOptions(); // and the training and CUDA target flags
  registerCheckNumericsCLOptions(runCategory);
  cl::HideUnrelatedOptions({&runCategory, &amp::getAutocastCLCategory(),
                            &amp::training::getTrainCLCategory(),
                            &getTrainLoopCLCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "amp-run: run an amp program (ONNX or amp .mlir) on the CPU\n");

  if (randomInputs && !inputFiles.empty()) {
    llvm::errs() << "error: give either -i files or --random-inputs\n";
    return 1;
  }
  DialectRegistry registry;
  amp::registerAmpCpuDialects(registry);
  amp::registerAmpGradientModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  if (train) {
    llvm::Expected<TrainJobOptions> job = getTrainJobCLOptions();
    if (!job) {
      llvm::errs() << "error: " << llvm::toString(job.takeError()) << "\n";
      return 1;
    }
    return failed(trainModel(modelFile, context, sourceMgr, llvm::outs(),
                             std::move(job->loop), std::move(job->step)));
  }

  // Inputs are read before compiling, so a bad file fails fast.
  std::vector<Tensor> inputs, references;
  amp::ModelLimits limits = amp::getModelLimitsCLOptions();
  llvm::Error err = readTensorFiles(inputFiles, &context, inputs, limits);
  if (!err)
    err = readTensorFiles(compareTo, &context, references, limits);
  if (err) {
    llvm::errs() << "error: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }

  auto compileStart = std::chrono::steady_clock::now();
  std::string ampType = amp::getAutocastCLOptions().type;
  bool numerics = checkNumerics.getNumOccurrences() > 0;
  if (numerics && ampType.empty()) {
    llvm::errs() << "error: --check-numerics compares a low-precision "
                    "program with fp32: give --amp-type f16 or bf16\n";
    return 1;
  }
  if (numerics && !entryName.empty()) {
    llvm::errs() << "error: --check-numerics checks @main: drop --entry\n";
    return 1;
  }
  if (numerics && benchmarkRuns > 0) {
    llvm::errs() << "error: --check-numerics runs an instrumented program: "
                    "it cannot be combined with --benchmark\n";
    return 1;
  }
  if (numerics && !amp::getAutocastCLOptions().keepIOTypes) {
    llvm::errs() << "error: --check-numerics feeds both programs the same "
                    "inputs: it needs --amp-keep-io-types\n";
    return 1;
  }
  auto module =
      loadModel(modelFile, context, sourceMgr, /*forTraining=*/false, limits);
  if (failed(module))
    return 1;
  OwningOpRef<ModuleOp> referenceModule;
  SmallVector<Probe> probes;
  if (numerics) {
    func::FuncOp entry = findEntry(**module);
    if (!entry)
      return 1;
    numberProbes(entry);
    referenceModule = (*module)->clone();
    exposeProbes(findEntry(*referenceModule));
  }
  if (!ampType.empty() && failed(autocastModule(**module, numerics)))
    return 1;
  if (numerics)
    probes = exposeProbes(findEntry(**module));
  std::vector<std::string> entries;
  if (!entryName.empty())
    entries.push_back(entryName);
  // --amp-cuda-emulate: the CUDA artifact itself, its kernels compiled
  // for the CPU (inference; training emulates the kernels as loops).
  FailureOr<std::unique_ptr<CpuProgram>> program = failure();
  if (amp::getCudaEmulationCLOption()) {
    if (!dumpLowered.empty()) {
      llvm::errs() << "error: --dump-llvm-dialect writes the CPU program; "
                      "--amp-cuda-emulate runs the CUDA artifact (see "
                      "amp-opt --amp-target=cuda)\n";
      return 1;
    }
    amp::CudaArtifactOptions cuda = amp::getCudaTargetCLOptions();
    if (!entryName.empty())
      cuda.entry = entryName;
    program = compileCudaEmulation(**module, cuda);
  } else {
    program = CpuProgram::compile(**module, dumpLowered, entries);
  }
  if (failed(program))
    return 1;
  std::unique_ptr<CpuProgram> reference;
  if (numerics) {
    auto compiled = CpuProgram::compile(*referenceModule);
    if (failed(compiled))
      return 1;
    reference = std::move(*compiled);
  }
  ArrayRef<TensorSignature> programInputs = (*program)->getInputs();
  // The model's own outputs come first; probes follow.
  size_t numOutputs = (*program)->getOutputs().size() - probes.size();
  if (!randomInputs && inputs.size() != programInputs.size()) {
    llvm::errs() << "error: the model has " << programInputs.size()
                 << " input(s) but " << inputs.size()
                 << " file(s) were given with -i (or use --random-inputs)\n";
    return 1;
  }
  if (!references.empty() && references.size() != numOutputs) {
    llvm::errs() << "error: the model has " << numOutputs << " output(s) but "
                 << references.size() << " --compare-to file(s) were given\n";
    return 1;
  }
  if (randomInputs) {
    std::mt19937_64 rng(seed);
    for (unsigned i = 0; i < programInputs.size(); ++i)
      inputs.push_back((*program)->makeRandomInput(i, rng));
  }
  for (unsigned i = 0; i < programInputs.size(); ++i) {
    StringRef source =
        randomInputs ? StringRef("random") : StringRef(inputFiles[i]);
    if (llvm::Error err = (*program)->checkInput(i, inputs[i], source)) {
      llvm::errs() << "error: " << llvm::toString(std::move(err)) << "\n";
      return 1;
    }
    inputs[i] = (*program)->prepareInput(i, std::move(inputs[i]));
  }
  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();

  std::vector<Tensor> results;
  if (llvm::Error err = (*program)->run(inputs, results)) {
    llvm::errs() << "error: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  if (numerics) {
    if (failed(reportProbes(probes, *reference, inputs,
                            ArrayRef(results).drop_front(numOutputs))))
      return 1;
    results.resize(numOutputs);
  }
  ArrayRef<TensorSignature> outputs =
      (*program)->getOutputs().take_front(numOutputs);

  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      llvm::errs() << "error: cannot create '" << outputDir
                   << "': " << ec.message() << "\n";
      return 1;
    }
    for (auto [sig, tensor] : llvm::zip(outputs, results)) {
      SmallString<256> path(outputDir.getValue());
      llvm::sys::path::append(path, sanitize(sig.name) + ".npy");
      std::string error;
      if (!amp_runtime::writeNpy(std::string(path), tensor, error)) {
        llvm::errs() << "error: " << error << "\n";
        return 1;
      }
    }
  }
  int status = 0;
  if (!references.empty() && !compareOutputs(outputs, results, references))
    status = 1;
  if (benchmarkRuns > 0)
    benchmark(**program, inputs, compileSeconds);
  return status;
}
