//===- Passes.h - amp training passes ---------------------------*- C++ -*-===//

#ifndef AMP_TRAINING_PASSES_H
#define AMP_TRAINING_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::amp::training {

struct TrainStepOptions;
enum class LossScaleMode;

#define GEN_PASS_DECL
#include "amp/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Training/Passes.h.inc"

/// The amp-loss-scale options that `options` and `mode` describe.
AmpLossScaleOptions getLossScalePassOptions(const TrainStepOptions &options,
                                            LossScaleMode mode);

} // namespace mlir::amp::training

#endif // AMP_TRAINING_PASSES_H
