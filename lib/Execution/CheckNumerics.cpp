//===- CheckNumerics.cpp - per-op numerics against fp32 -------------------===//

#include "amp/Execution/CheckNumerics.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::amp::execution;
using amp_runtime::ElementType;

namespace mlir::amp::execution {

/// Numbers the ops of the entry block (`amp.probe`), so that the same op
/// can be found after autocast, which keeps ops and their attributes.
void numberProbes(func::FuncOp entry) {
  MLIRContext *context = entry.getContext();
  int64_t id = 0;
  for (Operation &op : entry.getBody().front().without_terminator())
    if (isa<amp::PrecisionOpInterface>(op) &&
        !isa<amp::ConstantOp, amp::NoneOp>(op))
      op.setAttr(amp::kProbeAttrName,
                 IntegerAttr::get(IntegerType::get(context, 64), id++));
}

/// Returns every floating-point result of a numbered op from the entry
/// function, after its own results.
SmallVector<Probe> exposeProbes(func::FuncOp entry) {
  Block &body = entry.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> operands(returnOp.getOperands());
  SmallVector<Probe> probes;
  for (Operation &op : body.without_terminator()) {
    auto id = op.getAttrOfType<IntegerAttr>(amp::kProbeAttrName);
    if (!id)
      continue;
    for (OpResult result : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      Probe probe;
      probe.id = id.getInt();
      probe.resultNumber = result.getResultNumber();
      probe.node = amp::getNodeName(op.getLoc()).str();
      probe.opType = cast<amp::PrecisionOpInterface>(op).getOnnxOpType().str();
      if (auto reason = op.getAttrOfType<StringAttr>(amp::kReasonAttrName))
        probe.reason = reason.str();
      std::string name = "probe_" + std::to_string(probe.id) + "_" +
                         std::to_string(probe.resultNumber);
      entry.insertResult(
          entry.getNumResults(), type,
          DictionaryAttr::get(
              entry.getContext(),
              {NamedAttribute(StringAttr::get(entry.getContext(), "amp.name"),
                              StringAttr::get(entry.getContext(), name))}));
      operands.push_back(result);
      probes.push_back(std::move(probe));
    }
  }
  returnOp->setOperands(operands);
  return probes;
}

static double smallestNormal(ElementType type) {
  if (type == ElementType::F16)
    return 6.103515625e-05;
  if (type == ElementType::F64)
    return 2.2250738585072014e-308;
  return 1.1754943508222875e-38; // f32 and bf16
}

ProbeStats compareProbe(const Probe &probe, const Tensor &low,
                        const Tensor &reference) {
  ProbeStats stats;
  stats.probe = &probe;
  stats.precision = amp_runtime::getElementTypeName(low.elementType);
  if (low.shape != reference.shape)
    return stats;
  stats.elements = low.getNumElements();
  double tiny = smallestNormal(low.elementType);
  for (int64_t i = 0; i < stats.elements; ++i) {
    double a = low.getAsDouble(i), b = reference.getAsDouble(i);
    if (!std::isfinite(b))
      continue;
    if (!std::isfinite(a)) {
      ++stats.nonFinite;
      continue;
    }
    if (b != 0) {
      ++stats.nonzero;
      if (std::fabs(a) < tiny)
        ++stats.underflow;
    }
    stats.maxAbsError = std::max(stats.maxAbsError, std::fabs(a - b));
    stats.maxAbsReference = std::max(stats.maxAbsReference, std::fabs(b));
  }
  return stats;
}

void NumericsReportOptions::bind(OptionsBinder &binder) {
  binder.bind({"underflow", "--check-numerics lists ops that lose more than "
                            "this fraction of their nonzero values to zero "
                            "or subnormals"},
              underflowThreshold);
  binder.bind({"top", "--check-numerics prints this many ops with the worst "
                      "error (and this many of the underflowing ones, in "
                      "program order)"},
              top);
}

/// The ops whose underflow fraction is above the threshold, in order.
static SmallVector<const ProbeStats *>
underflowingOps(ArrayRef<ProbeStats> stats, double threshold) {
  SmallVector<const ProbeStats *> underflows;
  for (const ProbeStats &s : stats)
    if (s.underflowFraction() > threshold)
      underflows.push_back(&s);
  return underflows;
}

LogicalResult reportNumerics(ArrayRef<ProbeStats> stats, StringRef lowName,
                             StringRef jsonPath,
                             const NumericsReportOptions &options) {
  double underflowThreshold = options.underflowThreshold;
  unsigned numericsTop = options.top;
  // The table stays short: long reasons are cut (the JSON has them whole).
  auto describe = [](const ProbeStats &s) {
    std::string text = "#" + std::to_string(s.probe->id) + " '" +
                       s.probe->node + "' (" + s.probe->opType + ", " +
                       s.precision;
    if (!s.probe->reason.empty()) {
      StringRef reason = s.probe->reason;
      constexpr size_t kMaxReason = 60;
      text += ": " + reason.take_front(kMaxReason).str();
      if (reason.size() > kMaxReason)
        text += "...";
    }
    return text + ")";
  };
  llvm::raw_ostream &os = llvm::outs();
  os << "check-numerics: " << lowName << " program against the fp32 "
     << "reference, " << stats.size() << " op outputs compared\n";
  const ProbeStats *firstNonFinite = nullptr;
  for (const ProbeStats &s : stats)
    if (s.nonFinite > 0) {
      firstNonFinite = &s;
      break;
    }
  if (firstNonFinite)
    os << "first non-finite: " << describe(*firstNonFinite) << ": "
       << firstNonFinite->nonFinite << " of " << firstNonFinite->elements
       << " values are Inf or NaN where fp32 is finite\n"
       << "  to keep it in fp32: --amp-node-rule='"
       << llvm::Regex::escape(firstNonFinite->probe->node)
       << "=deny' (amp-opt and amp-run)\n";
  else
    os << "first non-finite: none\n";
  SmallVector<const ProbeStats *> underflows =
      underflowingOps(stats, underflowThreshold);
  os << "underflow (more than " << llvm::format("%g", underflowThreshold * 100)
     << "% of nonzero values flushed to zero or subnormal): "
     << (underflows.empty() ? "none"
                            : std::to_string(underflows.size()) + " op outputs")
     << "\n";
  for (const ProbeStats *s : ArrayRef(underflows).take_front(numericsTop))
    os << llvm::format("  %6.2f%%  ", 100 * s->underflowFraction())
       << describe(*s) << "\n";
  if (underflows.size() > numericsTop)
    os << "  ... and " << underflows.size() - numericsTop
       << " more in program order (--check-numerics=FILE.json lists all)\n";
  SmallVector<const ProbeStats *> worst;
  for (const ProbeStats &s : stats)
    worst.push_back(&s);
  llvm::stable_sort(worst, [](const ProbeStats *a, const ProbeStats *b) {
    return a->relativeError() > b->relativeError();
  });
  if (worst.size() > numericsTop)
    worst.resize(numericsTop);
  os << "worst relative error (max |error| / max |fp32|, finite values):\n";
  for (const ProbeStats *s : worst)
    os << llvm::format("  %9.3g  ", s->relativeError()) << describe(*s) << "\n";
  if (jsonPath.empty())
    return success();
  std::string errorMessage;
  auto output = openOutputFile(jsonPath, &errorMessage);
  if (!output) {
    llvm::errs() << "error: " << errorMessage << "\n";
    return failure();
  }
  writeNumericsJson(stats, lowName, options, output->os());
  output->keep();
  return success();
}

void writeNumericsJson(ArrayRef<ProbeStats> stats, StringRef lowName,
                       const NumericsReportOptions &options,
                       llvm::raw_ostream &os) {
  const ProbeStats *firstNonFinite = nullptr;
  for (const ProbeStats &s : stats)
    if (s.nonFinite > 0) {
      firstNonFinite = &s;
      break;
    }
  SmallVector<const ProbeStats *> underflows =
      underflowingOps(stats, options.underflowThreshold);
  llvm::json::OStream json(os, /*IndentSize=*/1);
  auto record = [&](const ProbeStats &s) {
    json.object([&] {
      json.attribute("index", s.probe->id);
      json.attribute("result", static_cast<int64_t>(s.probe->resultNumber));
      json.attribute("node", s.probe->node);
      json.attribute("op", s.probe->opType);
      json.attribute("precision", s.precision);
      json.attribute("reason", s.probe->reason);
      json.attribute("elements", s.elements);
      json.attribute("non_finite", s.nonFinite);
      json.attribute("nonzero", s.nonzero);
      json.attribute("underflow", s.underflow);
      json.attribute("underflow_fraction", s.underflowFraction());
      json.attribute("max_abs_error", s.maxAbsError);
      json.attribute("max_abs_reference", s.maxAbsReference);
      json.attribute("relative_error", s.relativeError());
    });
  };
  json.object([&] {
    json.attribute("type", lowName);
    json.attribute("underflow_threshold", options.underflowThreshold);
    json.attributeBegin("first_non_finite");
    if (firstNonFinite)
      record(*firstNonFinite);
    else
      json.value(nullptr);
    json.attributeEnd();
    json.attributeArray("underflow", [&] {
      for (const ProbeStats *s : underflows)
        record(*s);
    });
    json.attributeArray("ops", [&] {
      for (const ProbeStats &s : stats)
        record(s);
    });
  });
  os << "\n";
}

llvm::Expected<SmallVector<ProbeStats>>
compareWithReference(ArrayRef<Probe> probes, const CpuProgram &reference,
                     const std::vector<Tensor> &inputs,
                     ArrayRef<Tensor> probeResults) {
  std::vector<Tensor> referenceResults;
  if (llvm::Error err = reference.run(inputs, referenceResults))
    return std::move(err);
  // The reference returns every op's results, the low-precision program
  // those that survived autocast.
  std::map<std::pair<int64_t, unsigned>, size_t> referenceIndex;
  for (auto [i, output] : llvm::enumerate(reference.getOutputs())) {
    StringRef name = output.name;
    int64_t id;
    unsigned result;
    if (name.consume_front("probe_")) {
      auto [idText, resultText] = name.split('_');
      if (!idText.getAsInteger(10, id) && !resultText.getAsInteger(10, result))
        referenceIndex[{id, result}] = i;
    }
  }
  SmallVector<ProbeStats> stats;
  for (auto [i, probe] : llvm::enumerate(probes)) {
    auto it = referenceIndex.find({probe.id, probe.resultNumber});
    if (it != referenceIndex.end())
      stats.push_back(
          compareProbe(probe, probeResults[i], referenceResults[it->second]));
  }
  return stats;
}

} // namespace mlir::amp::execution
