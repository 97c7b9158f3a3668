//===- RuntimeConv.h - convolutions the CPU runtime computes ----*- C++ -*-===//
//
// Internal to lib/Conversion/LinalgToCpu.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_LINALGTOCPU_RUNTIMECONV_H
#define AMP_LIB_CONVERSION_LINALGTOCPU_RUNTIMECONV_H

#include "amp/Conversion/AmpToLinalg/Markers.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::amp::cpu {

/// Whether `op` is a convolution marked by convert-amp-to-linalg that the
/// CPU runtime computes (`amp_cpu_conv_f32`, oneDNN): fp32 output, 1-3
/// spatial dimensions. Works on tensors and on buffers. A marked op without
/// its strides is claimed too (amp-linalg-to-runtime-calls reports it).
inline bool isRuntimeConv(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !marker::isConv(op) || linalgOp.getNumDpsInits() != 1)
    return false;
  if (!getElementTypeOrSelf(linalgOp.getDpsInits()[0].getType()).isF32())
    return false;
  auto strides = op->getAttrOfType<DenseI64ArrayAttr>(marker::kConvStridesAttr);
  return !strides || strides.size() <= 3;
}

/// Whether `op` is a convolution weight gradient marked by
/// convert-amp-to-linalg that the CPU runtime computes
/// (`amp_cpu_conv_weight_grad_f32`, oneDNN's backward-weights convolution):
/// fp32 dW, 1-3 spatial dimensions.
inline bool isRuntimeWeightGrad(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !marker::isConvWeightGrad(op) ||
      linalgOp.getNumDpsInits() != 1)
    return false;
  if (!getElementTypeOrSelf(linalgOp.getDpsInits()[0].getType()).isF32())
    return false;
  auto strides = op->getAttrOfType<DenseI64ArrayAttr>(marker::kConvStridesAttr);
  return !strides || strides.size() <= 3;
}

} // namespace mlir::amp::cpu

#endif // AMP_LIB_CONVERSION_LINALGTOCPU_RUNTIMECONV_H
