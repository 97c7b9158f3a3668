//===- ModelLimits.cpp - the resource caps by name ------------------------===//

#include "amp/Target/ONNX/ModelLimits.h"

#include "amp/Support/OptionsBinder.h"

using namespace mlir::amp;

void ModelLimits::bind(OptionsBinder &b) {
  b.bind({"max-tensor-elements", "Largest tensor (initializer, constant, "
                                 "input file or static node result), in "
                                 "elements"},
         maxTensorElements);
  b.bind({"max-tensor-bytes", "Largest tensor, in bytes"}, maxTensorBytes);
  b.bind({"max-initializer-bytes",
          "All initializers and Constant tensors together, in bytes"},
         maxInitializerBytes);
  b.bind({"max-nodes", "Nodes of a model, subgraphs included"}, maxNodes);
  b.bind({"max-subgraph-depth",
          "Levels of subgraphs inside subgraphs (If, Loop, Scan)"},
         maxSubgraphDepth);
  b.bind({"max-fold-bytes", "Bytes constant folding may materialise per run "
                            "(operands, intermediates, results); the rest "
                            "runs at run time"},
         maxFoldBytes);
}

std::string ModelLimits::validate() const {
  std::pair<const char *, int64_t> caps[] = {
      {"max-tensor-elements", maxTensorElements},
      {"max-tensor-bytes", maxTensorBytes},
      {"max-initializer-bytes", maxInitializerBytes},
      {"max-nodes", maxNodes},
      {"max-subgraph-depth", maxSubgraphDepth},
      {"max-fold-bytes", maxFoldBytes}};
  for (auto [name, value] : caps)
    if (value <= 0)
      return std::string(name) + ": " + std::to_string(value) +
             " is not a positive integer";
  return "";
}
