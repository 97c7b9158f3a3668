//===- Markers.h - backend-neutral attributes on linalg ops -----*- C++ -*-===//
//
// convert-amp-to-linalg marks the linalg ops whose meaning a backend may
// want without matching their bodies: every convolution, whatever its
// element type, is a linalg.generic carrying
//
//   amp_linalg.kind = "conv"
//   amp_linalg.conv_strides = array<i64: ...>    (one per spatial dimension)
//   amp_linalg.conv_dilations = array<i64: ...>
//
// and every amp.conv_weight_grad is a linalg.generic carrying the same
// attributes with amp_linalg.kind = "conv_weight_grad" (operands: the
// padded X, dY, dW; see AmpToLinalg/Conv.cpp for the loop order).
//
// and the op that initialises its output (the bias broadcast or the zero
// fill) carries `amp_linalg.conv_init = <unique i64>`. The attributes are
// discardable: a backend that ignores them runs a correct loop nest. Each
// backend decides which marked ops it hands to a library (the CPU backend:
// lib/Conversion/LinalgToCpu). The prefix is not `amp.`: the amp dialect
// verifies the `amp.` attributes on every op.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_AMPTOLINALG_MARKERS_H
#define AMP_CONVERSION_AMPTOLINALG_MARKERS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

namespace mlir::amp::marker {

/// What a marked linalg op computes.
constexpr llvm::StringLiteral kKindAttr = "amp_linalg.kind";
/// The kind of a convolution generic.
constexpr llvm::StringLiteral kConvKind = "conv";
/// The kind of a convolution weight-gradient generic.
constexpr llvm::StringLiteral kConvWeightGradKind = "conv_weight_grad";
/// A convolution's strides and dilations, one per spatial dimension.
constexpr llvm::StringLiteral kConvStridesAttr = "amp_linalg.conv_strides";
constexpr llvm::StringLiteral kConvDilationsAttr = "amp_linalg.conv_dilations";
/// Marks the op that initialises a convolution's output (bias broadcast or
/// zero fill); a distinct value per convolution, so that CSE keeps them
/// apart.
constexpr llvm::StringLiteral kConvInitAttr = "amp_linalg.conv_init";

/// Marks the fill of a padded tensor (tensor.empty + linalg.fill + the
/// source inserted); a distinct value per padding, so that CSE does not
/// merge the fills of equal shapes into one tensor that bufferization must
/// then copy for every padding (and so that a backend can fold each
/// padding into the library call that reads it).
constexpr llvm::StringLiteral kPadFillAttr = "amp_linalg.pad_fill";

/// Whether `op` is marked as a convolution.
inline bool isConv(Operation *op) {
  auto kind = op->getAttrOfType<StringAttr>(kKindAttr);
  return kind && kind.getValue() == kConvKind;
}

/// Whether `op` is marked as a convolution weight gradient.
inline bool isConvWeightGrad(Operation *op) {
  auto kind = op->getAttrOfType<StringAttr>(kKindAttr);
  return kind && kind.getValue() == kConvWeightGradKind;
}

} // namespace mlir::amp::marker

#endif // AMP_CONVERSION_AMPTOLINALG_MARKERS_H
