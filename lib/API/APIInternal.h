//===- APIInternal.h - what the API's files share ---------------*- C++ -*-===//

#ifndef AMP_LIB_API_APIINTERNAL_H
#define AMP_LIB_API_APIINTERNAL_H

#include "amp/API/Amp.h"
#include "amp/Execution/CpuProgram.h"
#include "amp/Support/OptionsBinder.h"
#include "amp/Target/ONNX/ModelLimits.h"
#include "amp/Target/Torch/TorchImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <deque>
#include <mutex>
#include <set>

namespace amp::api {

/// A module and the context it lives in (declared first: destroyed last).
struct Module::State {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Imported from ONNX; `cleaned`: the import cleanup ran on it.
  bool fromOnnx = false, cleaned = false;
  std::string autocastType;
  /// Where an imported module came from (a file, else its bytes), and how
  /// it was imported: the train step re-imports it.
  std::string sourcePath, sourceBytes;
  bool importFolded = true;
  mlir::amp::ModelLimits limits;
  /// Imported from a torch.export graph: the graph and its weights (the
  /// caller's memory, kept alive), which the train step imports again.
  bool fromTorch = false;
  /// A training-mode export (Module::importTorchGraph's `training`): only
  /// for the train step.
  bool torchTraining = false;
  std::string torchGraph;
  std::vector<mlir::amp::TorchWeight> torchWeights;
  /// One call at a time works on the module (the diagnostic handler is the
  /// context's).
  std::mutex mutex;
};

struct Program::State {
  /// The context the program's signature types live in.
  std::shared_ptr<Module::State> module;
  /// The lowered copy of the module, whose weights the JIT code reads.
  mlir::OwningOpRef<mlir::ModuleOp> lowered;
  std::unique_ptr<mlir::amp::execution::CpuProgram> program;
  std::vector<TensorInfo> inputs, outputs;
  /// Runs one at a time (the runtime's scratch state is not shared-safe
  /// everywhere).
  std::mutex mutex;
};

/// The name, host element type and shape (-1: dynamic) of a signature.
TensorInfo describeTensor(const mlir::amp::execution::TensorSignature &sig);

/// A context with every dialect and interface amp's pipelines use; the
/// process-wide set-up (native target, constant folder) happens once.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Collects the diagnostics of one call on `context` (none is printed).
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(mlir::MLIRContext *context);
  /// The call's status: failed if `result` failed or an error was
  /// reported.
  Status finish(mlir::LogicalResult result);
  /// An error that did not go through the context.
  void addError(std::string message);

private:
  void record(mlir::Diagnostic &diagnostic);
  mlir::ScopedDiagnosticHandler handler;
  std::vector<Diagnostic> diagnostics;
  bool hadError = false;
};

/// Sets an options struct's fields from named values (the names of its
/// bind()): the API's face of the options declared once. Unknown names and
/// values of the wrong kind are errors. The binder owns the lists that
/// ArrayRef fields (the passes' generated structs) point to: keep it alive
/// while the options are used.
class KeywordBinder : public mlir::amp::OptionsBinder {
public:
  explicit KeywordBinder(const OptionList &values);
  void bind(const mlir::amp::OptionSpec &spec, bool &value) override;
  void bind(const mlir::amp::OptionSpec &spec, unsigned &value) override;
  void bind(const mlir::amp::OptionSpec &spec, int64_t &value) override;
  void bind(const mlir::amp::OptionSpec &spec, double &value) override;
  void bind(const mlir::amp::OptionSpec &spec, std::string &value) override;
  void bind(const mlir::amp::OptionSpec &spec,
            std::vector<std::string> &value) override;
  void bind(const mlir::amp::OptionSpec &spec,
            llvm::ArrayRef<std::string> &value) override;
  void bind(const mlir::amp::OptionSpec &spec,
            std::optional<double> &value) override;
  void bind(const mlir::amp::OptionSpec &spec, int &value,
            llvm::ArrayRef<mlir::amp::OptionChoice> choices) override;

  /// After binding: the first error (an unknown name, a bad value), or "".
  std::string finish();
  /// Names that must not be given through this face (set by the API).
  void reserve(llvm::StringRef name, llvm::StringRef why);

private:
  const OptionValue *find(const mlir::amp::OptionSpec &spec);
  void fail(const mlir::amp::OptionSpec &spec, llvm::StringRef expected);

  const OptionList &values;
  std::set<std::string> used;
  std::vector<std::string> known;
  std::vector<std::pair<std::string, std::string>> reserved;
  /// Storage of the ArrayRef lists.
  std::deque<std::vector<std::string>> lists;
  std::string error;
};

} // namespace amp::api

#endif // AMP_LIB_API_APIINTERNAL_H
