//===- CpuLoops.cpp - the amp-linalg-to-cpu-loops pass --------------------===//
//
// Buffer linalg ops -> loop nests for the CPU backend. Large ops get an
// scf.parallel over their parallel dimensions (amp-outline-parallel-loops
// runs those on the runtime's threads), small ones plain scf.for nests, so
// that a scalar op does not pay for a thread-pool call.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/LinalgToCpu/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLINALGTOCPULOOPS
#include "amp/Conversion/LinalgToCpu/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

/// The iteration-space size when every loop range is static.
std::optional<int64_t> getStaticIterationCount(linalg::LinalgOp op) {
  int64_t count = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    count = range > 0 && count > std::numeric_limits<int64_t>::max() / range
                ? std::numeric_limits<int64_t>::max()
                : count * range;
  }
  return count;
}

/// The loop order with the parallel dimensions outside the reductions, the
/// innermost dimension kept innermost (contiguous accesses, vectorizable).
SmallVector<unsigned>
getParallelFirstOrder(ArrayRef<utils::IteratorType> iterators) {
  unsigned innermost = iterators.size() - 1;
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < innermost; ++i)
    if (iterators[i] == utils::IteratorType::parallel)
      order.push_back(i);
  for (unsigned i = 0; i < innermost; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      order.push_back(i);
  order.push_back(innermost);
  return order;
}

struct AmpLinalgToCpuLoopsPass
    : public amp::impl::AmpLinalgToCpuLoopsBase<AmpLinalgToCpuLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Copies into or out of strided views (a convolution's padded input)
    // would run through the C runner utils' generic element loop: make
    // them linalg copies, lowered (in parallel) like the other ops.
    // Contiguous copies stay memref.copy, which is one memcpy.
    getOperation().walk([&](memref::CopyOp copy) {
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      if (source.getLayout().isIdentity() && target.getLayout().isIdentity())
        return;
      OpBuilder b(copy);
      b.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(),
                               copy.getTarget());
      copy.erase();
    });
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      if (failed(lower(rewriter, op)))
        return signalPassFailure();
    }
  }

  LogicalResult lower(IRRewriter &rewriter, linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return op->emitError("the CPU loop lowering expects bufferized linalg "
                           "ops");
    rewriter.setInsertionPoint(op);
    std::optional<int64_t> count = getStaticIterationCount(op);
    bool parallel = op.getNumParallelLoops() > 0 &&
                    (!count || *count >= minParallelWork);
    if (!parallel) {
      if (failed(linalg::linalgOpToLoops(rewriter, op)))
        return op->emitError("cannot lower this op to loops");
      rewriter.eraseOp(op);
      return success();
    }
    linalg::LinalgOp lowered = op;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> order = getParallelFirstOrder(iterators);
    if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          return op->emitError("cannot generalise this op for the CPU "
                               "backend");
        generic = *generalized;
      }
      rewriter.setInsertionPoint(generic);
      FailureOr<linalg::GenericOp> interchanged =
          linalg::interchangeGenericOp(rewriter, generic, order);
      if (failed(interchanged))
        return generic->emitError("cannot reorder the loops of this op");
      lowered = *interchanged;
    }
    rewriter.setInsertionPoint(lowered);
    if (failed(linalg::linalgOpToParallelLoops(rewriter, lowered)))
      return lowered->emitError("cannot lower this op to loops");
    rewriter.eraseOp(lowered);
    return success();
  }
};

} // namespace
