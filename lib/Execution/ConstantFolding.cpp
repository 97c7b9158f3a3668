//===- ConstantFolding.cpp - amp-fold-constants with the CPU backend ------===//
//
// Ops computed from constants only are cloned, per function, into one
// `@main() -> (values used elsewhere)`, which CpuProgram lowers and
// JIT-compiles like any amp program; its results replace the ops. So the
// folded values have the CPU backend's numerics by construction, and no
// per-op evaluator exists besides the backend.
//
//===----------------------------------------------------------------------===//

#include "amp/Execution/Passes.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Execution/CpuProgram.h"
#include "amp/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <limits>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFOLDCONSTANTS
#include "amp/Execution/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

bool isConstantSource(Operation *op) { return isa<ConstantOp, NoneOp>(op); }

/// Whether `op` may be computed at compile time once its operands are
/// known: a deterministic amp op without regions whose results are static
/// tensors of at most `maxElements` elements.
bool isFoldable(Operation *op, int64_t maxElements) {
  if (!isa<AmpDialect>(op->getDialect()) || op->getNumOperands() == 0 ||
      op->getNumRegions() != 0 || isConstantSource(op))
    return false;
  StringRef name = op->getName().stripDialect();
  if (name.contains("random") || name.contains("bernoulli") ||
      name.contains("multinomial") || name.contains("dropout") ||
      isa<MultiTensorUnscaleCheckOp>(op))
    return false;
  // A DequantizeLinear of constants is a quantized weight: folded, it would
  // be stored in float (four times the bytes) and the model would leave
  // QDQ form (onnxruntime fuses DequantizeLinear -> MatMul/Conv).
  if (isa<DequantizeLinearOp>(op))
    return false;
  for (Type type : op->getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        tensor.getNumElements() > maxElements)
      return false;
  }
  return true;
}

/// a + b for non-negative sizes, saturating instead of overflowing.
int64_t saturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b
             ? std::numeric_limits<int64_t>::max()
             : a + b;
}

/// The bytes a static tensor value takes on the host (at least one per
/// element); the most an int64_t holds for a dynamic, unranked or
/// overflowing one.
int64_t valueBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return isa<NoneType>(value.getType())
               ? 0
               : std::numeric_limits<int64_t>::max();
  Type element = type.getElementType();
  int64_t bytes =
      element.isIntOrFloat()
          ? std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8)
          : 8;
  for (int64_t d : type.getShape()) {
    if (d != 0 && bytes > std::numeric_limits<int64_t>::max() / d)
      return std::numeric_limits<int64_t>::max();
    bytes *= d;
  }
  return bytes;
}

/// The value of host tensor `tensor` as an attribute of `type`.
DenseElementsAttr toAttribute(RankedTensorType type,
                              const amp_runtime::Tensor &tensor) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits;
    for (char byte : tensor.bytes)
      bits.push_back(byte != 0);
    return DenseElementsAttr::get(type, bits);
  }
  bool splat = false;
  ArrayRef<char> bytes(tensor.bytes.data(), tensor.bytes.size());
  if (!DenseElementsAttr::isValidRawBuffer(type, bytes, splat))
    return {};
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

struct AmpFoldConstantsPass
    : public amp::impl::AmpFoldConstantsBase<AmpFoldConstantsPass> {
  using AmpFoldConstantsBase::AmpFoldConstantsBase;

  void runOnOperation() override {
    budget = maxBytes;
    for (auto func : getOperation().getOps<func::FuncOp>())
      foldFunction(func);
  }

  /// Bytes the rest of this run may materialise.
  int64_t budget = 0;

  void foldFunction(func::FuncOp func) {
    // The foldable ops whose operands are constants or foldable, in order,
    // while what they materialise fits the budget: each constant operand
    // once (the backend holds it as a global, splats too), every result.
    llvm::SetVector<Operation *> group;
    llvm::DenseSet<Value> counted;
    func.walk([&](Operation *op) {
      if (!isFoldable(op, maxElements))
        return;
      int64_t bytes = 0;
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !(isConstantSource(def) || group.contains(def)))
          return;
        if (isConstantSource(def) && !counted.contains(operand))
          bytes = saturatingAdd(bytes, valueBytes(operand));
      }
      for (Value result : op->getResults())
        bytes = saturatingAdd(bytes, valueBytes(result));
      if (bytes > budget)
        return;
      budget -= bytes;
      for (Value operand : op->getOperands())
        if (isConstantSource(operand.getDefiningOp()))
          counted.insert(operand);
      group.insert(op);
    });
    if (group.empty())
      return;
    // The values the rest of the function uses.
    SmallVector<Value> outputs;
    for (Operation *op : group)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !group.contains(user);
            }))
          outputs.push_back(result);
    if (outputs.empty())
      return;

    // @main() -> outputs, in a module of its own.
    MLIRContext *context = func.getContext();
    Location loc = func.getLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
    auto main = builder.create<func::FuncOp>(
        loc, "main",
        FunctionType::get(context, {}, TypeRange(ValueRange(outputs))));
    builder.setInsertionPointToStart(main.addEntryBlock());
    IRMapping mapping;
    for (Operation *op : group) {
      for (Value operand : op->getOperands())
        if (!mapping.contains(operand))
          builder.clone(*operand.getDefiningOp(), mapping);
      builder.clone(*op, mapping);
    }
    SmallVector<Value> returned;
    for (Value output : outputs)
      returned.push_back(mapping.lookup(output));
    builder.create<func::ReturnOp>(loc, returned);

    // Compile and run; a group the backend cannot lower stays as it is.
    std::vector<amp_runtime::Tensor> values;
    {
      ScopedDiagnosticHandler quiet(context,
                                    [](Diagnostic &) { return success(); });
      auto program = execution::CpuProgram::compile(*module);
      if (failed(program))
        return;
      // A failed run-time check (an index out of range) is left for
      // the run to report.
      if (llvm::Error err = (*program)->run({}, values)) {
        llvm::consumeError(std::move(err));
        return;
      }
    }
    if (values.size() != outputs.size())
      return;
    OpBuilder rewriter(context);
    for (auto [output, value] : llvm::zip(outputs, values)) {
      auto type = cast<RankedTensorType>(output.getType());
      DenseElementsAttr attr = toAttribute(type, value);
      if (!attr)
        continue;
      rewriter.setInsertionPointAfterValue(output);
      Value constant = rewriter.create<ConstantOp>(output.getLoc(), attr);
      output.replaceAllUsesWith(constant);
    }
    // The folded ops are now unused, and so may be their constants.
    llvm::SetVector<Operation *> sources;
    for (Operation *op : group)
      for (Value operand : op->getOperands())
        if (!group.contains(operand.getDefiningOp()))
          sources.insert(operand.getDefiningOp());
    for (Operation *op : llvm::reverse(group))
      if (op->use_empty())
        op->erase();
    for (Operation *source : sources)
      if (source->use_empty())
        source->erase();
  }
};

} // namespace

void mlir::amp::registerConstantFolding() {
  setConstantFolder([](int64_t maxBytes) {
    AmpFoldConstantsOptions options;
    options.maxBytes = maxBytes;
    return createAmpFoldConstants(options);
  });
}
