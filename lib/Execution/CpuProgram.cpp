//===- CpuProgram.cpp - compile and run amp programs on the CPU -----------===//

#include "amp/Execution/CpuProgram.h"
#include "amp/Conversion/AmpToLinalg/RuntimeChecks.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Runtime/CpuRuntime.h"
#include "amp/Target/ONNX/ONNXImporter.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>
#include <mutex>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::execution;

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

FailureOr<OwningOpRef<ModuleOp>>
mlir::amp::execution::loadModel(StringRef path, MLIRContext &context,
                                llvm::SourceMgr &sourceMgr,
                                bool forTraining, const ModelLimits &limits) {
  OwningOpRef<ModuleOp> module;
  bool isOnnx = isONNXFile(path);
  if (isOnnx) {
    ONNXImportOptions options;
    options.markInitializers = forTraining;
    options.limits = limits;
    module = importONNXFile(path, &context, options);
  } else {
    std::string errorMessage;
    auto file = openInputFile(path, &errorMessage);
    if (!file)
      return emitError(UnknownLoc::get(&context)) << errorMessage, failure();
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }
  if (!module)
    return failure();
  if (isOnnx && !forTraining) {
    PassManager pm(&context, ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    buildImportCleanupPipeline(pm);
    if (failed(pm.run(*module)))
      return failure();
  }
  return module;
}

func::FuncOp mlir::amp::execution::findEntry(ModuleOp module) {
  if (auto entry = module.lookupSymbol<func::FuncOp>("main"))
    return entry;
  SmallVector<func::FuncOp> publics;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      publics.push_back(func);
  if (publics.size() != 1) {
    module.emitError("no entry function: expected @main or exactly one "
                     "public function");
    return nullptr;
  }
  return publics.front();
}

//===----------------------------------------------------------------------===//
// Host tensors
//===----------------------------------------------------------------------===//

bool mlir::amp::execution::travelsAs(ElementType type, ElementType carrier) {
  amp_runtime::Float8Kind kind;
  if (type == ElementType::BF16 || amp_runtime::getFloat8Kind(type, kind))
    return carrier == ElementType::F32;
  if (amp_runtime::getNarrowIntegerBits(type))
    return carrier == (amp_runtime::isUnsignedType(type) ? ElementType::U8
                                                         : ElementType::I8);
  return false;
}

std::optional<ElementType> mlir::amp::execution::toHostElementType(Type type) {
  if (type.isF64())
    return ElementType::F64;
  if (type.isF32())
    return ElementType::F32;
  if (type.isF16())
    return ElementType::F16;
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isFloat8E4M3FN())
    return ElementType::F8E4M3FN;
  if (type.isFloat8E4M3FNUZ())
    return ElementType::F8E4M3FNUZ;
  if (type.isFloat8E5M2())
    return ElementType::F8E5M2;
  if (type.isFloat8E5M2FNUZ())
    return ElementType::F8E5M2FNUZ;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return ElementType::Bool;
  case 2:
    return isUnsigned ? ElementType::U2 : ElementType::I2;
  case 4:
    return isUnsigned ? ElementType::U4 : ElementType::I4;
  case 8:
    return isUnsigned ? ElementType::U8 : ElementType::I8;
  case 16:
    return isUnsigned ? ElementType::U16 : ElementType::I16;
  case 32:
    return isUnsigned ? ElementType::U32 : ElementType::I32;
  case 64:
    return isUnsigned ? ElementType::U64 : ElementType::I64;
  default:
    return std::nullopt;
  }
}

llvm::Error mlir::amp::execution::readTensorFiles(
    llvm::ArrayRef<std::string> paths, MLIRContext *context,
    std::vector<Tensor> &tensors, const ModelLimits &limits) {
  for (const std::string &path : paths) {
    llvm::Expected<Tensor> tensor = readTensorFile(path, context, limits);
    if (!tensor)
      return tensor.takeError();
    tensors.push_back(std::move(*tensor));
  }
  return llvm::Error::success();
}

llvm::Expected<Tensor>
mlir::amp::execution::readTensorFile(StringRef path, MLIRContext *context,
                                     const ModelLimits &limits) {
  auto fail = [&](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  if (path.ends_with(".npy")) {
    Tensor tensor;
    std::string error;
    if (!amp_runtime::readNpy(path.str(), tensor, error))
      return fail(error);
    return tensor;
  }
  if (path.ends_with(".pb")) {
    auto data = readONNXTensorFile(path, context, limits);
    if (!data)
      return data.takeError();
    std::optional<ElementType> type = toHostElementType(data->elementType);
    if (!type)
      return fail("'" + path + "': unsupported element type");
    Tensor tensor;
    tensor.elementType = *type;
    tensor.shape.assign(data->shape.begin(), data->shape.end());
    tensor.bytes = std::move(data->bytes);
    return tensor;
  }
  return fail("'" + path +
              "': unknown tensor file type (use .npy or an ONNX TensorProto "
              ".pb)");
}

//===----------------------------------------------------------------------===//
// Compilation
//===----------------------------------------------------------------------===//

/// Large constant globals (model weights) are left out of the LLVM module:
/// each becomes an external declaration that the JIT resolves to the bytes
/// the MLIR context already holds. LLVM then neither copies nor compiles
/// megabytes of constants (ResNet-18 compiles in a fraction of the time).
/// Caps LLVM's full unrolling at 8 iterations (LLVM's
/// -unroll-full-max-count, unless given on the command line). With static
/// shapes, O3 otherwise fully unrolls loops of a few hundred iterations
/// into basic blocks whose machine scheduling is quadratic: the BERT-style
/// encoder took 54 s to compile and 0.66 s with the cap, at the same
/// run time (1.53 ms) and bit-identical outputs (docs/CpuBackend.md).
static void capFullUnrolling() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::StringMap<llvm::cl::Option *> &options =
        llvm::cl::getRegisteredOptions();
    auto it = options.find("unroll-full-max-count");
    if (it == options.end() || it->second->getNumOccurrences() != 0)
      return;
    // As if given on the command line: LLVM reads it only then.
    (void)it->second->addOccurrence(0, it->first(), "8");
  });
}

static llvm::StringMap<const void *> externalizeWeights(ModuleOp module) {
  llvm::StringMap<const void *> symbols;
  constexpr size_t kMinBytes = 1024;
  module.walk([&](LLVM::GlobalOp global) {
    if (!global.getConstant())
      return;
    Attribute value = global.getValueAttr();
    const char *data = nullptr;
    size_t bytes = 0;
    if (auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(value)) {
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob)
        return;
      data = blob->getData().data();
      bytes = blob->getData().size();
    } else if (auto dense = dyn_cast_or_null<DenseElementsAttr>(value)) {
      if (dense.isSplat() || dense.getElementType().isInteger(1))
        return;
      data = dense.getRawData().data();
      bytes = dense.getRawData().size();
    }
    if (!data || bytes < kMinBytes)
      return;
    global->removeAttr(global.getValueAttrName());
    global->removeAttr(global.getAlignmentAttrName());
    global.setLinkage(LLVM::Linkage::External);
    symbols[global.getSymName()] = data;
  });
  return symbols;
}

/// An entry's signature (`amp.name`s, tensor types), read before lowering.
FailureOr<std::unique_ptr<CpuFunction>>
CpuProgram::makeFunction(func::FuncOp entry) {
  auto name = [](DictionaryAttr attrs, unsigned i, StringRef fallback) {
    if (attrs)
      if (auto n = attrs.getAs<StringAttr>("amp.name"))
        return n.str();
    return (fallback + Twine(i)).str();
  };
  auto function = std::make_unique<CpuFunction>();
  function->name = entry.getSymName().str();
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || !toHostElementType(tensorType.getElementType())) {
      entry.emitError("entry argument ") << i << " is not a ranked tensor";
      return failure();
    }
    function->inputs.push_back(
        {name(entry.getArgAttrDict(i), i, "input_"), tensorType});
  }
  for (auto [i, type] : llvm::enumerate(entry.getResultTypes())) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || !toHostElementType(tensorType.getElementType())) {
      entry.emitError("entry result ") << i << " is not a ranked tensor";
      return failure();
    }
    function->outputs.push_back(
        {name(entry.getResultAttrDict(i), i, "output_"), tensorType});
    function->resultTypes.push_back(
        {*toHostElementType(tensorType.getElementType()),
         tensorType.getRank()});
  }
  return function;
}

CpuProgram::CpuProgram() = default;
CpuProgram::~CpuProgram() {
  // Its weights' memory may hold another program's weights next.
  for (const auto &function : functions)
    releaseCachedWeights(function.get());
}

const CpuFunction *CpuProgram::getFunction(StringRef name) const {
  for (const auto &function : functions)
    if (function->name == name)
      return function.get();
  return nullptr;
}

FailureOr<std::unique_ptr<CpuProgram>>
CpuProgram::compile(ModuleOp module, StringRef dumpLoweredPath,
                    ArrayRef<std::string> entries,
                    const std::function<void(OpPassManager &)> &lowering) {
  MLIRContext &context = *module->getContext();
  SmallVector<func::FuncOp> entryFuncs;
  if (entries.empty()) {
    func::FuncOp entry = findEntry(module);
    if (!entry)
      return failure();
    entryFuncs.push_back(entry);
  }
  for (const std::string &entryName : entries) {
    auto entry = module.lookupSymbol<func::FuncOp>(entryName);
    if (!entry)
      return module.emitError("no function @") << entryName, failure();
    entryFuncs.push_back(entry);
  }
  std::unique_ptr<CpuProgram> program(new CpuProgram());
  for (func::FuncOp entry : entryFuncs) {
    FailureOr<std::unique_ptr<CpuFunction>> function = makeFunction(entry);
    if (failed(function))
      return failure();
    entry->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                   UnitAttr::get(&context));
    program->functions.push_back(std::move(*function));
  }

  PassManager lower(&context);
  if (lowering)
    lowering(lower);
  else
    buildCpuLoweringPipeline(lower);
  if (failed(lower.run(module)))
    return failure();
  if (auto table = module->getAttrOfType<ArrayAttr>(kRuntimeChecksAttrName)) {
    for (Attribute message : table)
      program->checkMessages.push_back(
          cast<StringAttr>(message).getValue().str());
    module->removeAttr(kRuntimeChecksAttrName);
  }
  for (auto &function : program->functions)
    function->checkMessages = &program->checkMessages;
  if (!dumpLoweredPath.empty()) {
    std::string errorMessage;
    auto output = openOutputFile(dumpLoweredPath, &errorMessage);
    if (!output)
      return module.emitError(errorMessage), failure();
    OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(16);
    module->print(output->os(), flags);
    output->keep();
  }

  FailureOr<std::unique_ptr<JitCode>> jit = jitCompile(module);
  if (failed(jit))
    return failure();
  program->jit = std::move(*jit);
  // ORC compiles on first lookup: do it here so that compiling includes
  // code generation and a missing symbol is reported before running.
  for (auto &function : program->functions) {
    FailureOr<void (*)(void **)> entryFn =
        program->jit->lookupPacked(module, "_mlir_ciface_" + function->name);
    if (failed(entryFn))
      return failure();
    function->function = *entryFn;
  }
  return program;
}

FailureOr<std::unique_ptr<CpuProgram>>
CpuProgram::wrap(func::FuncOp entry, ExternalRun run,
                 std::shared_ptr<void> owner) {
  FailureOr<std::unique_ptr<CpuFunction>> function = makeFunction(entry);
  if (failed(function))
    return failure();
  (*function)->external = std::move(run);
  std::unique_ptr<CpuProgram> program(new CpuProgram());
  program->functions.push_back(std::move(*function));
  program->owner = std::move(owner);
  return program;
}

JitCode::~JitCode() = default;

FailureOr<void (*)(void **)> JitCode::lookupPacked(ModuleOp module,
                                                   StringRef name) const {
  auto entryFn = engine->lookupPacked(name);
  if (!entryFn)
    return module.emitError("JIT compilation failed: ")
               << llvm::toString(entryFn.takeError()),
           failure();
  return *entryFn;
}

FailureOr<std::unique_ptr<JitCode>>
mlir::amp::execution::jitCompile(ModuleOp module) {
  auto jit = std::make_unique<JitCode>();
  // JIT compilation; weights stay in the MLIR context.
  llvm::StringMap<const void *> weights = externalizeWeights(module);
  // The optimizer gets the host's target machine: without it, LLVM's cost
  // model knows no vector registers and the loop vectorizer does nothing.
  auto hostBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostBuilder)
    return module.emitError("cannot describe the host CPU: ")
               << llvm::toString(hostBuilder.takeError()),
           failure();
  auto host = hostBuilder->createTargetMachine();
  if (!host)
    return module.emitError("cannot create the host target machine: ")
               << llvm::toString(host.takeError()),
           failure();
  jit->targetMachine = std::move(*host);
  // ExecutionEngineOptions::transformer is a function_ref: the callable it
  // refers to must outlive ExecutionEngine::create (AddressSanitizer found
  // a temporary here).
  capFullUnrolling();
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(3, 0, jit->targetMachine.get());
  ExecutionEngineOptions options;
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // AMP_CPU_PERF=1: tell `perf` the compiled functions' names (record with
  // `perf record -k 1`, then `perf inject --jit`).
  options.enablePerfNotificationListener = getenv("AMP_CPU_PERF") != nullptr;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return module.emitError("JIT compilation failed: ")
               << llvm::toString(engine.takeError()),
           failure();
  jit->engine = std::move(*engine);
  jit->engine->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    unsigned count;
    const RuntimeSymbol *symbols = getCpuRuntimeSymbols(count);
    for (unsigned i = 0; i < count; ++i)
      map[interner(symbols[i].name)] = {
          llvm::orc::ExecutorAddr::fromPtr(symbols[i].address),
          llvm::JITSymbolFlags::Exported};
    for (const auto &weight : weights)
      map[interner(weight.getKey())] = {
          llvm::orc::ExecutorAddr::fromPtr(weight.getValue()),
          llvm::JITSymbolFlags::Exported};
    // Strided copies (memref.copy) call MLIR's C runner utils.
    map[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
        llvm::JITSymbolFlags::Exported};
    return map;
  });
  return jit;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

llvm::Error CpuFunction::checkInput(unsigned index, const Tensor &tensor,
                                   StringRef source) const {
  const TensorSignature &sig = inputs[index];
  ElementType expected = *toHostElementType(sig.type.getElementType());
  // bf16 and the 8-bit floats travel as float32 in .npy files, the 4- and
  // 2-bit integers as int8/uint8.
  bool bf16AsF32 = travelsAs(expected, tensor.elementType);
  auto fail = [&](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "input '" + sig.name + "' (" + source +
                                       ") " + message);
  };
  if (tensor.elementType != expected && !bf16AsF32)
    return fail(Twine("has element type ") +
                amp_runtime::getElementTypeName(tensor.elementType) +
                " but the model expects " +
                amp_runtime::getElementTypeName(expected));
  if (bf16AsF32 && amp_runtime::getNarrowIntegerBits(expected)) {
    Tensor converted;
    std::string error;
    if (!amp_runtime::convertToStorageType(tensor, expected, converted, error))
      return fail(error);
  }
  bool ok = static_cast<int64_t>(tensor.shape.size()) == sig.type.getRank();
  for (int64_t i = 0; ok && i < sig.type.getRank(); ++i)
    ok = sig.type.isDynamicDim(i) || sig.type.getDimSize(i) == tensor.shape[i];
  if (!ok)
    return fail("has shape " + amp_runtime::formatShape(tensor.shape) +
                " but the model expects " +
                amp_runtime::formatShape(std::vector<int64_t>(
                    sig.type.getShape().begin(), sig.type.getShape().end())));
  return llvm::Error::success();
}

Tensor CpuFunction::prepareInput(unsigned index, Tensor tensor) const {
  ElementType expected =
      *toHostElementType(inputs[index].type.getElementType());
  if (expected == tensor.elementType ||
      !travelsAs(expected, tensor.elementType))
    return tensor;
  if (expected == ElementType::BF16)
    return amp_runtime::convertF32Tensor(tensor, ElementType::BF16);
  // checkInput saw that the values fit.
  Tensor converted;
  std::string error;
  amp_runtime::convertToStorageType(tensor, expected, converted, error);
  return converted;
}

Tensor CpuFunction::makeRandomInput(unsigned index, std::mt19937_64 &rng) const {
  RankedTensorType type = inputs[index].type;
  std::vector<int64_t> shape;
  for (int64_t d : type.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? 1 : d);
  return amp_runtime::makeRandomTensor(
      *toHostElementType(type.getElementType()), shape, rng);
}

// The runtime's caches of derived weights are this function's while it
// runs (see WeightCacheOwner); ~CpuProgram releases them.
llvm::Error CpuFunction::run(const std::vector<Tensor> &args,
                             std::vector<Tensor> &results) const {
  if (external)
    return external(args, results);
  WeightCacheOwner owner(this);
  RuntimeCheckFailure failure;
  {
    RuntimeCheckScope checks(&failure);
    amp_runtime::callPacked(function, args, resultTypes, results);
  }
  return checkFailure(failure);
}

llvm::Error CpuFunction::runConsuming(std::vector<Tensor> &&args,
                                      std::vector<Tensor> &results) const {
  if (external)
    return external(args, results);
  WeightCacheOwner owner(this);
  RuntimeCheckFailure failure;
  {
    RuntimeCheckScope checks(&failure);
    amp_runtime::callPackedConsuming(function, std::move(args), resultTypes,
                                     results);
  }
  return checkFailure(failure);
}

llvm::Error
CpuFunction::checkFailure(const RuntimeCheckFailure &failure) const {
  if (!failure.failed)
    return llvm::Error::success();
  std::string message =
      checkMessages && failure.id >= 0 &&
              static_cast<size_t>(failure.id) < checkMessages->size()
          ? formatRuntimeCheck((*checkMessages)[failure.id], failure.value,
                               failure.bound)
          : "run-time check " + std::to_string(failure.id) + " (value " +
                std::to_string(failure.value) + ", bound " +
                std::to_string(failure.bound) + ")";
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "run-time check failed in '" + name +
                                     "': " + message);
}

Comparison mlir::amp::execution::compareTensors(const Tensor &got,
                                                const Tensor &want, double atol,
                                                double rtol) {
  Comparison result;
  bool typeOk = got.elementType == want.elementType ||
                travelsAs(got.elementType, want.elementType);
  if (!typeOk) {
    result.mismatchedType = true;
    result.message = std::string("element type ") +
                     amp_runtime::getElementTypeName(got.elementType) +
                     " but the reference is " +
                     amp_runtime::getElementTypeName(want.elementType);
    return result;
  }
  if (got.shape != want.shape) {
    result.mismatchedType = true;
    result.message = "shape " + amp_runtime::formatShape(got.shape) +
                     " but the reference is " +
                     amp_runtime::formatShape(want.shape);
    return result;
  }
  for (int64_t j = 0; j < got.getNumElements(); ++j) {
    double a = got.getAsDouble(j), b = want.getAsDouble(j);
    if (std::isnan(a) && std::isnan(b))
      continue;
    if (a == b)
      continue; // equal infinities
    double diff = std::fabs(a - b);
    if (std::isnan(diff))
      diff = INFINITY;
    result.maxAbsError = std::max(result.maxAbsError, diff);
    if (b != 0)
      result.maxRelError = std::max(result.maxRelError, diff / std::fabs(b));
    if (!(diff <= atol + rtol * std::fabs(b)))
      ++result.mismatches;
  }
  return result;
}
