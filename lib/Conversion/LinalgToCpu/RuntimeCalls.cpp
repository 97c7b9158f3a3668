//===- RuntimeCalls.cpp - fp32 GEMMs and convolutions -> runtime calls ----===//
//
// After bufferization, fp32 matmuls and the fp32 convolutions and
// convolution weight gradients (1-3 spatial dimensions) marked by
// convert-amp-to-linalg become calls into
// lib/Runtime/CpuRuntime.cpp (oneDNN), the way the CUDA path calls
// cuBLASLt. Memrefs are passed unranked, so the runtime sees sizes and
// strides (transposed and strided views work without copies).
//
//===----------------------------------------------------------------------===//

#include "RuntimeConv.h"
#include "amp/Conversion/LinalgToCpu/Passes.h"

#include "mlir/IR/Matchers.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLINALGTORUNTIMECALLS
#include "amp/Conversion/LinalgToCpu/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::cpu;

namespace {

bool isF32Memref(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getElementType().isF32();
}

/// Declares (once) `void name(memref<*xf32>..., i64...)`.
func::FuncOp getOrDeclare(ModuleOp module, StringRef name, unsigned memrefCount,
                          unsigned intCount) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  MLIRContext *context = module.getContext();
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  SmallVector<Type> inputs(
      memrefCount, UnrankedMemRefType::get(Float32Type::get(context), 0));
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

/// The buffer a memref view is taken from.
Value rootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

/// Whether `op` or an op nested in it has an operand viewing `buffer`.
bool touchesBuffer(Operation *op, Value buffer) {
  bool found = false;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          rootBuffer(operand) == buffer) {
        found = true;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return found;
}

/// The ops of `block` that use `buffer`, directly or through views (the
/// views themselves excluded), in block order; false when a use is outside
/// `block` (inside a nested region, which is then counted as its ancestor
/// op in `block`).
bool blockUsers(Value buffer, Block *block,
                SmallVectorImpl<Operation *> &users) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        worklist.append(user->result_begin(), user->result_end());
        continue;
      }
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return false;
      users.push_back(ancestor);
    }
  }
  llvm::sort(users, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  users.erase(std::unique(users.begin(), users.end()), users.end());
  return true;
}

/// Whether `op` sets every element of `buffer` to zero (linalg.fill or a
/// linalg.map without inputs yielding 0).
bool isZeroFillOf(Operation *op, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getOutputs()[0] == buffer &&
           matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  if (auto map = dyn_cast<linalg::MapOp>(op)) {
    auto yield = cast<linalg::YieldOp>(map.getBody()->getTerminator());
    return map.getInit() == buffer && map.getInputs().empty() &&
           matchPattern(yield.getOperand(0), m_AnyZeroFloat());
  }
  return false;
}

/// If `x` is a zero-padded copy of another buffer (tensor.pad after
/// bufferization: an alloc filled with 0, then the source copied into a
/// subview of it, right before the convolution in the same block), use
/// the source and let the runtime pad: no fill and no copy. The alloc may
/// be reused for other paddings before and after (bufferization reuses a
/// dead buffer); the padded contents must be read by this convolution
/// only: the next op after it that touches the buffer overwrites it whole
/// or frees it.
void foldPadding(Operation *convOp, Value &x, int64_t spatial,
                 SmallVectorImpl<int64_t> &begin,
                 SmallVectorImpl<int64_t> &end) {
  // Grouped convolutions read an expand_shape view of the padded buffer.
  auto expand = x.getDefiningOp<memref::ExpandShapeOp>();
  Value padded = expand ? expand.getSrc() : x;
  if (expand && (!expand->hasOneUse() ||
                 !cast<MemRefType>(expand.getType()).hasStaticShape()))
    return;
  auto alloc = padded.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != convOp->getBlock())
    return;
  // The ops of this block that use the buffer (directly or through views),
  // in order; a use elsewhere is not followed.
  SmallVector<Operation *> users;
  if (!blockUsers(padded, convOp->getBlock(), users))
    return;
  auto at = llvm::find(users, convOp);
  if (at == users.end() || at - users.begin() < 2)
    return;
  // Right before the convolution: the zero fill, then the copy into the
  // subview.
  auto copy = dyn_cast<memref::CopyOp>(*(at - 1));
  Operation *fill = *(at - 2);
  if (!copy || !isZeroFillOf(fill, padded))
    return;
  auto subview = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  if (!subview || subview.getSource() != padded ||
      rootBuffer(copy.getSource()) == padded)
    return;
  // After it, nobody reads the padded contents: the next user overwrites
  // the whole buffer or frees it.
  if (at + 1 != users.end()) {
    auto fillOp = dyn_cast<linalg::FillOp>(*(at + 1));
    if (!isa<memref::DeallocOp>(*(at + 1)) &&
        !(fillOp && fillOp.getOutputs()[0] == padded))
      return;
  }
  for (Operation *user : subview->getUsers())
    if (user != copy.getOperation())
      return;
  // The source must still hold its values when the convolution runs:
  // nothing between the copy and the convolution (the convolution's own
  // output included) may touch its buffer.
  Value sourceRoot = rootBuffer(copy.getSource());
  for (Operation *op = copy->getNextNode(); op != convOp;
       op = op->getNextNode())
    if (!isa<ViewLikeOpInterface>(op) && touchesBuffer(op, sourceRoot))
      return;
  if (llvm::any_of(convOp->getOperands(), [&](Value operand) {
        return operand != x && isa<BaseMemRefType>(operand.getType()) &&
               rootBuffer(operand) == sourceRoot;
      }))
    return;
  auto allocType = cast<MemRefType>(alloc.getType());
  auto sourceType = cast<MemRefType>(copy.getSource().getType());
  if (!sourceType.getLayout().isIdentity() &&
      !isa<StridedLayoutAttr>(sourceType.getLayout()))
    return;
  ArrayRef<int64_t> offsets = subview.getStaticOffsets();
  if (ShapedType::isDynamicShape(offsets) ||
      !llvm::all_of(subview.getStaticStrides(),
                    [](int64_t s) { return s == 1; }))
    return;
  int64_t first = allocType.getRank() - spatial;
  for (int64_t i = 0; i < first; ++i)
    if (offsets[i] != 0 || allocType.getDimSize(i) != sourceType.getDimSize(i))
      return;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t total = allocType.getDimSize(first + i);
    int64_t inner = sourceType.getDimSize(first + i);
    if (ShapedType::isDynamic(total) || ShapedType::isDynamic(inner))
      return;
    begin[i] = offsets[first + i];
    end[i] = total - inner - begin[i];
  }
  Value source = copy.getSource();
  if (expand) {
    // The same (group, channels) split of the unpadded source.
    if (!sourceType.getLayout().isIdentity() || !sourceType.hasStaticShape())
      return;
    auto expandedType = cast<MemRefType>(expand.getType());
    SmallVector<int64_t> shape(expandedType.getShape());
    int64_t expandedFirst = expandedType.getRank() - spatial;
    for (int64_t i = 0; i < spatial; ++i)
      shape[expandedFirst + i] = sourceType.getDimSize(first + i);
    OpBuilder b(convOp);
    source = b.create<memref::ExpandShapeOp>(
        expand.getLoc(), MemRefType::get(shape, sourceType.getElementType()),
        source, expand.getReassociationIndices());
  }
  // The old view and buffer die with the convolution (canonicalize) unless
  // the buffer is reused.
  x = source;
  copy->erase();
  subview->erase();
  fill->erase();
  if (alloc->use_empty())
    alloc->erase();
}

/// The op marked as this convolution's output initialisation, if it writes
/// `y` right before `conv` with nothing in between touching `y`.
Operation *findInit(Operation *conv, Value y) {
  for (Operation *prev = conv->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    if (isa<ViewLikeOpInterface>(prev))
      continue; // views write nothing
    bool touchesY = llvm::any_of(prev->getOperands(), [&](Value operand) {
      return isa<BaseMemRefType>(operand.getType()) && rootBuffer(operand) == y;
    });
    if (!touchesY)
      continue; // other buffers
    if (!prev->hasAttr(marker::kConvInitAttr))
      return nullptr;
    if (auto fill = dyn_cast<linalg::FillOp>(prev))
      return matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ? prev
                                                                 : nullptr;
    auto generic = dyn_cast<linalg::GenericOp>(prev);
    if (!generic || generic.getNumDpsInputs() != 1 ||
        generic.getDpsInitOperand(0)->get() != y)
      return nullptr;
    auto biasType =
        dyn_cast<MemRefType>(generic.getDpsInputOperand(0)->get().getType());
    if (!biasType || !biasType.getElementType().isF32())
      return nullptr;
    // Only the bias broadcast: the body yields its input.
    auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
    if (yield.getOperand(0) != generic.getBody()->getArgument(0))
      return nullptr;
    return prev;
  }
  return nullptr;
}

/// Whether `op` is max(x, 0) computed in place on `y` (x < 0 ? 0 : x).
bool isInPlaceRelu(Operation *op, Value y) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getDpsInputOperand(0)->get() != y ||
      generic.getDpsInitOperand(0)->get() != y ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Block *body = generic.getBody();
  if (body->getOperations().size() != 3)
    return false;
  auto cmp = dyn_cast<arith::CmpFOp>(&body->front());
  auto select =
      dyn_cast_or_null<arith::SelectOp>(cmp ? cmp->getNextNode() : nullptr);
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  Value in = body->getArgument(0);
  return cmp && select && yield &&
         cmp.getPredicate() == arith::CmpFPredicate::OLT &&
         cmp.getLhs() == in && matchPattern(cmp.getRhs(), m_AnyZeroFloat()) &&
         select.getCondition() == cmp.getResult() &&
         matchPattern(select.getTrueValue(), m_AnyZeroFloat()) &&
         select.getFalseValue() == in && yield.getOperand(0) == select;
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

/// The runtime's window arguments: three strides and three dilations (1
/// past the spatial rank), then the spatial rank.
SmallVector<int64_t> windowArguments(DenseI64ArrayAttr strides,
                                     DenseI64ArrayAttr dilations) {
  SmallVector<int64_t> ints(strides.asArrayRef());
  ints.resize(3, 1);
  SmallVector<int64_t> d(dilations.asArrayRef());
  d.resize(3, 1);
  ints.append(d);
  ints.push_back(static_cast<int64_t>(strides.size()));
  return ints;
}

/// A marked weight gradient (padded X, dY, dW) -> amp_cpu_conv_weight_grad_f32
/// on the unpadded X; a zero fill of dW right before it is folded into the
/// call (it then overwrites dW instead of accumulating).
LogicalResult lowerWeightGrad(ModuleOp module, OpBuilder &b, Operation *op) {
  auto strides = op->getAttrOfType<DenseI64ArrayAttr>(marker::kConvStridesAttr);
  auto dilations =
      op->getAttrOfType<DenseI64ArrayAttr>(marker::kConvDilationsAttr);
  if (!strides || !dilations)
    return op->emitError("amp_linalg.kind = \"conv_weight_grad\" without "
                         "convolution parameters");
  int64_t spatial = strides.size();
  Value x = op->getOperand(0), dy = op->getOperand(1), dw = op->getOperand(2);
  SmallVector<int64_t> padBegin(3, 0), padEnd(3, 0);
  foldPadding(op, x, spatial, padBegin, padEnd);
  int64_t accumulate = 1;
  if (Operation *init = findInit(op, rootBuffer(dw));
      init && isa<linalg::FillOp>(init)) {
    accumulate = 0;
    init->erase();
  }
  SmallVector<int64_t> ints = windowArguments(strides, dilations);
  ints.append(padBegin);
  ints.append(padEnd);
  ints.push_back(accumulate);
  func::FuncOp callee =
      getOrDeclare(module, "amp_cpu_conv_weight_grad_f32", 3, ints.size());
  emitCall(b, op->getLoc(), callee, {x, dy, dw}, ints);
  return success();
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
          isRuntimeConv(op) || isRuntimeWeightGrad(op))
        targets.push_back(op);
    });
    for (Operation *op : targets) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (isRuntimeWeightGrad(op)) {
        if (failed(lowerWeightGrad(module, b, op)))
          return signalPassFailure();
      } else if (isRuntimeConv(op)) {
        auto strides =
            op->getAttrOfType<DenseI64ArrayAttr>(marker::kConvStridesAttr);
        auto dilations =
            op->getAttrOfType<DenseI64ArrayAttr>(marker::kConvDilationsAttr);
        if (!strides || !dilations) {
          op->emitError("amp_linalg.kind = \"conv\" without convolution "
                        "parameters");
          return signalPassFailure();
        }
        int64_t spatial = strides.size();
        Value x = op->getOperand(0), w = op->getOperand(1),
              y = op->getOperand(2);
        SmallVector<int64_t> padBegin(3, 0), padEnd(3, 0);
        foldPadding(op, x, spatial, padBegin, padEnd);
        // mode 0: accumulate into y; 1: bias + conv; 2: conv.
        int64_t mode = 0;
        Value bias = y;
        Value yRoot = rootBuffer(y);
        if (Operation *init = findInit(op, yRoot)) {
          if (isa<linalg::FillOp>(init)) {
            mode = 2;
          } else {
            mode = 1;
            bias = cast<linalg::GenericOp>(init).getDpsInputOperand(0)->get();
            if (auto expand = bias.getDefiningOp<memref::ExpandShapeOp>())
              bias = expand.getSrc();
          }
          init->erase();
        }
        bool relu = false;
        if (Operation *next = op->getNextNode();
            next && isInPlaceRelu(next, yRoot)) {
          relu = true;
          next->erase();
        }
        SmallVector<int64_t> ints = windowArguments(strides, dilations);
        ints.push_back(isConstantBuffer(w) ? 1 : 0);
        ints.append(padBegin);
        ints.append(padEnd);
        ints.push_back(mode);
        ints.push_back(relu ? 1 : 0);
        func::FuncOp callee =
            getOrDeclare(module, "amp_cpu_conv_f32", 4, ints.size());
        emitCall(b, loc, callee, {x, w, y, bias}, ints);
      } else {
        bool batched =
            isa<linalg::BatchMatmulOp, linalg::BatchMatmulTransposeBOp>(op);
        bool transposeB =
            isa<linalg::MatmulTransposeBOp, linalg::BatchMatmulTransposeBOp>(
                op);
        func::FuncOp callee = getOrDeclare(module, "amp_cpu_matmul_f32", 3, 1);
        (void)batched; // the runtime reads the rank
        emitCall(b, loc, callee, op->getOperands(), {transposeB ? 1 : 0});
      }
      op->erase();
    }
  }
};

} // namespace
