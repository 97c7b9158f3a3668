//===- AutocastPolicy.cpp - op classes for amp-autocast ------------------===//
//
// The built-in default lists, policy files (YAML or JSON, parsed with LLVM's
// YAML parser, of which JSON is a subset) and command-line overrides.
//
//===----------------------------------------------------------------------===//

#include "amp/Transforms/AutocastPolicy.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::amp;
using llvm::StringRef;

StringRef mlir::amp::stringifyPrecisionClass(PrecisionClass cls) {
  switch (cls) {
  case PrecisionClass::Allow:
    return "allow";
  case PrecisionClass::Deny:
    return "deny";
  case PrecisionClass::Infer:
    return "infer";
  case PrecisionClass::Clear:
    return "clear";
  case PrecisionClass::Promote:
    return "promote";
  case PrecisionClass::Unlisted:
    return "unlisted";
  }
  llvm_unreachable("unknown precision class");
}

std::optional<PrecisionClass> mlir::amp::parsePrecisionClass(StringRef name) {
  return llvm::StringSwitch<std::optional<PrecisionClass>>(name)
      .Case("allow", PrecisionClass::Allow)
      .Case("deny", PrecisionClass::Deny)
      .Case("infer", PrecisionClass::Infer)
      .Case("clear", PrecisionClass::Clear)
      .Case("promote", PrecisionClass::Promote)
      .Case("unlisted", PrecisionClass::Unlisted)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// The default lists
//===----------------------------------------------------------------------===//

namespace {
struct DefaultEntry {
  PrecisionClass cls;
  const char *why;
  std::vector<const char *> ops;
};
} // namespace

static const std::vector<DefaultEntry> &getDefaultEntries() {
  using PC = PrecisionClass;
  static const std::vector<DefaultEntry> entries = {
      {PC::Allow,
       "GEMM-shaped: runs on tensor cores with fp32 accumulation; low "
       "precision in autocast, TF (allow) and TVM (ALWAYS)",
       {"MatMul", "Gemm", "Einsum", "Conv", "ConvTranspose"}},
      {PC::Allow,
       "attention and recurrent cells are GEMMs: autocast runs "
       "scaled_dot_product_attention and RNN cells in low precision, TF "
       "allows cuDNN RNNs; amp adds fp32 accumulation",
       {"Attention", "RNN", "GRU", "LSTM"}},
      {PC::Deny,
       "result range exceeds fp16 or small inputs flush to zero: fp32 in "
       "autocast (exp, log, pow, reciprocal, ...) and TF (Exp, Pow)",
       {"Exp", "Log", "Pow", "Reciprocal", "Softplus", "Sinh", "Cosh", "Tan",
        "Acos", "Asin", "Acosh", "Asinh", "Atanh"}},
      {PC::Deny,
       "sum-type reduction: the result grows with the reduced size and can "
       "overflow fp16 even when accumulated in fp32 (autocast: sum, prod, "
       "cumsum, logsumexp in fp32; TF: Sum denied)",
       {"ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceProd",
        "ReduceLogSum", "ReduceLogSumExp", "CumSum", "LpPool", "GlobalLpPool",
        "LRN"}},
      {PC::Deny,
       "loss: autocast runs every loss in fp32, TF denies the softmax "
       "cross-entropy losses",
       {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}},
      {PC::Deny, "determinants span a huge range", {"Det"}},
      {PC::Deny,
       "box coordinates: RoiAlign's ROIs share X's type, and fp16 cannot "
       "hold pixel coordinates past 2048 to the pixel (torchvision runs "
       "roi_align in fp32 under autocast); NonMaxSuppression takes fp32 "
       "only",
       {"RoiAlign", "NonMaxSuppression"}},
      {PC::Infer,
       "normalisation or softmax: safe in low precision only with fp32 "
       "accumulation, which amp gives it (autocast and TF keep these in fp32 "
       "or fp32-output; amp keeps fp16 I/O and accumulates in fp32)",
       {"Softmax", "LogSoftmax", "LayerNormalization", "BatchNormalization",
        "InstanceNormalization", "GroupNormalization", "RMSNormalization",
        "LpNormalization", "MeanVarianceNormalization"}},
      {PC::Infer,
       "mean: the result lies within the input's range, so only the "
       "accumulation needs fp32 (TF denies Mean; amp accumulates in fp32)",
       {"ReduceMean", "GlobalAveragePool"}},
      {PC::Infer,
       "elementwise arithmetic: follows its inputs (TF infer list)",
       {"Add", "Sub", "Mul", "Div", "Sum", "Mean", "Mod", "PRelu", "Clip",
        "Sqrt"}},
      {PC::Infer,
       "bounded activation: follows its inputs (TF infer list)",
       {"Sigmoid", "Tanh", "Erf", "Gelu", "Elu", "Selu", "Celu", "LeakyRelu",
        "HardSigmoid", "HardSwish", "Mish", "Swish", "Softsign",
        "ThresholdedRelu", "Shrink", "Sin", "Cos", "Atan"}},
      {PC::Infer,
       "interpolation and windowed average: follows its inputs; the "
       "sampling coordinates (Resize scales and roi, GridSample grid) are "
       "fixed-type operands and stay fp32 (onnxconverter-common blocks Resize "
       "because it casts scales; amp never does)",
       {"AveragePool", "Resize", "GridSample"}},
      {PC::Infer,
       "comparison: the result depends on the precision of both inputs, so "
       "it follows them",
       {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"}},
      {PC::Infer,
       "scatter: with a reduction it does arithmetic, so it follows its "
       "inputs",
       {"ScatterElements", "ScatterND"}},
      {PC::Clear,
       "data movement: exact in any precision (TF clear list)",
       {"Identity",
        "Reshape",
        "Flatten",
        "Squeeze",
        "Unsqueeze",
        "Transpose",
        "Concat",
        "Split",
        "Slice",
        "Gather",
        "GatherElements",
        "GatherND",
        "Expand",
        "Tile",
        "Pad",
        "DepthToSpace",
        "SpaceToDepth",
        "Compress",
        "Trilu",
        "ReverseSequence",
        "OneHot",
        "Where",
        "Dropout",
        "CastLike"}},
      {PC::Clear,
       "selects or compares values without arithmetic: exact in any "
       "precision (TF clear: MaxPool, Relu, Max, Min; onnxconverter-common "
       "blocks TopK, Min and Max, amp does not need to)",
       {"Relu", "Abs", "Neg", "Sign", "Ceil", "Floor", "Round", "Max", "Min",
        "MaxPool", "GlobalMaxPool", "MaxUnpool", "ReduceMax", "ReduceMin",
        "ArgMax", "ArgMin", "TopK", "Hardmax"}},
  };
  return entries;
}

static const std::vector<std::pair<const char *, const char *>> &
getDefaultAccumulationRequirements() {
  static const std::vector<std::pair<const char *, const char *>> ops = {
      {"Softmax", "sums exponentials over the axis"},
      {"LogSoftmax", "sums exponentials over the axis"},
      {"LayerNormalization", "mean and variance over the normalised axes"},
      {"BatchNormalization", "variance and scale computed per channel"},
      {"InstanceNormalization", "mean and variance per instance"},
      {"GroupNormalization", "mean and variance per group"},
      {"RMSNormalization", "mean of squares overflows fp16"},
      {"LpNormalization", "sum of powers overflows fp16"},
      {"MeanVarianceNormalization", "mean and variance"},
      {"ReduceMean", "sum over the reduced axes"},
      {"GlobalAveragePool", "sum over all spatial positions"},
  };
  return ops;
}

AutocastPolicy AutocastPolicy::getEmpty() {
  // The fp32-accumulation requirements are facts about the ops, not part of
  // the lists, so an empty policy keeps them.
  AutocastPolicy policy;
  for (auto [op, why] : getDefaultAccumulationRequirements())
    policy.needsAccumulation[op] = why;
  return policy;
}

namespace {
struct Preset {
  StringRef name;
  StringRef text;
};
} // namespace

// Generated from lib/Transforms/Policies/*.yaml
// (lib/Transforms/CMakeLists.txt).
static const Preset kPresets[] = {
#include "amp/Transforms/AutocastPresets.inc"
};

llvm::ArrayRef<StringRef> AutocastPolicy::getPresetNames() {
  static const std::vector<StringRef> names = [] {
    std::vector<StringRef> result;
    for (const Preset &preset : kPresets)
      result.push_back(preset.name);
    return result;
  }();
  return names;
}

StringRef AutocastPolicy::getPresetText(StringRef name) {
  for (const Preset &preset : kPresets)
    if (preset.name == name)
      return preset.text;
  return {};
}

AutocastPolicy AutocastPolicy::getDefault() {
  AutocastPolicy policy = getEmpty();
  for (const DefaultEntry &entry : getDefaultEntries())
    for (const char *op : entry.ops)
      policy.ops[op] = {entry.cls, "default", entry.why};
  return policy;
}

//===----------------------------------------------------------------------===//
// Changes
//===----------------------------------------------------------------------===//

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Checks `name` against the registered amp ops; suggests the closest name.
static llvm::Error checkOpName(StringRef name) {
  StringRef best;
  unsigned bestDistance = ~0u;
  for (const OnnxOpName &entry : getOnnxOpNames()) {
    if (entry.onnxName == name)
      return llvm::Error::success();
    unsigned distance = name.edit_distance_insensitive(entry.onnxName);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = entry.onnxName;
    }
  }
  std::string message = "unknown op '" + name.str() + "'";
  if (bestDistance <= std::max<size_t>(2, name.size() / 3))
    message += " (did you mean '" + best.str() + "'?)";
  else
    message += " (not an ONNX operator type that amp supports)";
  return makeError(message);
}

void AutocastPolicy::applyOptLevel(unsigned level) {
  if (level < 2)
    return;
  std::string source = "opt level " + std::to_string(level);
  for (auto &entry : ops) {
    PrecisionClass &cls = entry.second.cls;
    if (cls != PrecisionClass::Infer && cls != PrecisionClass::Deny)
      continue;
    cls = PrecisionClass::Allow;
    entry.second.source = source;
    entry.second.why = level == 2 ? "every listed op runs in low precision "
                                    "(fp32 accumulation where needed)"
                                  : "pure low precision";
  }
  if (level >= 3)
    ignoreAccumulationRequirement = true;
}

llvm::Error AutocastPolicy::setClass(StringRef onnxOp, PrecisionClass cls,
                                     StringRef source) {
  if (llvm::Error err = checkOpName(onnxOp))
    return err;
  if (cls == PrecisionClass::Unlisted) {
    ops.erase(onnxOp);
    return llvm::Error::success();
  }
  ops[onnxOp] = {cls, source.str(), ""};
  return llvm::Error::success();
}

llvm::Error AutocastPolicy::addNodeRule(StringRef pattern, bool isRegex,
                                        PrecisionClass cls, StringRef source) {
  if (pattern.empty())
    return makeError("empty node pattern");
  if (cls == PrecisionClass::Unlisted)
    return makeError(
        "a node rule must name allow, deny, infer, clear or promote");
  NodeRule rule{pattern.str(), nullptr, cls, source.str()};
  if (isRegex) {
    rule.regex = std::make_shared<llvm::Regex>("^(" + pattern.str() + ")$");
    std::string regexError;
    if (!rule.regex->isValid(regexError))
      return makeError("invalid regex '" + pattern + "': " + regexError);
  }
  nodeRules.push_back(std::move(rule));
  return llvm::Error::success();
}

llvm::Error AutocastPolicy::addNodeRuleSpec(StringRef spec, StringRef source) {
  auto [pattern, clsName] = spec.rsplit('=');
  if (clsName.empty() || pattern.empty() || pattern == spec)
    return makeError("node rule '" + spec +
                     "' is not of the form "
                     "pattern=allow|deny|infer|clear|promote");
  std::optional<PrecisionClass> cls = parsePrecisionClass(clsName.trim());
  if (!cls || *cls == PrecisionClass::Unlisted)
    return makeError("node rule '" + spec + "': unknown class '" + clsName +
                     "' (expected allow, deny, infer, clear or promote)");
  return addNodeRule(pattern, /*isRegex=*/true, *cls, source);
}

//===----------------------------------------------------------------------===//
// Policy files
//===----------------------------------------------------------------------===//

namespace mlir::amp {
/// Reads one policy file; errors carry the file name and line.
class PolicyFileReader {
public:
  /// `path` names the file in messages; `source` names it in the reasons
  /// of the classes it sets.
  PolicyFileReader(AutocastPolicy &policy, StringRef path,
                   std::optional<std::string> source = std::nullopt)
      : policy(policy), path(path),
        source(source ? *source : "policy file " + path.str()) {}

  llvm::Error read() {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer)
      return makeError("cannot read policy file '" + path +
                       "': " + buffer.getError().message());
    return read(std::move(*buffer));
  }

  llvm::Error read(std::unique_ptr<llvm::MemoryBuffer> buffer) {
    unsigned bufferId =
        sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
    std::string parseError;
    sourceMgr.setDiagHandler(
        [](const llvm::SMDiagnostic &diag, void *context) {
          auto *message = static_cast<std::string *>(context);
          if (message->empty())
            *message = "line " + std::to_string(diag.getLineNo()) + ": " +
                       diag.getMessage().str();
        },
        &parseError);
    llvm::yaml::Stream stream(text, sourceMgr);
    auto document = stream.begin();
    if (document == stream.end())
      return makeError("policy file '" + path + "' is empty");
    llvm::yaml::Node *root = document->getRoot();
    if (!parseError.empty())
      return fail(parseError);
    auto *mapping = llvm::dyn_cast_or_null<llvm::yaml::MappingNode>(root);
    if (!mapping) {
      if (llvm::isa_and_nonnull<llvm::yaml::NullNode>(root))
        return makeError("policy file '" + path + "' is empty");
      return failAt(root, "the top level must be a mapping");
    }
    // LLVM's YAML parser is single-pass: read each value while iterating,
    // then apply in a fixed order whatever the order in the file: base,
    // class lists, node rules.
    std::optional<std::pair<std::string, unsigned>> base;
    std::optional<std::pair<PrecisionClass, unsigned>> others;
    std::vector<std::pair<PrecisionClass, std::vector<Item>>> lists;
    std::vector<Rule> rules;
    for (llvm::yaml::KeyValueNode &entry : *mapping) {
      std::string key;
      if (llvm::Error err = scalar(entry.getKey(), key))
        return err;
      llvm::yaml::Node *value = entry.getValue();
      if (!parseError.empty())
        return fail(parseError);
      if (key == "base") {
        std::string name;
        if (llvm::Error err = scalar(value, name))
          return err;
        base = {name, lineOf(value)};
      } else if (key == "others") {
        std::string name;
        if (llvm::Error err = scalar(value, name))
          return err;
        std::optional<PrecisionClass> cls = parsePrecisionClass(name);
        if (!cls)
          return failAt(value, "unknown class '" + name +
                                   "' for 'others' (expected allow, deny, "
                                   "infer, clear, promote or unlisted)");
        others = {*cls, lineOf(value)};
      } else if (key == "nodes") {
        if (llvm::Error err = readNodeRules(value, rules))
          return err;
      } else if (auto cls = parsePrecisionClass(key);
                 (cls && *cls != PrecisionClass::Unlisted) || key == "unlist") {
        std::vector<Item> items;
        if (llvm::Error err = readOpList(value, items))
          return err;
        lists.push_back(
            {cls ? *cls : PrecisionClass::Unlisted, std::move(items)});
      } else {
        return failAt(entry.getKey(),
                      "unknown key '" + key +
                          "' (expected base, allow, deny, infer, clear, "
                          "promote, unlist, others or nodes)");
      }
      if (!parseError.empty())
        return fail(parseError);
    }
    if (!parseError.empty())
      return fail(parseError);

    if (base) {
      if (base->first == "empty") {
        // Node rules given before the file (none today) are kept.
        AutocastPolicy empty = AutocastPolicy::getEmpty();
        empty.nodeRules = std::move(policy.nodeRules);
        empty.ignoreAccumulationRequirement =
            policy.ignoreAccumulationRequirement;
        policy = std::move(empty);
      } else if (base->first != "default") {
        return failAtLine(base->second, "base must be 'default' or 'empty', "
                                        "not '" +
                                            base->first + "'");
      }
    }
    for (auto &[cls, items] : lists)
      for (const Item &item : items)
        if (llvm::Error err = policy.setClass(item.name, cls, source))
          return failAtLine(item.line, llvm::toString(std::move(err)));
    // `others`: every op the lists above left in no class.
    if (others && others->first != PrecisionClass::Unlisted)
      for (const OnnxOpName &entry : getOnnxOpNames())
        if (!policy.ops.count(entry.onnxName))
          policy.ops[entry.onnxName] = {others->first, source,
                                        "in no list of the file ('others')"};
    for (const Rule &rule : rules)
      if (llvm::Error err =
              policy.addNodeRule(rule.pattern, rule.isRegex, rule.cls, source))
        return failAtLine(rule.line, llvm::toString(std::move(err)));
    return llvm::Error::success();
  }

private:
  struct Item {
    std::string name;
    unsigned line;
  };
  struct Rule {
    std::string pattern;
    bool isRegex;
    PrecisionClass cls;
    unsigned line;
  };

  llvm::Error fail(const llvm::Twine &message) {
    return makeError("policy file '" + path + "': " + message);
  }
  unsigned lineOf(llvm::yaml::Node *node) {
    if (!node || sourceMgr.getNumBuffers() == 0)
      return 0;
    // After a syntax error the parser may give nodes a range outside the
    // text (SourceMgr would read out of bounds).
    llvm::SMLoc start = node->getSourceRange().Start;
    const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(1);
    if (!start.isValid() || start.getPointer() < buffer->getBufferStart() ||
        start.getPointer() > buffer->getBufferEnd())
      return 0;
    return sourceMgr.getLineAndColumn(start).first;
  }
  llvm::Error failAtLine(unsigned line, const llvm::Twine &message) {
    return fail("line " + llvm::Twine(line) + ": " + message);
  }
  llvm::Error failAt(llvm::yaml::Node *node, const llvm::Twine &message) {
    return failAtLine(lineOf(node), message);
  }
  llvm::Error scalar(llvm::yaml::Node *node, std::string &value) {
    auto *scalarNode = llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(node);
    if (!scalarNode)
      return failAt(node, "expected a string");
    llvm::SmallString<64> storage;
    value = scalarNode->getValue(storage).str();
    return llvm::Error::success();
  }
  llvm::Error readOpList(llvm::yaml::Node *node, std::vector<Item> &items) {
    auto *sequence = llvm::dyn_cast_or_null<llvm::yaml::SequenceNode>(node);
    if (!sequence)
      return failAt(node, "expected a list of ONNX op types");
    for (llvm::yaml::Node &item : *sequence) {
      std::string name;
      if (llvm::Error err = scalar(&item, name))
        return err;
      items.push_back({name, lineOf(&item)});
    }
    return llvm::Error::success();
  }
  llvm::Error readNodeRules(llvm::yaml::Node *node, std::vector<Rule> &rules) {
    auto *sequence = llvm::dyn_cast_or_null<llvm::yaml::SequenceNode>(node);
    if (!sequence)
      return failAt(node, "'nodes' must be a list of {name|regex, class}");
    for (llvm::yaml::Node &item : *sequence) {
      auto *ruleNode = llvm::dyn_cast<llvm::yaml::MappingNode>(&item);
      if (!ruleNode)
        return failAt(&item, "a node rule must be a mapping with 'name' or "
                             "'regex', and 'class'");
      unsigned line = lineOf(&item);
      std::string pattern, clsName;
      bool isRegex = false, hasPattern = false;
      for (llvm::yaml::KeyValueNode &entry : *ruleNode) {
        std::string key, value;
        if (llvm::Error err = scalar(entry.getKey(), key))
          return err;
        if (llvm::Error err = scalar(entry.getValue(), value))
          return err;
        if (key == "name" || key == "regex") {
          if (hasPattern)
            return failAt(entry.getKey(),
                          "a node rule takes one of 'name' and 'regex'");
          hasPattern = true;
          isRegex = key == "regex";
          pattern = value;
        } else if (key == "class") {
          clsName = value;
        } else {
          return failAt(entry.getKey(), "unknown key '" + key +
                                            "' in a node rule (expected "
                                            "name, regex or class)");
        }
      }
      if (!hasPattern || clsName.empty())
        return failAtLine(line,
                          "a node rule needs 'name' or 'regex', and 'class'");
      std::optional<PrecisionClass> cls = parsePrecisionClass(clsName);
      if (!cls || *cls == PrecisionClass::Unlisted)
        return failAtLine(line, "unknown class '" + clsName +
                                    "' (expected allow, deny, infer, clear or "
                                    "promote)");
      rules.push_back({pattern, isRegex, *cls, line});
    }
    return llvm::Error::success();
  }

  AutocastPolicy &policy;
  std::string path;
  std::string source;
  llvm::SourceMgr sourceMgr;
};
} // namespace mlir::amp

llvm::Error AutocastPolicy::loadFile(StringRef path) {
  return PolicyFileReader(*this, path).read();
}

llvm::Error AutocastPolicy::loadPresetOrFile(StringRef nameOrPath) {
  StringRef preset = getPresetText(nameOrPath);
  if (!preset.empty())
    return PolicyFileReader(*this, ("preset " + nameOrPath).str(),
                            ("preset " + nameOrPath).str())
        .read(llvm::MemoryBuffer::getMemBuffer(preset, nameOrPath,
                                               /*RequiresNullTerminator=*/
                                               false));
  if (llvm::sys::fs::exists(nameOrPath) || nameOrPath.contains('/') ||
      nameOrPath.contains('.'))
    return loadFile(nameOrPath);
  // Neither a file nor a preset: say which presets there are.
  std::string names;
  for (StringRef name : getPresetNames())
    names += (names.empty() ? "" : ", ") + name.str();
  return makeError(
      "'" + nameOrPath +
      "' is neither a policy file nor a preset (presets: " + names + ")");
}

llvm::Error AutocastPolicy::loadText(StringRef text, StringRef name) {
  return PolicyFileReader(*this, name)
      .read(llvm::MemoryBuffer::getMemBufferCopy(text, name));
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

AutocastPolicy::Decision AutocastPolicy::classify(StringRef onnxOp,
                                                  StringRef nodeName) const {
  // The last matching node rule wins, as later rules refine earlier ones.
  for (const NodeRule &rule : llvm::reverse(nodeRules)) {
    bool matches =
        rule.regex ? rule.regex->match(nodeName) : nodeName == rule.pattern;
    if (matches)
      return {rule.cls,
              "node rule '" + rule.pattern + "' (" + rule.source + ")"};
  }
  auto it = ops.find(onnxOp);
  if (it == ops.end())
    return {PrecisionClass::Unlisted, "in no list: keeps fp32"};
  std::string reason =
      (stringifyPrecisionClass(it->second.cls) + " list (" + it->second.source)
          .str();
  if (!it->second.why.empty())
    reason += ": " + it->second.why;
  return {it->second.cls, reason + ")"};
}

bool AutocastPolicy::needsF32Accumulation(StringRef onnxOp) const {
  return !ignoreAccumulationRequirement && needsAccumulation.count(onnxOp);
}

bool AutocastPolicy::isQuantizationBoundary(StringRef onnxOp, bool isOutput) {
  return isOutput ? onnxOp == "QuantizeLinear"
                  : onnxOp == "DequantizeLinear" ||
                        onnxOp == "DynamicQuantizeLinear";
}

void AutocastPolicy::print(llvm::raw_ostream &os) const {
  os << "# amp-autocast policy (YAML; JSON works too). Schema: "
        "docs/AutocastPolicy.md\n"
     << "base: empty\n";
  for (PrecisionClass cls :
       {PrecisionClass::Allow, PrecisionClass::Deny, PrecisionClass::Infer,
        PrecisionClass::Clear, PrecisionClass::Promote}) {
    // An empty class is left out (a key without a list does not parse).
    if (llvm::none_of(
            ops, [&](const auto &entry) { return entry.second.cls == cls; }))
      continue;
    os << stringifyPrecisionClass(cls) << ":\n";
    // In ODS order, which groups related ops.
    for (const OnnxOpName &entry : getOnnxOpNames()) {
      auto it = ops.find(entry.onnxName);
      if (it == ops.end() || it->second.cls != cls)
        continue;
      os << "  - " << entry.onnxName;
      if (!it->second.why.empty())
        os << "  # " << it->second.why;
      auto acc = needsAccumulation.find(entry.onnxName);
      if (acc != needsAccumulation.end())
        os << " [needs fp32 accumulation: " << acc->second << "]";
      os << "\n";
    }
  }
  os << "# In no list (keep fp32, do not spread it):";
  for (const OnnxOpName &entry : getOnnxOpNames())
    if (!ops.count(entry.onnxName))
      os << " " << entry.onnxName;
  os << "\n";
  if (!nodeRules.empty()) {
    os << "nodes:\n";
    for (const NodeRule &rule : nodeRules)
      os << "  - {" << (rule.regex ? "regex" : "name") << ": '" << rule.pattern
         << "', class: " << stringifyPrecisionClass(rule.cls) << "}\n";
  }
}
