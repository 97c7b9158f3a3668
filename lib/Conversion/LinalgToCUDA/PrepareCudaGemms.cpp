//===- PrepareCudaGemms.cpp - GEMMs as cuBLASLt runs them, on tensors ----===//
//
// See the pass description (amp-prepare-cuda-gemms in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/LinalgToCUDA/CudaGemm.h"
#include "amp/Conversion/LinalgToCUDA/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPPREPARECUDAGEMMS
#include "amp/Conversion/LinalgToCUDA/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

/// `value` without the reshapes (collapse/expand_shape) it went through,
/// outermost last.
Value skipReshapes(Value value, SmallVectorImpl<Operation *> &reshapes) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    reshapes.push_back(def);
    value = def->getOperand(0);
  }
  return value;
}

/// Applies `reshapes` (as skipReshapes found them) to `value`, keeping its
/// element type.
Value replayReshapes(OpBuilder &b, Value value,
                     ArrayRef<Operation *> reshapes) {
  Type element = getElementTypeOrSelf(value.getType());
  for (Operation *op : llvm::reverse(reshapes)) {
    auto type =
        cast<RankedTensorType>(op->getResult(0).getType()).clone(element);
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
      value = b.create<tensor::CollapseShapeOp>(
          op->getLoc(), type, value, collapse.getReassociationIndices());
    else
      value = b.create<tensor::ExpandShapeOp>(
          op->getLoc(), type, value,
          cast<tensor::ExpandShapeOp>(op).getReassociationIndices());
  }
  return value;
}

/// The f16/bf16 tensor that `value` widens exactly (an elementwise generic
/// whose body is one arith.extf, maybe reshaped after), or null.
Value widenedSource(OpBuilder &b, Value value) {
  SmallVector<Operation *> reshapes;
  auto generic =
      skipReshapes(value, reshapes).getDefiningOp<linalg::GenericOp>();
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
  return replayReshapes(b, source, reshapes);
}

/// The init of a GEMM when it is a zero fill (maybe reshaped): the fill's
/// destination, reshaped the same way, or null.
Value zeroFilledInit(OpBuilder &b, Value init) {
  SmallVector<Operation *> reshapes;
  auto fill = skipReshapes(init, reshapes).getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return {};
  return replayReshapes(b, fill.getOutputs()[0], reshapes);
}

/// A copy of `gemm` (a named GEMM) reading `a`, `b` and `init`: named ops
/// build their body for their operand types.
template <typename OpTy>
bool rebuild(Operation *op, Value a, Value b, Value init, bool betaZero) {
  if (!isa<OpTy>(op))
    return false;
  OpBuilder builder(op);
  auto gemm = builder.create<OpTy>(op->getLoc(), op->getResultTypes(),
                                   ValueRange{a, b}, ValueRange{init});
  if (betaZero)
    gemm->setAttr(mlir::amp::cuda::kBetaAttrName, builder.getF32FloatAttr(0));
  op->replaceAllUsesWith(gemm->getResults());
  op->erase();
  return true;
}

struct PrepareCudaGemms
    : public mlir::amp::impl::AmpPrepareCudaGemmsBase<PrepareCudaGemms> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::MatmulTransposeBOp,
              linalg::BatchMatmulOp, linalg::BatchMatmulTransposeBOp>(
              op.getOperation()) &&
          op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
          !op->getAttr("cast"))
        gemms.push_back(op);
    });
    for (linalg::LinalgOp op : gemms) {
      OpBuilder builder(op);
      Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
      Value init = op.getDpsInits()[0];
      bool changed = false;
      if (getElementTypeOrSelf(init.getType()).isF32()) {
        Value narrowA = widenedSource(builder, a);
        Value narrowB = widenedSource(builder, b);
        // cuBLASLt wants both operands in one type.
        if (narrowA && narrowB &&
            getElementTypeOrSelf(narrowA.getType()) ==
                getElementTypeOrSelf(narrowB.getType())) {
          a = narrowA;
          b = narrowB;
          changed = true;
        }
      }
      Value empty = zeroFilledInit(builder, init);
      if (empty)
        init = empty;
      if (!changed && !empty)
        continue;
      Operation *gemm = op.getOperation();
      (void)(rebuild<linalg::MatmulOp>(gemm, a, b, init, bool(empty)) ||
             rebuild<linalg::MatmulTransposeBOp>(gemm, a, b, init,
                                                 bool(empty)) ||
             rebuild<linalg::BatchMatmulOp>(gemm, a, b, init, bool(empty)) ||
             rebuild<linalg::BatchMatmulTransposeBOp>(gemm, a, b, init,
                                                      bool(empty)));
    }
  }
};

} // namespace
