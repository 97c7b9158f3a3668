//===- CastCleanup.cpp - fold casts, drop dead constants ------------------===//

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCASTCLEANUP
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
class CastCleanupPass : public amp::impl::AmpCastCleanupBase<CastCleanupPass> {
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
    // The weights of erased constants (fp32 originals of converted ones)
    // are released unless a remaining constant shares them: ViT-B/16's
    // 346 MB of fp32 weights are not kept alive next to their fp16 copies.
    llvm::SmallPtrSet<void *, 16> released;
    SmallVector<DenseResourceElementsHandle> candidates;
    for (Operation *op : dead) {
      if (auto constant = dyn_cast<ConstantOp>(op))
        if (auto resource =
                dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
          candidates.push_back(resource.getRawHandle());
      op->erase();
    }
    if (candidates.empty() || !releaseWeights)
      return;
    llvm::SmallPtrSet<void *, 16> stillUsed;
    getOperation().walk([&](ConstantOp constant) {
      if (auto resource =
              dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
        stillUsed.insert(resource.getRawHandle().getResource());
    });
    for (DenseResourceElementsHandle handle : candidates)
      if (!stillUsed.contains(handle.getResource()) &&
          released.insert(handle.getResource()).second)
        handle.getResource()->setBlob(AsmResourceBlob());
  }
};
} // namespace
