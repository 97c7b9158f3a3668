//===- Amp.cpp - amp's C API (include/amp-c/Amp.h) ------------------------===//
//
// Thin wrappers: MLIR's C handles unwrapped, the calls of amp's libraries,
// errors as diagnostics of the module's context.
//
//===----------------------------------------------------------------------===//

#include "amp-c/Amp.h"

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/InitEmbedding.h"
#include "amp/Pipelines/BoundPipelineOptions.h"
#include "amp/Target/ONNX/ONNXExporter.h"
#include "amp/Target/ONNX/ONNXImporter.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Amp, amp, mlir::amp::AmpDialect)

void ampRegisterDialects(MlirDialectRegistry registry) {
  amp::registerEmbeddedDialects(*unwrap(registry));
}

void ampRegisterPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] { amp::registerEmbeddedPasses(); });
}

MlirModule ampImportONNXFile(MlirContext context, MlirStringRef path) {
  return wrap(amp::importONNXFile(unwrap(path), unwrap(context)).release());
}

MlirModule ampImportONNXBuffer(MlirContext context, MlirStringRef bytes,
                               MlirStringRef name) {
  return wrap(
      amp::importONNXBuffer(unwrap(bytes), unwrap(name), unwrap(context))
          .release());
}

MlirLogicalResult ampExportONNXFile(MlirModule module, MlirStringRef path,
                                    int64_t opset) {
  amp::ONNXExportOptions options;
  options.opset = opset;
  return wrap(amp::exportToONNXFile(unwrap(module), unwrap(path), options));
}

MlirLogicalResult ampExportONNXBuffer(MlirModule module, int64_t opset,
                                      MlirStringCallback callback,
                                      void *userData) {
  amp::ONNXExportOptions options;
  options.opset = opset;
  std::string bytes;
  if (failed(amp::exportToONNXBuffer(unwrap(module), bytes, options)))
    return mlirLogicalResultFailure();
  callback(mlirStringRefCreate(bytes.data(), bytes.size()), userData);
  return mlirLogicalResultSuccess();
}

namespace {
/// What an AmpFrontEndOptions handle holds: the textual options of
/// amp-front-end, made from FrontEndOptions::bind (declared once).
struct FrontEndOptionsHandle {
  MLIRContext *context;
  amp::BoundPipelineOptions<amp::FrontEndOptions> options;
};
} // namespace

static FrontEndOptionsHandle *unwrap(AmpFrontEndOptions options) {
  return static_cast<FrontEndOptionsHandle *>(options.ptr);
}

AmpFrontEndOptions ampFrontEndOptionsCreate(MlirContext context) {
  auto *handle = new FrontEndOptionsHandle{unwrap(context), {}};
  return AmpFrontEndOptions{handle};
}

void ampFrontEndOptionsDestroy(AmpFrontEndOptions options) {
  delete unwrap(options);
}

MlirLogicalResult ampFrontEndOptionsSet(AmpFrontEndOptions options,
                                        MlirStringRef name,
                                        MlirStringRef value) {
  FrontEndOptionsHandle *handle = unwrap(options);
  llvm::StringRef key = unwrap(name), text = unwrap(value);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  // The value braced, so that a list or a path with spaces stays one value.
  if (key.empty() || key.contains('=') || key.contains(' ') ||
      failed(handle->options.parseFromString((key + "={" + text + "}").str(),
                                             errorStream))) {
    emitError(UnknownLoc::get(handle->context))
        << "amp front-end option '" << key << "' = '" << text << "': "
        << (errors.empty() ? "not an option name"
                           : llvm::StringRef(errors).trim());
    return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}

MlirLogicalResult ampRunFrontEnd(MlirModule module, AmpFrontEndOptions options,
                                 MlirStringCallback reportCallback,
                                 void *userData) {
  ModuleOp op = unwrap(module);
  amp::FrontEndOptions frontEnd = unwrap(options)->options.get();
  if (llvm::Error err = amp::checkAutocastOptions(frontEnd.autocast)) {
    op.emitError() << "amp front end: " << llvm::toString(std::move(err));
    return mlirLogicalResultFailure();
  }
  llvm::SmallString<128> reportPath;
  std::optional<llvm::FileRemover> removeReport;
  if (reportCallback) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "amp-report", "json", reportPath)) {
      op.emitError() << "amp front end: cannot create a temporary file: "
                     << ec.message();
      return mlirLogicalResultFailure();
    }
    removeReport.emplace(reportPath);
    frontEnd.autocast.reportFile = reportPath.str().str();
  }
  PassManager pm(op.getContext());
  amp::buildFrontEndPipeline(pm, frontEnd);
  if (failed(pm.run(op)))
    return mlirLogicalResultFailure();
  if (reportCallback) {
    auto report = llvm::MemoryBuffer::getFile(reportPath);
    if (!report) {
      op.emitError() << "amp front end: cannot read the report: "
                     << report.getError().message();
      return mlirLogicalResultFailure();
    }
    llvm::StringRef json = (*report)->getBuffer();
    reportCallback(mlirStringRefCreate(json.data(), json.size()), userData);
  }
  return mlirLogicalResultSuccess();
}
