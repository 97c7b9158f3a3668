//===- ModelLimitsCLOptions.cpp - the tools' --amp-max-* flags ------------===//

#include "common/ModelLimitsCLOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir::amp;
namespace cl = llvm::cl;

namespace {
/// A cap: a positive 64-bit count. (parser<long>, int64_t's parser, is
/// final; parser<long long> is not, and has the same range.)
struct CapParser : public cl::parser<long long> {
  using cl::parser<long long>::parser;
  bool parse(cl::Option &option, llvm::StringRef name, llvm::StringRef arg,
             long long &value) {
    if (arg.getAsInteger(0, value) || value <= 0)
      return option.error("'" + arg + "' is not a positive integer");
    return false;
  }
};

struct ModelLimitsCLOptions {
  ModelLimits defaults;
  cl::OptionCategory category{"amp resource caps (models from files)"};
  cl::opt<long long, false, CapParser> maxTensorElements{
      "amp-max-tensor-elements",
      cl::desc("Largest tensor (initializer, constant, input file or static "
               "node result), in elements"),
      cl::init(defaults.maxTensorElements), cl::cat(category)};
  cl::opt<long long, false, CapParser> maxTensorBytes{
      "amp-max-tensor-bytes", cl::desc("Largest tensor, in bytes"),
      cl::init(defaults.maxTensorBytes), cl::cat(category)};
  cl::opt<long long, false, CapParser> maxInitializerBytes{
      "amp-max-initializer-bytes",
      cl::desc("All initializers and Constant tensors together, in bytes"),
      cl::init(defaults.maxInitializerBytes), cl::cat(category)};
  cl::opt<long long, false, CapParser> maxNodes{
      "amp-max-nodes", cl::desc("Nodes of a model, subgraphs included"),
      cl::init(defaults.maxNodes), cl::cat(category)};
  cl::opt<long long, false, CapParser> maxSubgraphDepth{
      "amp-max-subgraph-depth",
      cl::desc("Levels of subgraphs inside subgraphs (If, Loop, Scan)"),
      cl::init(defaults.maxSubgraphDepth), cl::cat(category)};
  cl::opt<long long, false, CapParser> maxFoldBytes{
      "amp-max-fold-bytes",
      cl::desc("Bytes constant folding may materialise per run (operands, "
               "intermediates, results); the rest runs at run time"),
      cl::init(defaults.maxFoldBytes), cl::cat(category)};
};
} // namespace

static llvm::ManagedStatic<ModelLimitsCLOptions> clOptions;

void mlir::amp::registerModelLimitsCLOptions() {
  // Constructing the options registers them.
  (void)*clOptions;
}

ModelLimits mlir::amp::getModelLimitsCLOptions() {
  ModelLimits limits;
  if (!clOptions.isConstructed())
    return limits;
  limits.maxTensorElements = clOptions->maxTensorElements;
  limits.maxTensorBytes = clOptions->maxTensorBytes;
  limits.maxInitializerBytes = clOptions->maxInitializerBytes;
  limits.maxNodes = clOptions->maxNodes;
  limits.maxSubgraphDepth = clOptions->maxSubgraphDepth;
  limits.maxFoldBytes = clOptions->maxFoldBytes;
  return limits;
}
