//===- PolicyFuzzer.cpp - libFuzzer target: policy files and node rules ---===//
//
// The first byte chooses what the rest is: a policy file (YAML or JSON,
// AutocastPolicy::loadText) or `--amp-node-rule` specs, one per line
// (addNodeRuleSpec). Either is accepted or rejected with a message; then
// the policy classifies a few ops and node names and prints itself.
//
//===----------------------------------------------------------------------===//

#include "amp/Transforms/AutocastPolicy.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir::amp;

static void requireMessage(llvm::Error err) {
  if (err && llvm::toString(std::move(err)).empty())
    std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef text(reinterpret_cast<const char *>(data) + 1, size - 1);
  AutocastPolicy policy = AutocastPolicy::getDefault();
  if (data[0] % 2 == 0) {
    requireMessage(policy.loadText(text, "fuzz-policy.yaml"));
  } else {
    llvm::SmallVector<llvm::StringRef> lines;
    text.split(lines, '\n');
    for (llvm::StringRef line : lines)
      requireMessage(policy.addNodeRuleSpec(line, "--amp-node-rule"));
  }
  for (llvm::StringRef op : {"Conv", "Softmax", "Add", "Unknown"})
    for (llvm::StringRef node : {"", "/encoder/layer.0/attn/MatMul", "Conv_0"})
      (void)policy.classify(op, node);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  policy.print(os);
  return 0;
}
