//===- Program.cpp - compile and run on the CPU ---------------------------===//

#include "APIInternal.h"

#include "amp/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"

using namespace amp::api;
using namespace mlir;
using mlir::amp::execution::CpuProgram;
using mlir::amp::execution::TensorSignature;

Program::Program() = default;
Program::~Program() = default;
Program::Program(std::shared_ptr<State> state) : state(std::move(state)) {}

namespace amp::api {
TensorInfo describeTensor(const TensorSignature &signature) {
  TensorInfo info;
  info.name = signature.name;
  info.elementType =
      mlir::amp::execution::toHostElementType(signature.type.getElementType())
          .value_or(ElementType::F32);
  for (int64_t size : signature.type.getShape())
    info.shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
  return info;
}
} // namespace amp::api

static std::vector<TensorInfo> describe(ArrayRef<TensorSignature> signatures) {
  std::vector<TensorInfo> infos;
  for (const TensorSignature &signature : signatures)
    infos.push_back(describeTensor(signature));
  return infos;
}

Status Module::compile(const std::string &target, Program &result) const {
  if (!state)
    return Status::error("the module is empty");
  if (target != "cpu")
    return Status::error("unknown target '" + target +
                         "' (the API compiles for 'cpu'; CUDA artifacts come "
                         "from amp-opt --amp-target=cuda)");
  std::lock_guard<std::mutex> lock(state->mutex);
  DiagnosticCapture capture(state->context.get());
  auto program = std::make_shared<Program::State>();
  program->module = state;
  // The lowering rewrites its module: a copy, which the program keeps
  // (the JIT code reads the weights it holds).
  program->lowered = OwningOpRef<ModuleOp>(state->module->clone());
  if (state->fromOnnx && !state->cleaned) {
    // What amp-run does to an imported model before lowering it.
    PassManager pm(state->context.get(), ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    mlir::amp::buildImportCleanupPipeline(pm);
    if (failed(pm.run(*program->lowered)))
      return capture.finish(failure());
  }
  auto compiled = CpuProgram::compile(*program->lowered);
  if (failed(compiled))
    return capture.finish(failure());
  program->program = std::move(*compiled);
  program->inputs = describe(program->program->getInputs());
  program->outputs = describe(program->program->getOutputs());
  Status status = capture.finish(success());
  if (status.ok)
    result = Program(std::move(program));
  return status;
}

const std::vector<TensorInfo> &Program::getInputs() const {
  static const std::vector<TensorInfo> none;
  return state ? state->inputs : none;
}

const std::vector<TensorInfo> &Program::getOutputs() const {
  static const std::vector<TensorInfo> none;
  return state ? state->outputs : none;
}

Status Program::run(std::vector<Tensor> inputs,
                    std::vector<Tensor> &results) const {
  if (!state)
    return Status::error("the program is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  const CpuProgram &program = *state->program;
  if (inputs.size() != state->inputs.size())
    return Status::error("the program takes " +
                         std::to_string(state->inputs.size()) +
                         " inputs, got " + std::to_string(inputs.size()));
  for (unsigned i = 0; i < inputs.size(); ++i) {
    if (llvm::Error err =
            program.checkInput(i, inputs[i], "argument " + std::to_string(i)))
      return Status::error(llvm::toString(std::move(err)));
    inputs[i] = program.prepareInput(i, std::move(inputs[i]));
  }
  if (llvm::Error err =
          program.getEntry().runConsuming(std::move(inputs), results))
    return Status::error(llvm::toString(std::move(err)));
  return Status();
}
