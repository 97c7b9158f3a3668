//===- LaunchesToLoops.cpp - run a CUDA-lowered program's kernels on the CPU
//===//
//
// The CUDA backend's emulation mode: every gpu.launch becomes loops over
// its blocks and threads with the body inlined, so the mapping that
// amp-linalg-to-gpu chose (linearised iteration spaces, bounds guards,
// reordered reduction loops, single-thread launches, GEMM operands and
// folded fills) runs through the CPU backend and can be compared with the
// CPU path on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/LinalgToCUDA/CudaGemm.h"
#include "amp/Conversion/LinalgToCUDA/LaunchLoops.h"
#include "amp/Conversion/LinalgToCUDA/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPULAUNCHESTOLOOPS
#include "amp/Conversion/LinalgToCUDA/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

struct LaunchesToLoops
    : public mlir::amp::impl::AmpGpuLaunchesToLoopsBase<LaunchesToLoops> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      lower(rewriter, launch);
    // A GEMM whose zero fill was folded away (beta = 0) gets it back.
    getOperation().walk([&](linalg::LinalgOp op) {
      auto beta = op->getAttrOfType<FloatAttr>(mlir::amp::cuda::kBetaAttrName);
      if (!beta)
        return;
      if (!beta.getValue().isZero()) {
        op->emitError("emulation supports beta = 0 or 1 only");
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      Value out = op.getDpsInits()[0];
      Type element = getElementTypeOrSelf(out.getType());
      Value zero = rewriter.create<arith::ConstantOp>(
          op.getLoc(), element, rewriter.getZeroAttr(element));
      rewriter.create<linalg::FillOp>(op.getLoc(), zero, out);
      op->removeAttr(mlir::amp::cuda::kBetaAttrName);
    });
  }

  void lower(IRRewriter &rewriter, gpu::LaunchOp launch) {
    Location loc = launch.getLoc();
    rewriter.setInsertionPoint(launch);
    Value bounds[6] = {launch.getGridSizeX(),  launch.getGridSizeY(),
                       launch.getGridSizeZ(),  launch.getBlockSizeX(),
                       launch.getBlockSizeY(), launch.getBlockSizeZ()};
    SmallVector<Value> ids;
    mlir::amp::cuda::buildLaunchLoops(rewriter, loc, bounds, ids);
    Block &body = launch.getBody().front();
    Operation *terminator = body.getTerminator();
    SmallVector<Value> arguments;
    for (int i = 0; i < 6; ++i)
      arguments.push_back(ids[i]); // block ids, thread ids
    for (int i = 0; i < 6; ++i)
      arguments.push_back(bounds[i]); // grid and block sizes
    Value one;
    while (arguments.size() < body.getNumArguments()) {
      if (!one)
        one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
      arguments.push_back(one); // cluster ids (unused)
    }
    rewriter.eraseOp(terminator);
    rewriter.inlineBlockBefore(&body, rewriter.getInsertionBlock(),
                               rewriter.getInsertionPoint(), arguments);
    rewriter.eraseOp(launch);
  }
};

} // namespace
