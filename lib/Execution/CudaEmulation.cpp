//===- CudaEmulation.cpp - the CUDA artifact run on the CPU ---------------===//

#include "amp/Execution/CudaEmulation.h"
#include "amp/Conversion/LinalgToCUDA/LaunchLoops.h"
#include "amp/Pipelines/Pipelines.h"

#include "amp_gpu/Artifact.h"
#include "amp_gpu/HostExecutor.h"
#include "amp_gpu/HostTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::execution;

FailureOr<OwningOpRef<ModuleOp>>
mlir::amp::execution::extractHostKernels(ModuleOp module) {
  OpBuilder builder(module.getContext());
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(module.getLoc());
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
      Location loc = kernel.getLoc();
      if (!kernel.getWorkgroupAttributions().empty() ||
          !kernel.getPrivateAttributions().empty())
        return kernel.emitError("the CUDA emulation cannot run a kernel with "
                                "memory attributions"),
               failure();
      if (!kernel.getBody().hasOneBlock())
        return kernel.emitError("the CUDA emulation runs one-block kernels"),
               failure();
      SmallVector<Type> types(kernel.getArgumentTypes());
      types.append(6, builder.getIndexType());
      builder.setInsertionPointToEnd(kernels->getBody());
      auto function = builder.create<func::FuncOp>(
          loc, kernel.getName(), builder.getFunctionType(types, {}));
      Block *entry = function.addEntryBlock();
      builder.setInsertionPointToStart(entry);
      unsigned numParams = kernel.getNumArguments();
      SmallVector<Value> bounds, ids;
      for (int i = 0; i < 6; ++i)
        bounds.push_back(entry->getArgument(numParams + i));
      scf::ForOp outermost = cuda::buildLaunchLoops(builder, loc, bounds, ids);
      IRMapping mapping;
      for (unsigned i = 0; i < numParams; ++i)
        mapping.map(kernel.getArgument(i), entry->getArgument(i));
      for (Operation &op : kernel.getBody().front().without_terminator())
        builder.clone(op, mapping);
      builder.setInsertionPointAfter(outermost);
      builder.create<func::ReturnOp>(loc);

      // The GPU's indices become the loops' and the launch's sizes.
      SmallVector<Operation *> gpuOps;
      function.walk([&](Operation *op) {
        if (isa<gpu::GPUDialect>(op->getDialect()))
          gpuOps.push_back(op);
      });
      for (Operation *op : gpuOps) {
        Value replacement;
        if (auto id = dyn_cast<gpu::BlockIdOp>(op))
          replacement = ids[int(id.getDimension())];
        else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
          replacement = ids[3 + int(id.getDimension())];
        else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
          replacement = bounds[int(dim.getDimension())];
        else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
          replacement = bounds[3 + int(dim.getDimension())];
        else
          return op->emitError("the CUDA emulation cannot run '")
                     << op->getName() << "' in kernel @" << kernel.getName(),
                 failure();
        op->getResult(0).replaceAllUsesWith(replacement);
        op->erase();
      }
    }
  }
  return kernels;
}

namespace {

llvm::Error runEmulation(amp_gpu::HostProgram &host,
                         const std::vector<Tensor> &inputs,
                         std::vector<Tensor> &results) {
  const amp_gpu::Artifact &artifact = host.getArtifact();
  std::vector<const void *> in;
  for (auto [i, tensor] : llvm::enumerate(inputs)) {
    if (i >= artifact.inputs.size() ||
        tensor.bytes.size() != artifact.inputs[i].byteSize())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "input " + std::to_string(i) + " holds " +
              std::to_string(tensor.bytes.size()) +
              " bytes; the CUDA artifact's needs " +
              std::to_string(i < artifact.inputs.size()
                                 ? artifact.inputs[i].byteSize()
                                 : 0));
    in.push_back(tensor.bytes.data());
  }
  results.clear();
  std::vector<void *> out;
  for (const amp_gpu::TensorSignature &sig : artifact.outputs) {
    Tensor tensor;
    amp_gpu::toElementType(sig.dtype, tensor.elementType);
    tensor.shape = sig.shape;
    tensor.bytes.resize(sig.byteSize());
    results.push_back(std::move(tensor));
  }
  for (Tensor &tensor : results)
    out.push_back(tensor.bytes.data());
  std::string error;
  if (!host.run(in, out, error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the emulated CUDA artifact: " + error);
  return llvm::Error::success();
}

} // namespace

EmulatedArtifact::~EmulatedArtifact() = default;

FailureOr<std::shared_ptr<EmulatedArtifact>>
mlir::amp::execution::compileEmulatedArtifact(ModuleOp module,
                                              CudaArtifactOptions options) {
  auto state = std::make_shared<EmulatedArtifact>();
  options.hostKernels = true;
  amp_gpu::Artifact artifact;
  if (failed(buildCudaArtifact(module, options, artifact)))
    return failure();
  FailureOr<OwningOpRef<ModuleOp>> kernels = extractHostKernels(module);
  if (failed(kernels))
    return failure();
  PassManager lower(module.getContext());
  buildCpuBuffersToLLVMPipeline(lower);
  if (failed(lower.run(**kernels)))
    return failure();
  FailureOr<std::unique_ptr<JitCode>> jit = jitCompile(**kernels);
  if (failed(jit))
    return failure();
  std::vector<amp_gpu::HostKernel> functions;
  for (const amp_gpu::Kernel &kernel : artifact.kernels) {
    FailureOr<void (*)(void **)> function =
        (*jit)->lookupPacked(**kernels, kernel.name);
    if (failed(function))
      return failure();
    functions.push_back(*function);
  }
  std::string error;
  state->host = amp_gpu::HostProgram::create(std::move(artifact),
                                             std::move(functions), error);
  if (!state->host)
    return module.emitError("the emulated CUDA artifact: ") << error, failure();
  state->jit = std::move(*jit);
  return state;
}

FailureOr<std::unique_ptr<CpuProgram>>
mlir::amp::execution::compileCudaEmulation(ModuleOp module,
                                           CudaArtifactOptions options) {
  auto entry = module.lookupSymbol<func::FuncOp>(options.entry);
  if (!entry)
    return module.emitError("no function @")
               << options.entry << " to compile for CUDA",
           failure();
  auto holder = std::make_shared<std::shared_ptr<EmulatedArtifact>>();
  // The signature is read before the lowering rewrites the entry.
  FailureOr<std::unique_ptr<CpuProgram>> program = CpuProgram::wrap(
      entry,
      [holder](const std::vector<Tensor> &inputs,
               std::vector<Tensor> &results) {
        return runEmulation(*(*holder)->host, inputs, results);
      },
      holder);
  if (failed(program))
    return failure();
  for (const TensorSignature &sig : (*program)->getOutputs())
    if (!sig.type.hasStaticShape())
      return entry.emitError("the CUDA target needs static shapes; output '")
                 << sig.name << "' is " << sig.type,
             failure();
  FailureOr<std::shared_ptr<EmulatedArtifact>> artifact =
      compileEmulatedArtifact(module, std::move(options));
  if (failed(artifact))
    return failure();
  *holder = std::move(*artifact);
  return program;
}
