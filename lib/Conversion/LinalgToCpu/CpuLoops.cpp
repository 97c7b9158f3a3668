//===- CpuLoops.cpp - the amp-linalg-to-cpu-loops pass --------------------===//
//
// Buffer linalg ops -> loop nests for the CPU backend. Large ops get an
// scf.parallel over their parallel dimensions (amp-outline-parallel-loops
// runs those on the runtime's threads), small ones plain scf.for nests, so
// that a scalar op does not pay for a thread-pool call.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/LinalgToCpu/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
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
  if (iterators.empty())
    return {};
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
    // Reductions: parallel dimensions first (the innermost stays), so that
    // an innermost reduction can accumulate in registers.
    linalg::LinalgOp lowered = op;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> order = getParallelFirstOrder(iterators);
    if ((parallel || op.getNumReductionLoops() > 0) &&
        !llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
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
    if (succeeded(lowerWithAccumulators(rewriter, lowered, parallel))) {
      rewriter.eraseOp(lowered);
      return success();
    }
    if (failed(parallel ? linalg::linalgOpToParallelLoops(rewriter, lowered)
                        : linalg::linalgOpToLoops(rewriter, lowered)))
      return lowered->emitError("cannot lower this op to loops");
    rewriter.eraseOp(lowered);
    return success();
  }

  /// An op whose reduction dimensions are all inside its parallel ones
  /// (and whose outputs do not depend on them): the outputs are read once
  /// before the reduction loops, carried through them as loop values, and
  /// written once after. The upstream lowering loads and stores the output
  /// element at every step, which LLVM cannot keep in a register when it
  /// cannot prove that the output does not alias an input.
  LogicalResult lowerWithAccumulators(IRRewriter &rewriter,
                                      linalg::LinalgOp op, bool parallel) {
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic)
      return failure();
    SmallVector<utils::IteratorType> iterators =
        generic.getIteratorTypesArray();
    unsigned numParallel = generic.getNumParallelLoops();
    if (generic.getNumReductionLoops() == 0 ||
        !llvm::all_of(ArrayRef(iterators).take_front(numParallel),
                      [](auto t) { return t == utils::IteratorType::parallel; }))
      return failure();
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      AffineMap map = generic.getMatchingIndexingMap(&init);
      for (unsigned d = numParallel; d < iterators.size(); ++d)
        if (map.isFunctionOfDim(d))
          return failure();
    }
    Location loc = generic.getLoc();
    SmallVector<Value> lbs, ubs, steps;
    for (Range range : op.createLoopRanges(rewriter, loc)) {
      lbs.push_back(getValueOrCreateConstantIndexOp(rewriter, loc,
                                                    range.offset));
      ubs.push_back(getValueOrCreateConstantIndexOp(rewriter, loc,
                                                    range.size));
      steps.push_back(getValueOrCreateConstantIndexOp(rewriter, loc,
                                                      range.stride));
    }
    auto indices = [&](OpBuilder &b, AffineMap map, ValueRange ivs) {
      // Outputs are indexed outside the reduction loops: their maps do not
      // use those dimensions, which are given index 0.
      SmallVector<Value> operands(ivs);
      while (operands.size() < map.getNumDims())
        operands.push_back(b.create<arith::ConstantIndexOp>(loc, 0));
      SmallVector<Value> result;
      for (AffineExpr expr : map.getResults())
        result.push_back(b.create<affine::AffineApplyOp>(
            loc, AffineMap::get(map.getNumDims(), 0, expr), operands));
      return result;
    };
    auto load = [&](OpBuilder &b, OpOperand &operand, ValueRange ivs) {
      Value value = operand.get();
      if (!isa<MemRefType>(value.getType()))
        return value; // a scalar input
      return b
          .create<memref::LoadOp>(
              loc, value,
              indices(b, generic.getMatchingIndexingMap(&operand), ivs))
          .getResult();
    };
    auto bodyOverParallel = [&](OpBuilder &b, Location, ValueRange outer) {
      SmallVector<Value> inits;
      for (OpOperand &init : generic.getDpsInitsMutable())
        inits.push_back(load(b, init, outer));
      scf::LoopNest nest = scf::buildLoopNest(
          b, loc, ArrayRef(lbs).drop_front(numParallel),
          ArrayRef(ubs).drop_front(numParallel),
          ArrayRef(steps).drop_front(numParallel), inits,
          [&](OpBuilder &ib, Location, ValueRange inner,
              ValueRange accumulators) -> scf::ValueVector {
            SmallVector<Value> ivs(outer);
            ivs.append(inner.begin(), inner.end());
            IRMapping mapping;
            Block *body = generic.getBody();
            for (OpOperand *input : generic.getDpsInputOperands())
              mapping.map(body->getArgument(input->getOperandNumber()),
                          load(ib, *input, ivs));
            for (auto [i, accumulator] : llvm::enumerate(accumulators))
              mapping.map(body->getArgument(generic.getNumDpsInputs() + i),
                          accumulator);
            for (Operation &bodyOp : body->without_terminator()) {
              if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
                mapping.map(index.getResult(), ivs[index.getDim()]);
                continue;
              }
              ib.clone(bodyOp, mapping);
            }
            scf::ValueVector yielded;
            for (Value v : body->getTerminator()->getOperands())
              yielded.push_back(mapping.lookupOrDefault(v));
            return yielded;
          });
      for (auto [init, result] :
           llvm::zip(generic.getDpsInitsMutable(), nest.results))
        b.create<memref::StoreOp>(
            loc, result, init.get(),
            indices(b, generic.getMatchingIndexingMap(&init), outer));
    };
    ArrayRef<Value> outerLbs = ArrayRef(lbs).take_front(numParallel),
                    outerUbs = ArrayRef(ubs).take_front(numParallel),
                    outerSteps = ArrayRef(steps).take_front(numParallel);
    if (parallel && numParallel > 0) {
      rewriter.create<scf::ParallelOp>(loc, outerLbs, outerUbs, outerSteps,
                                       bodyOverParallel);
    } else {
      scf::buildLoopNest(rewriter, loc, outerLbs, outerUbs, outerSteps,
                         [&](OpBuilder &b, Location l, ValueRange ivs) {
                           bodyOverParallel(b, l, ivs);
                         });
    }
    return success();
  }
};

} // namespace
