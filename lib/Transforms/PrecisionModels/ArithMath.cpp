//===- ArithMath.cpp - precision models of arith and math ops -------------===//
//
// Elementwise float ops on tensors: every float operand and result follows
// the op's precision, so autocast retypes them in place. The policy sees
// them under the ONNX names of the same operations (Add, Exp, ...), so the
// default lists and policy files apply unchanged.
//
//===----------------------------------------------------------------------===//

#include "ModelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::precision_models;

Value mlir::amp::precision_models::buildArithCast(OpBuilder &builder,
                                                  Location loc, Value value,
                                                  Type elementType) {
  Type from = getElementTypeOrSelf(value.getType());
  Type type = elementType;
  if (auto shaped = dyn_cast<ShapedType>(value.getType()))
    type = shaped.clone(elementType);
  if (from.getIntOrFloatBitWidth() < elementType.getIntOrFloatBitWidth())
    return builder.create<arith::ExtFOp>(loc, type, value);
  return builder.create<arith::TruncFOp>(loc, type, value);
}

namespace {

/// The ONNX operator each op computes, which the policy lists name.
constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral> kOnnxNames[] = {
    {"arith.addf", "Add"},        {"arith.subf", "Sub"},
    {"arith.mulf", "Mul"},        {"arith.divf", "Div"},
    {"arith.remf", "Mod"},        {"arith.negf", "Neg"},
    {"arith.maximumf", "Max"},    {"arith.maxnumf", "Max"},
    {"arith.minimumf", "Min"},    {"arith.minnumf", "Min"},
    {"arith.select", "Where"},    {"math.absf", "Abs"},
    {"math.ceil", "Ceil"},        {"math.cos", "Cos"},
    {"math.erf", "Erf"},          {"math.exp", "Exp"},
    {"math.exp2", "Exp"},         {"math.expm1", "Exp"},
    {"math.floor", "Floor"},      {"math.log", "Log"},
    {"math.log1p", "Log"},        {"math.log2", "Log"},
    {"math.powf", "Pow"},         {"math.roundeven", "Round"},
    {"math.rsqrt", "Reciprocal"}, {"math.sin", "Sin"},
    {"math.sqrt", "Sqrt"},        {"math.tanh", "Tanh"},
};

/// An elementwise op on tensors: every float operand and result follows
/// its precision (arith.select's i1 condition is not a float: never
/// converted).
template <typename OpTy>
struct ElementwiseModel : ArithCastModel<ElementwiseModel<OpTy>, OpTy> {
  StringRef getOnnxOpType(Operation *op) const {
    StringRef name = op->getName().getStringRef();
    for (const auto &[opName, onnxName] : kOnnxNames)
      if (opName == name)
        return onnxName;
    return name;
  }
};

} // namespace

void mlir::amp::precision_models::registerArithMathModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    attachModels<ElementwiseModel, arith::AddFOp, arith::SubFOp, arith::MulFOp,
                 arith::DivFOp, arith::RemFOp, arith::NegFOp, arith::MaximumFOp,
                 arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp,
                 arith::SelectOp>(context);
  });
  registry.addExtension(+[](MLIRContext *context, math::MathDialect *) {
    attachModels<ElementwiseModel, math::AbsFOp, math::CeilOp, math::CosOp,
                 math::ErfOp, math::ExpOp, math::Exp2Op, math::ExpM1Op,
                 math::FloorOp, math::LogOp, math::Log1pOp, math::Log2Op,
                 math::PowFOp, math::RoundEvenOp, math::RsqrtOp, math::SinOp,
                 math::SqrtOp, math::TanhOp>(context);
  });
}
