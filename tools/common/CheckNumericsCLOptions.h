//===- CheckNumericsCLOptions.h - --check-numerics-* flags ------*- C++ -*-===//
//
// amp-run's --check-numerics-underflow and --check-numerics-top:
// NumericsReportOptions::bind as flags. (--check-numerics itself takes an
// optional file name, so amp-run declares it.)
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TOOLS_COMMON_CHECKNUMERICSCLOPTIONS_H
#define AMP_TOOLS_COMMON_CHECKNUMERICSCLOPTIONS_H

#include "amp/Execution/CheckNumerics.h"

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace mlir::amp::execution {

/// Registers the flags in `category` (before the command line is parsed).
void registerCheckNumericsCLOptions(llvm::cl::OptionCategory &category);
NumericsReportOptions getCheckNumericsCLOptions();

} // namespace mlir::amp::execution

#endif // AMP_TOOLS_COMMON_CHECKNUMERICSCLOPTIONS_H
