//===- CheckNumerics.cpp - per-op numerics against fp32 -------------------===//
//
// What amp-run --check-numerics does, on a module: number the ops, autocast
// a copy (annotated with reasons, fp32 weights kept), compile it and the
// fp32 reference with every op's results exposed, run both and compare.
//
//===----------------------------------------------------------------------===//

#include "APIInternal.h"

#include "amp/Execution/CheckNumerics.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace amp::api;
using namespace mlir;
namespace exec = mlir::amp::execution;

Status Module::checkNumerics(const OptionList &autocastOptions,
                             const OptionList &reportOptions,
                             std::vector<Tensor> inputs,
                             std::string &reportJson,
                             std::vector<Tensor> &outputs) const {
  if (!state)
    return Status::error("the module is empty");
  mlir::amp::FrontEndOptions frontEnd;
  // The binder owns the lists the options point to: it lives as long as
  // they are used.
  KeywordBinder binder(autocastOptions);
  {
    binder.reserve("report", "check_numerics returns its own report");
    binder.reserve("summary", "check_numerics returns its own report");
    binder.reserve("annotate", "check_numerics annotates the reasons");
    binder.reserve("release-weights",
                   "check_numerics keeps the fp32 weights for the reference");
    frontEnd.bind(binder);
    if (std::string error = binder.finish(); !error.empty())
      return Status::error("check_numerics: " + error);
  }
  exec::NumericsReportOptions report;
  {
    KeywordBinder reportBinder(reportOptions);
    report.bind(reportBinder);
    if (std::string error = reportBinder.finish(); !error.empty())
      return Status::error("check_numerics: " + error);
  }
  if (llvm::Error err = mlir::amp::checkAutocastOptions(frontEnd.autocast))
    return Status::error("check_numerics: " + llvm::toString(std::move(err)));
  if (!frontEnd.autocast.keepIOTypes)
    return Status::error("check_numerics feeds both programs the same "
                         "inputs: it needs keep-io-types");
  std::lock_guard<std::mutex> lock(state->mutex);
  if (!state->autocastType.empty())
    return Status::error("check_numerics compares with fp32: give it the "
                         "module before autocast (it was autocast to " +
                         state->autocastType + ")");
  DiagnosticCapture capture(state->context.get());
  OwningOpRef<ModuleOp> low(state->module->clone());
  auto run = [&](ModuleOp module, auto build) {
    PassManager pm(state->context.get(), ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    build(pm);
    return pm.run(module);
  };
  if (state->fromOnnx && !state->cleaned &&
      failed(run(*low, [](OpPassManager &pm) {
        mlir::amp::buildImportCleanupPipeline(pm);
      })))
    return capture.finish(failure());
  func::FuncOp entry = exec::findEntry(*low);
  if (!entry)
    return capture.finish(failure());
  exec::numberProbes(entry);
  OwningOpRef<ModuleOp> reference(low->clone());
  exec::exposeProbes(exec::findEntry(*reference));
  // The front end as amp-run runs it for --check-numerics.
  frontEnd.importCleanup = false;
  frontEnd.autocast.annotate = true;
  frontEnd.autocast.printSummary = false;
  frontEnd.autocast.reportFile.clear();
  frontEnd.releaseWeights = false;
  if (failed(run(*low, [&](OpPassManager &pm) {
        mlir::amp::buildFrontEndPipeline(pm, frontEnd);
      })))
    return capture.finish(failure());
  SmallVector<exec::Probe> probes = exec::exposeProbes(exec::findEntry(*low));
  auto lowProgram = exec::CpuProgram::compile(*low);
  if (failed(lowProgram))
    return capture.finish(failure());
  auto referenceProgram = exec::CpuProgram::compile(*reference);
  if (failed(referenceProgram))
    return capture.finish(failure());
  size_t numOutputs = (*lowProgram)->getOutputs().size() - probes.size();
  if (inputs.size() != (*lowProgram)->getInputs().size())
    return Status::error("the program takes " +
                         std::to_string((*lowProgram)->getInputs().size()) +
                         " inputs, got " + std::to_string(inputs.size()));
  for (unsigned i = 0; i < inputs.size(); ++i) {
    if (llvm::Error err =
            (*lowProgram)
                ->checkInput(i, inputs[i], "argument " + std::to_string(i)))
      return Status::error(llvm::toString(std::move(err)));
    inputs[i] = (*lowProgram)->prepareInput(i, std::move(inputs[i]));
  }
  std::vector<Tensor> results;
  if (llvm::Error err = (*lowProgram)->run(inputs, results))
    return Status::error(llvm::toString(std::move(err)));
  auto stats =
      exec::compareWithReference(probes, **referenceProgram, inputs,
                                 ArrayRef(results).drop_front(numOutputs));
  if (!stats)
    return Status::error(llvm::toString(stats.takeError()));
  reportJson.clear();
  llvm::raw_string_ostream os(reportJson);
  exec::writeNumericsJson(*stats, frontEnd.autocast.type, report, os);
  os.flush();
  results.resize(numOutputs);
  outputs = std::move(results);
  return capture.finish(success());
}
