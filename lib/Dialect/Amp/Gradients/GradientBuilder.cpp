//===- GradientBuilder.cpp - building blocks of the gradient rules --------===//

#include "GradientModel.h"

#include "amp/Dialect/Amp/Gradients/GradientModels.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::gradients;

Value GradientBuilder::fail(const Twine &message) {
  if (!failed) {
    if (forward)
      forward->emitOpError("gradient: ") << message;
    else
      emitError(loc, message);
  }
  failed = true;
  return nullptr;
}

SmallVector<Value> GradientBuilder::createNamed(StringRef name,
                                                ValueRange operands,
                                                ArrayRef<NamedAttribute> attrs) {
  if (failed || llvm::any_of(operands, [](Value v) { return !v; }))
    return {};
  MLIRContext *context = builder.getContext();
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  auto info = state.name.getRegisteredInfo();
  auto infer = info ? info->getInterface<InferTypeOpInterface>() : nullptr;
  if (!infer)
    return fail("cannot build " + name), SmallVector<Value>();
  SmallVector<Type> types;
  std::string why;
  {
    // Report a failed inference as an error of the gradient rule.
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
      why = diag.str();
      return success();
    });
    if (mlir::failed(infer->inferReturnTypes(
            context, loc, operands, state.attributes.getDictionary(context),
            state.getRawProperties(), state.regions, types)))
      types.clear(), why = why.empty() ? "invalid operand types" : why;
    else
      why.clear();
  }
  if (!why.empty())
    return fail("cannot build " + name + ": " + why), SmallVector<Value>();
  state.addTypes(types);
  Operation *op = builder.create(state);
  return SmallVector<Value>(op->getResults());
}

NamedAttribute GradientBuilder::attr(StringRef name, int64_t value) {
  return builder.getNamedAttr(name, builder.getI64IntegerAttr(value));
}
NamedAttribute GradientBuilder::attr(StringRef name, float value) {
  return builder.getNamedAttr(name, builder.getF32FloatAttr(value));
}
NamedAttribute GradientBuilder::attr(StringRef name, ArrayRef<int64_t> values) {
  return builder.getNamedAttr(name, builder.getDenseI64ArrayAttr(values));
}
NamedAttribute GradientBuilder::attr(StringRef name, StringRef value) {
  return builder.getNamedAttr(name, builder.getStringAttr(value));
}

Value GradientBuilder::none() { return builder.create<NoneOp>(loc); }

Value GradientBuilder::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    APFloat apValue(value);
    bool losesInfo;
    apValue.convert(floatType.getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
    element = FloatAttr::get(floatType, apValue);
  } else {
    element = IntegerAttr::get(elementType, static_cast<int64_t>(value));
  }
  return builder.create<ConstantOp>(loc,
                                    DenseElementsAttr::get(type, element));
}

Value GradientBuilder::scalar(Value like, double value) {
  if (!like)
    return nullptr;
  return scalar(tensorType(like).getElementType(), value);
}

Value GradientBuilder::i64s(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder.getI64Type());
  return builder.create<ConstantOp>(loc, DenseElementsAttr::get(type, values));
}

Value GradientBuilder::f32s(ArrayRef<float> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder.getF32Type());
  return constant(DenseElementsAttr::get(type, values));
}

Value GradientBuilder::constant(DenseElementsAttr value) {
  return builder.create<ConstantOp>(loc, value);
}

Value GradientBuilder::shapeOf(Value value) {
  if (!value)
    return nullptr;
  RankedTensorType type = tensorType(value);
  if (type.hasStaticShape())
    return i64s(type.getShape());
  return create<ShapeOp>({value});
}

Value GradientBuilder::reshapeLike(Value value, Value like) {
  if (!value || !like)
    return nullptr;
  if (tensorType(value) == tensorType(like) &&
      tensorType(like).hasStaticShape())
    return value;
  return create<ReshapeOp>({value, shapeOf(like)});
}

Value GradientBuilder::castTo(Value value, Type elementType) {
  if (!value)
    return nullptr;
  if (tensorType(value).getElementType() == elementType)
    return value;
  return create<CastOp>({value}, {builder.getNamedAttr(
                                     "to", TypeAttr::get(elementType))});
}

Value GradientBuilder::castLike(Value value, Value like) {
  if (!like)
    return nullptr;
  return castTo(value, tensorType(like).getElementType());
}

Value GradientBuilder::add(Value a, Value b) { return create<AddOp>({a, b}); }
Value GradientBuilder::sub(Value a, Value b) { return create<SubOp>({a, b}); }
Value GradientBuilder::mul(Value a, Value b) { return create<MulOp>({a, b}); }
Value GradientBuilder::div(Value a, Value b) { return create<DivOp>({a, b}); }
Value GradientBuilder::neg(Value a) { return create<NegOp>({a}); }
Value GradientBuilder::mulScalar(Value a, double factor) {
  if (factor == 1.0)
    return a;
  return mul(a, scalar(a, factor));
}

Value GradientBuilder::reduceSum(Value value, ArrayRef<int64_t> axes,
                                 bool keepDims) {
  if (axes.empty())
    return value;
  return create<ReduceSumOp>({value, i64s(axes)},
                             {attr("keepdims", int64_t(keepDims))});
}

Value GradientBuilder::reduceMean(Value value, ArrayRef<int64_t> axes,
                                  bool keepDims) {
  if (axes.empty())
    return value;
  return create<ReduceMeanOp>({value, i64s(axes)},
                              {attr("keepdims", int64_t(keepDims))});
}

Value GradientBuilder::sumToShape(Value grad, Value operand) {
  if (!grad || !operand)
    return nullptr;
  RankedTensorType gradType = tensorType(grad), type = tensorType(operand);
  int64_t lead = gradType.getRank() - type.getRank();
  if (lead < 0)
    return fail("a gradient has lower rank than its operand");
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < lead; ++i)
    axes.push_back(i);
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.getDimSize(i) == 1 && gradType.getDimSize(lead + i) != 1)
      axes.push_back(lead + i);
  Value summed = reduceSum(grad, axes, /*keepDims=*/true);
  return reshapeLike(summed, operand);
}

Value GradientBuilder::transpose(Value value, ArrayRef<int64_t> perm) {
  return create<TransposeOp>({value}, {attr("perm", perm)});
}

Value GradientBuilder::zerosLike(Value like) {
  if (!like)
    return nullptr;
  Type elementType = tensorType(like).getElementType();
  auto valueType = RankedTensorType::get({1}, elementType);
  Attribute zero = isa<FloatType>(elementType)
                       ? Attribute(FloatAttr::get(elementType, 0.0))
                       : Attribute(IntegerAttr::get(elementType, 0));
  return create<ConstantOfShapeOp>(
      {shapeOf(like)},
      {builder.getNamedAttr("value", DenseElementsAttr::get(valueType, zero))});
}

void mlir::amp::registerAmpGradientModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, AmpDialect *) {
    registerElementwiseGradients(context);
    registerLinearAlgebraGradients(context);
    registerConvGradients(context);
    registerNormalizationGradients(context);
    registerReductionGradients(context);
    registerShapeGradients(context);
    registerResizeGradients(context);
  });
}
