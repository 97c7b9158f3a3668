//===- Decompose.cpp - function ops to their graphs -----------------------===//

#include "amp/Dialect/Amp/Decompositions/Decompositions.h"
#include "amp/Dialect/Amp/IR/AmpDecompositionInterface.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPDECOMPOSE
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
/// Queues the decomposable ops a decomposition builds.
struct QueueNew : public OpBuilder::Listener {
  explicit QueueNew(SmallVectorImpl<Operation *> &worklist)
      : worklist(worklist) {}
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    if (isa<DecomposableOpInterface>(op))
      worklist.push_back(op);
  }
  SmallVectorImpl<Operation *> &worklist;
};

class DecomposePass : public amp::impl::AmpDecomposeBase<DecomposePass> {
public:
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registry.insert<AmpDialect>();
    // The decompositions are external models: the pass brings them.
    registerAmpDecompositions(registry);
  }

  void runOnOperation() override {
    SmallVector<Operation *> worklist;
    getOperation().walk(
        [&](DecomposableOpInterface op) { worklist.push_back(op); });
    QueueNew queue(worklist);
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      OpBuilder builder(op, &queue);
      SmallVector<Value> results;
      if (failed(cast<DecomposableOpInterface>(op).decompose(builder,
                                                             results)))
        return signalPassFailure();
      if (results.size() != op->getNumResults())
        return op->emitOpError("decomposition built ")
                   << results.size() << " results, not "
                   << op->getNumResults(),
               signalPassFailure();
      for (auto [result, value] : llvm::zip(op->getResults(), results)) {
        if (result.use_empty())
          continue;
        if (!value || value.getType() != result.getType())
          return op->emitOpError("decomposition of result ")
                     << result.getResultNumber() << " has type "
                     << (value ? value.getType() : Type()) << ", not "
                     << result.getType(),
                 signalPassFailure();
        result.replaceAllUsesWith(value);
      }
      op->erase();
    }
  }
};
} // namespace
