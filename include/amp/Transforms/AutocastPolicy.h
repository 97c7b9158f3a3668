//===- AutocastPolicy.h - op classes for amp-autocast -----------*- C++ -*-===//
//
// The policy of the autocast pass is data: a class per ONNX operator type
// (allow, deny, infer, clear, promote), the operators that are only safe in
// low precision with fp32 accumulation, and per-node rules. It starts from
// the built-in default (or empty), then takes a policy file or a named
// preset and command-line overrides. Every op name is checked against the
// registered amp ops.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_AUTOCASTPOLICY_H
#define AMP_TRANSFORMS_AUTOCASTPOLICY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Regex.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::amp {

/// The four classes of TensorFlow's auto-mixed-precision pass; `Promote`,
/// PyTorch autocast's rule for the ops on none of its lists (the widest
/// float input decides, as in type promotion); and `Unlisted` for ops in no
/// class: they keep fp32 and do not spread it.
enum class PrecisionClass { Allow, Deny, Infer, Clear, Promote, Unlisted };

llvm::StringRef stringifyPrecisionClass(PrecisionClass cls);
std::optional<PrecisionClass> parsePrecisionClass(llvm::StringRef name);

class AutocastPolicy {
public:
  /// The built-in default lists (see docs/AutocastPolicy.md).
  static AutocastPolicy getDefault();
  /// No op in any class.
  static AutocastPolicy getEmpty();

  /// The names of the built-in presets (`torch-cuda-fp16`, ...): policy
  /// files compiled into amp (lib/Transforms/Policies/<name>.yaml).
  static llvm::ArrayRef<llvm::StringRef> getPresetNames();
  /// The text of preset `name`, or an empty StringRef if there is none.
  static llvm::StringRef getPresetText(llvm::StringRef name);

  /// Opt level 2 moves every infer and deny op to allow; level 3 also drops
  /// the fp32-accumulation requirement. Levels 0 and 1 change nothing.
  void applyOptLevel(unsigned level);

  /// Puts `onnxOp` in `cls` (removing it from its previous class).
  /// `source` says where the change comes from, for reports.
  llvm::Error setClass(llvm::StringRef onnxOp, PrecisionClass cls,
                       llvm::StringRef source);
  /// Adds a per-node rule; `pattern` is a node name or, when `isRegex`, a
  /// regex that must match the whole node name.
  llvm::Error addNodeRule(llvm::StringRef pattern, bool isRegex,
                          PrecisionClass cls, llvm::StringRef source);
  /// Parses `pattern=class` (the pattern is matched as a regex).
  llvm::Error addNodeRuleSpec(llvm::StringRef spec, llvm::StringRef source);
  /// Merges a policy file (YAML or JSON; schema in docs/AutocastPolicy.md).
  llvm::Error loadFile(llvm::StringRef path);
  /// Merges preset `nameOrPath` when it names one, else the policy file at
  /// that path.
  llvm::Error loadPresetOrFile(llvm::StringRef nameOrPath);
  /// The same for the text of a policy file; `name` names it in messages.
  llvm::Error loadText(llvm::StringRef text, llvm::StringRef name);

  struct Decision {
    PrecisionClass cls;
    /// Why: "allow list (default: ...)", "node rule '...' (--amp-...)".
    std::string reason;
  };
  Decision classify(llvm::StringRef onnxOp, llvm::StringRef nodeName) const;

  /// Whether `onnxOp` may only run in low precision with fp32 accumulation.
  bool needsF32Accumulation(llvm::StringRef onnxOp) const;

  /// Whether `onnxOp` bounds a quantized region of a QDQ model
  /// (DequantizeLinear into it, QuantizeLinear out of it): the ops between
  /// stand for integer kernels and keep their precision.
  static bool isQuantizationBoundary(llvm::StringRef onnxOp, bool isOutput);

  /// Prints the policy as a policy file (YAML, with `base: empty`), each op
  /// followed by the reason for its class.
  void print(llvm::raw_ostream &os) const;

private:
  friend class PolicyFileReader;
  struct OpEntry {
    PrecisionClass cls;
    std::string source;
    std::string why;
  };
  struct NodeRule {
    std::string pattern;
    std::shared_ptr<llvm::Regex> regex; // null: exact name
    PrecisionClass cls;
    std::string source;
  };
  llvm::StringMap<OpEntry> ops;
  llvm::StringMap<std::string> needsAccumulation; // op -> why
  std::vector<NodeRule> nodeRules;
  bool ignoreAccumulationRequirement = false;
};

} // namespace mlir::amp

#endif // AMP_TRANSFORMS_AUTOCASTPOLICY_H
