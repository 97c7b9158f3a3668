//===- CheckNumericsCLOptions.cpp - --check-numerics-* flags --------------===//

#include "common/CheckNumericsCLOptions.h"

#include "amp/Support/BoundCLOptions.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::execution;

static std::unique_ptr<BoundCLOptions<NumericsReportOptions>> flags;

void mlir::amp::execution::registerCheckNumericsCLOptions(
    llvm::cl::OptionCategory &category) {
  if (!flags)
    flags = std::make_unique<BoundCLOptions<NumericsReportOptions>>(
        category, NumericsReportOptions(),
        [](NumericsReportOptions &o, OptionsBinder &b) { o.bind(b); },
        /*spellings=*/llvm::StringMap<FlagSpelling>(),
        /*prefix=*/"check-numerics-");
}

NumericsReportOptions mlir::amp::execution::getCheckNumericsCLOptions() {
  return flags ? flags->get() : NumericsReportOptions();
}
