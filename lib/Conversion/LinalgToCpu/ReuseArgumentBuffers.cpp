//===- ReuseArgumentBuffers.cpp - the amp-reuse-argument-buffers pass -----===//
//
// A train step returns every state value updated: new parameters, optimizer
// moments, running statistics. Each update is an elementwise linalg.generic
// that reads the old value (a function argument) and writes a fresh tensor,
// so bufferization allocates a new buffer per state value and the caller
// copies it back. When nothing reads the old value after the update, the
// update can write into the argument's buffer instead: this pass makes the
// argument the generic's destination (its `outs`), and one-shot
// bufferization, which treats function arguments as writable, then writes
// in place. The caller (amp_runtime::callPackedConsuming) takes the buffer
// back without a copy.
//
// Updates whose results only the return reads are first moved to the end
// of the function (their operands are all defined before them, so this is
// always legal), and an update whose old value is still read by a later
// update (SGD with momentum recomputes the new velocity in the parameter's
// update) is moved after that reader. The checks here only decide where it
// pays; bufferization's own conflict analysis keeps every rewrite correct
// (a destination read after it is written would be copied first).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/LinalgToCpu/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPREUSEARGUMENTBUFFERS
#include "amp/Conversion/LinalgToCpu/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Whether every use of `value` (and of the views of it) other than as an
/// input of `limit` is by an op of `block` placed before `limit`, and none
/// can write into it or let it escape. Unknown users count as writers.
bool onlyReadBefore(Value value, Operation *limit, Block &block) {
  for (OpOperand &use : value.getUses()) {
    Operation *owner = use.getOwner();
    if (owner->getBlock() != &block)
      return false; // inside a region: not analysed
    if (owner == limit) {
      auto generic = cast<linalg::GenericOp>(limit);
      if (generic.isDpsInit(&use))
        return false;
      continue;
    }
    if (!owner->isBeforeInBlock(limit))
      return false;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
            tensor::ExtractSliceOp, tensor::CastOp, tensor::ReshapeOp>(
            owner)) {
      if (!onlyReadBefore(owner->getResult(0), limit, block))
        return false;
      continue;
    }
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(owner)) {
      if (dps.isDpsInit(&use))
        return false;
      continue;
    }
    if (isa<tensor::ExtractOp, tensor::DimOp>(owner))
      continue;
    return false;
  }
  return true;
}

/// The last op of `block` that uses `value` or a view of it, other than
/// `except`; null when none does.
Operation *lastReader(Value value, Operation *except, Block &block) {
  Operation *last = nullptr;
  for (OpOperand &use : value.getUses()) {
    Operation *owner = block.findAncestorOpInBlock(*use.getOwner());
    if (!owner || owner == except)
      continue;
    if (!last || last->isBeforeInBlock(owner))
      last = owner;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
            tensor::ExtractSliceOp, tensor::CastOp, tensor::ReshapeOp>(
            owner))
      if (Operation *viewReader = lastReader(owner->getResult(0), except,
                                             block))
        if (last->isBeforeInBlock(viewReader))
          last = viewReader;
  }
  return last;
}

/// An all-parallel generic in `block` whose results only `terminator`
/// uses: an update of returned state.
bool isReturnedUpdate(linalg::GenericOp generic, Operation *terminator) {
  if (generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  for (Value result : generic->getResults())
    for (Operation *user : result.getUsers())
      if (user != terminator)
        return false;
  return true;
}

/// The argument whose buffer result `index` of `generic` may take: an
/// input of the same static type, read at the same index (identity map), of
/// a destination that is a fresh tensor the body does not read.
BlockArgument argumentFor(linalg::GenericOp generic, unsigned index,
                          Block &entry,
                          const llvm::SmallPtrSetImpl<Value> &taken) {
  OpOperand *init = generic.getDpsInitOperand(index);
  auto type = dyn_cast<RankedTensorType>(init->get().getType());
  if (!type || !type.hasStaticShape() ||
      !init->get().getDefiningOp<tensor::EmptyOp>() ||
      generic.payloadUsesValueFromOperand(init) ||
      !generic.getMatchingIndexingMap(init).isIdentity())
    return {};
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto argument = dyn_cast<BlockArgument>(input->get());
    if (argument && argument.getOwner() == &entry &&
        argument.getType() == type && !taken.contains(argument) &&
        generic.getMatchingIndexingMap(input).isIdentity())
      return argument;
  }
  return {};
}

struct ReuseArgumentBuffersPass
    : public amp::impl::AmpReuseArgumentBuffersBase<ReuseArgumentBuffersPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    Block &entry = function.getBody().front();
    Operation *terminator = entry.getTerminator();
    if (!isa<func::ReturnOp>(terminator))
      return;

    // The updates that could take an argument's buffer, moved to the end
    // in their order (others stay where they are: moving them would only
    // keep their inputs alive longer).
    SmallVector<linalg::GenericOp> updates;
    llvm::SmallPtrSet<Value, 16> taken;
    for (auto generic : entry.getOps<linalg::GenericOp>()) {
      if (!isReturnedUpdate(generic, terminator))
        continue;
      for (unsigned i = 0; i < generic.getNumDpsInits(); ++i)
        if (argumentFor(generic, i, entry, taken)) {
          updates.push_back(generic);
          break;
        }
    }
    for (linalg::GenericOp generic : updates)
      generic->moveBefore(terminator);

    // Tie each update's results to arguments, in order. `writers` maps an
    // argument to the update now writing into it.
    llvm::DenseMap<Value, Operation *> writers;
    for (linalg::GenericOp generic : updates) {
      for (unsigned i = 0; i < generic.getNumDpsInits(); ++i) {
        BlockArgument argument = argumentFor(generic, i, entry, taken);
        if (!argument)
          continue;
        // Later readers of the old value among the updates: move this one
        // after the last of them, unless it would pass an update that
        // writes into a buffer this one reads.
        Operation *last = lastReader(argument, generic, entry);
        if (last && generic->isBeforeInBlock(last)) {
          bool passesWriter = false;
          for (Operation *op = generic->getNextNode(); op && !passesWriter;
               op = op->getNextNode()) {
            for (Value input : generic->getOperands())
              passesWriter |= writers.lookup(input) == op;
            if (op == last)
              break;
          }
          if (passesWriter || !isa<linalg::GenericOp>(last) ||
              !isReturnedUpdate(cast<linalg::GenericOp>(last), terminator))
            continue;
          generic->moveAfter(last);
        }
        if (!onlyReadBefore(argument, generic, entry))
          continue;
        generic.getDpsInitOperand(i)->set(argument);
        taken.insert(argument);
        writers[argument] = generic;
      }
    }
  }
};

} // namespace
