//===- CastCleanup.cpp - fold casts, drop dead constants ------------------===//

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCASTCLEANUP
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
class CastCleanupPass
    : public amp::impl::AmpCastCleanupBase<CastCleanupPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> casts;
    getOperation().walk([&](CastOp cast) { casts.push_back(cast); });
    // Only the casts are visited: the driver folds them (the cast folder
    // handles exact chains) and erases those left unused.
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    (void)applyOpPatternsAndFold(casts, FrozenRewritePatternSet(), config);
    // Constants (and absent-input markers) without users: the fp32
    // originals of converted weights.
    SmallVector<Operation *> dead;
    getOperation().walk([&](Operation *op) {
      if (isa<ConstantOp, NoneOp>(op) && op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
  }
};
} // namespace
