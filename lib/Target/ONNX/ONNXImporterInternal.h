//===- ONNXImporterInternal.h - shared by the importer's files --*- C++ -*-===//

#ifndef AMP_LIB_TARGET_ONNX_ONNXIMPORTERINTERNAL_H
#define AMP_LIB_TARGET_ONNX_ONNXIMPORTERINTERNAL_H

#include "amp/Target/ONNX/ONNXImporter.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::amp::onnx_import {

/// What a diagnostic about one node must say.
struct NodeContext {
  /// `loc` names the node (a NameLoc in the model's file).
  explicit NodeContext(Location loc) : loc(loc) {}
  std::string file;
  std::string graphPath;
  std::string name;
  int index = 0;
  std::string opType;
  std::string domain;
  int64_t opset = 0;
  Location loc;
  /// Emits "<file>: node '<name>' (#i in <graph>, op T, domain D, opset N):
  /// <message>" and returns failure.
  LogicalResult fail(const llvm::Twine &message) const;
};

/// A node on its way to becoming an amp op. Absent optional inputs are null.
struct PendingOp {
  std::string opType;
  llvm::SmallVector<Value> operands;
  llvm::SmallVector<NamedAttribute> attributes;
  unsigned numOutputs = 0;
  /// When set, result #0 is reshaped to the shape of this value after the op
  /// is built (old-opset semantics rebuilt from new ones).
  Value reshapeResultLike;

  Attribute getAttr(llvm::StringRef name) const;
  void setAttr(OpBuilder &builder, llvm::StringRef name, Attribute value);
  /// Removes and returns an attribute.
  Attribute takeAttr(llvm::StringRef name);
};

/// The amp op name for an ONNX op type, if amp models it.
std::optional<llvm::StringRef> lookupAmpOpName(llvm::StringRef onnxOpType);

/// Imports a parsed model (ONNXImporter.cpp); `path` names it in messages
/// and locates external data. Returns null after emitting diagnostics.
OwningOpRef<ModuleOp> importModelProto(onnx::ModelProto &model,
                                       llvm::StringRef path,
                                       MLIRContext *context,
                                       const ONNXImportOptions &options);

/// The version of `opType` that `opset` selects (its newest version not
/// above the opset), or std::nullopt for op types ONNX does not define.
/// The first opset that has `opType` (nullopt: none).
std::optional<int64_t> getFirstOpVersion(llvm::StringRef opType);
std::optional<int64_t> getSelectedOpVersion(llvm::StringRef opType,
                                            int64_t opset);

/// The GRAPH attributes of a control-flow op, in region order.
llvm::ArrayRef<llvm::StringRef> getRegionAttributeNames(llvm::StringRef opType);

/// Types of the block arguments of a subgraph, derived from the node's
/// operands (Loop/Scan); null entries fall back to the subgraph's declared
/// input types.
FailureOr<llvm::SmallVector<Type>>
getSubgraphArgumentTypes(const PendingOp &op, const NodeContext &ctx,
                         const onnx::GraphProto &graph);

} // namespace mlir::amp::onnx_import

#endif // AMP_LIB_TARGET_ONNX_ONNXIMPORTERINTERNAL_H
