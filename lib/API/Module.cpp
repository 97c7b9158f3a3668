//===- Module.cpp - import, load, autocast and export ---------------------===//

#include "APIInternal.h"

#include "amp/Pipelines/Pipelines.h"
#include "amp/Target/ONNX/ONNXExporter.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "amp/Target/Torch/TorchImporter.h"
#include "amp/Transforms/Passes.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace amp::api;
using namespace mlir;

Module::Module() = default;
Module::~Module() = default;
Module::Module(const Module &) = default;
Module &Module::operator=(const Module &) = default;
Module::Module(std::shared_ptr<State> state) : state(std::move(state)) {}

static std::shared_ptr<Module::State> newState() {
  auto state = std::make_shared<Module::State>();
  state->context = makeContext();
  return state;
}

/// The import options with the caps set by name.
static Status importOptions(const ImportOptions &options,
                            mlir::amp::ONNXImportOptions &result) {
  result.foldConstants = options.foldConstants;
  KeywordBinder binder(options.limits);
  result.limits.bind(binder);
  std::string error = binder.finish();
  if (error.empty())
    error = result.limits.validate();
  return error.empty() ? Status() : Status::error("import limits: " + error);
}

/// `state` is moved into `result` only on success: on failure its context
/// must outlive the caller's capture of its diagnostics.
static Status finishImport(std::shared_ptr<Module::State> &state,
                           OwningOpRef<ModuleOp> module,
                           const mlir::amp::ONNXImportOptions &options,
                           DiagnosticCapture &capture, Module &result) {
  Status status = capture.finish(success(static_cast<bool>(module)));
  if (!status.ok)
    return status;
  state->module = std::move(module);
  state->fromOnnx = true;
  state->importFolded = options.foldConstants;
  state->limits = options.limits;
  result = Module(std::move(state));
  return status;
}

Status Module::importOnnxFile(const std::string &path,
                              const ImportOptions &options, Module &result) {
  mlir::amp::ONNXImportOptions importOpts;
  if (Status status = importOptions(options, importOpts); !status.ok)
    return status;
  auto state = newState();
  DiagnosticCapture capture(state->context.get());
  OwningOpRef<ModuleOp> module =
      mlir::amp::importONNXFile(path, state->context.get(), importOpts);
  state->sourcePath = path;
  return finishImport(state, std::move(module), importOpts, capture, result);
}

Status Module::importOnnxBytes(const std::string &bytes,
                               const std::string &name,
                               const ImportOptions &options, Module &result) {
  mlir::amp::ONNXImportOptions importOpts;
  if (Status status = importOptions(options, importOpts); !status.ok)
    return status;
  auto state = newState();
  DiagnosticCapture capture(state->context.get());
  OwningOpRef<ModuleOp> module = mlir::amp::importONNXBuffer(
      bytes, name, state->context.get(), importOpts);
  state->sourcePath = name;
  state->sourceBytes = bytes;
  return finishImport(state, std::move(module), importOpts, capture, result);
}

static Status parseMlir(std::unique_ptr<llvm::MemoryBuffer> buffer,
                        Module &result) {
  auto state = newState();
  DiagnosticCapture capture(state->context.get());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(state->context.get()));
  Status status = capture.finish(success(static_cast<bool>(module)));
  if (!status.ok)
    return status;
  state->module = std::move(module);
  result = Module(std::move(state));
  return status;
}

Status Module::parseMlirFile(const std::string &path, Module &result) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (std::error_code ec = buffer.getError())
    return Status::error("cannot open '" + path + "': " + ec.message());
  return parseMlir(std::move(*buffer), result);
}

Status Module::parseMlirText(const std::string &text, const std::string &name,
                             Module &result) {
  return parseMlir(llvm::MemoryBuffer::getMemBufferCopy(text, name), result);
}

Status Module::importTorchGraph(const std::string &graphJson,
                                const std::vector<ExternalWeight> &weights,
                                bool training, Module &result) {
  std::vector<mlir::amp::TorchWeight> torchWeights;
  for (const ExternalWeight &weight : weights)
    torchWeights.push_back(
        {weight.name,
         llvm::ArrayRef<char>(static_cast<const char *>(weight.data),
                              weight.bytes),
         weight.owner});
  auto state = newState();
  DiagnosticCapture capture(state->context.get());
  mlir::amp::TorchImportOptions options;
  options.training = training;
  OwningOpRef<ModuleOp> module = mlir::amp::importTorchGraph(
      graphJson, torchWeights, state->context.get(), options);
  Status status = capture.finish(success(static_cast<bool>(module)));
  if (!status.ok)
    return status;
  state->module = std::move(module);
  state->fromTorch = true;
  state->torchTraining = training;
  state->torchGraph = graphJson;
  state->torchWeights = std::move(torchWeights);
  result = Module(std::move(state));
  return status;
}

std::vector<::amp::api::AtenOpInfo> (::amp::api::supportedAtenOps)() {
  std::vector<AtenOpInfo> result;
  for (const mlir::amp::AtenOpInfo &info : mlir::amp::getSupportedAtenOps())
    result.push_back({info.target.str(), info.ampOps.str()});
  return result;
}

bool Module::isFromOnnx() const { return state && state->fromOnnx; }

bool Module::isFromTorch() const { return state && state->fromTorch; }

std::string Module::getAutocastType() const {
  return state ? state->autocastType : "";
}

Module Module::clone() const {
  if (!state)
    return Module();
  std::lock_guard<std::mutex> lock(state->mutex);
  auto copy = newState();
  // Through the generic bytecode form: the copy lives in its own context.
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(writeBytecodeToFile(*state->module, os)))
    return Module();
  os.flush();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(bytes, "clone", false), llvm::SMLoc());
  copy->module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(copy->context.get()));
  if (!copy->module)
    return Module();
  copy->fromOnnx = state->fromOnnx;
  copy->cleaned = state->cleaned;
  copy->autocastType = state->autocastType;
  copy->sourcePath = state->sourcePath;
  copy->sourceBytes = state->sourceBytes;
  copy->importFolded = state->importFolded;
  copy->limits = state->limits;
  copy->fromTorch = state->fromTorch;
  copy->torchTraining = state->torchTraining;
  copy->torchGraph = state->torchGraph;
  copy->torchWeights = state->torchWeights;
  return Module(std::move(copy));
}

Status Module::autocast(const OptionList &options, std::string &reportJson) {
  if (!state)
    return Status::error("the module is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  if (!state->autocastType.empty())
    return Status::error("the module was already autocast to " +
                         state->autocastType +
                         "; autocast a fresh import or a clone() taken "
                         "before");
  mlir::amp::FrontEndOptions frontEnd;
  KeywordBinder binder(options);
  binder.reserve("report", "the report is returned");
  binder.reserve("summary", "the summary is the report's");
  binder.reserve("report-html", "use Report.to_html()");
  frontEnd.bind(binder);
  if (std::string error = binder.finish(); !error.empty())
    return Status::error("autocast: " + error);
  if (llvm::Error err = mlir::amp::checkAutocastOptions(frontEnd.autocast))
    return Status::error("autocast: " + llvm::toString(std::move(err)));
  // The front end as amp-opt runs it on an imported model (the cleanup
  // once), with the report written where it can be read back.
  frontEnd.importCleanup = frontEnd.importCleanup && !state->cleaned;
  llvm::SmallString<128> reportPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("amp-report", "json", reportPath))
    return Status::error("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeReport(reportPath);
  frontEnd.autocast.reportFile = reportPath.str().str();
  frontEnd.autocast.printSummary = false;

  DiagnosticCapture capture(state->context.get());
  PassManager pm(state->context.get(), ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  pm.enableVerifier(false); // verified once, below
  mlir::amp::buildFrontEndPipeline(pm, frontEnd);
  LogicalResult result = pm.run(*state->module);
  if (succeeded(result))
    result = verify(*state->module);
  Status status = capture.finish(result);
  if (!status.ok)
    return status;
  auto report = llvm::MemoryBuffer::getFile(reportPath);
  if (!report)
    return Status::error("cannot read the autocast report: " +
                         report.getError().message());
  reportJson = (*report)->getBuffer().str();
  state->cleaned = true;
  state->autocastType = frontEnd.autocast.type;
  return status;
}

Status Module::toMlirText(std::string &text, bool generic) const {
  if (!state)
    return Status::error("the module is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  text.clear();
  llvm::raw_string_ostream os(text);
  state->module->print(os, flags);
  return Status();
}

Status Module::writeBytecode(const std::string &path) const {
  if (!state)
    return Status::error("the module is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  DiagnosticCapture capture(state->context.get());
  std::error_code ec;
  llvm::ToolOutputFile file(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return Status::error("cannot write '" + path + "': " + ec.message());
  BytecodeWriterConfig config("amp");
  LogicalResult result = writeBytecodeToFile(*state->module, file.os(), config);
  file.os().flush();
  if (file.os().has_error()) {
    capture.addError("cannot write '" + path +
                     "': " + file.os().error().message());
    file.os().clear_error();
    result = failure();
  }
  if (succeeded(result))
    file.keep();
  return capture.finish(result);
}

/// Runs `write` (an ONNX export) under the module's lock, with the
/// diagnostics captured.
template <typename WriteFn>
static Status exportOnnx(const std::shared_ptr<Module::State> &state,
                         int64_t opset, WriteFn write) {
  if (!state)
    return Status::error("the module is empty");
  std::lock_guard<std::mutex> lock(state->mutex);
  DiagnosticCapture capture(state->context.get());
  mlir::amp::ONNXExportOptions options;
  options.opset = opset;
  return capture.finish(write(*state->module, options));
}

Status Module::writeOnnx(const std::string &path, int64_t opset) const {
  return exportOnnx(state, opset, [&](ModuleOp module, const auto &options) {
    return mlir::amp::exportToONNXFile(module, path, options);
  });
}

Status Module::toOnnxBytes(std::string &bytes, int64_t opset) const {
  return exportOnnx(state, opset, [&](ModuleOp module, const auto &options) {
    return mlir::amp::exportToONNXBuffer(module, bytes, options);
  });
}
