//===- ModelUtils.h - helpers of the upstream precision models --*- C++ -*-===//
#ifndef AMP_LIB_TRANSFORMS_PRECISIONMODELS_MODELUTILS_H
#define AMP_LIB_TRANSFORMS_PRECISIONMODELS_MODELUTILS_H

#include "amp/Dialect/Amp/IR/AmpPrecisionInterface.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::amp::precision_models {

/// Whether `type` is a ranked tensor of floats.
inline bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// Static element count of a ranked tensor (dynamic sizes count as 1).
inline double staticElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  double count = 1;
  for (int64_t dim : tensor.getShape())
    count *= ShapedType::isDynamic(dim) ? 1 : dim;
  return count;
}

/// arith.extf or arith.truncf of a float tensor or scalar to `elementType`.
Value buildArithCast(OpBuilder &builder, Location loc, Value value,
                     Type elementType);

/// What most models share, each overriding what differs: every float tensor
/// operand and result follows the op's precision, no operand takes any
/// type, no fp32 accumulation, conversions by arith.truncf / arith.extf.
template <typename Model, typename OpTy>
struct ArithCastModel : PrecisionOpInterface::ExternalModel<Model, OpTy> {
  bool isPrecisionOperand(Operation *op, unsigned index) const {
    return isFloatTensor(op->getOperand(index).getType());
  }
  bool acceptsAnyFloatOperand(Operation *, unsigned) const { return false; }
  bool isPrecisionResult(Operation *, unsigned) const { return true; }
  bool supportsF32Accumulation(Operation *) const { return false; }
  Value buildCast(Operation *, OpBuilder &builder, Location loc, Value value,
                  Type elementType) const {
    return buildArithCast(builder, loc, value, elementType);
  }
};

/// Attaches `Model<Op>` to each of `OpTys`.
template <template <typename> class Model, typename... OpTys>
void attachModels(MLIRContext *context) {
  (OpTys::template attachInterface<Model<OpTys>>(*context), ...);
}

void registerLinalgModels(DialectRegistry &registry);
void registerTosaModels(DialectRegistry &registry);
void registerArithMathModels(DialectRegistry &registry);
void registerTensorModels(DialectRegistry &registry);

} // namespace mlir::amp::precision_models

#endif // AMP_LIB_TRANSFORMS_PRECISIONMODELS_MODELUTILS_H
