//===- CudaArtifact.cpp - the host schedule of a lowered module -> .ampgpu ===//
//
// After amp-lower-to-cuda the entry function is straight-line host code:
// allocations, constant globals (weights), views, gpu.launch_func,
// cuBLASLt-able linalg GEMMs and contiguous copies. Each launch, GEMM and
// copy is a step; every memref operand is resolved to the buffer it views
// (a function argument, an allocation or a weight) plus the view's static
// offset, sizes and strides. Buffers live from the first to the last step
// that touches them (inputs and outputs for the whole program) and share
// arena bytes when their lifetimes do not overlap.
//
//===----------------------------------------------------------------------===//

#include "amp/Target/CUDA/CudaArtifact.h"
#include "amp/Conversion/LinalgToCUDA/CudaGemm.h"
#include "amp/Conversion/LinalgToCUDA/Views.h"
#include "amp/Dialect/Amp/IR/SourceNames.h"
#include "amp/Runtime/FloatConversion.h"
#include "amp_gpu/Artifact.h"
#include "amp_gpu/MemoryPlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cmath>
#include <cstring>
#include <map>

using namespace mlir;
using namespace mlir::amp;
namespace gpuformat = amp_gpu;

namespace {

std::optional<gpuformat::DType> toDType(Type type) {
  using gpuformat::DType;
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF64())
    return DType::F64;
  if (type.isInteger(1))
    return DType::Bool;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 64:
    return isUnsigned ? DType::U64 : DType::I64;
  case 32:
    return isUnsigned ? DType::U32 : DType::I32;
  case 16:
    return isUnsigned ? DType::U16 : DType::I16;
  case 8:
    return isUnsigned ? DType::U8 : DType::I8;
  default:
    return std::nullopt;
  }
}

/// The bytes of a constant global's value, one byte per i1.
FailureOr<std::string> constantBytes(memref::GlobalOp global) {
  auto initial = global.getInitialValue();
  auto type = global.getType();
  if (!initial)
    return failure();
  if (auto dense = dyn_cast<DenseElementsAttr>(*initial)) {
    Type element = dense.getElementType();
    int64_t count = type.getNumElements();
    if (element.isInteger(1)) {
      std::string bytes;
      for (bool value : dense.getValues<bool>())
        bytes.push_back(value ? 1 : 0);
      if (dense.isSplat())
        bytes.assign(count, bytes.empty() ? 0 : bytes[0]);
      return bytes;
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      std::string bytes;
      bytes.reserve(raw.size() * count);
      for (int64_t i = 0; i < count; ++i)
        bytes.append(raw.data(), raw.size());
      return bytes;
    }
    return std::string(raw.data(), raw.size());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(*initial)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || resource.getElementType().isInteger(1))
      return failure();
    ArrayRef<char> data = blob->getData();
    return std::string(data.data(), data.size());
  }
  return failure();
}

/// Float weights big enough to matter for the file size.
bool isRandomizable(gpuformat::DType dtype, MemRefType type) {
  using gpuformat::DType;
  return (dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16) &&
         type.getNumElements() >= 4096;
}

double rootMeanSquare(const std::string &bytes, gpuformat::DType dtype) {
  size_t width = gpuformat::dtypeSize(dtype), count = bytes.size() / width;
  double sum = 0;
  for (size_t i = 0; i < count; ++i) {
    float value;
    if (dtype == gpuformat::DType::F32) {
      std::memcpy(&value, bytes.data() + 4 * i, 4);
    } else {
      uint16_t bits;
      std::memcpy(&bits, bytes.data() + 2 * i, 2);
      value = dtype == gpuformat::DType::F16
                  ? amp_runtime::halfBitsToFloat(bits)
                  : amp_runtime::bfloat16BitsToFloat(bits);
    }
    if (std::isfinite(value))
      sum += double(value) * value;
  }
  return count ? std::sqrt(sum / count) : 0;
}

class ScheduleBuilder {
public:
  ScheduleBuilder(ModuleOp module, func::FuncOp entry,
                  const CudaArtifactOptions &options,
                  std::vector<std::string> inputNames,
                  std::vector<std::string> outputNames)
      : module(module), entry(entry), options(options),
        inputNames(std::move(inputNames)), outputNames(std::move(outputNames)) {
  }

  LogicalResult build(gpuformat::Artifact &artifact);

private:
  FailureOr<uint32_t> bufferOf(Operation *user, Value root);
  uint32_t addBuffer(Value root, const gpuformat::Buffer &buffer);
  FailureOr<gpuformat::BufferRef> refOf(Operation *user, Value view,
                                        int64_t elementOffset);
  LogicalResult addLaunch(gpu::LaunchFuncOp launch);
  LogicalResult addGemm(Operation *op, const cuda::GemmLayout &gemm);
  LogicalResult addCopy(memref::CopyOp copy);
  LogicalResult addModules();
  void touch(uint32_t buffer) {
    auto &range = ranges[buffer];
    uint32_t step = artifact->steps.size();
    if (!touched[buffer]) {
      range.first = step;
      touched[buffer] = true;
    }
    range.last = std::max(range.last, step);
  }
  std::string nameOf(Operation *op) {
    std::string name = getSourceName(op->getLoc());
    if (name.empty()) {
      llvm::raw_string_ostream os(name);
      op->getLoc().print(os);
    }
    return name;
  }

  ModuleOp module;
  func::FuncOp entry;
  const CudaArtifactOptions &options;
  std::vector<std::string> inputNames, outputNames;
  gpuformat::Artifact *artifact = nullptr;
  DenseMap<Value, uint32_t> buffers;
  std::map<std::string, uint32_t> weightBuffers; // by global name
  std::vector<gpuformat::LiveRange> ranges;
  std::vector<bool> touched;
  std::vector<bool> wholeProgram;
  std::map<std::pair<std::string, std::string>, uint32_t> kernels;
  std::map<std::string, std::vector<uint32_t>> binaryModules;
};

FailureOr<uint32_t> ScheduleBuilder::bufferOf(Operation *user, Value root) {
  auto it = buffers.find(root);
  if (it != buffers.end())
    return it->second;
  auto type = dyn_cast<MemRefType>(root.getType());
  std::optional<gpuformat::DType> dtype =
      type ? toDType(type.getElementType()) : std::nullopt;
  if (!type || !type.hasStaticShape() || !dtype)
    return user->emitError("the CUDA target cannot place a buffer of type ")
           << root.getType();
  gpuformat::Buffer buffer;
  buffer.size = type.getNumElements() * gpuformat::dtypeSize(*dtype);
  Operation *def = root.getDefiningOp();
  if (auto getGlobal = dyn_cast_or_null<memref::GetGlobalOp>(def)) {
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        getGlobal, getGlobal.getNameAttr());
    if (global && global.getConstant()) {
      auto existing = weightBuffers.find(global.getSymName().str());
      if (existing != weightBuffers.end()) {
        buffers[root] = existing->second;
        return existing->second;
      }
      FailureOr<std::string> bytes = constantBytes(global);
      if (failed(bytes) || bytes->size() != buffer.size)
        return global.emitError("the CUDA target cannot store the value of "
                                "this constant");
      buffer.name = global.getSymName().str();
      if (options.randomWeights && isRandomizable(*dtype, type)) {
        // Same variance as the real values: activations keep their range.
        buffer.kind = gpuformat::BufferKind::Random;
        buffer.dtype = *dtype;
        buffer.scale = float(std::sqrt(3.0) * rootMeanSquare(*bytes, *dtype));
        buffer.seed = llvm::hash_value(buffer.name);
        weightBuffers[buffer.name] = artifact->buffers.size();
        return addBuffer(root, buffer);
      }
      buffer.kind = gpuformat::BufferKind::Weight;
      std::string &blob = artifact->weights;
      blob.append(
          (gpuformat::kAlignment - blob.size() % gpuformat::kAlignment) %
              gpuformat::kAlignment,
          '\0');
      buffer.offset = blob.size();
      blob += *bytes;
      weightBuffers[buffer.name] = artifact->buffers.size();
    } else {
      return user->emitError("the CUDA target supports constant globals only");
    }
  } else if (def && !isa<memref::AllocOp, memref::AllocaOp>(def)) {
    return def->emitError("the CUDA target cannot place the buffer of '")
           << def->getName() << "'";
  } else {
    buffer.name = def ? nameOf(def) : "argument";
  }
  return addBuffer(root, buffer);
}

uint32_t ScheduleBuilder::addBuffer(Value root,
                                    const gpuformat::Buffer &buffer) {
  uint32_t id = artifact->buffers.size();
  artifact->buffers.push_back(buffer);
  ranges.push_back({buffer.size, 0, 0});
  touched.push_back(false);
  wholeProgram.push_back(false);
  buffers[root] = id;
  return id;
}

FailureOr<gpuformat::BufferRef>
ScheduleBuilder::refOf(Operation *user, Value view, int64_t elementOffset) {
  FailureOr<uint32_t> buffer = bufferOf(user, cuda::getRootBuffer(view));
  if (failed(buffer))
    return failure();
  uint64_t element = gpuformat::dtypeSize(
      *toDType(cast<MemRefType>(view.getType()).getElementType()));
  if (artifact->buffers[*buffer].kind == gpuformat::BufferKind::Arena)
    touch(*buffer);
  return gpuformat::BufferRef{*buffer, uint64_t(elementOffset) * element};
}

LogicalResult ScheduleBuilder::addLaunch(gpu::LaunchFuncOp launch) {
  gpuformat::Step step;
  step.kind = gpuformat::Step::Kind::Kernel;
  step.name = nameOf(launch);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
  for (int i = 0; i < 6; ++i) {
    std::optional<int64_t> v = getConstantIntValue(dims[i]);
    if (!v || *v <= 0 || *v > INT32_MAX)
      return launch.emitError("the CUDA target needs constant launch sizes");
    (i < 3 ? step.grid[i] : step.block[i - 3]) = uint32_t(*v);
  }
  if (launch.getDynamicSharedMemorySize())
    return launch.emitError("dynamic shared memory is not supported");
  for (Value operand : launch.getKernelOperands()) {
    gpuformat::KernelArg arg;
    if (auto type = dyn_cast<MemRefType>(operand.getType())) {
      SmallVector<int64_t> strides;
      int64_t offset;
      std::optional<gpuformat::DType> dtype = toDType(type.getElementType());
      if (!type.hasStaticShape() || !dtype ||
          failed(getStridesAndOffset(type, strides, offset)) ||
          ShapedType::isDynamic(offset) ||
          llvm::any_of(strides, ShapedType::isDynamic))
        return launch.emitError("the CUDA target needs static views; got ")
               << type;
      FailureOr<gpuformat::BufferRef> ref = refOf(launch, operand, 0);
      if (failed(ref))
        return failure();
      arg.kind = gpuformat::KernelArg::Kind::MemRef;
      arg.ref = *ref;
      arg.dtype = *dtype;
      arg.offset = offset;
      arg.sizes.assign(type.getShape().begin(), type.getShape().end());
      arg.strides.assign(strides.begin(), strides.end());
    } else {
      Attribute value;
      if (!matchPattern(operand, m_Constant(&value)))
        return launch.emitError("the CUDA target needs constant scalar "
                                "kernel operands");
      Type scalar = operand.getType();
      if (!scalar.isIntOrIndexOrFloat())
        return launch.emitError("unsupported kernel operand type ") << scalar;
      unsigned width = scalar.isIndex() ? 64 : scalar.getIntOrFloatBitWidth();
      uint64_t bits;
      if (auto integer = dyn_cast<IntegerAttr>(value))
        bits = integer.getValue().getZExtValue();
      else if (auto real = dyn_cast<FloatAttr>(value))
        bits = real.getValue().bitcastToAPInt().getZExtValue();
      else
        return launch.emitError("unsupported kernel operand type ") << scalar;
      using Kind = gpuformat::KernelArg::Kind;
      if (width > 64)
        return launch.emitError("unsupported kernel operand type ") << scalar;
      arg.kind = width > 32   ? (scalar.isF64() ? Kind::F64 : Kind::I64)
                 : width > 16 ? (scalar.isF32() ? Kind::F32 : Kind::I32)
                 : width > 8  ? Kind::B16
                              : Kind::B8;
      arg.bits = bits;
    }
    step.args.push_back(std::move(arg));
  }
  auto key = std::make_pair(launch.getKernelModuleName().str(),
                            launch.getKernelName().str());
  auto it = kernels.find(key);
  if (it == kernels.end()) {
    auto modules = binaryModules.find(key.first);
    if (modules == binaryModules.end())
      return launch.emitError("no compiled code for kernel module @")
             << key.first;
    it = kernels.emplace(key, artifact->kernels.size()).first;
    artifact->kernels.push_back({key.second, modules->second});
  }
  step.kernel = it->second;
  artifact->steps.push_back(std::move(step));
  return success();
}

LogicalResult ScheduleBuilder::addGemm(Operation *op,
                                       const cuda::GemmLayout &g) {
  gpuformat::Step step;
  step.kind = gpuformat::Step::Kind::Gemm;
  step.name = nameOf(op);
  gpuformat::Gemm &out = step.gemm;
  out.aType = *toDType(g.aType);
  out.bType = *toDType(g.bType);
  out.cType = *toDType(g.cType);
  out.transA = g.transA;
  out.transB = g.transB;
  out.batch = g.batch;
  out.m = g.m;
  out.n = g.n;
  out.k = g.k;
  out.lda = g.lda;
  out.ldb = g.ldb;
  out.ldc = g.ldc;
  out.strideA = g.strideA;
  out.strideB = g.strideB;
  out.strideC = g.strideC;
  out.beta = g.beta;
  FailureOr<gpuformat::BufferRef> a = refOf(op, g.a, g.offsetA),
                                  b = refOf(op, g.b, g.offsetB),
                                  c = refOf(op, g.c, g.offsetC);
  if (failed(a) || failed(b) || failed(c))
    return failure();
  out.a = *a;
  out.b = *b;
  out.c = *c;
  artifact->steps.push_back(std::move(step));
  return success();
}

LogicalResult ScheduleBuilder::addCopy(memref::CopyOp copy) {
  auto type = cast<MemRefType>(copy.getSource().getType());
  SmallVector<int64_t> strides;
  int64_t sourceOffset, targetOffset;
  (void)getStridesAndOffset(type, strides, sourceOffset);
  (void)getStridesAndOffset(cast<MemRefType>(copy.getTarget().getType()),
                            strides, targetOffset);
  gpuformat::Step step;
  step.kind = gpuformat::Step::Kind::Copy;
  step.name = nameOf(copy);
  FailureOr<gpuformat::BufferRef> src =
      refOf(copy, copy.getSource(), sourceOffset);
  FailureOr<gpuformat::BufferRef> dst =
      refOf(copy, copy.getTarget(), targetOffset);
  if (failed(src) || failed(dst))
    return failure();
  step.src = *src;
  step.dst = *dst;
  step.bytes = type.getNumElements() *
               gpuformat::dtypeSize(*toDType(type.getElementType()));
  if (step.bytes)
    artifact->steps.push_back(std::move(step));
  return success();
}

/// One PTX module per gpu.binary, plus its cubin (ptxas) when asked for.
LogicalResult ScheduleBuilder::addModules() {
  if (options.hostKernels) {
    for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
      binaryModules[kernels.getSymName().str()] = {
          uint32_t(artifact->modules.size())};
      artifact->modules.push_back(
          {gpuformat::ModuleFormat::Host, "host", std::string()});
    }
    return success();
  }
  std::string ptxas;
  if (options.cubin) {
    SmallString<256> candidate(options.lowering.toolkitPath);
    llvm::sys::path::append(candidate, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(candidate))
      ptxas = std::string(candidate);
    else if (auto found = llvm::sys::findProgramByName("ptxas"))
      ptxas = *found;
    else
      module.emitWarning("ptxas not found (set --amp-cuda-toolkit); the "
                         "artifact holds PTX only, compiled when loaded");
  }
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    auto object = dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
      return binary.emitError("expected PTX (gpu-module-to-binary isa)");
    std::vector<uint32_t> modules;
    std::string ptx = object.getObject().getValue().str();
    while (!ptx.empty() && ptx.back() == '\0') // the serializer's terminator
      ptx.pop_back();
    if (!ptxas.empty()) {
      SmallString<128> input, output;
      if (llvm::sys::fs::createTemporaryFile("amp-kernel", "ptx", input) ||
          llvm::sys::fs::createTemporaryFile("amp-kernel", "cubin", output))
        return binary.emitError("cannot create a temporary file for ptxas");
      auto cleanup = llvm::make_scope_exit([&] {
        llvm::sys::fs::remove(input);
        llvm::sys::fs::remove(output);
      });
      {
        std::error_code ec;
        llvm::raw_fd_ostream os(input, ec);
        os << ptx;
      }
      std::string arch = "-arch=" + options.lowering.chip;
      SmallVector<StringRef> args = {ptxas, arch, "-O3", input, "-o", output};
      std::string message;
      int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, {}, 0, 0,
                                         &message);
      auto cubin = llvm::MemoryBuffer::getFile(output);
      if (rc != 0 || !cubin)
        return binary.emitError("ptxas failed on kernel module @")
               << binary.getSymName() << " (exit " << rc << ") " << message;
      modules.push_back(artifact->modules.size());
      artifact->modules.push_back({gpuformat::ModuleFormat::Cubin,
                                   options.lowering.chip,
                                   (*cubin)->getBuffer().str()});
    }
    modules.push_back(artifact->modules.size());
    artifact->modules.push_back(
        {gpuformat::ModuleFormat::Ptx, options.lowering.chip, std::move(ptx)});
    binaryModules[binary.getSymName().str()] = modules;
  }
  return success();
}

LogicalResult ScheduleBuilder::build(gpuformat::Artifact &result) {
  artifact = &result;
  if (failed(addModules()))
    return failure();
  for (BlockArgument argument : entry.getArguments()) {
    auto type = dyn_cast<MemRefType>(argument.getType());
    if (!type || !type.getLayout().isIdentity())
      return entry.emitError("entry argument ")
             << argument.getArgNumber() << " is not a dense buffer";
    FailureOr<uint32_t> buffer = bufferOf(entry, argument);
    if (failed(buffer))
      return failure();
    wholeProgram[*buffer] = true;
    gpuformat::TensorSignature sig;
    if (argument.getArgNumber() >= inputNames.size())
      return entry.emitError("the lowering changed the entry's inputs");
    sig.name = inputNames[argument.getArgNumber()];
    sig.dtype = *toDType(type.getElementType());
    sig.shape.assign(type.getShape().begin(), type.getShape().end());
    sig.ref = {*buffer, 0};
    result.inputs.push_back(sig);
  }
  for (Operation &op : entry.getBody().front()) {
    if (isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp,
            arith::ConstantOp>(op) ||
        cuda::getViewSource(&op))
      continue;
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      if (failed(addLaunch(launch)))
        return failure();
      continue;
    }
    if (FailureOr<cuda::GemmLayout> gemm = cuda::getCudaGemm(&op);
        succeeded(gemm)) {
      if (failed(addGemm(&op, *gemm)))
        return failure();
      continue;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      if (failed(addCopy(copy)))
        return failure();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        auto type = dyn_cast<MemRefType>(value.getType());
        SmallVector<int64_t> strides;
        int64_t offset;
        if (!type || !toDType(type.getElementType()) ||
            !type.hasStaticShape() ||
            failed(getStridesAndOffset(type, strides, offset)) ||
            ShapedType::isDynamic(offset))
          return ret.emitError("entry result ") << i
                                                << " is not a static "
                                                   "buffer";
        FailureOr<gpuformat::BufferRef> ref = refOf(&op, value, offset);
        if (failed(ref))
          return failure();
        wholeProgram[ref->buffer] = true;
        gpuformat::TensorSignature sig;
        if (i >= outputNames.size())
          return ret.emitError("the lowering changed the entry's results");
        sig.name = outputNames[i];
        sig.dtype = *toDType(type.getElementType());
        sig.shape.assign(type.getShape().begin(), type.getShape().end());
        sig.ref = *ref;
        result.outputs.push_back(sig);
      }
      continue;
    }
    return op.emitError("the CUDA target cannot schedule '")
           << op.getName() << "' on the host";
  }

  // The memory plan. Inputs and outputs keep their bytes for the whole
  // program (inputs are set once and may be executed again).
  std::vector<uint32_t> arenaBuffers;
  std::vector<gpuformat::LiveRange> arenaRanges;
  uint32_t end = result.steps.empty() ? 0 : result.steps.size() - 1;
  for (uint32_t i = 0; i < result.buffers.size(); ++i) {
    if (result.buffers[i].kind != gpuformat::BufferKind::Arena)
      continue;
    gpuformat::LiveRange range = ranges[i];
    if (wholeProgram[i] || !touched[i])
      range.first = 0;
    if (wholeProgram[i])
      range.last = end;
    range.last = std::min(range.last, end);
    arenaBuffers.push_back(i);
    arenaRanges.push_back(range);
  }
  gpuformat::MemoryPlan plan =
      gpuformat::planMemory(arenaRanges, gpuformat::kAlignment);
  for (size_t j = 0; j < arenaBuffers.size(); ++j)
    result.buffers[arenaBuffers[j]].offset = plan.offsets[j];
  result.arenaSize = plan.peak;
  std::string error;
  if (!gpuformat::validateArtifact(result, error))
    return entry.emitError("internal error: invalid artifact: ") << error;
  return success();
}

} // namespace

LogicalResult
mlir::amp::compileToCudaArtifact(ModuleOp module, StringRef path,
                                 const CudaArtifactOptions &options) {
  gpuformat::Artifact artifact;
  if (failed(buildCudaArtifact(module, options, artifact)))
    return failure();
  std::string error;
  if (!gpuformat::writeArtifact(path.str(), artifact, error))
    return module.emitError(error);
  return success();
}

LogicalResult mlir::amp::buildCudaArtifact(ModuleOp module,
                                           const CudaArtifactOptions &options,
                                           gpuformat::Artifact &artifact) {
  auto entry = module.lookupSymbol<func::FuncOp>(options.entry);
  if (!entry)
    return module.emitError("no function @")
           << options.entry << " to compile for CUDA";
  // The signature's names (`amp.name`), before the lowering rewrites it.
  auto names = [](unsigned count, auto getAttrs, StringRef fallback) {
    std::vector<std::string> result;
    for (unsigned i = 0; i < count; ++i) {
      DictionaryAttr attrs = getAttrs(i);
      auto name =
          attrs ? attrs.template getAs<StringAttr>("amp.name") : StringAttr();
      result.push_back(name ? name.str() : (fallback + Twine(i)).str());
    }
    return result;
  };
  std::vector<std::string> inputNames = names(
      entry.getNumArguments(),
      [&](unsigned i) { return entry.getArgAttrDict(i); }, "input_");
  std::vector<std::string> outputNames = names(
      entry.getNumResults(),
      [&](unsigned i) { return entry.getResultAttrDict(i); }, "output_");
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (options.hostKernels)
    buildCudaKernelPipeline(pm, options.lowering);
  else
    buildCudaLoweringPipeline(pm, options.lowering);
  if (failed(pm.run(module)))
    return failure();
  entry = module.lookupSymbol<func::FuncOp>(options.entry);
  if (!entry)
    return module.emitError("the lowering removed @") << options.entry;
  artifact.producer = "amp-opt";
  artifact.source = options.source;
  return ScheduleBuilder(module, entry, options, std::move(inputNames),
                         std::move(outputNames))
      .build(artifact);
}

void mlir::amp::CudaArtifactOptions::bind(OptionsBinder &binder) {
  lowering.bind(binder);
  binder.bind({"entry", "The function to compile"}, entry);
  bool noCubin = !cubin;
  binder.bind({"no-cubin", "Store only PTX (the runtime JIT-compiles it on "
                           "load)"},
              noCubin);
  cubin = !noCubin;
  binder.bind({"random-weights",
               "Leave float weights (>= 4096 elements) out of the artifact; "
               "the runtime generates seeded random values with the same RMS "
               "when loading (small files for benchmarks)"},
              randomWeights);
}
