//===- ONNXVersionRules.h - ONNX operator versions, both ways ---*- C++ -*-===//
//
// amp ops model one version of each ONNX operator (the newest amp supports,
// see mlir::amp::getSupportedOpVersion). Older forms are handled by one table
// of rules {op types, first opset with amp's form, upgrade, downgrade}: the
// importer upgrades a node of an older opset with every rule newer than that
// opset, and the writer downgrades with the same rules when it writes an older
// opset. Internal to lib/Target/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_ONNXVERSIONRULES_H
#define AMP_LIB_TARGET_ONNX_ONNXVERSIONRULES_H

#include "ONNXImporterInternal.h"

#include "mlir/IR/Operation.h"

namespace mlir::amp::onnx_versions {

/// What a downgrade needs from the ONNX writer: the op, the node written for
/// it (inputs, outputs and attributes of amp's form), its graph (for extra
/// nodes and initializers) and ways to name and drop things.
class NodeWriter {
public:
  NodeWriter(Operation *op, onnx::NodeProto &node, onnx::GraphProto &graph,
             int64_t opset)
      : op(op), node(node), graph(graph), opset(opset) {}
  virtual ~NodeWriter() = default;

  /// Removes input `index` (a constant 1-D integer tensor) and returns its
  /// values (empty when the input is absent); fails, naming `what`, when it
  /// is not a constant.
  virtual FailureOr<SmallVector<int64_t>> takeConstantInput(unsigned index,
                                                            StringRef what) = 0;
  /// Records that input `index` is written as an attribute (its initializer
  /// goes when nothing else reads it).
  virtual void inputBecameAttribute(unsigned index) = 0;
  virtual std::string uniqueValueName(StringRef base) = 0;
  virtual std::string uniqueNodeName(StringRef base) = 0;

  Operation *op;
  onnx::NodeProto &node;
  onnx::GraphProto &graph;
  int64_t opset;
};

/// Rewrites a node of `ctx.opset` into amp's form.
LogicalResult upgradeNode(onnx_import::PendingOp &op,
                          const onnx_import::NodeContext &ctx,
                          OpBuilder &builder);

/// Rewrites a node written in amp's form into the form of `writer.opset`,
/// or fails with "cannot export: ..." when that opset cannot express it.
LogicalResult downgradeNode(NodeWriter &writer);

/// Attribute helpers of the writer.
void addIntsAttribute(onnx::NodeProto &node, StringRef name,
                      ArrayRef<int64_t> values);
void removeAttribute(onnx::NodeProto &node, StringRef name);
const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node,
                                          StringRef name);

} // namespace mlir::amp::onnx_versions

#endif // AMP_LIB_TARGET_ONNX_ONNXVERSIONRULES_H
