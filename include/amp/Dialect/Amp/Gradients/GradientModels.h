//===- GradientModels.h - amp ops' gradient rules ---------------*- C++ -*-===//
//
// Attaches GradientOpInterface to the amp ops that have a reverse-mode rule.
// The rules live in lib/Dialect/Amp/Gradients, one file per op family.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_GRADIENTS_GRADIENTMODELS_H
#define AMP_DIALECT_AMP_GRADIENTS_GRADIENTMODELS_H

namespace mlir {
class DialectRegistry;
namespace amp {

/// Registers the gradient rules of amp's ops (as external interface models,
/// attached when the amp dialect loads).
void registerAmpGradientModels(DialectRegistry &registry);

} // namespace amp
} // namespace mlir

#endif // AMP_DIALECT_AMP_GRADIENTS_GRADIENTMODELS_H
