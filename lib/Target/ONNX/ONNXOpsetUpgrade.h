//===- ONNXOpsetUpgrade.h - models of opsets 1-10 -----------------*- C++ -*-===//
//
// Brings a model whose default-domain opset is older than the importer's
// version rules reach (kMinSupportedOpset) up to that opset with ONNX's
// version converter. Internal to lib/Target/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_ONNXOPSETUPGRADE_H
#define AMP_LIB_TARGET_ONNX_ONNXOPSETUPGRADE_H

#include "onnx/onnx_pb.h"

#include "llvm/Support/Error.h"

namespace mlir::amp::onnx_upgrade {

/// Checks `model` (default-domain opset `from`) with ONNX's checker and
/// rewrites it in place to default-domain opset `to` with ONNX's version
/// converter. Models with external data are refused (ONNX's IR drops it).
/// The error text says what failed; the caller names the file.
llvm::Error upgradeToOpset(onnx::ModelProto &model, int64_t from, int64_t to);

} // namespace mlir::amp::onnx_upgrade

#endif // AMP_LIB_TARGET_ONNX_ONNXOPSETUPGRADE_H
