//===- CompileJob.h - amp-opt's job as a library API ------------*- C++ -*-===//
//
// What `amp-opt` does with a model once it is loaded, for any front end
// (amp-opt, the Python package): the pipelines (the train-step builder, or
// the front end on an imported model, then a caller's passes) and the
// output (MLIR, ONNX or a CUDA artifact), written only when everything
// succeeded, with the autocast report and dot file committed together.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_EXECUTION_COMPILEJOB_H
#define AMP_EXECUTION_COMPILEJOB_H

#include "amp/Pipelines/Pipelines.h"
#include "amp/Target/CUDA/CudaArtifact.h"
#include "amp/Target/ONNX/ONNXExporter.h"
#include "amp/Training/TrainStep.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir {
class PassManager;
} // namespace mlir

namespace mlir::amp::execution {

enum class CompileOutput { MLIR, ONNX, CUDA };

struct CompileJobOptions {
  /// The module comes from the ONNX importer: the front end runs on it
  /// (unless `importOnly`), and a train step keeps the ONNX model.
  bool fromOnnx = false;
  bool importOnly = false;
  /// Build the training program (`trainStep`, whose front end is
  /// `frontEnd`).
  bool train = false;
  training::TrainStepOptions trainStep;
  FrontEndOptions frontEnd;
  /// The input file (the ONNX model a train step stores, the artifact's
  /// source name).
  std::string inputPath;
  CompileOutput output = CompileOutput::MLIR;
  ONNXExportOptions onnx;
  CudaArtifactOptions cuda;
};

/// The autocast report and dot file of a job go to `<path>.partial` while
/// it runs; commit() renames them at the end, else they are removed.
class SideOutputs {
public:
  /// Redirects `autocast`'s report and dot paths.
  explicit SideOutputs(AmpAutocastOptions &autocast);
  ~SideOutputs();
  SideOutputs(const SideOutputs &) = delete;
  SideOutputs &operator=(const SideOutputs &) = delete;
  void commit() { committed = true; }

private:
  std::vector<std::pair<std::string, std::string>> partials;
  bool committed = false;
};

/// Runs the job's pipelines on `module`: the train-step builder (`train`;
/// the ONNX model is stored in the program), else the front end on an
/// imported model; then the passes `configure` adds (a tool's pass
/// pipeline and pass-manager flags). Verifies the result. Errors are
/// diagnostics.
LogicalResult
runCompilePipelines(ModuleOp module, const CompileJobOptions &options,
                    function_ref<LogicalResult(PassManager &)> configure = {});

/// Writes `module` to `outputPath` as the job's output says: MLIR through
/// `printMLIR` ("-" is stdout), ONNX or a CUDA artifact (files only).
/// Nothing is left behind on failure.
LogicalResult
writeCompileOutput(ModuleOp module, StringRef outputPath,
                   const CompileJobOptions &options,
                   function_ref<LogicalResult(raw_ostream &)> printMLIR);

} // namespace mlir::amp::execution

#endif // AMP_EXECUTION_COMPILEJOB_H
