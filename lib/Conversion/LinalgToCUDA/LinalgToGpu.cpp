//===- LinalgToGpu.cpp - bufferized linalg -> gpu.launch + library GEMMs --===//
//
// See the pass description in Passes.td. The mapping is deliberately
// simple and general: one thread per point of an op's parallel iteration
// space, linearised so that the innermost dimension is the fastest and
// loads coalesce; reductions run inside the thread in fp32 (the lowering's
// accumulator type).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/LinalgToCUDA/CudaGemm.h"
#include "amp/Conversion/LinalgToCUDA/Passes.h"
#include "amp/Conversion/LinalgToCUDA/Views.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLINALGTOGPU
#include "amp/Conversion/LinalgToCUDA/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Ops that stay on the host: buffer management, views, constants,
/// library GEMMs, launches.
bool isHostOp(Operation *op) {
  return isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp,
             arith::ConstantOp, func::ReturnOp, gpu::LaunchOp, memref::CopyOp>(
             op) ||
         cuda::getViewSource(op) || succeeded(cuda::getCudaGemm(op));
}

/// Whether `op` writes zeros into all of `out` (linalg.fill, or a
/// generic/map without inputs yielding a zero constant).
bool isZeroFillOf(Operation *op, Value out) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getOutputs()[0] == out &&
           matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 0 ||
      linalgOp.getNumDpsInits() != 1 || linalgOp.getDpsInits()[0] != out ||
      linalgOp.getNumReductionLoops() != 0)
    return false;
  Block *body = linalgOp.getBlock();
  if (!body || body->getOperations().size() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return matchPattern(yield.getOperand(0), m_AnyZeroFloat());
}

/// Folds a zero fill of a GEMM's output into the GEMM (beta = 0) when
/// nothing in between touches that buffer.
void foldZeroFill(Operation *gemm, Value out) {
  Value root = cuda::getRootBuffer(out);
  for (Operation *op = gemm->getPrevNode(); op; op = op->getPrevNode()) {
    if (isZeroFillOf(op, out)) {
      op->erase();
      gemm->setAttr(cuda::kBetaAttrName,
                    FloatAttr::get(Float32Type::get(gemm->getContext()), 0));
      return;
    }
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()) &&
          cuda::getRootBuffer(operand) == root)
        return;
    if (op->getNumRegions())
      return;
  }
}

/// When `generic` (parallel loops first) has too few parallel points to
/// fill a GPU but a long reduction, splits its first reduction loop in two:
/// `splits` threads per output point each reduce a contiguous chunk into a
/// partial buffer (initialised to the combiner's neutral element), then one
/// op combines the partials into the output. Returns the three new ops
/// (fill, partial reduction, final reduction), or failure where the op is
/// not worth splitting or its combiner is not a known one.
FailureOr<SmallVector<linalg::LinalgOp>>
splitReduction(IRRewriter &rewriter, linalg::GenericOp generic) {
  constexpr int64_t kEnoughParallelPoints = 4096, kLongReduction = 4096;
  if (generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() == 0)
    return failure();
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  unsigned numLoops = ranges.size(), k = generic.getNumParallelLoops();
  int64_t parallelPoints = 1;
  for (unsigned i = 0; i < k; ++i)
    parallelPoints *= ranges[i];
  int64_t size = ranges[k];
  if (parallelPoints >= kEnoughParallelPoints || size < kLongReduction)
    return failure();
  int64_t splits = 0;
  for (int64_t s = std::min<int64_t>(1024, size / 16); s >= 2 && !splits; --s)
    if (size % s == 0)
      splits = s;
  if (!splits)
    return failure();
  int64_t chunk = size / splits;

  Block *body = generic.getBody();
  unsigned numInputs = generic.getNumDpsInputs();
  BlockArgument accumulator = body->getArgument(numInputs);
  SmallVector<Operation *> combiners;
  if (!matchReduction({accumulator}, 0, combiners) || combiners.size() != 1)
    return failure();
  Operation *combiner = combiners.front();
  std::optional<TypedAttr> identity = arith::getNeutralElement(combiner);
  auto outType = dyn_cast<MemRefType>(generic.getDpsInits()[0].getType());
  if (!identity || !outType || !outType.hasStaticShape())
    return failure();
  AffineMap outMap = generic.getIndexingMapsArray().back();
  if (!outMap.isProjectedPermutation())
    return failure();

  MLIRContext *context = generic.getContext();
  Location loc = generic.getLoc();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  // Old loop k becomes s * chunk + c: new loops k (s, parallel) and k + 1
  // (c, reduction); later loops move up by one.
  SmallVector<AffineExpr> replacement;
  for (unsigned i = 0; i < numLoops; ++i)
    replacement.push_back(i < k    ? d(i)
                          : i == k ? d(k) * chunk + d(k + 1)
                                   : d(i + 1));
  // Each input that reads loop k directly (as one of its dimensions) is
  // viewed with that dimension expanded to [splits, chunk]; an input that
  // uses loop k inside an expression (a convolution window) cannot be.
  rewriter.setInsertionPoint(generic);
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    std::optional<unsigned> position;
    for (auto [j, result] : llvm::enumerate(map.getResults())) {
      if (auto dim = dyn_cast<AffineDimExpr>(result);
          dim && dim.getPosition() == k && !position)
        position = j;
      else if (result.isFunctionOfDim(k))
        return failure();
    }
    Value value = input->get();
    SmallVector<AffineExpr> results;
    for (auto [j, result] : llvm::enumerate(map.getResults())) {
      if (position && j == *position) {
        results.push_back(d(k));
        results.push_back(d(k + 1));
      } else {
        results.push_back(result.replaceDims(replacement));
      }
    }
    if (position) {
      auto type = dyn_cast<MemRefType>(value.getType());
      if (!type)
        return failure();
      SmallVector<ReassociationIndices> groups;
      SmallVector<int64_t> shape;
      for (int64_t j = 0, e = type.getRank(); j < e; ++j) {
        int64_t first = shape.size();
        if (j == int64_t(*position)) {
          groups.push_back({first, first + 1});
          shape.append({splits, chunk});
        } else {
          groups.push_back({first});
          shape.push_back(type.getDimSize(j));
        }
      }
      FailureOr<MemRefType> expanded =
          memref::ExpandShapeOp::computeExpandedType(type, shape, groups);
      if (failed(expanded))
        return failure();
      value = rewriter.create<memref::ExpandShapeOp>(loc, *expanded, value,
                                                     groups);
    }
    inputs.push_back(value);
    maps.push_back(AffineMap::get(numLoops + 1, 0, results, context));
  }
  SmallVector<AffineExpr> partialResults;
  for (AffineExpr e : outMap.getResults())
    partialResults.push_back(e.replaceDims(replacement));
  partialResults.push_back(d(k));
  maps.push_back(AffineMap::get(numLoops + 1, 0, partialResults, context));
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  iterators.insert(iterators.begin() + k, utils::IteratorType::parallel);

  SmallVector<int64_t> partialShape(outType.getShape());
  partialShape.push_back(splits);
  Value partial = rewriter.create<memref::AllocOp>(
      loc, MemRefType::get(partialShape, outType.getElementType()));
  Value neutral = rewriter.create<arith::ConstantOp>(loc, *identity);
  auto fill = rewriter.create<linalg::FillOp>(loc, neutral, partial);
  auto partialOp = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{}, inputs, ValueRange{partial}, maps, iterators);
  rewriter.cloneRegionBefore(generic.getRegion(), partialOp.getRegion(),
                             partialOp.getRegion().end());

  // out[i...] = combine(out[i...], partial[i..., s]) over s.
  unsigned rank = outType.getRank();
  SmallVector<AffineMap> finalMaps = {
      rewriter.getMultiDimIdentityMap(rank + 1),
      AffineMap::get(rank + 1, 0,
                     ArrayRef<AffineExpr>(
                         rewriter.getMultiDimIdentityMap(rank + 1).getResults())
                         .drop_back(),
                     context)};
  SmallVector<utils::IteratorType> finalIterators(
      rank, utils::IteratorType::parallel);
  finalIterators.push_back(utils::IteratorType::reduction);
  unsigned accumulatorIndex = combiner->getOperand(0) == accumulator ? 0 : 1;
  auto finalOp = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{partial}, generic.getDpsInits(), finalMaps,
      finalIterators, [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        mapping.map(combiner->getOperand(accumulatorIndex), args[1]);
        mapping.map(combiner->getOperand(1 - accumulatorIndex), args[0]);
        Operation *combined = b.clone(*combiner, mapping);
        b.create<linalg::YieldOp>(l, combined->getResults());
      });
  rewriter.eraseOp(generic);
  return SmallVector<linalg::LinalgOp>{fill, partialOp, finalOp};
}

class LinalgToGpu : public mlir::amp::impl::AmpLinalgToGpuBase<LinalgToGpu> {
public:
  using AmpLinalgToGpuBase::AmpLinalgToGpuBase;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      if (failed(convert(func)))
        signalPassFailure();
    });
  }

private:
  LogicalResult convert(func::FuncOp func);
  LogicalResult lowerLinalgOp(IRRewriter &rewriter, linalg::LinalgOp op,
                              bool split = true);
  LogicalResult launchParallel(IRRewriter &rewriter, scf::ParallelOp loop);
  LogicalResult launchSingleThread(IRRewriter &rewriter,
                                   ArrayRef<Operation *> ops);
  /// Loads (at the top level) of scalars demoted to device buffers, which
  /// must run in their user's launch.
  llvm::SmallPtrSet<Operation *, 8> pendingLoads;
};

LogicalResult LinalgToGpu::convert(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("the CUDA target needs single-block functions");
  for (Type type : func.getFunctionType().getInputs())
    if (auto memref = dyn_cast<MemRefType>(type);
        memref && !memref.hasStaticShape())
      return func.emitError("the CUDA target needs static shapes; argument ")
             << type << " has dynamic dimensions";
  Block &body = func.getBody().front();
  IRRewriter rewriter(func.getContext());

  // Buffers are placed by the artifact's memory plan.
  for (Operation &op : llvm::make_early_inc_range(body))
    if (isa<memref::DeallocOp>(op))
      op.erase();

  // GEMMs first: the zero fills they absorb are still linalg ops.
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    if (succeeded(cuda::getCudaGemm(&op)))
      ops.push_back(&op);
  for (Operation *gemm : ops)
    foldZeroFill(gemm, cast<linalg::LinalgOp>(gemm).getDpsInits()[0]);
  ops.clear();
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op);
        alloc && !alloc.getType().hasStaticShape())
      return op->emitError("the CUDA target needs static shapes; buffer ")
             << alloc.getType() << " has dynamic dimensions";
    if (succeeded(cuda::getCudaGemm(op)))
      continue;
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      if (memref::isStaticShapeAndContiguousRowMajor(source) &&
          memref::isStaticShapeAndContiguousRowMajor(target))
        continue;
      rewriter.setInsertionPoint(copy);
      auto linalgCopy = rewriter.create<linalg::CopyOp>(
          copy.getLoc(), copy.getSource(), copy.getTarget());
      rewriter.eraseOp(copy);
      op = linalgCopy;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (failed(lowerLinalgOp(rewriter, linalgOp)))
        return failure();
  }

  // Launches: one per parallel nest; other device work in single-thread
  // launches of consecutive ops.
  ops.clear();
  for (Operation &op : body)
    ops.push_back(&op);
  // Allocations, views and constants between device ops do not split a
  // single-thread launch when they use no value it computes: they move
  // above it.
  SmallVector<Operation *> group, movable;
  auto flush = [&]() -> LogicalResult {
    if (group.empty())
      return success();
    for (Operation *op : movable)
      op->moveBefore(group.front());
    LogicalResult result = launchSingleThread(rewriter, group);
    group.clear();
    movable.clear();
    return result;
  };
  auto usesGroup = [&](Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      return v.getDefiningOp() && llvm::is_contained(group, v.getDefiningOp());
    });
  };
  for (Operation *op : ops) {
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (failed(flush()) || failed(launchParallel(rewriter, loop)))
        return failure();
      continue;
    }
    if (!group.empty() &&
        isa<memref::AllocOp, memref::AllocaOp, arith::ConstantOp,
            memref::GetGlobalOp>(op) &&
        !usesGroup(op)) {
      movable.push_back(op);
      continue;
    }
    if (!group.empty() && cuda::getViewSource(op) && !usesGroup(op)) {
      movable.push_back(op);
      continue;
    }
    if (isHostOp(op)) {
      if (failed(flush()))
        return failure();
      continue;
    }
    // The loads of scalars an earlier launch computed join their user.
    SmallVector<Operation *> loads;
    for (Operation *p = op->getPrevNode(); p && pendingLoads.contains(p);
         p = p->getPrevNode())
      loads.push_back(p);
    for (Operation *load : llvm::reverse(loads)) {
      group.push_back(load);
      pendingLoads.erase(load);
    }
    group.push_back(op);
  }
  return flush();
}

LogicalResult LinalgToGpu::lowerLinalgOp(IRRewriter &rewriter,
                                         linalg::LinalgOp op, bool split) {
  if (!op.hasPureBufferSemantics())
    return op->emitError("the CUDA target expects bufferized linalg ops");
  rewriter.setInsertionPoint(op);
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op->emitError("cannot generalise this op for the CUDA target");
    generic = *generalized;
  }
  // Parallel loops first, so that they become the launch's threads.
  SmallVector<unsigned> parallel, reduction;
  for (auto [i, type] : llvm::enumerate(generic.getIteratorTypesArray()))
    (type == utils::IteratorType::parallel ? parallel : reduction).push_back(i);
  SmallVector<unsigned> order(parallel);
  order.append(reduction);
  if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
    rewriter.setInsertionPoint(generic);
    FailureOr<linalg::GenericOp> interchanged =
        linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(interchanged))
      return generic->emitError("cannot reorder the loops of this op");
    generic = *interchanged;
  }
  if (split) {
    FailureOr<SmallVector<linalg::LinalgOp>> stages =
        splitReduction(rewriter, generic);
    if (succeeded(stages)) {
      for (linalg::LinalgOp stage : *stages)
        if (failed(lowerLinalgOp(rewriter, stage, /*split=*/false)))
          return failure();
      return success();
    }
  }
  rewriter.setInsertionPoint(generic);
  if (failed(linalg::linalgOpToParallelLoops(rewriter, generic)))
    return generic->emitError("cannot lower this op to loops");
  rewriter.eraseOp(generic);
  return success();
}

LogicalResult LinalgToGpu::launchParallel(IRRewriter &rewriter,
                                          scf::ParallelOp loop) {
  if (loop.getNumResults())
    return loop.emitError("the CUDA target does not map reducing loops");
  SmallVector<int64_t> lower, counts, steps;
  int64_t total = 1;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return loop.emitError("the CUDA target needs static loop bounds "
                            "(static shapes)");
    int64_t count = *u > *l ? (*u - *l + *s - 1) / *s : 0;
    lower.push_back(*l);
    counts.push_back(count);
    steps.push_back(*s);
    total *= count;
  }
  if (total == 0) {
    rewriter.eraseOp(loop);
    return success();
  }
  int64_t threads = std::min<int64_t>(blockSize, (total + 31) / 32 * 32);
  int64_t blocks = (total + threads - 1) / threads;
  if (blocks > INT32_MAX)
    return loop.emitError("iteration space too large for one launch");

  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  auto constant = [&](int64_t v) -> Value {
    return rewriter.create<arith::ConstantIndexOp>(loc, v);
  };
  Value one = constant(1);
  auto launch = rewriter.create<gpu::LaunchOp>(loc, constant(blocks), one, one,
                                               constant(threads), one, one);
  Block &launchBody = launch.getBody().front();
  rewriter.setInsertionPointToStart(&launchBody);
  Value linear = rewriter.create<arith::AddIOp>(
      loc,
      rewriter.create<arith::MulIOp>(loc, launch.getBlockIds().x,
                                     constant(threads)),
      launch.getThreadIds().x);
  Value inBounds = rewriter.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ult, linear, constant(total));
  auto guard = rewriter.create<scf::IfOp>(loc, inBounds, false);
  rewriter.create<gpu::TerminatorOp>(loc);

  rewriter.setInsertionPointToStart(&guard.getThenRegion().front());
  IRMapping mapping;
  Value rest = linear;
  for (int64_t d = static_cast<int64_t>(counts.size()) - 1; d >= 0; --d) {
    Value index = rest;
    if (d > 0) {
      index = rewriter.create<arith::RemUIOp>(loc, rest, constant(counts[d]));
      rest = rewriter.create<arith::DivUIOp>(loc, rest, constant(counts[d]));
    }
    Value iv = index;
    if (steps[d] != 1)
      iv = rewriter.create<arith::MulIOp>(loc, iv, constant(steps[d]));
    if (lower[d] != 0)
      iv = rewriter.create<arith::AddIOp>(loc, iv, constant(lower[d]));
    mapping.map(loop.getInductionVars()[d], iv);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  rewriter.eraseOp(loop);
  return success();
}

LogicalResult LinalgToGpu::launchSingleThread(IRRewriter &rewriter,
                                              ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(ops.begin(), ops.end());
  auto inside = [&](Operation *user) {
    for (Operation *a = user; a; a = a->getParentOp())
      if (inGroup.contains(a))
        return true;
    return false;
  };
  Location loc = ops.front()->getLoc();
  rewriter.setInsertionPoint(ops.front());
  // Scalars the group computes and later device work reads travel through
  // a one-element device buffer: stored at the end of this launch, loaded
  // where they are used (inside the later launch).
  SmallVector<std::pair<Value, Value>> demoted; // (value, buffer)
  for (Operation *op : ops)
    for (Value result : op->getResults()) {
      SmallVector<OpOperand *> outside;
      for (OpOperand &use : result.getUses())
        if (!inside(use.getOwner()))
          outside.push_back(&use);
      if (outside.empty())
        continue;
      if (!result.getType().isIntOrIndexOrFloat())
        return op->emitError("the CUDA target cannot pass a value of type ")
               << result.getType() << " between device launches";
      for (OpOperand *use : outside)
        if (isHostOp(use->getOwner()))
          return use->getOwner()->emitError(
              "the CUDA target cannot use a value computed on the device on "
              "the host");
      auto buffer = rewriter.create<memref::AllocOp>(
          loc, MemRefType::get({}, result.getType()));
      demoted.push_back({result, buffer});
      for (OpOperand *use : outside) {
        OpBuilder b(use->getOwner());
        auto load = b.create<memref::LoadOp>(loc, buffer.getResult());
        use->set(load);
        if (use->getOwner()->getBlock() == ops.front()->getBlock())
          pendingLoads.insert(load);
      }
    }
  Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
  auto launch =
      rewriter.create<gpu::LaunchOp>(loc, one, one, one, one, one, one);
  Block &launchBody = launch.getBody().front();
  rewriter.setInsertionPointToStart(&launchBody);
  auto terminator = rewriter.create<gpu::TerminatorOp>(loc);
  for (Operation *op : ops)
    op->moveBefore(terminator);
  rewriter.setInsertionPoint(terminator);
  for (auto [value, buffer] : demoted)
    rewriter.create<memref::StoreOp>(loc, value, buffer);
  return success();
}

} // namespace
