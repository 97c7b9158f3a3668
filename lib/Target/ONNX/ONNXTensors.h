//===- ONNXTensors.h - ONNX types and tensors to MLIR -----------*- C++ -*-===//
//
// Internal to the ONNX importer: element-type mapping and the conversion of
// TensorProto payloads (raw, typed fields, external data) to attributes.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_ONNXTENSORS_H
#define AMP_LIB_TARGET_ONNX_ONNXTENSORS_H

#include "amp/Target/ONNX/ModelLimits.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

#include "onnx/onnx_pb.h"

namespace mlir::amp::onnx_import {

/// Maps an ONNX TensorProto.DataType to an MLIR element type; null for the
/// types amp does not support (strings, complex, 4/8-bit floats, ...).
Type convertElementType(MLIRContext *context, int32_t dataType);

/// Name of an ONNX data type for diagnostics ("FLOAT", "STRING", ...).
std::string dataTypeName(int32_t dataType);
/// The ONNX TensorProto data type of an MLIR element type (0 if none): the
/// inverse of convertElementType.
int32_t toOnnxDataType(Type type);

/// Converts a tensor to an attribute. Tensors with more than
/// `denseElementsLimit` elements become `dense_resource` blobs; their raw
/// bytes are moved out of the proto, not copied. `modelDir` resolves
/// external data. The declared size is checked against `limits` and
/// against the bytes that back it before anything is allocated.
/// With `inlineSplats`, a tensor whose elements are all the same becomes a
/// `dense` splat whatever its size.
llvm::Expected<ElementsAttr>
convertTensor(MLIRContext *context, onnx::TensorProto &tensor,
              llvm::StringRef modelDir, int64_t denseElementsLimit,
              const ModelLimits &limits, bool inlineSplats = false);

/// An error if a tensor of `count` elements of `elementBytes` bytes each
/// exceeds `limits`' largest tensor (`what` names it in the message).
llvm::Error checkTensorSize(llvm::StringRef what, uint64_t count,
                            uint64_t elementBytes, const ModelLimits &limits);

/// The bytes one element of `type` takes in amp's storage.
size_t storageBytes(Type type);

} // namespace mlir::amp::onnx_import

#endif // AMP_LIB_TARGET_ONNX_ONNXTENSORS_H
