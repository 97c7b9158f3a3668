//===- amp-tblgen.cpp - amp's TableGen backends ---------------------------===//
//
// Build-time generator: `amp-tblgen -gen-gradient-rules Rules.td` writes the
// C++ of declarative gradient rules (GradientRulesGen.cpp);
// `-gen-pass-option-binders Passes.td` the OptionsBinder calls of the
// passes' options (PassOptionBindersGen.cpp).
//
//===----------------------------------------------------------------------===//

#include "GradientRulesGen.h"
#include "PassOptionBindersGen.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"

using namespace llvm;

namespace {
enum class Action { GenGradientRules, GenPassOptionBinders };

cl::opt<Action>
    action(cl::desc("Action to perform:"),
           cl::values(clEnumValN(Action::GenGradientRules, "gen-gradient-rules",
                                 "C++ of the GradientRule records"),
               clEnumValN(Action::GenPassOptionBinders,
                          "gen-pass-option-binders",
                          "OptionsBinder calls of the passes' options")));

bool emit(raw_ostream &os, RecordKeeper &records) {
  switch (action) {
  case Action::GenGradientRules:
    return amp::tblgen::emitGradientRules(os, records);
  case Action::GenPassOptionBinders:
    return amp::tblgen::emitPassOptionBinders(os, records);
  }
  return true;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv);
  return TableGenMain(argv[0], &emit);
}
