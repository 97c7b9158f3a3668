//===- LinalgToRuntime.cpp - fp32 GEMMs and convolutions -> runtime calls -===//
//
// After bufferization, fp32 matmuls and the convolutions marked by
// convert-amp-to-linalg become calls into lib/Runtime/CpuRuntime.cpp
// (oneDNN), the way the CUDA path calls cuBLASLt. Memrefs are passed
// unranked, so the runtime sees sizes and strides (transposed and strided
// views work without copies).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLINALGTORUNTIMECALLS
#define GEN_PASS_DEF_AMPFUSEELEMENTWISE
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::lowering;

namespace {

bool isF32Memref(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getElementType().isF32();
}

/// Declares (once) `void name(memref<*xf32>..., i64...)`.
func::FuncOp getOrDeclare(ModuleOp module, StringRef name,
                          unsigned memrefCount, unsigned intCount) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  MLIRContext *context = module.getContext();
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  SmallVector<Type> inputs(memrefCount,
                           UnrankedMemRefType::get(Float32Type::get(context),
                                                   0));
  inputs.append(intCount, IntegerType::get(context, 64));
  auto func = b.create<func::FuncOp>(module.getLoc(), name,
                                     FunctionType::get(context, inputs, {}));
  func.setPrivate();
  return func;
}

/// Whether a buffer is (a view of) a constant global: its contents never
/// change, so the runtime may cache a reordered copy.
bool isConstantBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto global = dyn_cast<memref::GetGlobalOp>(def)) {
      auto symbol = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          def, global.getNameAttr());
      return symbol && symbol.getConstant();
    }
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp,
            memref::ReinterpretCastOp, memref::SubViewOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    return false;
  }
  return false;
}

void emitCall(OpBuilder &b, Location loc, func::FuncOp callee,
              ValueRange memrefs, ArrayRef<int64_t> ints) {
  SmallVector<Value> args;
  auto unranked = UnrankedMemRefType::get(b.getF32Type(), 0);
  for (Value v : memrefs)
    args.push_back(b.create<memref::CastOp>(loc, unranked, v));
  for (int64_t i : ints)
    args.push_back(b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(i)));
  b.create<func::CallOp>(loc, callee, args);
}

struct AmpLinalgToRuntimeCallsPass
    : public amp::impl::AmpLinalgToRuntimeCallsBase<
          AmpLinalgToRuntimeCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> targets;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (!llvm::all_of(op->getOperands(), isF32Memref))
        return;
      if (isa<linalg::MatmulOp, linalg::MatmulTransposeBOp,
              linalg::BatchMatmulOp, linalg::BatchMatmulTransposeBOp>(op) ||
          op->hasAttr(kRuntimeCallAttr))
        targets.push_back(op);
    });
    for (Operation *op : targets) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (op->hasAttr(kRuntimeCallAttr)) {
        auto strides = op->getAttrOfType<DenseI64ArrayAttr>(kConvStridesAttr);
        auto dilations =
            op->getAttrOfType<DenseI64ArrayAttr>(kConvDilationsAttr);
        if (!strides || !dilations) {
          op->emitError("amp.runtime_call without convolution parameters");
          return signalPassFailure();
        }
        SmallVector<int64_t> ints(strides.asArrayRef());
        ints.resize(3, 1);
        SmallVector<int64_t> d(dilations.asArrayRef());
        d.resize(3, 1);
        ints.append(d);
        ints.push_back(strides.size());
        ints.push_back(isConstantBuffer(op->getOperand(1)) ? 1 : 0);
        func::FuncOp callee = getOrDeclare(module, "amp_cpu_conv_f32", 3, 8);
        emitCall(b, loc, callee, op->getOperands(), ints);
      } else {
        bool batched = isa<linalg::BatchMatmulOp,
                           linalg::BatchMatmulTransposeBOp>(op);
        bool transposeB = isa<linalg::MatmulTransposeBOp,
                              linalg::BatchMatmulTransposeBOp>(op);
        func::FuncOp callee = getOrDeclare(module, "amp_cpu_matmul_f32", 3, 1);
        (void)batched; // the runtime reads the rank
        emitCall(b, loc, callee, op->getOperands(), {transposeB ? 1 : 0});
      }
      op->erase();
    }
  }
};

struct AmpFuseElementwisePass
    : public amp::impl::AmpFuseElementwiseBase<AmpFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fusedOperand) {
          Operation *consumer = fusedOperand->getOwner();
          if (consumer->hasAttr(kRuntimeCallAttr))
            return false;
          // Keep a producer with several users unfused (no recomputation).
          Operation *producer = fusedOperand->get().getDefiningOp();
          return producer && producer->hasOneUse();
        });
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
