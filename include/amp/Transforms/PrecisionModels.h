//===- PrecisionModels.h - autocast on upstream dialects --------*- C++ -*-===//
//
// External models of PrecisionOpInterface for upstream ops, so that
// amp-autocast decides and rewrites programs in linalg, TOSA, tensor, arith
// and math (docs/Embedding.md, "Autocast on upstream dialects").
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_PRECISIONMODELS_H
#define AMP_TRANSFORMS_PRECISIONMODELS_H

namespace mlir {
class DialectRegistry;
namespace amp {

/// Registers the models of the linalg, TOSA, tensor, arith and math ops
/// (loaded with their dialects).
void registerUpstreamPrecisionModels(DialectRegistry &registry);

} // namespace amp
} // namespace mlir

#endif // AMP_TRANSFORMS_PRECISIONMODELS_H
