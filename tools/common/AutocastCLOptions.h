//===- AutocastCLOptions.h - the tools' --amp-* autocast flags --*- C++ -*-===//
//
// One set of command-line flags for amp-autocast, shared by the tools
// (amp-opt, amp-run): --amp-type, --amp-opt-level, --amp-policy,
// --amp-allow/deny/infer/clear/unlist, --amp-node-rule,
// --amp-keep-io-types, --amp-fp32-accumulate, --amp-clamp-constants,
// --amp-report, --amp-dot: amp-autocast's options (Passes.td) bound as flags
// (BoundCLOptions), so their names, defaults and descriptions are written
// once. Registered on demand, like MLIR's pass-manager flags.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_AUTOCASTCLOPTIONS_H
#define AMP_PIPELINES_AUTOCASTCLOPTIONS_H

#include "amp/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace mlir::amp {

/// Registers the flags (before the command line is parsed). `defaultType`
/// is --amp-type's default: "f16" for amp-opt, "" (no autocast) for
/// amp-run.
void registerAutocastCLOptions(llvm::StringRef defaultType);

/// The category the flags are listed under in --help.
llvm::cl::OptionCategory &getAutocastCLCategory();

/// amp-autocast's options as the command line gives them (the defaults if
/// the flags were not registered). The list options refer to the flags'
/// storage, which lives until exit.
AmpAutocastOptions getAutocastCLOptions();

/// Whether the front end folds constants (false with
/// --amp-no-constant-folding).
bool getConstantFoldingCLOption();

} // namespace mlir::amp

#endif // AMP_PIPELINES_AUTOCASTCLOPTIONS_H
