//===- RuntimeChecks.h - checks of values known at run time -*- C++ -*-===//
//
// Some errors depend on data: a Gather index past the end of its axis, a
// run-time Reduce axis outside the rank. convert-amp-to-linalg (with
// `runtime-checks`, the CPU backend's default) reduces such operands to
// their extremes and, when one is out of range, calls
//
//   func.func private @amp_cpu_check_failed(i64 id, i64 value, i64 bound)
//
// where `id` indexes the module's `amp_linalg.runtime_checks` array of message
// templates ("node 'g' (Gather): index {value} is out of range for an
// axis of size {bound}"). The lowered op itself clamps its indices, so a
// failed check never reads or writes outside a tensor; the run goes on
// and its caller reports the first failed check instead of the results.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_AMPTOLINALG_RUNTIMECHECKS_H
#define AMP_CONVERSION_AMPTOLINALG_RUNTIMECHECKS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::amp {

/// The module attribute holding the message templates (an array of
/// strings; a check's id is its position). Not `amp.`: the amp dialect
/// verifies its own attributes.
constexpr llvm::StringLiteral kRuntimeChecksAttrName =
    "amp_linalg.runtime_checks";
/// The runtime function a failed check calls.
constexpr llvm::StringLiteral kCheckFailedFunction = "amp_cpu_check_failed";

/// A template with `{value}` and `{bound}` replaced.
std::string formatRuntimeCheck(llvm::StringRef message, int64_t value,
                               int64_t bound);

} // namespace mlir::amp

#endif // AMP_CONVERSION_AMPTOLINALG_RUNTIMECHECKS_H
