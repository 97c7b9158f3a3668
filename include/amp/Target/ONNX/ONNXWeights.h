//===- ONNXWeights.h - write trained weights back into ONNX -----*- C++ -*-===//
//
// amp-run --train --export-onnx: the original inference model with the
// trained values of its initializers, for onnxruntime and other runtimes.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_ONNX_ONNXWEIGHTS_H
#define AMP_TARGET_ONNX_ONNXWEIGHTS_H

#include "amp/Runtime/HostTensor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::amp {

/// Writes the ONNX model `source` to `dest` (atomically) with each
/// initializer named in `values` replaced by the value (same element type
/// and shape, stored inline) and every BatchNormalization in inference mode
/// (training_mode dropped with its running-statistics outputs), so that the
/// model evaluates with the trained running statistics. Fails, writing
/// nothing, on a name the model lacks or a type or shape that differs.
llvm::Error writeONNXWithWeights(
    llvm::StringRef source, llvm::StringRef dest,
    const std::vector<std::pair<std::string, amp_runtime::Tensor>> &values);

/// The same with the source model given as its serialized bytes
/// (`sourceName` names it in errors).
llvm::Error writeONNXBytesWithWeights(
    llvm::StringRef sourceBytes, llvm::StringRef sourceName,
    llvm::StringRef dest,
    const std::vector<std::pair<std::string, amp_runtime::Tensor>> &values);

/// The module attribute of a program built by `amp-opt --train` from an
/// ONNX model that holds that model (a dense_resource blob of bytes), so
/// that `amp-run program --train --export-onnx` can write it with the
/// trained weights.
constexpr llvm::StringLiteral kONNXSourceAttrName = "amp.onnx_source";

/// Stores the ONNX model at `path` in `module` (kONNXSourceAttrName), with
/// the data of the initializers named in `stripped` removed (the trained
/// values replace them on export; their names, types and shapes stay).
llvm::Error attachONNXSource(ModuleOp module, llvm::StringRef path,
                             llvm::ArrayRef<std::string> stripped);

/// The bytes that attachONNXSource stored; std::nullopt without them.
std::optional<std::string> getONNXSource(ModuleOp module);

} // namespace mlir::amp

#endif // AMP_TARGET_ONNX_ONNXWEIGHTS_H
