//===- amp-opt.cpp - the amp driver: mlir-opt plus ONNX input -------------===//
//
//   amp-opt model.onnx -o model.mp.mlir   import, canonicalize + cse,
//                                         amp-autocast, cast cleanup
//   amp-opt x.mlir --amp-autocast         like mlir-opt
//   amp-opt model.onnx --train -o t.mlir   build a mixed-precision train
//                                         step (options: --loss, ...); an
//                                         .mlir input marks its parameters
//                                         with amp.initializer
//
// With `.onnx` input the model is imported by the ONNX importer and goes
// through the default mixed-precision pipeline (options --amp-*); every
// other input goes through MlirOptMain unchanged. Output is written only
// when the whole job succeeds.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Dialect/Amp/Gradients/GradientModels.h"
#include "amp/Execution/CompileJob.h"
#include "amp/Execution/Passes.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "amp/Training/Passes.h"
#include "amp/Training/TrainStep.h"
#include "amp/Transforms/AutocastPolicy.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/PrecisionModels.h"
#include "common/AutocastCLOptions.h"
#include "common/CudaTargetCLOptions.h"
#include "common/ModelLimitsCLOptions.h"
#include "common/TrainCLOptions.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"

#include <optional>

using namespace mlir;

static llvm::cl::OptionCategory ampCategory("amp ONNX options");

static llvm::cl::opt<bool>
    importOnly("amp-import-only",
               llvm::cl::desc("With .onnx input: stop after the import (no "
                              "cleanup, no autocast)"),
               llvm::cl::cat(ampCategory));

static llvm::cl::opt<std::string> emitFormat(
    "emit",
    llvm::cl::desc("Output format: mlir (text, or bytecode with "
                   "--emit-bytecode) or onnx; default: onnx when the output "
                   "file ends in .onnx and --emit-bytecode is not given, "
                   "else mlir"),
    llvm::cl::value_desc("mlir|onnx"), llvm::cl::cat(ampCategory));

static llvm::cl::opt<int64_t> exportOpset(
    "amp-export-opset",
    llvm::cl::desc("ONNX output: default-domain opset to write (default: the "
                   "imported model's)"),
    llvm::cl::init(0), llvm::cl::cat(ampCategory));

static llvm::cl::opt<bool> exportExternalData(
    "amp-external-data",
    llvm::cl::desc("ONNX output: store weights in <output>.data (automatic "
                   "above 1.8 GB)"),
    llvm::cl::cat(ampCategory));

static llvm::cl::opt<bool> printDefaultPolicy(
    "amp-print-default-policy",
    llvm::cl::desc("Print the built-in autocast policy as a policy file "
                   "(YAML) and exit"),
    llvm::cl::cat(ampCategory));

static llvm::cl::opt<bool> noImportFolding(
    "amp-no-import-folding",
    llvm::cl::desc("With .onnx input: do not fold constant shape arithmetic "
                   "while importing"),
    llvm::cl::cat(ampCategory));

static llvm::cl::opt<bool> train(
    "train",
    llvm::cl::desc("Build a training program (@train_step, @initial_state, "
                   "@main) from the model; see the training options"),
    llvm::cl::cat(ampCategory));

/// Prints `module` as text or bytecode, as the config asks.
static LogicalResult printModule(ModuleOp module, raw_ostream &os,
                                 const MlirOptMainConfig &config) {
  if (!config.shouldEmitBytecode()) {
    module.print(os);
    os << "\n";
    return success();
  }
  BytecodeWriterConfig writerConfig("amp-opt");
  if (auto version = config.bytecodeVersionToEmit())
    writerConfig.setDesiredBytecodeVersion(*version);
  if (config.shouldElideResourceDataFromBytecode())
    writerConfig.setElideResourceDataFlag();
  return writeBytecodeToFile(module, os, writerConfig);
}

/// Prints, re-parses and compares the module (text and bytecode), like
/// mlir-opt's --verify-roundtrip.
static LogicalResult verifyRoundtrip(ModuleOp module, MLIRContext &context) {
  std::string original;
  {
    llvm::raw_string_ostream os(original);
    module.print(os);
  }
  for (bool bytecode : {false, true}) {
    std::string buffer;
    if (bytecode) {
      llvm::raw_string_ostream os(buffer);
      if (failed(writeBytecodeToFile(module, os)))
        return failure();
    } else {
      buffer = original;
    }
    ParserConfig parserConfig(&context);
    OwningOpRef<ModuleOp> reparsed =
        parseSourceString<ModuleOp>(buffer, parserConfig);
    if (!reparsed)
      return module.emitError("output does not parse back (")
             << (bytecode ? "bytecode" : "text") << ")";
    std::string roundtripped;
    llvm::raw_string_ostream ros(roundtripped);
    reparsed->print(ros);
    if (roundtripped != original)
      return module.emitError("output changes after a round trip (")
             << (bytecode ? "bytecode" : "text") << ")";
  }
  return success();
}

/// Whether the job writes ONNX.
static FailureOr<bool> shouldEmitOnnx(StringRef outputFilename,
                                      const MlirOptMainConfig &config) {
  if (emitFormat.empty())
    return !config.shouldEmitBytecode() && outputFilename.ends_with(".onnx");
  if (emitFormat == "onnx") {
    if (config.shouldEmitBytecode()) {
      llvm::errs() << "error: --emit=onnx and --emit-bytecode conflict\n";
      return failure();
    }
    return true;
  }
  if (emitFormat == "mlir")
    return false;
  llvm::errs() << "error: unknown --emit format '" << emitFormat
               << "' (expected mlir or onnx)\n";
  return failure();
}

/// Imports (.onnx) or parses (.mlir) the input, runs the pipeline and writes
/// MLIR or ONNX. Nothing is written unless every step succeeds.
static LogicalResult runAmpJob(StringRef inputFilename,
                               StringRef outputFilename, bool emitOnnx,
                               bool emitCuda, DialectRegistry &registry,
                               const MlirOptMainConfig &config) {
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Errors name the op through its location (the ONNX node); a dump of the
  // whole operation would bury them.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  bool isOnnx = amp::isONNXFile(inputFilename);
  // -verify-diagnostics checks expected-* comments of an .mlir input
  // (export errors); otherwise diagnostics are printed.
  std::optional<SourceMgrDiagnosticVerifierHandler> verifier;
  std::optional<SourceMgrDiagnosticHandler> printer;
  auto finish = [&](LogicalResult result) {
    if (verifier)
      return verifier->verify();
    return result;
  };

  OwningOpRef<ModuleOp> module;
  if (isOnnx) {
    printer.emplace(sourceMgr, &context);
    amp::ONNXImportOptions options;
    options.foldConstants = !noImportFolding;
    options.markInitializers = train;
    options.limits = amp::getModelLimitsCLOptions();
    module = amp::importONNXFile(inputFilename, &context, options);
  } else {
    std::string errorMessage;
    std::unique_ptr<llvm::MemoryBuffer> file =
        openInputFile(inputFilename, &errorMessage);
    if (!file) {
      llvm::errs() << errorMessage << "\n";
      return failure();
    }
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    if (config.shouldVerifyDiagnostics())
      verifier.emplace(sourceMgr, &context);
    else
      printer.emplace(sourceMgr, &context);
    module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }
  if (!module)
    return finish(failure());

  amp::execution::CompileJobOptions job;
  job.fromOnnx = isOnnx;
  job.importOnly = importOnly;
  job.train = train;
  job.inputPath = inputFilename.str();
  job.frontEnd.foldConstants = amp::getConstantFoldingCLOption();
  job.frontEnd.foldMaxBytes = amp::getModelLimitsCLOptions().maxFoldBytes;
  job.frontEnd.autocast = amp::getAutocastCLOptions();
  job.frontEnd.autocast.printSummary = true;
  if (train) {
    llvm::Expected<amp::training::TrainStepOptions> trainOptions =
        amp::training::getTrainCLOptions();
    if (!trainOptions) {
      llvm::errs() << "error: " << llvm::toString(trainOptions.takeError())
                   << "\n";
      return failure();
    }
    job.trainStep = std::move(*trainOptions);
  }
  using amp::execution::CompileOutput;
  job.output = emitCuda   ? CompileOutput::CUDA
               : emitOnnx ? CompileOutput::ONNX
                          : CompileOutput::MLIR;
  job.onnx.opset = exportOpset;
  job.onnx.externalData = exportExternalData;
  if (emitCuda) {
    job.cuda = amp::getCudaTargetCLOptions();
    job.cuda.source = llvm::sys::path::filename(inputFilename).str();
  }
  // The report and dot files are committed only with the output.
  amp::execution::SideOutputs sideOutputs(job.frontEnd.autocast);
  auto configure = [&](PassManager &pm) -> LogicalResult {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm); // --mlir-timing
    return config.setupPassPipeline(pm);
  };
  if (failed(amp::execution::runCompilePipelines(*module, job, configure)))
    return finish(failure());
  if (config.shouldVerifyRoundtrip() &&
      failed(verifyRoundtrip(*module, context)))
    return failure();
  if (failed(amp::execution::writeCompileOutput(
          *module, outputFilename, job,
          [&](raw_ostream &os) { return printModule(*module, os, config); })))
    return finish(failure());
  sideOutputs.commit();
  return finish(success());
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // amp-fold-constants evaluates with the JIT.
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerTransformsPasses();
  amp::registerAmpPasses();
  amp::training::registerAmpTrainingPasses();
  amp::training::registerAmpTrainStepPipeline();
  amp::registerAmpExecutionPasses();
  amp::registerConstantFolding();
  amp::registerAmpConversionPasses();
  amp::registerAmpPipelines();
  amp::registerAmpCudaPipeline();
  amp::registerAutocastCLOptions(/*defaultType=*/"f16");
  amp::registerCudaTargetCLOptions();
  amp::registerModelLimitsCLOptions();
  amp::training::registerTrainCLOptions();
  DialectRegistry registry;
  amp::registerAmpCudaDialects(registry); // the CPU ones and the GPU's
  amp::registerAmpGradientModels(registry);
  // Autocast on programs in upstream dialects (TOSA parses too).
  registry.insert<tosa::TosaDialect>();
  amp::registerUpstreamPrecisionModels(registry);

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv,
      "amp-opt: the amp mixed-precision compiler driver\n\n"
      "  amp-opt model.onnx -o model.mlir   import an ONNX model\n"
      "  amp-opt x.mlir --pass...           run passes like mlir-opt\n",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (printDefaultPolicy) {
    // Validating op names needs the registered ops.
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    amp::AutocastPolicy::getDefault().print(llvm::outs());
    return 0;
  }

  FailureOr<bool> emitOnnx = shouldEmitOnnx(outputFilename, config);
  if (failed(emitOnnx))
    return 1;
  if (amp::isONNXFile(inputFilename) && !importOnly) {
    // Bad autocast options are reported before the model is read.
    if (llvm::Error err =
            amp::checkAutocastOptions(amp::getAutocastCLOptions())) {
      llvm::errs() << "error: amp-autocast: " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
  }
  FailureOr<bool> emitCuda = amp::isCudaTargetRequested();
  if (failed(emitCuda))
    return 1;
  if ((train || *emitCuda) && (*emitOnnx || importOnly)) {
    llvm::errs() << "error: "
                 << (train ? "--train writes MLIR"
                           : "--amp-target=cuda writes an artifact")
                 << " (not --amp-import-only or ONNX output)\n";
    return 1;
  }
  if (amp::isONNXFile(inputFilename) || *emitOnnx || train || *emitCuda)
    return failed(runAmpJob(inputFilename, outputFilename, *emitOnnx, *emitCuda,
                            registry, config));

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
