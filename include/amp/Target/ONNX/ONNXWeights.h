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

#include <string>
#include <utility>
#include <vector>

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

} // namespace mlir::amp

#endif // AMP_TARGET_ONNX_ONNXWEIGHTS_H
