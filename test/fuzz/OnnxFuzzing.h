//===- OnnxFuzzing.h - shared parts of the ONNX fuzz targets ----*- C++ -*-===//
//
// The ONNX fuzz targets (import, mutate, roundtrip) share: small resource
// caps, so one input cannot take the fuzzer's memory; an import that
// checks the importer's contract (a failure always says why; a success is
// a verified module); and a structure-aware mutator that decodes a model,
// changes one thing a user or an attacker could change (a dimension, an
// attribute, a data type, an edge, an op type, an opset, a node), and
// encodes it again, so that mutations get past the protobuf parser.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TEST_FUZZ_ONNXFUZZING_H
#define AMP_TEST_FUZZ_ONNXFUZZING_H

#include "amp/Target/ONNX/ModelLimits.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>

namespace amp_fuzz {

/// Caps for fuzzing: tensors of at most 2^20 elements and 16 MiB, 64 MiB of
/// weights, 10,000 nodes, 16 levels of subgraphs, 1 MiB of folding.
mlir::amp::ModelLimits fuzzLimits();

/// A context with the amp and func dialects loaded and diagnostics that
/// are counted, not printed.
class FuzzContext {
public:
  FuzzContext();
  ~FuzzContext();
  mlir::MLIRContext &get() { return context; }
  /// Errors emitted since the last reset.
  unsigned errors() const { return errorCount; }
  void resetErrors() { errorCount = 0; }

private:
  mlir::MLIRContext context;
  unsigned errorCount = 0;
  mlir::DiagnosticEngine::HandlerID handler;
};

/// Imports `bytes` as a model at a path whose folder does not exist (so
/// external data fails cleanly). Aborts if the import fails without an
/// error, or succeeds with a module that does not verify.
mlir::OwningOpRef<mlir::ModuleOp> importChecked(FuzzContext &context,
                                                llvm::StringRef bytes);

/// libFuzzer's custom mutator for serialized ModelProtos: a structural
/// change when `data` parses as a model, else libFuzzer's byte mutation.
size_t mutateModel(uint8_t *data, size_t size, size_t maxSize,
                   unsigned seed);

} // namespace amp_fuzz

#endif // AMP_TEST_FUZZ_ONNXFUZZING_H
