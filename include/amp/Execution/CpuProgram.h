//===- CpuProgram.h - compile and run amp programs on the CPU ---*- C++ -*-===//
//
// The execution layer of the CPU backend: load a model (ONNX or amp MLIR),
// lower it with the named CPU pipeline, JIT-compile it with the weights
// bound in place, and run it on host tensors. amp-run is a driver over
// this; the Python package will be another.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_EXECUTION_CPUPROGRAM_H
#define AMP_EXECUTION_CPUPROGRAM_H

#include "amp/Runtime/HostTensor.h"
#include "amp/Runtime/MemRefABI.h"
#include "amp/Target/ONNX/ModelLimits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>

namespace llvm {
class SourceMgr;
class TargetMachine;
} // namespace llvm

namespace mlir {
class ExecutionEngine;
class OpPassManager;
namespace amp {
struct RuntimeCheckFailure;
} // namespace amp
} // namespace mlir

namespace mlir::amp::execution {

using amp_runtime::ElementType;
using amp_runtime::Tensor;

/// Imports an ONNX model (and runs the import cleanup pipeline) or parses an
/// amp .mlir file registered with `sourceMgr`. Errors go to the context's
/// diagnostic handler.
/// `forTraining`: an ONNX model is imported with its initializers marked
/// and without the cleanup, as the train-step builder needs it. `limits`
/// caps what an ONNX file may ask for.
FailureOr<OwningOpRef<ModuleOp>> loadModel(StringRef path, MLIRContext &context,
                                           llvm::SourceMgr &sourceMgr,
                                           bool forTraining = false,
                                           const ModelLimits &limits = {});

/// The entry point: `main`, else the only public function; reports an
/// error and returns null otherwise.
func::FuncOp findEntry(ModuleOp module);

/// The host element type of an MLIR element type (signedness kept).
std::optional<ElementType> toHostElementType(Type type);
/// Whether values of `type` may be given and compared as `carrier` (bf16
/// and the 8-bit floats as f32, the 4- and 2-bit integers as i8/ui8).
bool travelsAs(ElementType type, ElementType carrier);

/// Reads a .npy file or an ONNX TensorProto .pb.
llvm::Expected<Tensor> readTensorFile(StringRef path, MLIRContext *context,
                                      const ModelLimits &limits = {});
/// Appends the tensors of the files `paths` to `tensors`; stops at the
/// first error.
llvm::Error readTensorFiles(llvm::ArrayRef<std::string> paths,
                            MLIRContext *context, std::vector<Tensor> &tensors,
                            const ModelLimits &limits = {});

/// An input or output of a compiled program: its name (`amp.name`, else
/// input_<i>/output_<i>) and type (amp level, dynamic sizes kept).
struct TensorSignature {
  std::string name;
  RankedTensorType type;
};

/// One JIT-compiled function of a CpuProgram.
class CpuFunction {
public:
  StringRef getName() const { return name; }
  ArrayRef<TensorSignature> getInputs() const { return inputs; }
  ArrayRef<TensorSignature> getOutputs() const { return outputs; }

  /// Checks `tensor` against input `index` ("input 'x' (source) has ...").
  /// Inputs also accept the tensors their type travels as (see travelsAs:
  /// bf16 and 8-bit floats as f32, 4- and 2-bit integers as i8/ui8 within
  /// their range); `prepareInput` converts them.
  llvm::Error checkInput(unsigned index, const Tensor &tensor,
                         StringRef source) const;
  Tensor prepareInput(unsigned index, Tensor tensor) const;
  /// Seeded random values for input `index` (dynamic sizes become 1).
  Tensor makeRandomInput(unsigned index, std::mt19937_64 &rng) const;

  /// Runs once on checked and prepared inputs. Fails when a run-time
  /// check fails (an index out of range, see
  /// amp/Conversion/AmpToLinalg/RuntimeChecks.h): the message names the
  /// node, and `results` are not to be used.
  [[nodiscard]] llvm::Error run(const std::vector<Tensor> &inputs,
                                std::vector<Tensor> &results) const;
  /// The same on inputs handed over: no copy of them is made, and results
  /// updated in place take over the inputs' buffers.
  [[nodiscard]] llvm::Error runConsuming(std::vector<Tensor> &&inputs,
                                         std::vector<Tensor> &results) const;

private:
  friend class CpuProgram;
  /// Runs instead of JIT code (CpuProgram::wrap).
  std::function<llvm::Error(const std::vector<Tensor> &, std::vector<Tensor> &)>
      external;
  llvm::Error checkFailure(const RuntimeCheckFailure &failure) const;
  std::string name;
  SmallVector<TensorSignature> inputs, outputs;
  std::vector<amp_runtime::ResultType> resultTypes;
  void (*function)(void **) = nullptr;
  /// The program's run-time check messages (by id).
  const std::vector<std::string> *checkMessages = nullptr;
};

/// An LLVM-dialect module JIT-compiled with the CPU backend's settings:
/// the host's target machine (so that LLVM vectorises), O3, the CPU
/// runtime's symbols and the module's weights bound in place.
struct JitCode {
  ~JitCode();
  /// The packed entry point (`void(void **)`) of function `name`.
  FailureOr<void (*)(void **)> lookupPacked(ModuleOp module,
                                            StringRef name) const;
  /// The host, for the optimizer's cost model (outlives `engine`).
  std::unique_ptr<llvm::TargetMachine> targetMachine;
  std::unique_ptr<ExecutionEngine> engine;
};
FailureOr<std::unique_ptr<JitCode>> jitCompile(ModuleOp module);

/// A JIT-compiled amp program: one or more entry functions of a module.
class CpuProgram {
public:
  ~CpuProgram();

  /// Runs an entry's calls, as `run` would, on prepared inputs.
  using ExternalRun = std::function<llvm::Error(const std::vector<Tensor> &,
                                                std::vector<Tensor> &)>;
  /// A program whose one function has `entry`'s signature (read as
  /// `compile` reads it) and runs through `run` instead of JIT code: the
  /// CUDA emulation's artifact. `owner` lives as long as the program.
  static FailureOr<std::unique_ptr<CpuProgram>>
  wrap(func::FuncOp entry, ExternalRun run, std::shared_ptr<void> owner);

  /// Lowers `module` (in place) with the CPU pipeline and JIT-compiles the
  /// functions `entries` (default: the entry, see findEntry).
  /// `dumpLoweredPath`: also write the LLVM-dialect module there.
  /// `lowering`: another pipeline to the LLVM dialect (the CUDA lowering's
  /// CPU emulation) instead of buildCpuLoweringPipeline.
  static FailureOr<std::unique_ptr<CpuProgram>>
  compile(ModuleOp module, StringRef dumpLoweredPath = "",
          ArrayRef<std::string> entries = {},
          const std::function<void(OpPassManager &)> &lowering = {});

  /// The first entry function.
  const CpuFunction &getEntry() const { return *functions.front(); }
  /// The entry function `name`, or null.
  const CpuFunction *getFunction(StringRef name) const;

  // The first entry function's signature and calls.
  ArrayRef<TensorSignature> getInputs() const { return getEntry().inputs; }
  ArrayRef<TensorSignature> getOutputs() const { return getEntry().outputs; }
  llvm::Error checkInput(unsigned index, const Tensor &tensor,
                         StringRef source) const {
    return getEntry().checkInput(index, tensor, source);
  }
  Tensor prepareInput(unsigned index, Tensor tensor) const {
    return getEntry().prepareInput(index, std::move(tensor));
  }
  Tensor makeRandomInput(unsigned index, std::mt19937_64 &rng) const {
    return getEntry().makeRandomInput(index, rng);
  }
  [[nodiscard]] llvm::Error run(const std::vector<Tensor> &inputs,
                                std::vector<Tensor> &results) const {
    return getEntry().run(inputs, results);
  }

private:
  CpuProgram();
  static FailureOr<std::unique_ptr<CpuFunction>>
  makeFunction(func::FuncOp entry);

  std::vector<std::unique_ptr<CpuFunction>> functions;
  /// The messages of the run-time checks the lowering added, by id.
  std::vector<std::string> checkMessages;
  std::unique_ptr<JitCode> jit;
  /// What a wrapped program's function needs (wrap).
  std::shared_ptr<void> owner;
};

/// How an output compares with its reference.
struct Comparison {
  /// Element types or shapes differ (then `message` says how).
  bool mismatchedType = false;
  std::string message;
  double maxAbsError = 0, maxRelError = 0;
  /// Elements beyond atol + rtol * |reference|.
  int64_t mismatches = 0;
};
/// Compares `got` with `want` elementwise (NaN equals NaN, equal infinities
/// match; a bf16 result may be compared with an f32 reference).
Comparison compareTensors(const Tensor &got, const Tensor &want, double atol,
                          double rtol);

} // namespace mlir::amp::execution

#endif // AMP_EXECUTION_CPUPROGRAM_H
