//===- FuseElementwise.cpp - the amp-fuse-elementwise pass ----------------===//
//
// Upstream elementwise fusion on tensors, except into the convolutions and
// weight gradients that amp-linalg-to-runtime-calls hands to the CPU runtime: the runtime reads
// their operands as fp32 buffers, so a fused producer would be lost (the
// call replaces the loop nest, not its body). A producer with several users
// is fused into each of them only when it is a few cheap arithmetic ops.
//
//===----------------------------------------------------------------------===//

#include "RuntimeConv.h"
#include "amp/Conversion/LinalgToCpu/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFUSEELEMENTWISE
#include "amp/Conversion/LinalgToCpu/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::cpu;

namespace {

/// Users a cheap producer may be recomputed in.
constexpr unsigned kMaxRecomputingUsers = 3;
/// Body ops (terminator excluded) of a producer cheap enough to recompute.
constexpr unsigned kMaxCheapBodyOps = 4;

/// An all-parallel generic whose body is a few adds, multiplies,
/// comparisons, selects or casts: recomputing it in each consumer costs
/// less than writing its result to memory and reading it back (x - mean
/// in a normalization feeds both the variance and the output).
bool isCheapToRecompute(Operation *producer) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || generic.getNumLoops() != generic.getNumParallelLoops() ||
      generic->getNumResults() != 1)
    return false;
  unsigned count = 0;
  for (Operation &op : generic.getBody()->without_terminator()) {
    if (!isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::NegFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::CmpFOp, arith::SelectOp, arith::ExtFOp,
             arith::TruncFOp, arith::ConstantOp>(op))
      return false;
    if (++count > kMaxCheapBodyOps)
      return false;
  }
  return llvm::range_size(producer->getUsers()) <= kMaxRecomputingUsers;
}

struct AmpFuseElementwisePass
    : public amp::impl::AmpFuseElementwiseBase<AmpFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fusedOperand) {
          Operation *consumer = fusedOperand->getOwner();
          if (isRuntimeConv(consumer) || isRuntimeWeightGrad(consumer))
            return false;
          // A producer with several users is fused (recomputed) only when
          // it is cheap.
          Operation *producer = fusedOperand->get().getDefiningOp();
          return producer &&
                 (producer->hasOneUse() || isCheapToRecompute(producer));
        });
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
