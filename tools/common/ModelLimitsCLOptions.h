//===- ModelLimitsCLOptions.h - the tools' --amp-max-* flags ----*- C++ -*-===//
//
// The command-line binding of ModelLimits (amp/Target/ONNX/ModelLimits.h),
// shared by amp-opt and amp-run: --amp-max-tensor-elements,
// --amp-max-tensor-bytes, --amp-max-initializer-bytes, --amp-max-nodes,
// --amp-max-subgraph-depth, --amp-max-fold-bytes. The defaults are the
// struct's own. Registered on demand, like the autocast flags.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_MODELLIMITSCLOPTIONS_H
#define AMP_PIPELINES_MODELLIMITSCLOPTIONS_H

#include "amp/Target/ONNX/ModelLimits.h"

namespace mlir::amp {

/// Registers the flags (before the command line is parsed).
void registerModelLimitsCLOptions();

/// The caps as the command line gives them (the defaults if the flags were
/// never registered).
ModelLimits getModelLimitsCLOptions();

} // namespace mlir::amp

#endif // AMP_PIPELINES_MODELLIMITSCLOPTIONS_H
