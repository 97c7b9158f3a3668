//===- amp-embed-compile.cpp - a compiler built on an installed amp -------===//
//
// The smallest useful embedding of amp's libraries, built out of tree
// against `find_package(Amp)`:
//
//   amp-embed-compile onnx IN.onnx OUT.onnx [f16|bf16]
//       import the model, run amp-front-end (cleanup, amp-autocast, cast
//       cleanup), write mixed-precision ONNX;
//   amp-embed-compile linalg IN.mlir OUT.mlir [f16|bf16]
//       run amp-autocast (with the precision models of linalg, TOSA,
//       tensor, arith and math) and canonicalize on a program in upstream
//       dialects, write MLIR.
//
// Errors are MLIR diagnostics on stderr and exit status 1; no output file
// is left behind.
//
//===----------------------------------------------------------------------===//

#include "amp/Pipelines/Pipelines.h"
#include "amp/Target/ONNX/ONNXExporter.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/PrecisionModels.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;

static int usage() {
  llvm::errs() << "usage: amp-embed-compile onnx IN.onnx OUT.onnx [f16|bf16]\n"
                  "       amp-embed-compile linalg IN.mlir OUT.mlir "
                  "[f16|bf16]\n";
  return 2;
}

static int compileOnnx(MLIRContext &context, llvm::StringRef input,
                       llvm::StringRef output, llvm::StringRef type) {
  OwningOpRef<ModuleOp> module = amp::importONNXFile(input, &context);
  if (!module)
    return 1;
  amp::FrontEndOptions options;
  options.autocast.type = type.str();
  PassManager pm(&context);
  amp::buildFrontEndPipeline(pm, options);
  if (failed(pm.run(*module)))
    return 1;
  return failed(amp::exportToONNXFile(*module, output)) ? 1 : 0;
}

static int compileLinalg(MLIRContext &context, llvm::StringRef input,
                         llvm::StringRef output, llvm::StringRef type) {
  llvm::SourceMgr sources;
  std::string error;
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "amp-embed-compile: " << error << "\n";
    return 1;
  }
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return 1;
  amp::AmpAutocastOptions autocast;
  autocast.type = type.str();
  autocast.printSummary = true;
  PassManager pm(&context);
  pm.addPass(amp::createAmpAutocast(autocast));
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*module)))
    return 1;
  auto out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << "amp-embed-compile: " << error << "\n";
    return 1;
  }
  module->print(out->os());
  out->keep();
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5)
    return usage();
  std::string mode = argv[1];
  llvm::StringRef type = argc == 5 ? argv[4] : "f16";

  DialectRegistry registry;
  amp::registerAmpCpuDialects(registry); // amp, func, linalg, arith, ...
  registry.insert<tosa::TosaDialect>();
  amp::registerUpstreamPrecisionModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  if (mode == "onnx")
    return compileOnnx(context, argv[2], argv[3], type);
  if (mode == "linalg")
    return compileLinalg(context, argv[2], argv[3], type);
  return usage();
}
