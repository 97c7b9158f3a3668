//===- ONNXImporter.h - ONNX model to amp dialect ---------------*- C++ -*-===//
//
// Reads an ONNX ModelProto and builds a module holding `func.func @main` in
// the amp dialect. Errors are reported as MLIR diagnostics naming the file,
// node, op type, domain and opset; the importer never aborts on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_ONNX_ONNXIMPORTER_H
#define AMP_TARGET_ONNX_ONNXIMPORTER_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Target/ONNX/ModelLimits.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::amp {

/// The oldest default-domain opset amp's own version rules upgrade from.
constexpr int64_t kMinSupportedOpset = 11;
/// Models of opsets kMinUpgradableOpset to kMinSupportedOpset - 1 are first
/// brought to kMinSupportedOpset by ONNX's version converter.
constexpr int64_t kMinUpgradableOpset = 1;
/// amp's ops model the operator versions this opset selects (each op's
/// supported version; see getSupportedOpVersion). A model may use any opset
/// the importer's version table knows (see getLatestKnownOpset) as long as
/// the version it selects for each operator is the supported one or older.
constexpr int64_t kMaxSupportedOpset = 28;

/// The version of ONNX operator `opType` that amp's op models; std::nullopt
/// for op types ONNX does not define.
std::optional<int64_t> getSupportedOpVersion(llvm::StringRef opType);

/// The newest default-domain opset in the importer's operator version table.
int64_t getLatestKnownOpset();

/// The lowest ONNX IR version that can carry default-domain `opset`
/// (onnx.helper's table). The importer records at least this version and
/// the writer writes at least this one.
int64_t getMinIrVersion(int64_t opset);

struct ONNXImportOptions {
  /// Evaluate ops with constant inputs while importing (shape arithmetic).
  bool foldConstants = true;
  /// Tensors with at most this many elements become `dense` attributes;
  /// larger ones become `dense_resource` blobs.
  int64_t denseElementsLimit = 16;
  /// Tensor attributes (Constant nodes' values) with at most this many
  /// elements, and splats of any size, become `dense` attributes. The
  /// writer writes an inline constant of more than `denseElementsLimit`
  /// elements (a folded value, a Constant node's) as a Constant node, so
  /// that a re-import gives the same IR (docs/Reliability.md).
  int64_t constantDenseElementsLimit = 1024;
  /// Mark the constants made from graph initializers with the unit
  /// attribute `amp.initializer` (the train-step builder's parameters and
  /// buffers); the location already names them. Ops that read a marked
  /// initializer are not folded.
  bool markInitializers = false;
  /// Resource caps (tensor sizes, initializer bytes, nodes, nesting).
  ModelLimits limits;
};

// The attribute `markInitializers` sets: kInitializerAttrName
// (amp/Dialect/Amp/IR/AmpDialect.h).

/// Imports the ONNX model stored at `path`. External data files are resolved
/// relative to the model's folder. Returns null after emitting diagnostics.
OwningOpRef<ModuleOp> importONNXFile(llvm::StringRef path, MLIRContext *context,
                                     const ONNXImportOptions &options = {});

/// Imports the serialized ONNX model `bytes` as if read from the file
/// `path`, which names it in messages and locates external data.
OwningOpRef<ModuleOp> importONNXBuffer(llvm::StringRef bytes,
                                       llvm::StringRef path,
                                       MLIRContext *context,
                                       const ONNXImportOptions &options = {});

/// Returns true if `path` names an ONNX model by its extension.
bool isONNXFile(llvm::StringRef path);

/// A tensor read from a serialized ONNX TensorProto (`.pb`, as in the ONNX
/// test data): little-endian bytes, one byte per bool.
struct ONNXTensorData {
  std::string name;
  Type elementType;
  llvm::SmallVector<int64_t> shape;
  std::vector<char> bytes;
};
llvm::Expected<ONNXTensorData>
readONNXTensorFile(llvm::StringRef path, MLIRContext *context,
                   const ModelLimits &limits = {});
/// The same for the bytes of such a file; `path` names it in messages and
/// locates external data.
llvm::Expected<ONNXTensorData>
readONNXTensorBuffer(llvm::StringRef bytes, llvm::StringRef path,
                     MLIRContext *context, const ModelLimits &limits = {});

} // namespace mlir::amp

#endif // AMP_TARGET_ONNX_ONNXIMPORTER_H
