//===- OutlineParallelLoops.cpp - the amp-outline-parallel-loops pass -----===//
//
// Outermost scf.parallel loops -> a function over a range of iterations
// plus a call to the CPU runtime's amp_cpu_parallel_for, which runs the
// ranges on the OpenMP pool that oneDNN uses too (one pool: no two
// runtimes spinning against each other on a small machine).
//
// The captured values travel in a stack struct of their LLVM forms (memref
// descriptors, i64 for index, scalars as they are); unrealized casts join
// them to the memref world, and the LLVM conversions fold the casts.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/LinalgToCpu/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPOUTLINEPARALLELLOOPS
#include "amp/Conversion/LinalgToCpu/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

constexpr StringLiteral kParallelForName = "amp_cpu_parallel_for";
/// Work assumed for a loop whose trip count is only known at run time.
constexpr int64_t kDynamicTripCount = 16;
/// Distributed iterations that balance well over the threads of a CPU.
constexpr int64_t kEnoughShares = 64;

int64_t saturatingMul(int64_t a, int64_t b) {
  if (a > 0 && b > std::numeric_limits<int64_t>::max() / a)
    return std::numeric_limits<int64_t>::max();
  return a * b;
}

std::optional<int64_t> getStaticTripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return *u > *l ? (*u - *l + *s - 1) / *s : 0;
}

/// Innermost iteration points executed by one run of `block`.
int64_t estimateWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    int64_t trips = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      trips = getStaticTripCount(loop.getLowerBound(), loop.getUpperBound(),
                                 loop.getStep())
                  .value_or(kDynamicTripCount);
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      for (auto [lb, ub, step] : llvm::zip(
               loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        trips = saturatingMul(
            trips, getStaticTripCount(lb, ub, step).value_or(kDynamicTripCount));
    }
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        work = std::max(work, saturatingMul(trips, estimateWork(inner)));
  }
  return std::max<int64_t>(work, 1);
}

/// Ops that are cheaper to recreate in the outlined function than to pass.
bool isRematerializable(Operation *op) {
  return op && (matchPattern(op, m_Constant()) || isa<memref::GetGlobalOp>(op));
}

struct AmpOutlineParallelLoopsPass
    : public amp::impl::AmpOutlineParallelLoopsBase<
          AmpOutlineParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LLVMTypeConverter converter(&getContext());
    SymbolTable symbols(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      SmallVector<scf::ParallelOp> loops;
      func.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
        loops.push_back(loop);
        return WalkResult::skip(); // nested loops run inside the outlined one
      });
      unsigned counter = 0;
      for (scf::ParallelOp loop : loops)
        outline(loop, func, counter, converter, symbols);
    }
  }

  void outline(scf::ParallelOp loop, func::FuncOp parent, unsigned &counter,
               const LLVMTypeConverter &converter, SymbolTable &symbols);
};

void AmpOutlineParallelLoopsPass::outline(scf::ParallelOp loop,
                                          func::FuncOp parent,
                                          unsigned &counter,
                                          const LLVMTypeConverter &converter,
                                          SymbolTable &symbols) {
  if (loop.getNumResults() || !loop.getInitVals().empty())
    return; // reductions across iterations stay sequential
  MLIRContext *context = &getContext();
  Location loc = loop.getLoc();
  unsigned rank = loop.getNumLoops();

  // The distributed dimensions: the outer ones, linearised, with the
  // innermost kept whole; or the innermost alone when the outer ones are
  // known to be too few to share (e.g. a batch of one).
  SmallVector<std::optional<int64_t>> staticTrips;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
    staticTrips.push_back(getStaticTripCount(lb, ub, step));
  bool distributeInnermost = rank == 1;
  if (!distributeInnermost) {
    int64_t outer = 1;
    bool known = true;
    for (unsigned d = 0; d + 1 < rank; ++d) {
      known &= staticTrips[d].has_value();
      outer = saturatingMul(outer, staticTrips[d].value_or(1));
    }
    distributeInnermost = known && outer < 4;
  }
  // Of the outer dimensions, only as many as give enough shares: each
  // further one costs a division per iteration to delinearise.
  SmallVector<unsigned> distributed, sequential;
  if (distributeInnermost) {
    distributed.push_back(rank - 1);
  } else {
    int64_t shares = 1;
    bool known = true;
    for (unsigned d = 0; d + 1 < rank; ++d) {
      distributed.push_back(d);
      known &= staticTrips[d].has_value();
      shares = saturatingMul(shares, staticTrips[d].value_or(1));
      if (known && shares >= kEnoughShares)
        break;
    }
  }
  for (unsigned d = 0; d < rank; ++d)
    if (!llvm::is_contained(distributed, d))
      sequential.push_back(d);

  int64_t workPerIteration = estimateWork(*loop.getBody());
  for (unsigned d : sequential)
    workPerIteration = saturatingMul(
        workPerIteration, staticTrips[d].value_or(kDynamicTripCount));

  // Captured values; trip counts are computed here and captured too.
  OpBuilder b(loop);
  SmallVector<Value> trips;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value extent = b.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value trip = b.createOrFold<arith::CeilDivSIOp>(loc, extent, step);
    trips.push_back(b.createOrFold<arith::MaxSIOp>(
        loc, trip, b.create<arith::ConstantIndexOp>(loc, 0)));
  }
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  for (ValueRange bounds : {ValueRange(loop.getLowerBound()),
                            ValueRange(loop.getUpperBound()),
                            ValueRange(loop.getStep()), ValueRange(trips)})
    used.insert(bounds.begin(), bounds.end());
  SmallVector<Value> captured;
  SmallVector<Type> fieldTypes;
  SmallVector<Operation *> rematerialized;
  for (Value v : used) {
    Operation *def = v.getDefiningOp();
    if (isRematerializable(def)) {
      rematerialized.push_back(def);
      continue;
    }
    Type field = v.getType().isIndex()
                     ? IntegerType::get(context, 64)
                     : converter.convertType(v.getType());
    if (!field || !LLVM::isCompatibleType(field)) {
      // No LLVM form to pass it in: the loop stays sequential.
      return; // the unused trip counts fold away
    }
    captured.push_back(v);
    fieldTypes.push_back(field);
  }
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  auto contextType = LLVM::LLVMStructType::getLiteral(context, fieldTypes);

  // The outlined function: void (i64 begin, i64 end, ptr context).
  OpBuilder moduleBuilder(parent);
  std::string name;
  do
    name = (parent.getSymName() + "_parallel_" + Twine(counter++)).str();
  while (symbols.lookup(name));
  auto outlined = moduleBuilder.create<func::FuncOp>(
      loc, name, FunctionType::get(context, {i64, i64, ptrType}, {}));
  outlined.setPrivate();
  symbols.insert(outlined);
  Block *entry = outlined.addEntryBlock();
  OpBuilder ib = OpBuilder::atBlockBegin(entry);
  IRMapping mapping;
  for (Operation *def : rematerialized)
    ib.clone(*def, mapping);
  for (auto [i, v] : llvm::enumerate(captured)) {
    Value field = ib.create<LLVM::GEPOp>(
        loc, ptrType, contextType, entry->getArgument(2),
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    Value loaded = ib.create<LLVM::LoadOp>(loc, fieldTypes[i], field);
    Value value =
        v.getType().isIndex()
            ? ib.create<arith::IndexCastOp>(loc, v.getType(), loaded)
                  .getResult()
        : loaded.getType() == v.getType()
            ? loaded
            : ib.create<UnrealizedConversionCastOp>(loc, v.getType(), loaded)
                  .getResult(0);
    mapping.map(v, value);
  }
  auto map = [&](Value v) { return mapping.lookupOrDefault(v); };
  Value begin = ib.create<arith::IndexCastOp>(loc, ib.getIndexType(),
                                              entry->getArgument(0));
  Value end = ib.create<arith::IndexCastOp>(loc, ib.getIndexType(),
                                            entry->getArgument(1));
  Value one = ib.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> ivs(rank);
  auto ivOf = [&](unsigned d, Value index) {
    Value scaled = ib.create<arith::MulIOp>(loc, index, map(loop.getStep()[d]));
    return ib.create<arith::AddIOp>(loc, map(loop.getLowerBound()[d]), scaled)
        .getResult();
  };
  auto sequentialLoop = [&](unsigned d) {
    auto inner = ib.create<scf::ForOp>(loc, map(loop.getLowerBound()[d]),
                                       map(loop.getUpperBound()[d]),
                                       map(loop.getStep()[d]));
    ivs[d] = inner.getInductionVar();
    ib.setInsertionPointToStart(inner.getBody());
  };
  if (distributeInnermost) {
    // Outer dimensions (too few to share) outside, the innermost's share
    // inside: the inner loop stays contiguous.
    for (unsigned d : sequential)
      sequentialLoop(d);
    auto share = ib.create<scf::ForOp>(loc, begin, end, one);
    ib.setInsertionPointToStart(share.getBody());
    ivs[rank - 1] = ivOf(rank - 1, share.getInductionVar());
  } else {
    auto share = ib.create<scf::ForOp>(loc, begin, end, one);
    ib.setInsertionPointToStart(share.getBody());
    Value remaining = share.getInductionVar();
    for (unsigned d : llvm::reverse(distributed)) {
      Value trip = map(trips[d]);
      Value index = d == distributed.front()
                        ? remaining
                        : ib.create<arith::RemUIOp>(loc, remaining, trip);
      if (d != distributed.front())
        remaining = ib.create<arith::DivUIOp>(loc, remaining, trip);
      ivs[d] = ivOf(d, index);
    }
    for (unsigned d : sequential)
      sequentialLoop(d);
  }
  for (auto [iv, newIv] : llvm::zip(loop.getInductionVars(), ivs))
    mapping.map(iv, newIv);
  for (Operation &op : loop.getBody()->without_terminator())
    ib.clone(op, mapping);
  ib.setInsertionPointToEnd(entry);
  ib.create<func::ReturnOp>(loc);

  // The call: fill the context (one stack slot per loop, in the entry
  // block, so that loops around the call do not grow the stack).
  auto runtime = symbols.lookup<func::FuncOp>(kParallelForName);
  if (!runtime) {
    OpBuilder db = OpBuilder::atBlockBegin(getOperation().getBody());
    runtime = db.create<func::FuncOp>(
        loc, kParallelForName,
        FunctionType::get(context, {ptrType, ptrType, i64, i64, i64}, {}));
    runtime.setPrivate();
    symbols.insert(runtime);
  }
  OpBuilder eb = OpBuilder::atBlockBegin(&parent.getBody().front());
  Value slotCount = eb.create<LLVM::ConstantOp>(loc, i64, 1);
  Value slot = eb.create<LLVM::AllocaOp>(loc, ptrType, contextType, slotCount);
  for (auto [i, v] : llvm::enumerate(captured)) {
    Value value =
        v.getType().isIndex()
            ? b.create<arith::IndexCastOp>(loc, i64, v).getResult()
        : fieldTypes[i] == v.getType()
            ? v
            : b.create<UnrealizedConversionCastOp>(loc, fieldTypes[i], v)
                  .getResult(0);
    Value field =
        b.create<LLVM::GEPOp>(loc, ptrType, contextType, slot,
                              ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    b.create<LLVM::StoreOp>(loc, value, field);
  }
  Value count = b.create<arith::ConstantIndexOp>(loc, 1);
  for (unsigned d : distributed)
    count = b.create<arith::MulIOp>(loc, count, trips[d]);
  Value function = b.create<func::ConstantOp>(loc, outlined.getFunctionType(),
                                              SymbolRefAttr::get(outlined));
  Value functionPtr =
      b.create<UnrealizedConversionCastOp>(loc, ptrType, function).getResult(0);
  b.create<func::CallOp>(
      loc, runtime,
      ValueRange{functionPtr, slot,
                 b.create<arith::IndexCastOp>(loc, i64, count),
                 b.create<arith::ConstantIntOp>(loc, workPerIteration, 64),
                 b.create<arith::ConstantIntOp>(loc, minParallelWork, 64)});
  loop.erase();
}

} // namespace
