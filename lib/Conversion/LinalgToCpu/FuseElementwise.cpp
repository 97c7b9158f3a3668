//===- FuseElementwise.cpp - the amp-fuse-elementwise pass ----------------===//
//
// Upstream elementwise fusion on tensors, except into the convolutions and
// weight gradients that amp-linalg-to-runtime-calls hands to the CPU runtime: the runtime reads
// their operands as fp32 buffers, so a fused producer would be lost (the
// call replaces the loop nest, not its body).
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

struct AmpFuseElementwisePass
    : public amp::impl::AmpFuseElementwiseBase<AmpFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fusedOperand) {
          Operation *consumer = fusedOperand->getOwner();
          if (isRuntimeConv(consumer) || isRuntimeWeightGrad(consumer))
            return false;
          // Keep a producer with several users unfused (no recomputation).
          Operation *producer = fusedOperand->get().getDefiningOp();
          return producer && producer->hasOneUse();
        });
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
