//===- HostTensor.h - amp-run's host tensors and tensor files ---*- C++ -*-===//
//
// A tensor in host memory (amp element type, shape, raw bytes) and the
// files amp-run reads and writes: .npy and ONNX TensorProto .pb.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TOOLS_AMP_RUN_HOSTTENSOR_H
#define AMP_TOOLS_AMP_RUN_HOSTTENSOR_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::amp_run {

/// A host tensor: amp element type (signedness kept), shape, raw bytes.
struct Tensor {
  Type elementType;
  SmallVector<int64_t> shape;
  std::vector<char> bytes;

  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// Bytes per element (bool: 1).
size_t elementBytes(Type type);
/// A type as numpy names it (float32, uint8, bool, ...).
std::string typeName(Type type);
std::string shapeString(ArrayRef<int64_t> shape);

/// bfloat16 <-> float32 (round to nearest even, NaN kept).
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float f);

/// Reads a .npy file (C order, little-endian) or an ONNX TensorProto .pb.
llvm::Expected<Tensor> readTensorFile(StringRef path, MLIRContext *context);
llvm::Expected<Tensor> readNpy(StringRef path, MLIRContext *context);
/// Writes a .npy file (bf16 as float32, exactly).
LogicalResult writeNpy(StringRef path, const Tensor &tensor);

/// Element `i` as a double (for comparisons).
double elementAsDouble(const Tensor &t, int64_t i);

} // namespace mlir::amp_run

#endif // AMP_TOOLS_AMP_RUN_HOSTTENSOR_H
