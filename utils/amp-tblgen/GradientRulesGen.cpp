//===- GradientRulesGen.cpp - C++ from GradientRule records ---------------===//
//
// -gen-gradient-rules: for every `GradientRule` record (see
// include/amp/Dialect/Amp/Gradients/GradientRules.td) emits
//
//   bool isDifferentiable(OpT op, unsigned index, Overload);   // if needed
//   void gradient(OpT op, GradientBuilder &gb, In rg, Grads og);
//
// with one `Value` statement per DAG node (so the built ops come in a fixed
// order), and `registerGeneratedGradients(MLIRContext *)`, which attaches
// the rules of the file. Malformed rules are errors at their record.
//
//===----------------------------------------------------------------------===//

#include "GradientRulesGen.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <string>
#include <vector>

using namespace llvm;

namespace {

/// Emits the body of one rule.
class RuleEmitter {
public:
  RuleEmitter(const Record &rule, raw_ostream &os) : rule(rule), os(os) {}

  /// The C++ value of DAG `dag` (its statements are written first).
  std::string emitDag(const DagInit *dag, StringRef name);

private:
  std::string emitLeaf(const Init *arg, StringRef name);
  std::string freshName() { return "v" + std::to_string(next++); }

  const Record &rule;
  raw_ostream &os;
  StringMap<bool> named;
  unsigned next = 0;
};

/// `op.getName()` for ODS name `name` (the accessor capitalises it).
std::string accessor(StringRef name) {
  std::string result = "op.get";
  result += toUpper(name.front());
  result += name.drop_front().str();
  return result + "()";
}

std::string RuleEmitter::emitLeaf(const Init *arg, StringRef name) {
  if (!isa<UnsetInit>(arg))
    PrintFatalError(&rule, "a leaf must be a `$name`, not '" +
                               arg->getAsString() + "'");
  if (name.empty())
    PrintFatalError(&rule, "a leaf without a `$name`");
  if (named.count(name))
    return name.str();
  if (name == "grad")
    return "rg[0]";
  return accessor(name);
}

std::string RuleEmitter::emitDag(const DagInit *dag, StringRef name) {
  const auto *opDef = dyn_cast<DefInit>(dag->getOperator());
  if (!opDef)
    PrintFatalError(&rule, "a DAG operator must be a record");
  const Record *op = opDef->getDef();
  SmallVector<std::string> args;
  for (unsigned i = 0; i < dag->getNumArgs(); ++i) {
    const Init *arg = dag->getArg(i);
    StringRef argName = dag->getArgNameStr(i);
    if (const auto *sub = dyn_cast<DagInit>(arg))
      args.push_back(emitDag(sub, argName));
    else
      args.push_back(emitLeaf(arg, argName));
  }
  auto expectArgs = [&](unsigned n) {
    if (args.size() != n)
      PrintFatalError(&rule, formatv("'{0}' takes {1} argument(s), not {2}",
                                     op->getName(), n, args.size())
                                 .str());
  };
  std::string expr;
  if (op->isSubClassOf("GradientHelper")) {
    StringRef helper = op->getValueAsString("helper");
    if (helper.empty()) { // Id: the argument itself
      expectArgs(1);
      expr = args[0];
    } else {
      expr = formatv("gb.{0}({1})", helper, join(args, ", ")).str();
    }
  } else if (op->isSubClassOf("GradientOp")) {
    expr = formatv("gb.create<{0}>({{{1}})", op->getValueAsString("opClass"),
                   join(args, ", "))
               .str();
  } else if (op->isSubClassOf("Scalar")) {
    expectArgs(1);
    expr =
        formatv("gb.scalar({0}, {1})", args[0], op->getValueAsString("value"))
            .str();
  } else if (op->isSubClassOf("Scale")) {
    expectArgs(1);
    expr = formatv("gb.mulScalar({0}, {1})", args[0],
                   op->getValueAsString("factor"))
               .str();
  } else {
    PrintFatalError(&rule, "unknown DAG operator '" + op->getName() + "'");
  }
  std::string var = name.empty() ? freshName() : name.str();
  if (!name.empty()) {
    if (named.count(name))
      PrintFatalError(&rule, "`$" + name + "` is named twice");
    named[name] = true;
  }
  os << "  Value " << var << " = " << expr << ";\n";
  return var;
}

void emitRule(const Record &rule, raw_ostream &os) {
  StringRef opClass = rule.getValueAsString("op");
  const ListInit *grads = rule.getValueAsListInit("gradients");
  bool sumToShape = rule.getValueAsBit("sumToOperandShape");
  SmallVector<unsigned> differentiable;
  for (unsigned i = 0; i < grads->size(); ++i) {
    const auto *dag = dyn_cast<DagInit>(grads->getElement(i));
    if (!dag)
      PrintFatalError(&rule, "gradients must be DAGs");
    const auto *opDef = dyn_cast<DefInit>(dag->getOperator());
    if (!opDef || opDef->getDef()->getName() != "NoGradient")
      differentiable.push_back(i);
  }
  os << "// " << opClass << "\n";
  if (differentiable.size() != grads->size()) {
    os << formatv("bool isDifferentiable({0} op, unsigned index, Overload) {{\n"
                  "  return (",
                  opClass);
    ListSeparator or_(" || ");
    for (unsigned i : differentiable)
      os << or_ << "index == " << i;
    if (differentiable.empty())
      os << "false";
    os << formatv(") && isDifferentiable<{0}>(op, index, Overload{{});\n}\n",
                  opClass);
  }
  os << formatv("void gradient({0} op, GradientBuilder &gb, In rg, "
                "Grads og) {{\n",
                opClass);
  os << "  (void)op;\n";
  RuleEmitter emitter(rule, os);
  for (unsigned i : differentiable) {
    std::string value =
        emitter.emitDag(cast<DagInit>(grads->getElement(i)), "");
    if (sumToShape)
      os << formatv("  og[{0}] = gb.sumToShape({1}, op->getOperand({0}));\n", i,
                    value);
    else
      os << formatv("  og[{0}] = {1};\n", i, value);
  }
  os << "}\n\n";
}

} // namespace

bool amp::tblgen::emitGradientRules(raw_ostream &os, RecordKeeper &records) {
  emitSourceFileHeader("Gradient rules (GradientOpInterface)", os, records);
  std::vector<Record *> rules =
      records.getAllDerivedDefinitions("GradientRule");
  os << "#ifdef GEN_GRADIENT_RULES\n#undef GEN_GRADIENT_RULES\n\n";
  for (const Record *rule : rules)
    emitRule(*rule, os);
  os << "/// Attaches the rules above.\n"
        "[[maybe_unused]] static void "
        "registerGeneratedGradients(MLIRContext *context) {\n";
  if (!rules.empty()) {
    os << "  attachGradientModels<";
    ListSeparator sep(",\n                       ");
    for (const Record *rule : rules)
      os << sep << rule->getValueAsString("op");
    os << ">(context);\n";
  }
  os << "}\n\n#endif // GEN_GRADIENT_RULES\n";
  return false;
}
