//===- Amp.h - amp's embedding API, free of MLIR types ----------*- C++ -*-===//
//
// What the Python package (and any other binding) calls: import or load a
// model, run the front end with autocast, export it, compile and run it on
// the CPU. It is a thin layer over lib/Execution and lib/Pipelines.
//
// Only standard-library types (and the runtime's host tensor) cross this
// header, so a binding compiled with other flags than LLVM's (nanobind
// needs RTTI and exceptions) can link amp's libraries: no LLVM or MLIR
// class is instantiated on its side. Every call returns a Status with the
// diagnostics it produced; nothing is printed to stderr.
//
// Options are the pipelines' own option structs (amp/Support/
// OptionsBinder.h), set by name: the same names as the textual pipeline
// options (`amp-front-end{type=bf16 opt-level=2}`), so that no option is
// declared again here.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_API_AMP_H
#define AMP_API_AMP_H

#include "amp/Runtime/HostTensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace amp::api {

using amp_runtime::ElementType;
using amp_runtime::Tensor;

/// One diagnostic of a call: what MLIR or amp reported, with the file,
/// line and column of its location, and the ONNX node and op where the
/// message names them ("node 'conv1' (#3 in main, op Conv, ...): ...").
struct Diagnostic {
  /// "error", "warning", "note" or "remark".
  std::string severity;
  std::string message;
  /// The location as MLIR prints it (empty when unknown).
  std::string location;
  std::string file;
  unsigned line = 0, column = 0;
  std::string node, op;
};

/// The outcome of a call: failed when any error was reported (or the call
/// failed without one; then `diagnostics` holds a generic error).
struct Status {
  bool ok = true;
  std::vector<Diagnostic> diagnostics;

  /// The diagnostics as one text, one per line ("error: file:1:2: ...").
  std::string message() const;
  static Status error(std::string message);
};

/// The value of one named option. Lists are the ListOptions (allow, deny,
/// node-rules, ...); an enumerated option takes the spelling of one of its
/// choices; an integer is accepted where a number is expected.
using OptionValue =
    std::variant<bool, int64_t, double, std::string, std::vector<std::string>>;
using OptionList = std::vector<std::pair<std::string, OptionValue>>;

/// One option of a pipeline, for documentation and bindings.
struct OptionInfo {
  std::string name, description;
  /// "bool", "int", "float", "string", "list" or "choice".
  std::string kind;
  /// The default, spelled as a textual pipeline option would be.
  std::string defaultValue;
  std::vector<std::string> choices;
};

/// The autocast report (its JSON, as Module::autocast returns it) as the
/// self-contained HTML page `amp-opt --amp-report-html` writes.
std::string renderReportHtml(const std::string &reportJson);

/// The pipelines whose options the API takes.
enum class OptionSet { FrontEnd, ImportLimits, TrainStep };
std::vector<OptionInfo> describeOptions(OptionSet set);

struct ImportOptions {
  /// Evaluate ops with constant inputs while importing.
  bool foldConstants = true;
  /// Caps on what the file may ask for (ModelLimits' names:
  /// max-tensor-elements, ...); empty: the defaults.
  OptionList limits;
};

/// What a compiled function takes or returns: its name, element type and
/// shape (-1 for a dynamic size).
struct TensorInfo {
  std::string name;
  ElementType elementType;
  std::vector<int64_t> shape;
};

class Program;
class Trainer;

/// A parameter, buffer or constant of a Torch graph: the caller's memory
/// (C-contiguous, of the dtype and shape the graph declares), used without
/// a copy where it is aligned; `owner` keeps it alive while amp holds it.
struct ExternalWeight {
  std::string name;
  const void *data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<const void> owner;
};

/// An ATen op the Torch importer translates, and the amp ops it becomes.
struct AtenOpInfo {
  std::string target, ampOps;
};
std::vector<AtenOpInfo> supportedAtenOps();

/// A model in the amp dialect, with its own MLIR context. Copies share it;
/// clone() makes an independent one.
class Module {
public:
  Module();
  ~Module();
  Module(const Module &);
  Module &operator=(const Module &);

  /// Imports an ONNX model from a file or from its serialized bytes
  /// (`name` names it in diagnostics).
  static Status importOnnxFile(const std::string &path,
                               const ImportOptions &options, Module &result);
  static Status importOnnxBytes(const std::string &bytes,
                                const std::string &name,
                                const ImportOptions &options, Module &result);
  /// Parses amp MLIR (text or bytecode) from a file, or text from a string.
  static Status parseMlirFile(const std::string &path, Module &result);
  static Status parseMlirText(const std::string &text, const std::string &name,
                              Module &result);

  /// Translates a torch.export graph (the JSON amp_mlir.torch writes, in
  /// the Core ATen operator set) with its weights by state-dict name.
  /// `training`: a training-mode export, for Trainer::build only (BatchNorm
  /// in training mode and dropout are kept, buffer updates dropped).
  static Status importTorchGraph(const std::string &graphJson,
                                 const std::vector<ExternalWeight> &weights,
                                 bool training, Module &result);

  bool isNull() const { return !state; }
  /// Whether the module came from an ONNX model (then the front end runs on
  /// it before autocast, as amp-opt does).
  bool isFromOnnx() const;
  /// Whether the module came from a torch.export graph (importTorchGraph):
  /// it can be trained (Trainer::build imports the graph again).
  bool isFromTorch() const;
  /// The low-precision type autocast applied ("" before autocast).
  std::string getAutocastType() const;

  Module clone() const;

  /// Runs the front end (`amp-front-end`, with these options by their
  /// pipeline names: type, opt-level, allow, deny, node-rules, policy,
  /// fold-constants, ...) on the module, in place. `reportJson` receives
  /// the autocast report, byte for byte the file `amp-opt --amp-report`
  /// writes. A module is autocast once.
  Status autocast(const OptionList &options, std::string &reportJson);

  /// The module as MLIR text (generic form if asked), as bytecode, or as
  /// ONNX (opset 0 keeps the imported one). Files are written atomically.
  Status toMlirText(std::string &text, bool generic = false) const;
  Status writeBytecode(const std::string &path) const;
  Status writeOnnx(const std::string &path, int64_t opset = 0) const;
  Status toOnnxBytes(std::string &bytes, int64_t opset = 0) const;

  /// amp-run --check-numerics: autocasts a copy of the fp32 module (the
  /// front end's options by name, as autocast() takes them), runs it beside
  /// the fp32 program on `inputs` and compares every op's output.
  /// `reportJson` is the JSON amp-run --check-numerics=FILE writes
  /// (`reportOptions`: underflow, top); `outputs` are the low-precision
  /// program's own outputs. The module itself is unchanged.
  Status checkNumerics(const OptionList &autocastOptions,
                       const OptionList &reportOptions,
                       std::vector<Tensor> inputs, std::string &reportJson,
                       std::vector<Tensor> &outputs) const;

  /// Lowers a copy of the module with the CPU pipeline and JIT-compiles
  /// its entry function. The module itself is unchanged.
  Status compile(const std::string &target, Program &result) const;

  /// For the implementation.
  struct State;
  explicit Module(std::shared_ptr<State> state);
  const std::shared_ptr<State> &getState() const { return state; }

private:
  std::shared_ptr<State> state;
};

/// What one optimizer step did.
struct StepResult {
  double loss = 0;
  /// The loss scale the step ran with (1 without loss scaling).
  double lossScale = 1;
  double lr = 0;
  /// Non-finite gradients: the update was skipped (and the scale backed
  /// off).
  bool skipped = false;
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// A compiled training program and its state (lib/Execution's
/// TrainSession, which amp-run --train drives the same way).
class Trainer {
public:
  Trainer();
  ~Trainer();

  /// Builds the train step of a module imported from ONNX (re-imported
  /// from its source for training, so autocast on `module` does not
  /// matter) with the train-step options by name (`amp-train-step{...}`:
  /// loss, optimizer, lr, loss-scale, static-batch, ..., and the front
  /// end's type, opt-level, ...; without `type` the step is fp32), or takes
  /// a training program already built (`amp-opt --train` output), and
  /// compiles it. `accumulate` > 1: each step() takes that many
  /// micro-batches (amp-run --train --accumulate; the program is split into
  /// @compute_gradients and @apply_gradients).
  static Status build(const Module &module, const OptionList &options,
                      int64_t accumulate, Trainer &result);

  /// The model input and the labels @train_step takes.
  const std::vector<TensorInfo> &getBatchInputs() const;
  /// One optimizer step on a batch (with accumulation: `accumulate`
  /// micro-batches, the batch's rows split evenly). Overflowing without
  /// loss scaling, or with the scale at its minimum, is an error (as in
  /// amp-run --train).
  Status step(Tensor input, Tensor labels, StepResult &result);
  /// The model (@main) on `input` with the current weights.
  Status predict(Tensor input, std::vector<Tensor> &outputs) const;
  /// Steps taken.
  int64_t getStepCount() const;

  /// The state by the names amp-run's --save-state files use.
  NamedTensors getState() const;
  Status setState(const NamedTensors &state);
  /// Writes the source ONNX model with the trained weights.
  Status exportOnnx(const std::string &path) const;

  struct State;

private:
  std::shared_ptr<State> state;
};

/// A JIT-compiled entry function. Calls from several threads run one at a
/// time.
class Program {
public:
  Program();
  ~Program();

  const std::vector<TensorInfo> &getInputs() const;
  const std::vector<TensorInfo> &getOutputs() const;

  /// Runs the function. Inputs are checked against the signature (element
  /// type, rank and static sizes; "input 'x' has ..."), and bf16 inputs
  /// may be given as f32. The inputs are consumed.
  Status run(std::vector<Tensor> inputs, std::vector<Tensor> &results) const;

  struct State;
  explicit Program(std::shared_ptr<State> state);

private:
  std::shared_ptr<State> state;
};

} // namespace amp::api

#endif // AMP_API_AMP_H
