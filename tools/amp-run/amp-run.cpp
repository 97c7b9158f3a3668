//===- amp-run.cpp - run amp programs on the CPU through the MLIR JIT -----===//
//
//   amp-run model.onnx --random-inputs --seed 1 --output-dir out/
//   amp-run model.onnx -i x.npy --compare-to ref.npy --amp-type=f16
//   amp-run model.mlir -i input_0.pb --benchmark 20
//
// The model is imported (ONNX) or parsed (amp-dialect .mlir), optionally
// autocast, lowered by the `amp-lower-to-llvm` pipeline and run by
// mlir::ExecutionEngine.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Runtime/CpuRuntime.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "amp/Transforms/Passes.h"

#include "CheckNumerics.h"
#include "HostTensor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

using namespace mlir;
using namespace mlir::amp_run;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("amp-run options");
static cl::opt<std::string> modelFile(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx | model.mlir>"),
                                      cl::cat(runCategory));
static cl::list<std::string>
    inputFiles("i", cl::desc("Input tensor file (.npy or ONNX .pb), one per "
                             "graph input, in order"),
               cl::value_desc("file"), cl::cat(runCategory));
static cl::opt<bool> randomInputs(
    "random-inputs",
    cl::desc("Fill the inputs with random values (floats in [-1, 1), "
             "integers in [0, 10), bools 0/1); dynamic dimensions are 1"),
    cl::cat(runCategory));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of --random-inputs"),
                              cl::init(0), cl::cat(runCategory));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write each output as <dir>/<output name>.npy"),
              cl::value_desc("dir"), cl::cat(runCategory));
static cl::list<std::string> compareTo(
    "compare-to",
    cl::desc("Reference files (.npy or .pb), one per output, in order"),
    cl::value_desc("file"), cl::cat(runCategory));
static cl::opt<double> relTolerance("rtol", cl::desc("Relative tolerance"),
                            cl::init(1e-3), cl::cat(runCategory));
static cl::opt<double> absTolerance("atol", cl::desc("Absolute tolerance"),
                            cl::init(1e-7), cl::cat(runCategory));
static cl::opt<unsigned>
    benchmarkRuns("benchmark",
                  cl::desc("Run N more times after warm-up and print the "
                           "median latency"),
                  cl::init(0), cl::cat(runCategory));
static cl::opt<std::string> ampType(
    "amp-type",
    cl::desc("Autocast an ONNX model to f16 or bf16 before running"),
    cl::cat(runCategory));
static cl::opt<unsigned> ampOptLevel("amp-opt-level",
                                     cl::desc("Autocast opt level (0-3)"),
                                     cl::init(1), cl::cat(runCategory));
static cl::opt<std::string> ampPolicy("amp-policy",
                                      cl::desc("Autocast policy file"),
                                      cl::cat(runCategory));
static cl::opt<bool> ampKeepIOTypes(
    "amp-keep-io-types",
    cl::desc("Keep the model's input and output types (default on)"),
    cl::init(true), cl::cat(runCategory));
static cl::opt<bool> ampFp32Accumulate(
    "amp-fp32-accumulate",
    cl::desc("Low-precision GEMMs and reductions accumulate in fp32 "
             "(default on)"),
    cl::init(true), cl::cat(runCategory));
static cl::list<std::string>
    ampAllow("amp-allow", cl::desc("Add ONNX op types to the allow class"),
             cl::CommaSeparated, cl::cat(runCategory));
static cl::list<std::string>
    ampDeny("amp-deny", cl::desc("Add ONNX op types to the deny class"),
            cl::CommaSeparated, cl::cat(runCategory));
static cl::list<std::string> ampNodeRules(
    "amp-node-rule",
    cl::desc("Per-node rule regex=allow|deny|infer|clear (repeatable)"),
    cl::cat(runCategory));
static cl::opt<std::string> checkNumerics(
    "check-numerics", cl::ValueOptional,
    cl::desc("With --amp-type: run the fp32 program beside the "
             "low-precision one and report, per op, non-finite values, "
             "underflow and the relative error (=FILE.json also writes all "
             "of it as JSON)"),
    cl::value_desc("file.json"), cl::cat(runCategory));
static cl::opt<double> underflowThreshold(
    "check-numerics-underflow",
    cl::desc("--check-numerics lists ops that lose more than this fraction "
             "of their nonzero values to zero or subnormals"),
    cl::init(0.01), cl::cat(runCategory));
static cl::opt<unsigned> numericsTop(
    "check-numerics-top",
    cl::desc("--check-numerics prints this many ops with the worst error "
             "(and this many of the underflowing ones, in program order)"),
    cl::init(10), cl::cat(runCategory));
static cl::opt<std::string>
    dumpLowered("dump-llvm-dialect",
                cl::desc("Write the lowered LLVM-dialect module to a file"),
                cl::value_desc("file"), cl::cat(runCategory));

namespace {
//===----------------------------------------------------------------------===//
// The compiled program
//===----------------------------------------------------------------------===//

struct Signature {
  std::string name;
  RankedTensorType type; // amp level (unsigned kept)
};

class Program {
public:
  SmallVector<Signature> inputs, outputs;
  std::unique_ptr<ExecutionEngine> engine;
  std::string entry;

  /// Runs once. `inputs` were checked against the signature.
  LogicalResult run(ArrayRef<Tensor> args, SmallVectorImpl<Tensor> &results);
};

LogicalResult Program::run(ArrayRef<Tensor> args,
                           SmallVectorImpl<Tensor> &results) {
  // Ranked descriptors: {allocated, aligned, offset, sizes, strides}.
  SmallVector<std::vector<int64_t>> descriptors;
  SmallVector<std::vector<char>> copies;
  for (const Tensor &t : args) {
    std::vector<int64_t> d;
    copies.push_back(t.bytes);
    copies.back().resize(std::max<size_t>(copies.back().size(), 1));
    auto ptr = reinterpret_cast<int64_t>(copies.back().data());
    d = {ptr, ptr, 0};
    d.insert(d.end(), t.shape.begin(), t.shape.end());
    int64_t stride = 1;
    std::vector<int64_t> strides(t.shape.size());
    for (int64_t i = static_cast<int64_t>(t.shape.size()) - 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= t.shape[i];
    }
    d.insert(d.end(), strides.begin(), strides.end());
    descriptors.push_back(std::move(d));
  }
  size_t resultWords = 0;
  for (const Signature &out : outputs)
    resultWords += 3 + 2 * out.type.getRank();
  std::vector<int64_t> resultStruct(std::max<size_t>(resultWords, 1));
  SmallVector<void *> descriptorPtrs;
  for (auto &d : descriptors)
    descriptorPtrs.push_back(d.data());
  void *resultPtr = resultStruct.data();
  SmallVector<void *> packed;
  if (!outputs.empty())
    packed.push_back(&resultPtr);
  for (void *&p : descriptorPtrs)
    packed.push_back(&p);
  if (llvm::Error err =
          engine->invokePacked("_mlir_ciface_" + entry, packed)) {
    llvm::errs() << "error: running the program failed: "
                 << llvm::toString(std::move(err)) << "\n";
    return failure();
  }
  results.clear();
  size_t at = 0;
  SmallVector<char *> allocations;
  for (const Signature &out : outputs) {
    int64_t rank = out.type.getRank();
    auto *allocated = reinterpret_cast<char *>(resultStruct[at]);
    auto *aligned = reinterpret_cast<char *>(resultStruct[at + 1]);
    int64_t offset = resultStruct[at + 2];
    Tensor t;
    t.elementType = out.type.getElementType();
    t.shape.assign(resultStruct.begin() + at + 3,
                   resultStruct.begin() + at + 3 + rank);
    SmallVector<int64_t> strides(resultStruct.begin() + at + 3 + rank,
                                 resultStruct.begin() + at + 3 + 2 * rank);
    size_t eb = elementBytes(t.elementType);
    int64_t count = t.count();
    t.bytes.resize(count * eb);
    SmallVector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t linear = offset;
      for (int64_t d = 0; d < rank; ++d)
        linear += index[d] * strides[d];
      std::memcpy(t.bytes.data() + i * eb, aligned + linear * eb, eb);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < t.shape[d])
          break;
        index[d] = 0;
      }
    }
    allocations.push_back(allocated);
    results.push_back(std::move(t));
    at += 3 + 2 * rank;
  }
  // Results are owned by the caller, except constants (memref.get_global
  // marks them with 0xdeadbeef) and results that alias an input; several
  // results may share one buffer. Free each owned buffer once, after all
  // results were copied.
  llvm::SmallPtrSet<char *, 8> freed;
  for (char *allocated : allocations) {
    if (!allocated || reinterpret_cast<uintptr_t>(allocated) == 0xdeadbeef)
      continue;
    bool isInput = llvm::any_of(
        copies, [&](auto &copy) { return copy.data() == allocated; });
    if (!isInput && freed.insert(allocated).second)
      free(allocated);
  }
  return success();
}

/// Imports or parses the model; ONNX input is cleaned up the way amp-opt
/// does before autocast (canonicalize + CSE).
FailureOr<OwningOpRef<ModuleOp>> importModel(MLIRContext &context,
                                             llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module;
  bool isOnnx = amp::isONNXFile(modelFile);
  if (isOnnx) {
    module = amp::importONNXFile(modelFile, &context);
  } else {
    std::string errorMessage;
    auto file = openInputFile(modelFile, &errorMessage);
    if (!file) {
      llvm::errs() << "error: " << errorMessage << "\n";
      return failure();
    }
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }
  if (!module)
    return failure();
  if (isOnnx) {
    PassManager pm(&context, ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    GreedyRewriteConfig cleanup;
    cleanup.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    pm.addPass(createCanonicalizerPass(cleanup));
    pm.addPass(createCSEPass());
    if (failed(pm.run(*module)))
      return failure();
  }
  return module;
}

/// Runs amp-autocast and amp-cast-cleanup with the command line's options.
/// For --check-numerics, ops are annotated with their reasons and the fp32
/// weights are kept (the reference module shares them).
LogicalResult autocastModule(ModuleOp module, bool checkingNumerics) {
  amp::AmpAutocastOptions options;
  options.type = ampType;
  options.optLevel = ampOptLevel;
  options.policyFile = ampPolicy;
  options.keepIOTypes = ampKeepIOTypes;
  options.fp32Accumulate = ampFp32Accumulate;
  options.allowOps = *&ampAllow;
  options.denyOps = *&ampDeny;
  options.nodeRules = *&ampNodeRules;
  options.annotate = checkingNumerics;
  if (llvm::Error err = amp::checkAutocastOptions(options)) {
    llvm::errs() << "error: amp-autocast: " << llvm::toString(std::move(err))
                 << "\n";
    return failure();
  }
  PassManager pm(module->getContext(), ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  pm.addPass(amp::createAmpAutocast(options));
  amp::AmpCastCleanupOptions cleanup;
  cleanup.releaseWeights = !checkingNumerics;
  pm.addPass(amp::createAmpCastCleanup(cleanup));
  return pm.run(module);
}

/// The entry point: `main`, else the only public function.
func::FuncOp findEntry(ModuleOp module) {
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

/// Records the entry signature in `program` and lowers the module to the
/// LLVM dialect.
LogicalResult lowerModule(ModuleOp module, Program &program,
                          StringRef dumpPath) {
  MLIRContext &context = *module->getContext();
  func::FuncOp entry = findEntry(module);
  if (!entry)
    return failure();
  program.entry = entry.getSymName().str();
  auto name = [](DictionaryAttr attrs, unsigned i, StringRef fallback) {
    if (attrs)
      if (auto n = attrs.getAs<StringAttr>("amp.name"))
        return n.str();
    return (fallback + Twine(i)).str();
  };
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType) {
      entry.emitError("entry argument ") << i << " is not a ranked tensor";
      return failure();
    }
    program.inputs.push_back(
        {name(entry.getArgAttrDict(i), i, "input_"), tensorType});
  }
  for (auto [i, type] : llvm::enumerate(entry.getResultTypes())) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType) {
      entry.emitError("entry result ") << i << " is not a ranked tensor";
      return failure();
    }
    program.outputs.push_back(
        {name(entry.getResultAttrDict(i), i, "output_"), tensorType});
  }
  entry->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                 UnitAttr::get(&context));

  PassManager lower(&context);
  amp::buildAmpCpuPipeline(lower);
  if (failed(lower.run(module)))
    return failure();
  if (!dumpPath.empty()) {
    std::string errorMessage;
    auto output = openOutputFile(dumpPath, &errorMessage);
    if (!output) {
      llvm::errs() << "error: " << errorMessage << "\n";
      return failure();
    }
    OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(16);
    module->print(output->os(), flags);
    output->keep();
  }
  return success();
}

/// Large constant globals (model weights) are left out of the LLVM module:
/// each becomes an external declaration that the JIT resolves to the bytes
/// the MLIR context already holds. LLVM then neither copies nor compiles
/// megabytes of constants (ResNet-18 compiles in a fraction of the time).
llvm::StringMap<const void *> externalizeWeights(ModuleOp module) {
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

/// JIT-compiles a lowered module into `program` (weights stay in the
/// MLIR context, see externalizeWeights).
LogicalResult compileProgram(ModuleOp module, Program &program) {
  llvm::StringMap<const void *> weights = externalizeWeights(module);
  ExecutionEngineOptions options;
  options.transformer = makeOptimizingTransformer(3, 0, nullptr);
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine) {
    llvm::errs() << "error: JIT compilation failed: "
                 << llvm::toString(engine.takeError()) << "\n";
    return failure();
  }
  program.engine = std::move(*engine);
  program.engine->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    unsigned count;
    const amp::RuntimeSymbol *symbols = amp::getCpuRuntimeSymbols(count);
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
  // ORC compiles on first lookup: do it here so that "compile" includes
  // code generation and a missing symbol is reported before running.
  if (auto entryFn = program.engine->lookupPacked("_mlir_ciface_" +
                                                  program.entry);
      !entryFn) {
    llvm::errs() << "error: JIT compilation failed: "
                 << llvm::toString(entryFn.takeError()) << "\n";
    return failure();
  }
  return success();
}

LogicalResult checkInput(const Signature &sig, const Tensor &t,
                         StringRef source) {
  Type expected = sig.type.getElementType();
  Type given = t.elementType;
  // bf16 travels as float32 in .npy files.
  bool bf16AsF32 = expected.isBF16() && given.isF32();
  if (given != expected && !bf16AsF32) {
    llvm::errs() << "error: input '" << sig.name << "' (" << source
                 << ") has element type " << typeName(given)
                 << " but the model expects " << typeName(expected) << "\n";
    return failure();
  }
  bool ok = static_cast<int64_t>(t.shape.size()) == sig.type.getRank();
  for (int64_t i = 0; ok && i < sig.type.getRank(); ++i)
    ok = sig.type.isDynamicDim(i) || sig.type.getDimSize(i) == t.shape[i];
  if (!ok) {
    llvm::errs() << "error: input '" << sig.name << "' (" << source
                 << ") has shape " << shapeString(t.shape)
                 << " but the model expects "
                 << shapeString(sig.type.getShape()) << "\n";
    return failure();
  }
  return success();
}

Tensor randomTensor(const Signature &sig, std::mt19937_64 &rng) {
  Tensor t;
  t.elementType = sig.type.getElementType();
  for (int64_t d : sig.type.getShape())
    t.shape.push_back(ShapedType::isDynamic(d) ? 1 : d);
  size_t eb = elementBytes(t.elementType);
  int64_t count = t.count();
  t.bytes.resize(count * eb);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  Type type = t.elementType;
  for (int64_t i = 0; i < count; ++i) {
    char *p = t.bytes.data() + i * eb;
    if (type.isF32()) {
      float v = static_cast<float>(real(rng));
      std::memcpy(p, &v, 4);
    } else if (type.isF64()) {
      double v = real(rng);
      std::memcpy(p, &v, 8);
    } else if (type.isF16()) {
      APFloat f(static_cast<float>(real(rng)));
      bool lost;
      f.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &lost);
      uint16_t bits = f.bitcastToAPInt().getZExtValue();
      std::memcpy(p, &bits, 2);
    } else if (type.isBF16()) {
      uint16_t bits = floatToBf16(static_cast<float>(real(rng)));
      std::memcpy(p, &bits, 2);
    } else if (type.isInteger(1)) {
      *p = small(rng) % 2;
    } else {
      int64_t v = small(rng);
      std::memcpy(p, &v, eb);
    }
  }
  return t;
}

std::string sanitize(StringRef name) {
  std::string s;
  for (char c : name)
    s.push_back(llvm::isAlnum(c) || c == '_' || c == '-' || c == '.' ? c : '_');
  return s.empty() ? "output" : s;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Activations are malloc'ed and freed on every run. glibc would serve
  // the large ones with fresh mmaps (a page fault per page, every run);
  // keep them in the heap instead: ResNet-50 runs 1.5x faster.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerPassManagerCLOptions();
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "amp-run: run an amp program (ONNX or amp .mlir) on the CPU\n");

  if (randomInputs && !inputFiles.empty()) {
    llvm::errs() << "error: give either -i files or --random-inputs\n";
    return 1;
  }
  DialectRegistry registry;
  amp::registerAmpCpuDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Inputs are read before compiling, so a bad file fails fast.
  SmallVector<Tensor> inputs;
  for (const std::string &path : inputFiles) {
    auto tensor = readTensorFile(path, &context);
    if (!tensor) {
      llvm::errs() << "error: " << llvm::toString(tensor.takeError()) << "\n";
      return 1;
    }
    inputs.push_back(std::move(*tensor));
  }
  SmallVector<Tensor> references;
  for (const std::string &path : compareTo) {
    auto tensor = readTensorFile(path, &context);
    if (!tensor) {
      llvm::errs() << "error: " << llvm::toString(tensor.takeError()) << "\n";
      return 1;
    }
    references.push_back(std::move(*tensor));
  }

  auto compileStart = std::chrono::steady_clock::now();
  bool numerics = checkNumerics.getNumOccurrences() > 0;
  if (numerics && ampType.empty()) {
    llvm::errs() << "error: --check-numerics compares a low-precision "
                    "program with fp32: give --amp-type f16 or bf16\n";
    return 1;
  }
  if (numerics && benchmarkRuns > 0) {
    llvm::errs() << "error: --check-numerics runs an instrumented program: "
                    "it cannot be combined with --benchmark\n";
    return 1;
  }
  if (numerics && !ampKeepIOTypes) {
    llvm::errs() << "error: --check-numerics feeds both programs the same "
                    "inputs: it needs --amp-keep-io-types\n";
    return 1;
  }
  Program program, reference;
  SmallVector<Probe> probes;
  auto module = importModel(context, sourceMgr);
  if (failed(module))
    return 1;
  OwningOpRef<ModuleOp> referenceModule;
  if (numerics) {
    func::FuncOp entry = findEntry(**module);
    if (!entry)
      return 1;
    numberProbes(entry);
    referenceModule = (*module)->clone();
    exposeProbes(findEntry(*referenceModule));
  }
  if (!ampType.empty() && failed(autocastModule(**module, numerics)))
    return 1;
  if (numerics)
    probes = exposeProbes(findEntry(**module));
  if (failed(lowerModule(**module, program, dumpLowered)) ||
      failed(compileProgram(**module, program)))
    return 1;
  if (numerics && (failed(lowerModule(*referenceModule, reference, "")) ||
                   failed(compileProgram(*referenceModule, reference))))
    return 1;
  // The model's own outputs come first; probes follow.
  size_t numOutputs = program.outputs.size() - probes.size();
  if (!randomInputs && inputs.size() != program.inputs.size()) {
    llvm::errs() << "error: the model has " << program.inputs.size()
                 << " input(s) but " << inputs.size()
                 << " file(s) were given with -i (or use --random-inputs)\n";
    return 1;
  }
  if (!references.empty() && references.size() != numOutputs) {
    llvm::errs() << "error: the model has " << numOutputs
                 << " output(s) but " << references.size()
                 << " --compare-to file(s) were given\n";
    return 1;
  }
  if (randomInputs) {
    std::mt19937_64 rng(seed);
    for (const Signature &sig : program.inputs)
      inputs.push_back(randomTensor(sig, rng));
  }
  for (auto [i, sig] : llvm::enumerate(program.inputs)) {
    StringRef source = randomInputs ? StringRef("random")
                                    : StringRef(inputFiles[i]);
    if (failed(checkInput(sig, inputs[i], source)))
      return 1;
    if (sig.type.getElementType().isBF16() &&
        inputs[i].elementType.isF32()) {
      Tensor converted;
      converted.elementType = sig.type.getElementType();
      converted.shape = inputs[i].shape;
      for (int64_t j = 0; j < inputs[i].count(); ++j) {
        float f;
        std::memcpy(&f, inputs[i].bytes.data() + 4 * j, 4);
        uint16_t bits = floatToBf16(f);
        converted.bytes.insert(converted.bytes.end(),
                               reinterpret_cast<char *>(&bits),
                               reinterpret_cast<char *>(&bits) + 2);
      }
      inputs[i] = std::move(converted);
    }
  }

  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();

  SmallVector<Tensor> results;
  if (failed(program.run(inputs, results)))
    return 1;
  if (numerics) {
    SmallVector<Tensor> referenceResults;
    if (failed(reference.run(inputs, referenceResults)))
      return 1;
    // Probes are matched by op number: the reference returns every op's
    // results, the low-precision program those that survived autocast.
    std::map<std::pair<int64_t, unsigned>, size_t> referenceIndex;
    size_t referenceOutputs = reference.outputs.size();
    for (size_t i = 0; i < referenceOutputs; ++i) {
      StringRef name = reference.outputs[i].name;
      int64_t id;
      unsigned result;
      if (name.consume_front("probe_")) {
        auto [idText, resultText] = name.split('_');
        if (!idText.getAsInteger(10, id) &&
            !resultText.getAsInteger(10, result))
          referenceIndex[{id, result}] = i;
      }
    }
    SmallVector<ProbeStats> stats;
    for (auto [i, probe] : llvm::enumerate(probes)) {
      auto it = referenceIndex.find({probe.id, probe.resultNumber});
      if (it == referenceIndex.end())
        continue;
      stats.push_back(compareProbe(probe, results[numOutputs + i],
                                   referenceResults[it->second]));
    }
    if (failed(reportNumerics(stats, ampType, checkNumerics, underflowThreshold,
                              numericsTop)))
      return 1;
    results.truncate(numOutputs);
    program.outputs.truncate(numOutputs);
  }

  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      llvm::errs() << "error: cannot create '" << outputDir
                   << "': " << ec.message() << "\n";
      return 1;
    }
    for (auto [sig, tensor] : llvm::zip(program.outputs, results)) {
      SmallString<256> path(outputDir.getValue());
      llvm::sys::path::append(path, sanitize(sig.name) + ".npy");
      if (failed(writeNpy(path, tensor)))
        return 1;
    }
  }

  int status = 0;
  if (!references.empty()) {
    for (auto [i, sig, got, want] :
         llvm::enumerate(program.outputs, results, references)) {
      bool typeOk = got.elementType == want.elementType ||
                    (got.elementType.isBF16() && want.elementType.isF32());
      if (!typeOk) {
        llvm::outs() << sig.name << ": FAIL element type "
                     << typeName(got.elementType) << " but the reference is "
                     << typeName(want.elementType) << "\n";
        status = 1;
        continue;
      }
      if (got.shape != want.shape) {
        llvm::outs() << sig.name << ": FAIL shape " << shapeString(got.shape)
                     << " but the reference is " << shapeString(want.shape)
                     << "\n";
        status = 1;
        continue;
      }
      double maxAbs = 0, maxRel = 0;
      int64_t mismatches = 0;
      for (int64_t j = 0; j < got.count(); ++j) {
        double a = elementAsDouble(got, j), b = elementAsDouble(want, j);
        if (std::isnan(a) && std::isnan(b))
          continue;
        if (a == b)
          continue; // equal infinities
        double diff = std::fabs(a - b);
        if (std::isnan(diff))
          diff = INFINITY;
        maxAbs = std::max(maxAbs, diff);
        if (b != 0)
          maxRel = std::max(maxRel, diff / std::fabs(b));
        if (!(diff <= absTolerance + relTolerance * std::fabs(b)))
          ++mismatches;
      }
      llvm::outs() << sig.name << ": " << (mismatches ? "FAIL" : "ok")
                   << " max abs err " << llvm::format("%.3g", maxAbs)
                   << ", max rel err " << llvm::format("%.3g", maxRel);
      if (mismatches)
        llvm::outs() << ", " << mismatches << " of " << got.count()
                     << " elements beyond atol " << absTolerance.getValue()
                     << " + rtol " << relTolerance.getValue() << " * |ref|";
      llvm::outs() << "\n";
      if (mismatches)
        status = 1;
    }
  }

  if (benchmarkRuns > 0) {
    unsigned warmup = std::max(1u, benchmarkRuns / 10);
    for (unsigned i = 0; i < warmup; ++i)
      if (failed(program.run(inputs, results)))
        return 1;
    std::vector<double> times;
    for (unsigned i = 0; i < benchmarkRuns; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (failed(program.run(inputs, results)))
        return 1;
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
    std::sort(times.begin(), times.end());
    llvm::outs() << "benchmark: " << benchmarkRuns << " runs after " << warmup
                 << " warm-up, median "
                 << llvm::format("%.3f", times[times.size() / 2])
                 << " ms, min " << llvm::format("%.3f", times.front())
                 << " ms; compile " << llvm::format("%.2f", compileSeconds)
                 << " s\n";
  }
  return status;
}
