//===- TrainCLOptions.h - the tools' training flags -------------*- C++ -*-===//
//
// One set of command-line flags for building train steps (--loss,
// --optimizer, --lr, --loss-scale, ...), shared by amp-opt and amp-run.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRAINING_TRAINCLOPTIONS_H
#define AMP_TRAINING_TRAINCLOPTIONS_H

#include "amp/Training/TrainStep.h"
#include "llvm/Support/Error.h"

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace mlir::amp::training {

/// Registers the flags (call before parsing the command line).
void registerTrainCLOptions();
llvm::cl::OptionCategory &getTrainCLCategory();

/// The train-step options the flags give (the front end's options are left
/// at their defaults; the caller fills them in). Fails on a bad value.
llvm::Expected<TrainStepOptions> getTrainCLOptions();

} // namespace mlir::amp::training

#endif // AMP_TRAINING_TRAINCLOPTIONS_H
