//===- CompileJob.cpp - amp-opt's job as a library API --------------------===//

#include "amp/Execution/CompileJob.h"

#include "amp/Execution/TrainLoop.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::execution;

SideOutputs::SideOutputs(AmpAutocastOptions &autocast) {
  for (std::string *path :
       {&autocast.reportFile, &autocast.reportHtmlFile, &autocast.dotFile}) {
    if (path->empty())
      continue;
    std::string partial = *path + ".partial";
    partials.emplace_back(partial, *path);
    *path = partial;
  }
}

SideOutputs::~SideOutputs() {
  for (auto &[partial, path] : partials) {
    if (committed)
      llvm::sys::fs::rename(partial, path);
    else
      llvm::sys::fs::remove(partial);
  }
}

LogicalResult mlir::amp::execution::runCompilePipelines(
    ModuleOp module, const CompileJobOptions &options,
    function_ref<LogicalResult(PassManager &)> configure) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  if (options.train) {
    training::TrainStepOptions step = options.trainStep;
    step.frontEnd = options.frontEnd;
    if (failed(training::buildTrainStep(module, step)))
      return failure();
    // The program carries its ONNX model for amp-run --export-onnx.
    if (options.fromOnnx && failed(storeONNXSource(module, options.inputPath)))
      return failure();
  } else if (options.fromOnnx && !options.importOnly) {
    // The imported program was verified; the front end's passes keep it
    // valid, so it is verified once at the end instead of after each pass
    // (verification re-runs shape inference on every op).
    pm.enableVerifier(false);
    buildFrontEndPipeline(pm, options.frontEnd);
  }
  if (configure && failed(configure(pm)))
    return failure();
  if (failed(pm.run(module)))
    return failure();
  return verify(module);
}

LogicalResult mlir::amp::execution::writeCompileOutput(
    ModuleOp module, StringRef outputPath, const CompileJobOptions &options,
    function_ref<LogicalResult(raw_ostream &)> printMLIR) {
  switch (options.output) {
  case CompileOutput::CUDA:
    if (outputPath == "-")
      return module.emitError(
          "--amp-target=cuda needs a file (-o model.ampgpu)");
    return compileToCudaArtifact(module, outputPath, options.cuda);
  case CompileOutput::ONNX:
    if (outputPath == "-")
      return module.emitError("ONNX output needs a file (-o model.onnx)");
    return exportToONNXFile(module, outputPath, options.onnx);
  case CompileOutput::MLIR:
    break;
  }
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputPath, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return failure();
  }
  if (failed(printMLIR(output->os())))
    return failure();
  output->keep();
  return success();
}
