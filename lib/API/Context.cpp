//===- Context.cpp - contexts and diagnostics of API calls ----------------===//

#include "APIInternal.h"

#include "amp/Dialect/Amp/Gradients/GradientModels.h"
#include "amp/Execution/Passes.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Transforms/PrecisionModels.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

using namespace amp::api;
using namespace mlir;

namespace amp::api {
std::unique_ptr<MLIRContext> makeContext() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::amp::registerConstantFolding();
  });
  DialectRegistry registry;
  mlir::amp::registerAmpCpuDialects(registry);
  mlir::amp::registerAmpGradientModels(registry);
  // Programs in upstream dialects (load_mlir of linalg or TOSA) autocast
  // as in amp-opt.
  registry.insert<mlir::tosa::TosaDialect>();
  mlir::amp::registerUpstreamPrecisionModels(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // Errors name the op through its location (the ONNX node), as the tools
  // print them.
  context->printOpOnDiagnostic(false);
  return context;
}
} // namespace amp::api

std::string Status::message() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const Diagnostic &d : diagnostics) {
    if (!text.empty())
      os << "\n";
    os << d.severity << ": ";
    if (!d.location.empty())
      os << d.location << ": ";
    os << d.message;
  }
  return text;
}

Status Status::error(std::string message) {
  Status status;
  status.ok = false;
  Diagnostic d;
  d.severity = "error";
  d.message = std::move(message);
  status.diagnostics.push_back(std::move(d));
  return status;
}

DiagnosticCapture::DiagnosticCapture(MLIRContext *context)
    : handler(context, [this](mlir::Diagnostic &d) {
        record(d);
        return success();
      }) {}

static const char *severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

/// File, line, column and node name from a location (the innermost file
/// location, the outermost name), and the location as the tools print it
/// ("file:line:col", "file" where the line is unknown, else MLIR's form).
static void describeLocation(Location loc, ::amp::api::Diagnostic &d) {
  if (isa<UnknownLoc>(loc))
    return;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      if (d.file.empty()) {
        d.file = file.getFilename().str();
        d.line = file.getLine();
        d.column = file.getColumn();
      }
    } else if (auto name = dyn_cast<NameLoc>(inner)) {
      if (d.node.empty())
        d.node = name.getName().str();
    }
    return WalkResult::advance();
  });
  if (!d.file.empty())
    d.location = d.line ? d.file + ":" + std::to_string(d.line) + ":" +
                              std::to_string(d.column)
                        : d.file;
  else
    llvm::raw_string_ostream(d.location) << loc;
}

/// The node and op the importer's and the passes' messages name:
/// "node 'conv1' (#3 in main, op Conv, domain ...)" or "node 'x' (Conv)".
static void describeMessage(::amp::api::Diagnostic &d) {
  static const llvm::Regex nodePattern("node '([^']*)' \\(([^)]*)\\)");
  llvm::SmallVector<llvm::StringRef, 3> match;
  if (!nodePattern.match(d.message, &match))
    return;
  d.node = match[1].str();
  llvm::StringRef inside = match[2];
  size_t at = inside.find("op ");
  if (at != llvm::StringRef::npos && (at == 0 || inside[at - 1] == ' '))
    d.op = inside.substr(at + 3)
               .take_until([](char c) { return c == ',' || c == ' '; })
               .str();
  else if (!inside.contains(' ') && !inside.contains(','))
    d.op = inside.str();
}

void DiagnosticCapture::record(mlir::Diagnostic &diagnostic) {
  ::amp::api::Diagnostic d;
  d.severity = severityName(diagnostic.getSeverity());
  d.message = diagnostic.str();
  describeLocation(diagnostic.getLocation(), d);
  describeMessage(d);
  hadError |= diagnostic.getSeverity() == DiagnosticSeverity::Error;
  diagnostics.push_back(std::move(d));
  for (mlir::Diagnostic &note : diagnostic.getNotes())
    record(note);
}

void DiagnosticCapture::addError(std::string message) {
  ::amp::api::Diagnostic d;
  d.severity = "error";
  d.message = std::move(message);
  describeMessage(d);
  hadError = true;
  diagnostics.push_back(std::move(d));
}

Status DiagnosticCapture::finish(LogicalResult result) {
  Status status;
  status.ok = succeeded(result) && !hadError;
  status.diagnostics = std::move(diagnostics);
  if (!status.ok && !hadError) {
    ::amp::api::Diagnostic d;
    d.severity = "error";
    d.message = "the call failed without a diagnostic";
    status.diagnostics.push_back(std::move(d));
  }
  return status;
}
