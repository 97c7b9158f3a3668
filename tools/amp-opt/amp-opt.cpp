//===- amp-opt.cpp - the amp driver: mlir-opt plus ONNX input -------------===//
//
//   amp-opt model.onnx -o model.mlir      import, then canonicalize + cse
//   amp-opt x.mlir --canonicalize         like mlir-opt
//
// With `.onnx` input the model is imported by the ONNX importer; every other
// input goes through MlirOptMain unchanged. Output is written only when the
// whole job succeeds.
//
//===----------------------------------------------------------------------===//

#include "amp/InitAllDialects.h"
#include "amp/Target/ONNX/ONNXImporter.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

static llvm::cl::OptionCategory ampCategory("amp ONNX options");

static llvm::cl::opt<bool>
    importOnly("amp-import-only",
               llvm::cl::desc("With .onnx input: skip the canonicalize + cse "
                              "cleanup that follows the import"),
               llvm::cl::cat(ampCategory));

static llvm::cl::opt<bool> noImportFolding(
    "amp-no-import-folding",
    llvm::cl::desc("With .onnx input: do not fold constant shape arithmetic "
                   "while importing"),
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

static LogicalResult runOnnxJob(StringRef inputFilename,
                                StringRef outputFilename,
                                DialectRegistry &registry,
                                const MlirOptMainConfig &config) {
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  amp::ONNXImportOptions options;
  options.foldConstants = !noImportFolding;
  OwningOpRef<ModuleOp> module =
      amp::importONNXFile(inputFilename, &context, options);
  if (!module)
    return failure();

  PassManager pm(&context, ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  if (!importOnly) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (failed(config.setupPassPipeline(pm)) || failed(pm.run(*module)))
    return failure();
  if (config.shouldVerifyRoundtrip() &&
      failed(verifyRoundtrip(*module, context)))
    return failure();

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return failure();
  }
  if (failed(printModule(*module, output->os(), config)))
    return failure();
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerTransformsPasses();
  DialectRegistry registry;
  amp::registerAllDialects(registry);

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv,
      "amp-opt: the amp mixed-precision compiler driver\n\n"
      "  amp-opt model.onnx -o model.mlir   import an ONNX model\n"
      "  amp-opt x.mlir --pass...           run passes like mlir-opt\n",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  if (amp::isONNXFile(inputFilename))
    return failed(runOnnxJob(inputFilename, outputFilename, registry, config));

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
