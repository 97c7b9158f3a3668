//===- PassOptionBindersGen.cpp - OptionsBinder calls from Pass records ---===//
//
// -gen-pass-option-binders: for every pass record with options (MLIR's
// PassBase.td), emits
//
//   inline void bindOptions(<Pass>Options &options, OptionsBinder &binder)
//
// which hands each field of the struct that -gen-pass-decls generates to
// an OptionsBinder (include/amp/Support/OptionsBinder.h) under the option's
// argument name and description. The pass's TableGen declaration stays the
// only place its options, defaults and descriptions are written; textual
// pipelines and the tools' flags bind to the same struct through this.
//
//===----------------------------------------------------------------------===//

#include "PassOptionBindersGen.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;

namespace {
void emitString(raw_ostream &os, StringRef text) {
  os << '"';
  os.write_escaped(text);
  os << '"';
}

/// The field types OptionsBinder takes.
const StringSet<> kScalarTypes = {"bool", "unsigned", "int64_t", "double",
                                  "std::string"};
} // namespace

bool amp::tblgen::emitPassOptionBinders(raw_ostream &os,
                                        RecordKeeper &records) {
  emitSourceFileHeader("OptionsBinder calls of the passes' options", os,
                       records);
  for (Record *pass : records.getAllDerivedDefinitions("PassBase")) {
    std::vector<Record *> options = pass->getValueAsListOfDefs("options");
    if (options.empty())
      continue;
    os << "/// " << pass->getValueAsString("argument") << "'s options.\n";
    os << "inline void bindOptions(" << pass->getName()
       << "Options &options, ::mlir::amp::OptionsBinder &binder) {\n";
    for (Record *option : options) {
      StringRef type = option->getValueAsString("type");
      bool list = option->isSubClassOf("ListOption");
      if (list ? type != "std::string" : !kScalarTypes.contains(type))
        PrintFatalError(pass->getLoc(),
                        "pass '" + pass->getName() + "': option '" +
                            option->getValueAsString("argument") +
                            "' has type '" + type +
                            "', which OptionsBinder does not take");
      os << "  binder.bind({";
      emitString(os, option->getValueAsString("argument"));
      os << ", ";
      emitString(os, option->getValueAsString("description"));
      os << "}, options." << option->getValueAsString("cppName") << ");\n";
    }
    os << "}\n\n";
  }
  return false;
}
