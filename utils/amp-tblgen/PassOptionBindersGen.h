//===- PassOptionBindersGen.h - -gen-pass-option-binders --------*- C++ -*-===//

#ifndef AMP_UTILS_AMP_TBLGEN_PASSOPTIONBINDERSGEN_H
#define AMP_UTILS_AMP_TBLGEN_PASSOPTIONBINDERSGEN_H

#include "llvm/Support/raw_ostream.h"

namespace llvm {
class RecordKeeper;
} // namespace llvm

namespace amp::tblgen {
bool emitPassOptionBinders(llvm::raw_ostream &os, llvm::RecordKeeper &records);
} // namespace amp::tblgen

#endif // AMP_UTILS_AMP_TBLGEN_PASSOPTIONBINDERSGEN_H
