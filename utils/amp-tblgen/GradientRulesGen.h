//===- GradientRulesGen.h - the -gen-gradient-rules backend -----*- C++ -*-===//

#ifndef AMP_UTILS_AMP_TBLGEN_GRADIENTRULESGEN_H
#define AMP_UTILS_AMP_TBLGEN_GRADIENTRULESGEN_H

#include "llvm/Support/raw_ostream.h"

namespace llvm {
class RecordKeeper;
} // namespace llvm

namespace amp::tblgen {
/// Writes the C++ of every GradientRule record; returns true on error.
bool emitGradientRules(llvm::raw_ostream &os, llvm::RecordKeeper &records);
} // namespace amp::tblgen

#endif // AMP_UTILS_AMP_TBLGEN_GRADIENTRULESGEN_H
