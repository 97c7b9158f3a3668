//===- CheckNumerics.h - per-op numerics against fp32 -----------*- C++ -*-===//
//
// Runs a low-precision program beside its fp32 reference and compares every
// op's output: the ops of the entry block are numbered (amp.probe) before
// autocast, both modules return every floating-point op result after their
// own outputs, and the results are matched by number.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_EXECUTION_CHECKNUMERICS_H
#define AMP_EXECUTION_CHECKNUMERICS_H

#include "amp/Execution/CpuProgram.h"
#include "amp/Runtime/HostTensor.h"
#include "amp/Support/OptionsBinder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::amp::execution {

using amp_runtime::Tensor;

/// An op result that an instrumented program returns after the model's own
/// outputs.
struct Probe {
  int64_t id;
  unsigned resultNumber;
  std::string node, opType, reason;
};

/// Numbers the ops of the entry block (`amp.probe`), so that the same op
/// can be found after autocast, which keeps ops and their attributes.
void numberProbes(func::FuncOp entry);

/// Returns every floating-point result of a numbered op from the entry
/// function, after its own results (named `probe_<number>_<result>`).
SmallVector<Probe> exposeProbes(func::FuncOp entry);

/// What one op's low-precision output did against the fp32 reference.
struct ProbeStats {
  const Probe *probe = nullptr;
  std::string precision;
  int64_t elements = 0;
  /// Inf or NaN in low precision where fp32 is finite.
  int64_t nonFinite = 0;
  /// fp32 nonzero and finite; of those, zero or subnormal in low precision.
  int64_t nonzero = 0, underflow = 0;
  double maxAbsError = 0, maxAbsReference = 0;

  double underflowFraction() const {
    return nonzero ? static_cast<double>(underflow) / nonzero : 0.0;
  }
  /// Largest error relative to the largest reference magnitude (finite
  /// elements only).
  double relativeError() const {
    return maxAbsReference > 0 ? maxAbsError / maxAbsReference : maxAbsError;
  }
};

ProbeStats compareProbe(const Probe &probe, const Tensor &low,
                        const Tensor &reference);

/// What the report shows (amp-run's --check-numerics-* flags).
struct NumericsReportOptions {
  /// Ops losing more than this fraction of their nonzero values to zero or
  /// subnormals are listed.
  double underflowThreshold = 0.01;
  /// How many of the worst-error ops (and of the underflowing ones) to
  /// print.
  unsigned top = 10;
  void bind(OptionsBinder &binder);
};

/// Prints the table (the first non-finite op, the underflowing ops, the
/// worst errors) to stdout and writes all of it as JSON to `jsonPath` if
/// given.
LogicalResult reportNumerics(ArrayRef<ProbeStats> stats, StringRef lowName,
                             StringRef jsonPath,
                             const NumericsReportOptions &options);

/// The JSON report: type, threshold, the first non-finite op, the
/// underflowing ops and every op's record.
void writeNumericsJson(ArrayRef<ProbeStats> stats, StringRef lowName,
                       const NumericsReportOptions &options,
                       llvm::raw_ostream &os);

/// Runs the fp32 `reference` (which returns every probe after its outputs,
/// see exposeProbes) on `inputs` and compares each probe of the
/// low-precision program (`probeResults`, in `probes` order) with the
/// reference's result of the same op.
llvm::Expected<SmallVector<ProbeStats>>
compareWithReference(ArrayRef<Probe> probes, const CpuProgram &reference,
                     const std::vector<Tensor> &inputs,
                     ArrayRef<Tensor> probeResults);

} // namespace mlir::amp::execution

#endif // AMP_EXECUTION_CHECKNUMERICS_H
