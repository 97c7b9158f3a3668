//===- ONNXExporter.h - amp dialect to ONNX ---------------------*- C++ -*-===//
//
// Writes an amp program as an ONNX model: one node per amp op, constants as
// initializers in the precision they are used in, If/Loop/Scan bodies as
// subgraphs, node names, opset and metadata kept from the import. Forms that
// the importer upgraded (Reduce* axes, Squeeze/Unsqueeze axes, Split sizes,
// Dropout ratio) are written back in the form the target opset expects.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_ONNX_ONNXEXPORTER_H
#define AMP_TARGET_ONNX_ONNXEXPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::amp {

struct ONNXExportOptions {
  /// Default-domain opset to write; 0 keeps the imported model's opset.
  int64_t opset = 0;
  /// Store initializers of at least `externalDataMinBytes` bytes in a
  /// separate file next to the model (`<model file>.data`). Chosen
  /// automatically when the initializers total more than 1.8 GB (protobuf
  /// cannot hold 2 GiB).
  bool externalData = false;
  int64_t externalDataMinBytes = 1024;
};

/// Writes `module` (one func.func, the graph) to `path`. Emits an error on
/// the offending op and writes nothing if the program cannot be expressed
/// in ONNX at the target opset.
LogicalResult exportToONNXFile(ModuleOp module, llvm::StringRef path,
                               const ONNXExportOptions &options = {});

/// The same model serialised into `bytes`, every weight inline (an error if
/// the weights need external data).
LogicalResult exportToONNXBuffer(ModuleOp module, std::string &bytes,
                                 const ONNXExportOptions &options = {});

} // namespace mlir::amp

#endif // AMP_TARGET_ONNX_ONNXEXPORTER_H
