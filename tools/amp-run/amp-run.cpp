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
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
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

/// A host tensor: amp element type (signedness kept), shape, raw bytes.
struct Tensor {
  Type elementType;
  SmallVector<int64_t> shape;
  std::vector<char> bytes;

  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

size_t elementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s + "]";
}

//===----------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------===//

/// numpy descr <-> element type. bf16 has no numpy type: it is read and
/// written as float32 (exact on output, rounded to nearest even on input).
std::optional<Type> typeFromDescr(StringRef descr, MLIRContext *context) {
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|'))
    return std::nullopt;
  StringRef kind = descr.drop_front();
  Builder b(context);
  if (kind == "f2")
    return b.getF16Type();
  if (kind == "f4")
    return b.getF32Type();
  if (kind == "f8")
    return b.getF64Type();
  if (kind == "b1")
    return b.getI1Type();
  unsigned width;
  if (kind.size() >= 2 && !kind.drop_front().getAsInteger(10, width)) {
    if (kind[0] == 'i')
      return b.getIntegerType(width * 8);
    if (kind[0] == 'u')
      return b.getIntegerType(width * 8, /*isSigned=*/false);
  }
  return std::nullopt;
}

std::string descrFromType(Type type) {
  if (type.isF16())
    return "<f2";
  if (type.isF32() || type.isBF16())
    return "<f4";
  if (type.isF64())
    return "<f8";
  if (type.isInteger(1))
    return "|b1";
  unsigned bytes = type.getIntOrFloatBitWidth() / 8;
  char kind = type.isUnsignedInteger() ? 'u' : 'i';
  return (bytes == 1 ? "|" : "<") + std::string(1, kind) +
         std::to_string(bytes);
}

llvm::Expected<Tensor> readNpy(StringRef path, MLIRContext *context) {
  auto fail = [&](const Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': " + why);
  };
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file)
    return fail("cannot read: " + file.getError().message());
  StringRef data = (*file)->getBuffer();
  if (!data.starts_with("\x93NUMPY") || data.size() < 10)
    return fail("not a .npy file");
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(data[8]) |
                   static_cast<unsigned char>(data[9]) << 8;
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return fail("truncated header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= static_cast<size_t>(
                          static_cast<unsigned char>(data[8 + i]))
                      << (8 * i);
    headerStart = 12;
  }
  if (data.size() < headerStart + headerLength)
    return fail("truncated header");
  StringRef header = data.substr(headerStart, headerLength);
  auto field = [&](StringRef key) -> StringRef {
    size_t at = header.find("'" + key.str() + "'");
    if (at == StringRef::npos)
      return {};
    StringRef rest = header.drop_front(at + key.size() + 2).ltrim(" :");
    return rest;
  };
  StringRef descr = field("descr");
  if (!descr.consume_front("'"))
    return fail("header has no descr");
  descr = descr.take_until([](char c) { return c == '\''; });
  if (field("fortran_order").starts_with("True"))
    return fail("Fortran-ordered arrays are not supported (save a "
                "C-contiguous array)");
  std::optional<Type> type = typeFromDescr(descr, context);
  if (!type)
    return fail("unsupported dtype '" + descr + "' (little-endian bool, "
                "int, uint and float arrays are supported)");
  StringRef shapeText = field("shape");
  if (!shapeText.consume_front("("))
    return fail("header has no shape");
  shapeText = shapeText.take_until([](char c) { return c == ')'; });
  Tensor tensor;
  tensor.elementType = *type;
  SmallVector<StringRef> parts;
  shapeText.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return fail("bad shape '" + shapeText + "'");
    tensor.shape.push_back(dim);
  }
  size_t needed = static_cast<size_t>(tensor.count()) * elementBytes(*type);
  StringRef payload = data.drop_front(headerStart + headerLength);
  if (payload.size() != needed)
    return fail("holds " + Twine(payload.size()) + " bytes of data but " +
                shapeString(tensor.shape) + " " + descr + " needs " +
                Twine(needed));
  tensor.bytes.assign(payload.begin(), payload.end());
  return tensor;
}

/// bf16 bits -> float (exact).
float bf16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}
/// float -> bf16 bits, round to nearest even, NaN kept.
uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

LogicalResult writeNpy(StringRef path, const Tensor &tensor) {
  std::string descr = descrFromType(tensor.elementType);
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + ", ";
  if (tensor.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string errorMessage;
  auto output = openOutputFile(path, &errorMessage);
  if (!output) {
    llvm::errs() << "error: " << errorMessage << "\n";
    return failure();
  }
  llvm::raw_ostream &os = output->os();
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  if (tensor.elementType.isBF16()) {
    for (size_t i = 0; i < tensor.bytes.size(); i += 2) {
      uint16_t bits;
      std::memcpy(&bits, tensor.bytes.data() + i, 2);
      float f = bf16ToFloat(bits);
      os.write(reinterpret_cast<const char *>(&f), 4);
    }
  } else {
    os.write(tensor.bytes.data(), tensor.bytes.size());
  }
  output->keep();
  return success();
}

llvm::Expected<Tensor> readTensorFile(StringRef path, MLIRContext *context) {
  if (path.ends_with(".npy"))
    return readNpy(path, context);
  if (path.ends_with(".pb")) {
    auto data = amp::readONNXTensorFile(path, context);
    if (!data)
      return data.takeError();
    Tensor tensor;
    tensor.elementType = data->elementType;
    tensor.shape = data->shape;
    tensor.bytes = std::move(data->bytes);
    return tensor;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path +
                                     "': unknown tensor file type (use .npy "
                                     "or an ONNX TensorProto .pb)");
}

/// Element i of a tensor as a double (for comparisons).
double elementAsDouble(const Tensor &t, int64_t i) {
  const char *p = t.bytes.data() + i * elementBytes(t.elementType);
  Type type = t.elementType;
  if (type.isF32()) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (type.isF64()) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (type.isF16()) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    APFloat f(APFloat::IEEEhalf(), APInt(16, bits));
    return f.convertToDouble();
  }
  if (type.isBF16()) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return bf16ToFloat(bits);
  }
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 1)
    return *p ? 1 : 0;
  uint64_t raw = 0;
  std::memcpy(&raw, p, width / 8);
  if (type.isUnsignedInteger())
    return static_cast<double>(raw);
  int64_t value = static_cast<int64_t>(raw << (64 - width)) >> (64 - width);
  return static_cast<double>(value);
}

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

//===----------------------------------------------------------------------===//
// --check-numerics
//===----------------------------------------------------------------------===//

/// An op result that an instrumented program returns after the model's own
/// outputs.
struct Probe {
  int64_t id;
  unsigned resultNumber;
  std::string node, opType, reason;
};

/// Numbers the ops of the entry block (`amp.probe`), so that the same op
/// can be found after autocast, which keeps ops and their attributes.
void numberProbes(func::FuncOp entry) {
  MLIRContext *context = entry.getContext();
  int64_t id = 0;
  for (Operation &op : entry.getBody().front().without_terminator())
    if (isa<amp::PrecisionOpInterface>(op) &&
        !isa<amp::ConstantOp, amp::NoneOp>(op))
      op.setAttr(amp::kProbeAttrName,
                 IntegerAttr::get(IntegerType::get(context, 64), id++));
}

/// Returns every floating-point result of a numbered op from the entry
/// function, after its own results.
SmallVector<Probe> exposeProbes(func::FuncOp entry) {
  Block &body = entry.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> operands(returnOp.getOperands());
  SmallVector<Probe> probes;
  for (Operation &op : body.without_terminator()) {
    auto id = op.getAttrOfType<IntegerAttr>(amp::kProbeAttrName);
    if (!id)
      continue;
    for (OpResult result : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      Probe probe;
      probe.id = id.getInt();
      probe.resultNumber = result.getResultNumber();
      probe.node = amp::getNodeName(op.getLoc()).str();
      probe.opType =
          cast<amp::PrecisionOpInterface>(op).getOnnxOpType().str();
      if (auto reason = op.getAttrOfType<StringAttr>(amp::kReasonAttrName))
        probe.reason = reason.str();
      std::string name = "probe_" + std::to_string(probe.id) + "_" +
                         std::to_string(probe.resultNumber);
      entry.insertResult(
          entry.getNumResults(), type,
          DictionaryAttr::get(
              entry.getContext(),
              {NamedAttribute(StringAttr::get(entry.getContext(), "amp.name"),
                              StringAttr::get(entry.getContext(), name))}));
      operands.push_back(result);
      probes.push_back(std::move(probe));
    }
  }
  returnOp->setOperands(operands);
  return probes;
}

/// What one op's low-precision output did against the fp32 reference.
struct ProbeStats {
  const Probe *probe = nullptr;
  std::string precision;
  int64_t elements = 0;
  /// Inf or NaN in low precision where fp32 is finite.
  int64_t nonFinite = 0;
  /// fp32 nonzero and finite; of those, zero or subnormal in low precision.
  int64_t nonzero = 0, underflow = 0;
  double maxAbsError = 0, maxAbsReference = 0;

  double underflowFraction() const {
    return nonzero ? static_cast<double>(underflow) / nonzero : 0.0;
  }
  /// Largest error relative to the largest reference magnitude (finite
  /// elements only).
  double relativeError() const {
    return maxAbsReference > 0 ? maxAbsError / maxAbsReference : maxAbsError;
  }
};

double smallestNormal(Type type) {
  if (type.isF16())
    return 6.103515625e-05;
  if (type.isF64())
    return 2.2250738585072014e-308;
  return 1.1754943508222875e-38; // f32 and bf16
}

ProbeStats compareProbe(const Probe &probe, const Tensor &low,
                        const Tensor &reference) {
  ProbeStats stats;
  stats.probe = &probe;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << low.elementType;
  stats.precision = os.str();
  if (low.shape != reference.shape)
    return stats;
  stats.elements = low.count();
  double tiny = smallestNormal(low.elementType);
  for (int64_t i = 0; i < stats.elements; ++i) {
    double a = elementAsDouble(low, i), b = elementAsDouble(reference, i);
    if (!std::isfinite(b))
      continue;
    if (!std::isfinite(a)) {
      ++stats.nonFinite;
      continue;
    }
    if (b != 0) {
      ++stats.nonzero;
      if (std::fabs(a) < tiny)
        ++stats.underflow;
    }
    stats.maxAbsError = std::max(stats.maxAbsError, std::fabs(a - b));
    stats.maxAbsReference = std::max(stats.maxAbsReference, std::fabs(b));
  }
  return stats;
}

/// Prints the table and writes the JSON report of --check-numerics.
LogicalResult reportNumerics(ArrayRef<ProbeStats> stats, StringRef lowName,
                             StringRef jsonPath) {
  // The table stays short: long reasons are cut (the JSON has them whole).
  auto describe = [](const ProbeStats &s) {
    std::string text = "#" + std::to_string(s.probe->id) + " '" +
                       s.probe->node + "' (" + s.probe->opType + ", " +
                       s.precision;
    if (!s.probe->reason.empty()) {
      StringRef reason = s.probe->reason;
      constexpr size_t kMaxReason = 60;
      text += ": " + reason.take_front(kMaxReason).str();
      if (reason.size() > kMaxReason)
        text += "...";
    }
    return text + ")";
  };
  llvm::raw_ostream &os = llvm::outs();
  os << "check-numerics: " << lowName << " program against the fp32 "
     << "reference, " << stats.size() << " op outputs compared\n";
  const ProbeStats *firstNonFinite = nullptr;
  for (const ProbeStats &s : stats)
    if (s.nonFinite > 0) {
      firstNonFinite = &s;
      break;
    }
  if (firstNonFinite)
    os << "first non-finite: " << describe(*firstNonFinite) << ": "
       << firstNonFinite->nonFinite << " of " << firstNonFinite->elements
       << " values are Inf or NaN where fp32 is finite\n"
       << "  to keep it in fp32: --amp-node-rule='"
       << llvm::Regex::escape(firstNonFinite->probe->node)
       << "=deny' (amp-opt and amp-run)\n";
  else
    os << "first non-finite: none\n";
  SmallVector<const ProbeStats *> underflows;
  for (const ProbeStats &s : stats)
    if (s.underflowFraction() > underflowThreshold)
      underflows.push_back(&s);
  os << "underflow (more than "
     << llvm::format("%g", underflowThreshold * 100)
     << "% of nonzero values flushed to zero or subnormal): "
     << (underflows.empty() ? "none" : std::to_string(underflows.size()) +
                                           " op outputs")
     << "\n";
  for (const ProbeStats *s : ArrayRef(underflows).take_front(numericsTop))
    os << llvm::format("  %6.2f%%  ", 100 * s->underflowFraction())
       << describe(*s) << "\n";
  if (underflows.size() > numericsTop)
    os << "  ... and " << underflows.size() - numericsTop
       << " more in program order (--check-numerics=FILE.json lists all)\n";
  SmallVector<const ProbeStats *> worst;
  for (const ProbeStats &s : stats)
    worst.push_back(&s);
  llvm::stable_sort(worst, [](const ProbeStats *a, const ProbeStats *b) {
    return a->relativeError() > b->relativeError();
  });
  if (worst.size() > numericsTop)
    worst.resize(numericsTop);
  os << "worst relative error (max |error| / max |fp32|, finite values):\n";
  for (const ProbeStats *s : worst)
    os << llvm::format("  %9.3g  ", s->relativeError()) << describe(*s)
       << "\n";
  if (jsonPath.empty())
    return success();
  std::string errorMessage;
  auto output = openOutputFile(jsonPath, &errorMessage);
  if (!output) {
    llvm::errs() << "error: " << errorMessage << "\n";
    return failure();
  }
  llvm::json::OStream json(output->os(), /*IndentSize=*/1);
  auto record = [&](const ProbeStats &s) {
    json.object([&] {
      json.attribute("index", s.probe->id);
      json.attribute("result", static_cast<int64_t>(s.probe->resultNumber));
      json.attribute("node", s.probe->node);
      json.attribute("op", s.probe->opType);
      json.attribute("precision", s.precision);
      json.attribute("reason", s.probe->reason);
      json.attribute("elements", s.elements);
      json.attribute("non_finite", s.nonFinite);
      json.attribute("nonzero", s.nonzero);
      json.attribute("underflow", s.underflow);
      json.attribute("underflow_fraction", s.underflowFraction());
      json.attribute("max_abs_error", s.maxAbsError);
      json.attribute("max_abs_reference", s.maxAbsReference);
      json.attribute("relative_error", s.relativeError());
    });
  };
  json.object([&] {
    json.attribute("type", lowName);
    json.attribute("underflow_threshold", underflowThreshold.getValue());
    json.attributeBegin("first_non_finite");
    if (firstNonFinite)
      record(*firstNonFinite);
    else
      json.value(nullptr);
    json.attributeEnd();
    json.attributeArray("underflow", [&] {
      for (const ProbeStats *s : underflows)
        record(*s);
    });
    json.attributeArray("ops", [&] {
      for (const ProbeStats &s : stats)
        record(s);
    });
  });
  output->os() << "\n";
  output->keep();
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
    if (failed(reportNumerics(stats, ampType, checkNumerics)))
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
