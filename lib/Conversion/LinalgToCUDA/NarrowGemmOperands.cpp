//===- NarrowGemmOperands.cpp - fp16/bf16 operands into fp32 GEMMs --------===//

#include "amp/Conversion/LinalgToCUDA/Passes.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPNARROWGEMMOPERANDS
#include "amp/Conversion/LinalgToCUDA/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

/// The f16/bf16 tensor that `value` widens exactly (an elementwise generic
/// whose body is one arith.extf), or null.
Value widenedSource(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block *body = generic.getBody();
  if (body->getOperations().size() != 2)
    return {};
  auto extf = dyn_cast<arith::ExtFOp>(body->front());
  if (!extf || extf.getIn() != body->getArgument(0) ||
      body->getTerminator()->getOperand(0) != extf.getResult())
    return {};
  Value source = generic.getDpsInputs()[0];
  Type element = getElementTypeOrSelf(source.getType());
  if (!element.isF16() && !element.isBF16())
    return {};
  if (cast<ShapedType>(source.getType()).getShape() !=
      cast<ShapedType>(value.getType()).getShape())
    return {};
  return source;
}

/// A copy of `op` (a named GEMM) reading `a` and `b`: named ops build
/// their body for their operand types.
template <typename OpTy>
bool rebuild(Operation *op, Value a, Value b) {
  auto gemm = dyn_cast<OpTy>(op);
  if (!gemm)
    return false;
  OpBuilder builder(op);
  auto narrowed = builder.create<OpTy>(op->getLoc(), op->getResultTypes(),
                                       ValueRange{a, b}, gemm.getDpsInits());
  op->replaceAllUsesWith(narrowed->getResults());
  op->erase();
  return true;
}

struct NarrowGemmOperands
    : public mlir::amp::impl::AmpNarrowGemmOperandsBase<NarrowGemmOperands> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> gemms;
    getOperation().walk([&](linalg::LinalgOp op) { gemms.push_back(op); });
    for (linalg::LinalgOp op : gemms) {
      if (!isa<linalg::MatmulOp, linalg::MatmulTransposeBOp,
               linalg::BatchMatmulOp, linalg::BatchMatmulTransposeBOp>(
              op.getOperation()) ||
          !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
          !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32() ||
          op->getAttr("cast"))
        continue;
      Value a = widenedSource(op.getDpsInputs()[0]);
      Value b = widenedSource(op.getDpsInputs()[1]);
      // cuBLASLt wants both operands in one type.
      if (!a || !b ||
          getElementTypeOrSelf(a.getType()) != getElementTypeOrSelf(b.getType()))
        continue;
      Operation *gemm = op.getOperation();
      (void)(rebuild<linalg::MatmulOp>(gemm, a, b) ||
             rebuild<linalg::MatmulTransposeBOp>(gemm, a, b) ||
             rebuild<linalg::BatchMatmulOp>(gemm, a, b) ||
             rebuild<linalg::BatchMatmulTransposeBOp>(gemm, a, b));
    }
  }
};

} // namespace
