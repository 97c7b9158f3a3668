//===- ReturnArgumentsUncloned.cpp - amp-return-arguments-uncloned --------===//
//
// Ownership-based buffer deallocation makes a public function own what it
// returns, so a result that is one of its arguments' buffers (a state
// update written in place, see amp-reuse-argument-buffers, or an input
// returned unchanged) is cloned: an allocation and a copy per call. The
// CPU runtime knows which results are its own input buffers
// (amp_runtime::callPacked never frees those and takes over updated
// ones), so for the functions it calls, nothing in the module calls them,
// the clone is not needed.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/LinalgToCpu/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPRETURNARGUMENTSUNCLONED
#include "amp/Conversion/LinalgToCpu/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

struct ReturnArgumentsUnclonedPass
    : public amp::impl::AmpReturnArgumentsUnclonedBase<
          ReturnArgumentsUnclonedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal() || function.isPrivate() ||
          !SymbolTable::symbolKnownUseEmpty(function, module))
        continue;
      Block &entry = function.getBody().front();
      auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
      if (!ret)
        continue;
      for (OpOperand &operand : ret->getOpOperands()) {
        auto clone = operand.get().getDefiningOp<bufferization::CloneOp>();
        if (!clone || !clone->hasOneUse() || clone->getBlock() != &entry)
          continue;
        auto argument = dyn_cast<BlockArgument>(clone.getInput());
        if (!argument || argument.getOwner() != &entry ||
            argument.getType() != clone.getType())
          continue;
        operand.set(argument);
        clone->erase();
      }
    }
  }
};

} // namespace
