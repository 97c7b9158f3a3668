//===- RuntimeChecks.cpp - checks of values known only at run time --------===//
//
// See amp/Conversion/AmpToLinalg/RuntimeChecks.h for the contract with the
// runtime. The helpers here are what the patterns call: the extremes of an
// index tensor (one reduction), the comparison with the bound, and the
// call under scf.if when it fails.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/AmpToLinalg/RuntimeChecks.h"
#include "LoweringUtils.h"

#include "amp/Dialect/Amp/IR/SourceNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace mlir::amp {

std::string formatRuntimeCheck(StringRef message, int64_t value,
                               int64_t bound) {
  std::string result;
  while (!message.empty()) {
    size_t brace = message.find('{');
    result += message.take_front(brace).str();
    if (brace == StringRef::npos)
      break;
    message = message.drop_front(brace);
    if (message.consume_front("{value}")) {
      result += std::to_string(value);
    } else if (message.consume_front("{bound}")) {
      result += std::to_string(bound);
    } else {
      result += '{';
      message = message.drop_front();
    }
  }
  return result;
}

namespace lowering {

/// The module the builder inserts into.
static ModuleOp getModuleAt(OpBuilder &b) {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  if (auto module = dyn_cast<ModuleOp>(parent))
    return module;
  return parent->getParentOfType<ModuleOp>();
}

std::string describeNode(Operation *op) {
  std::string type = op->getName().getStringRef().str();
  if (auto precision = dyn_cast<PrecisionOpInterface>(op))
    type = precision.getOnnxOpType().str();
  std::string name = getSourceName(op->getLoc());
  if (name.empty())
    return type;
  return "node '" + name + "' (" + type + ")";
}

void emitRuntimeCheck(OpBuilder &b, Location loc, Value failed, Value value,
                      Value bound, const Twine &message) {
  ModuleOp module = getModuleAt(b);
  auto table = module ? module->getAttrOfType<ArrayAttr>(kRuntimeChecksAttrName)
                      : ArrayAttr();
  if (!table)
    return; // the module does not collect checks
  SmallVector<Attribute> messages(table.begin(), table.end());
  int64_t id = messages.size();
  messages.push_back(b.getStringAttr(message));
  module->setAttr(kRuntimeChecksAttrName, b.getArrayAttr(messages));

  Type i64 = b.getI64Type();
  auto callee = module.lookupSymbol<func::FuncOp>(kCheckFailedFunction);
  if (!callee) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    callee = b.create<func::FuncOp>(module.getLoc(), kCheckFailedFunction,
                                    b.getFunctionType({i64, i64, i64}, {}));
    callee.setPrivate();
  }
  auto toI64 = [&](Value v) -> Value {
    if (v.getType().isIndex())
      return b.create<arith::IndexCastOp>(loc, i64, v);
    return v;
  };
  Value args[] = {b.create<arith::ConstantIntOp>(loc, id, 64), toI64(value),
                  toI64(bound)};
  b.create<scf::IfOp>(loc, failed, [&](OpBuilder &nb, Location l) {
    nb.create<func::CallOp>(l, callee, ValueRange(args));
    nb.create<scf::YieldOp>(l);
  });
}

bool collectsRuntimeChecks(OpBuilder &b) {
  ModuleOp module = getModuleAt(b);
  return module && module->hasAttr(kRuntimeChecksAttrName);
}

std::pair<Value, Value> getIntegerExtremes(OpBuilder &b, Location loc,
                                           Value tensor) {
  MLIRContext *context = b.getContext();
  auto type = cast<RankedTensorType>(tensor.getType());
  int64_t rank = type.getRank();
  Type i64 = b.getI64Type();
  auto scalarType = RankedTensorType::get({}, i64);
  Value lowest =
      filledTensor(b, loc, scalarType, {},
                   b.create<arith::ConstantIntOp>(
                       loc, std::numeric_limits<int64_t>::max(), 64));
  Value highest =
      filledTensor(b, loc, scalarType, {},
                   b.create<arith::ConstantIntOp>(
                       loc, std::numeric_limits<int64_t>::min(), 64));
  AffineMap scalarMap = AffineMap::get(rank, 0, {}, context);
  auto extremes = b.create<linalg::GenericOp>(
      loc, TypeRange{scalarType, scalarType}, ValueRange{tensor},
      ValueRange{lowest, highest},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank), scalarMap,
                             scalarMap},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v = args[0];
        if (v.getType().isIndex())
          v = nb.create<arith::IndexCastOp>(l, i64, v);
        else if (v.getType().getIntOrFloatBitWidth() < 64)
          v = nb.create<arith::ExtSIOp>(l, i64, v);
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::MinSIOp>(l, args[1], v),
                          nb.create<arith::MaxSIOp>(l, args[2], v)});
      });
  return {b.create<tensor::ExtractOp>(loc, extremes.getResult(0)),
          b.create<tensor::ExtractOp>(loc, extremes.getResult(1))};
}

void checkIndexRange(OpBuilder &b, Location loc, Operation *op, Value indices,
                     Value dim, bool allowNegative, StringRef what) {
  if (!collectsRuntimeChecks(b))
    return;
  auto [lowest, highest] = getIntegerExtremes(b, loc, indices);
  Type i64 = b.getI64Type();
  Value bound = dim.getType().isIndex()
                    ? b.create<arith::IndexCastOp>(loc, i64, dim).getResult()
                    : dim;
  Value zero = b.create<arith::ConstantIntOp>(loc, 0, 64);
  Value low = allowNegative ? b.create<arith::SubIOp>(loc, zero, bound) : zero;
  Value tooLow =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, lowest, low);
  Value tooHigh =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, highest, bound);
  Value failed = b.create<arith::OrIOp>(loc, tooLow, tooHigh);
  Value value = b.create<arith::SelectOp>(loc, tooHigh, highest, lowest);
  emitRuntimeCheck(
      b, loc, failed, value, bound,
      describeNode(op) + ": " + what + " {value} is outside " +
          (allowNegative ? "[-{bound}, {bound})" : "[0, {bound})"));
}

void checkIndexTuples(OpBuilder &b, Location loc, Operation *op, Value indices,
                      ArrayRef<Value> dims) {
  if (!collectsRuntimeChecks(b))
    return;
  auto type = cast<RankedTensorType>(indices.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes = getSizes(b, loc, indices), strides(rank, b.getIndexAttr(1));
  sizes.back() = b.getIndexAttr(1);
  for (auto [j, dim] : llvm::enumerate(dims)) {
    offsets.back() = b.getIndexAttr(j);
    Value component =
        b.create<tensor::ExtractSliceOp>(loc, indices, offsets, sizes, strides);
    checkIndexRange(b, loc, op, component, dim, /*allowNegative=*/true,
                    "index component " + std::to_string(j) + " =");
  }
}

Value clampIndex(OpBuilder &b, Location loc, Value index, Value dim) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value last = b.create<arith::SubIOp>(loc, dim, one);
  return b.create<arith::MaxSIOp>(
      loc, b.create<arith::MinSIOp>(loc, wrapIndex(b, loc, index, dim), last),
      zero);
}

SmallVector<Value> guardEmptyAxesN(
    OpBuilder &b, Location loc, Value tensor, ArrayRef<int64_t> axes,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> build,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> fallback) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value zero, empty;
  for (int64_t axis : axes) {
    int64_t size = type.getDimSize(axis);
    if (!ShapedType::isDynamic(size) && size > 0)
      continue;
    if (!zero)
      zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value isEmpty = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq,
        b.create<tensor::DimOp>(loc, tensor, axis), zero);
    empty = empty ? b.create<arith::OrIOp>(loc, empty, isEmpty).getResult()
                  : isEmpty;
  }
  if (!empty)
    return build(b, loc);
  auto guard = b.create<scf::IfOp>(
      loc, empty,
      [&](OpBuilder &nb, Location l) {
        nb.create<scf::YieldOp>(l, fallback(nb, l));
      },
      [&](OpBuilder &nb, Location l) {
        nb.create<scf::YieldOp>(l, build(nb, l));
      });
  return SmallVector<Value>(guard.getResults());
}

Value guardEmptyAxes(OpBuilder &b, Location loc, Value tensor,
                     ArrayRef<int64_t> axes,
                     function_ref<Value(OpBuilder &, Location)> build,
                     function_ref<Value(OpBuilder &, Location)> fallback) {
  return guardEmptyAxesN(
      b, loc, tensor, axes,
      [&](OpBuilder &nb, Location l) {
        return SmallVector<Value>{build(nb, l)};
      },
      [&](OpBuilder &nb, Location l) {
        return SmallVector<Value>{fallback(nb, l)};
      })[0];
}

} // namespace lowering
} // namespace mlir::amp
