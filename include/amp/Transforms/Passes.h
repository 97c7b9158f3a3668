//===- Passes.h - amp transformation passes ---------------------*- C++ -*-===//

#ifndef AMP_TRANSFORMS_PASSES_H
#define AMP_TRANSFORMS_PASSES_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Runtime/FloatConversion.h"
#include "amp/Support/OptionsBinder.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/Error.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Transforms/Passes.h.inc"

// bindOptions(AmpAutocastOptions &, OptionsBinder &), ...: the options of
// Passes.td for textual pipelines and the tools' flags.
#include "amp/Transforms/PassOptionBinders.h.inc"

/// The low-precision type an autocast `type` spelling names: f16, fp16 or
/// float16; bf16 or bfloat16. The one parser of the spelling (the pass, the
/// option checks and the train step's loss-scale default use it).
std::optional<amp_runtime::LowFloatKind>
parseAutocastType(llvm::StringRef spelling);

/// Checks amp-autocast's options (type, opt level, policy file, op names,
/// node rules) without running the pass, so that a driver can report a bad
/// option before doing any work.
llvm::Error checkAutocastOptions(const AmpAutocastOptions &options);

/// The autocast report (the JSON of amp-autocast's `report` option) as one
/// self-contained HTML page: a summary, a graph of the node-name hierarchy
/// coloured by precision, and a table of the ops to filter and sort. No
/// network access; the JSON is embedded.
std::string renderAutocastReportHtml(llvm::StringRef reportJson);

} // namespace mlir::amp

#endif // AMP_TRANSFORMS_PASSES_H
