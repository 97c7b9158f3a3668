//===- SortConstants.cpp - constants first, in the order of first use -----===//

#include "amp/Transforms/Passes.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Visitors.h"

#include <algorithm>
#include <climits>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPSORTCONSTANTS
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

void sortConstants(Block &block) {
  SmallVector<Operation *> constants;
  for (Operation &op : block)
    if (op.hasTrait<OpTrait::ConstantLike>() && op.getNumRegions() == 0)
      constants.push_back(&op);
  if (constants.empty())
    return;
  // Every op of the block, nested ones included, numbered in pre-order: a
  // use by an op comes before a use inside its regions.
  DenseMap<Operation *, unsigned> position;
  unsigned index = 0;
  for (Operation &op : block)
    op.walk<WalkOrder::PreOrder>(
        [&](Operation *nested) { position[nested] = index++; });
  // A constant's key: its first use (the user's position, then the
  // operand's number); unused constants last.
  using Key = std::pair<unsigned, unsigned>;
  DenseMap<Operation *, Key> firstUse;
  for (Operation *constant : constants) {
    Key first = {UINT_MAX, UINT_MAX};
    for (OpOperand &use : constant->getUses())
      first = std::min(
          first, Key(position.lookup(use.getOwner()), use.getOperandNumber()));
    firstUse[constant] = first;
  }
  std::stable_sort(
      constants.begin(), constants.end(),
      [&](Operation *a, Operation *b) { return firstUse[a] < firstUse[b]; });
  for (Operation *constant : llvm::reverse(constants))
    constant->moveBefore(&block, block.begin());
}

class SortConstantsPass
    : public amp::impl::AmpSortConstantsBase<SortConstantsPass> {
public:
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      sortConstants(*block);
  }
};

} // namespace
