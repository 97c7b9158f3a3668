//===- AmpOps.cpp - amp op folders and verifiers --------------------------===//
//
// Folders evaluate the shape arithmetic that exporters emit (Shape, Gather,
// Unsqueeze, Concat, Reshape, Range, ...) when its inputs are constant, so
// that static models lose it during import and canonicalization. Folding is
// limited to small integer tensors; weights are only re-viewed (reshaped),
// never copied.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/IR/AmpShapeInference.h"
#include "amp/Dialect/Amp/Semantics/Indexing.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::amp;
using llvm::SmallVector;

#include "amp/Dialect/Amp/IR/AmpInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"

namespace {
template <typename... Ops>
SmallVector<OnnxOpName> collectOnnxOpNames() {
  SmallVector<OnnxOpName> names;
  (
      [&] {
        if (!Ops::getOnnxName().empty())
          names.push_back({Ops::getOnnxName(), Ops::getOperationName()});
      }(),
      ...);
  return names;
}
} // namespace

StringRef mlir::amp::getNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations()) {
      StringRef name = getNodeName(inner);
      if (!name.empty())
        return name;
    }
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return getNodeName(callSite.getCallee());
  return {};
}

std::string mlir::amp::getConstantName(ConstantOp constant) {
  StringRef name = getNodeName(constant.getLoc());
  if (!name.empty())
    return name.str();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
    return resource.getRawHandle().getKey().str();
  return "";
}

llvm::ArrayRef<OnnxOpName> mlir::amp::getOnnxOpNames() {
  static const SmallVector<OnnxOpName> names = collectOnnxOpNames<
#define GET_OP_LIST
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"
      >();
  return names;
}

//===----------------------------------------------------------------------===//
// Folding helpers
//===----------------------------------------------------------------------===//

/// Folds never materialise integer tensors larger than this.
static constexpr int64_t kMaxFoldedElements = 1 << 14;

static RankedTensorType getStaticType(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type : nullptr;
}

/// Builds an integer tensor attribute of `type` from `values`.
static DenseElementsAttr buildInts(RankedTensorType type,
                                   ArrayRef<int64_t> values) {
  auto intType = dyn_cast<IntegerType>(type.getElementType());
  if (!intType || static_cast<int64_t>(values.size()) != type.getNumElements())
    return nullptr;
  SmallVector<APInt> bits;
  bits.reserve(values.size());
  for (int64_t v : values)
    bits.push_back(APInt(intType.getWidth(), static_cast<uint64_t>(v),
                         /*isSigned=*/!intType.isUnsigned()));
  return DenseElementsAttr::get(type, bits);
}

/// Re-views a constant with a new static shape of the same element count.
static Attribute reshapeConstant(Attribute value, RankedTensorType type) {
  if (!value || !type || !type.hasStaticShape())
    return nullptr;
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.getType().getNumElements() == type.getNumElements()
               ? dense.reshape(type)
               : nullptr;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    return resource.getType().getNumElements() == type.getNumElements() &&
                   resource.getElementType() == type.getElementType()
               ? DenseResourceElementsAttr::get(type, resource.getRawHandle())
               : nullptr;
  return nullptr;
}

/// Small integer constants, as int64 values, with their static type.
struct IntConstant {
  RankedTensorType type;
  SmallVector<int64_t> values;
};

static std::optional<IntConstant> getSmallInts(Attribute attr) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  if (!elements)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(elements.getType());
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldedElements)
    return std::nullopt;
  auto values = getIntValues(attr);
  if (!values)
    return std::nullopt;
  return IntConstant{type, std::move(*values)};
}

/// Strides of a row-major shape.
static SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Index into `operand` of the element at linear position `index` of a
/// broadcast result of shape `resultShape`.
static int64_t broadcastIndex(int64_t index, ArrayRef<int64_t> resultShape,
                              ArrayRef<int64_t> operandShape) {
  SmallVector<int64_t> resultStrides = rowMajorStrides(resultShape);
  SmallVector<int64_t> operandStrides = rowMajorStrides(operandShape);
  int64_t offset = resultShape.size() - operandShape.size();
  int64_t source = 0;
  for (size_t d = 0; d < resultShape.size(); ++d) {
    int64_t coordinate = (index / resultStrides[d]) % resultShape[d];
    if (static_cast<int64_t>(d) < offset)
      continue;
    int64_t od = d - offset;
    if (operandShape[od] != 1)
      source += coordinate * operandStrides[od];
  }
  return source;
}

/// Evaluates an elementwise function of integer constants with broadcasting.
static Attribute
foldIntElementwise(RankedTensorType resultType, ArrayRef<Attribute> operands,
                   llvm::function_ref<std::optional<int64_t>(ArrayRef<int64_t>)>
                       fn) {
  if (!resultType || !resultType.hasStaticShape() ||
      resultType.getNumElements() > kMaxFoldedElements)
    return nullptr;
  SmallVector<IntConstant> inputs;
  for (Attribute attr : operands) {
    std::optional<IntConstant> c = getSmallInts(attr);
    if (!c)
      return nullptr;
    inputs.push_back(std::move(*c));
  }
  SmallVector<int64_t> values;
  SmallVector<int64_t> args(inputs.size());
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    for (auto [k, input] : llvm::enumerate(inputs))
      args[k] = input.values[broadcastIndex(i, resultType.getShape(),
                                            input.type.getShape())];
    std::optional<int64_t> v = fn(args);
    if (!v)
      return nullptr;
    values.push_back(*v);
  }
  return buildInts(resultType, values);
}

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult IdentityOp::fold(FoldAdaptor) {
  // An identity may bridge a refined type to an older, less static one.
  return getX().getType() == getY().getType() ? getX() : nullptr;
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto inputType = cast<RankedTensorType>(getData().getType());
  auto resultType = getStaticType(getShape());
  if (!resultType)
    return nullptr;
  int64_t rank = inputType.getRank();
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t start = clampIndex(getStart().value_or(0));
  int64_t end = clampIndex(getEnd().value_or(rank));
  SmallVector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    if (inputType.isDynamicDim(i))
      return nullptr;
    dims.push_back(inputType.getDimSize(i));
  }
  return buildInts(resultType, dims);
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto inputType = cast<RankedTensorType>(getData().getType());
  if (!inputType.hasStaticShape())
    return nullptr;
  return buildInts(cast<RankedTensorType>(getSize().getType()),
                   {inputType.getNumElements()});
}

/// Whether every value of `from` converts to `to` and back unchanged.
static bool isExactConversion(Type from, Type to) {
  if (from == to)
    return true;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    const llvm::fltSemantics &f = fromFloat.getFloatSemantics();
    const llvm::fltSemantics &t = toFloat.getFloatSemantics();
    return APFloat::semanticsPrecision(t) >= APFloat::semanticsPrecision(f) &&
           APFloat::semanticsMaxExponent(t) >=
               APFloat::semanticsMaxExponent(f) &&
           APFloat::semanticsMinExponent(t) <= APFloat::semanticsMinExponent(f);
  }
  auto fromInt = dyn_cast<IntegerType>(from);
  if (!fromInt)
    return false;
  unsigned width = fromInt.getWidth();
  bool isUnsigned = fromInt.isUnsigned() || width == 1;
  if (toFloat) // The float's significand must hold every integer.
    return static_cast<unsigned>(
               APFloat::semanticsPrecision(toFloat.getFloatSemantics())) >=
           width - (isUnsigned ? 0 : 1);
  auto toInt = dyn_cast<IntegerType>(to);
  if (!toInt)
    return false;
  if (toInt.isUnsigned())
    return isUnsigned && toInt.getWidth() >= width;
  return toInt.getWidth() >= width + (isUnsigned && width > 1 ? 1 : 0);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  // Cast chains: A -> B -> C with an exact first step is A -> C. When C is
  // A the chain disappears; a lossy first step (f32 -> f16 -> f32) stays.
  if (auto inner = getInput().getDefiningOp<CastOp>()) {
    Type source = getElementTypeOrSelf(inner.getInput().getType());
    Type middle = getElementTypeOrSelf(inner.getOutput().getType());
    if (isExactConversion(source, middle)) {
      if (inner.getInput().getType() == getOutput().getType())
        return inner.getInput();
      getInputMutable().assign(inner.getInput());
      return getOutput();
    }
  }
  auto resultType = getStaticType(getOutput());
  std::optional<IntConstant> input = getSmallInts(adaptor.getInput());
  if (!resultType || !input)
    return nullptr;
  Type target = resultType.getElementType();
  if (isa<IntegerType>(target)) {
    if (target.isInteger(1))
      for (int64_t &v : input->values)
        v = v != 0;
    return buildInts(resultType, input->values);
  }
  if (auto floatType = dyn_cast<FloatType>(target)) {
    SmallVector<APFloat> values;
    for (int64_t v : input->values) {
      APFloat f(floatType.getFloatSemantics());
      bool isSigned = !input->type.getElementType().isUnsignedInteger();
      (void)f.convertFromAPInt(APInt(64, static_cast<uint64_t>(v), isSigned),
                               isSigned, APFloat::rmNearestTiesToEven);
      values.push_back(f);
    }
    return DenseElementsAttr::get(resultType, values);
  }
  return nullptr;
}

/// Shared by the ops that only change the shape of their input.
static OpFoldResult foldShapeChange(Value input, Value result,
                                    Attribute inputValue) {
  // Equal types are a no-op only with at most one dynamic size (the element
  // count then fixes it): [8, ?, ?] may become [8, ?, ?] with other sizes.
  if (input.getType() == result.getType() &&
      cast<RankedTensorType>(input.getType()).getNumDynamicDims() <= 1)
    return input;
  return reshapeConstant(inputValue, getStaticType(result));
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  return foldShapeChange(getData(), getReshaped(), adaptor.getData());
}

OpFoldResult FlattenOp::fold(FoldAdaptor adaptor) {
  return foldShapeChange(getInput(), getOutput(), adaptor.getInput());
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldShapeChange(getData(), getSqueezed(), adaptor.getData());
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldShapeChange(getData(), getExpanded(), adaptor.getData());
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  std::optional<ArrayRef<int64_t>> perm = getPerm();
  int64_t rank = cast<RankedTensorType>(getData().getType()).getRank();
  bool identity = perm ? llvm::equal(*perm, llvm::seq<int64_t>(0, rank))
                       : rank <= 1;
  if (identity && getData().getType() == getTransposed().getType())
    return getData();
  // Permuting dimensions of size 1 only does not move data.
  auto type = cast<RankedTensorType>(getData().getType());
  if (perm && type.hasStaticShape()) {
    SmallVector<int64_t> moved;
    for (int64_t p : *perm)
      if (type.getDimSize(p) != 1)
        moved.push_back(p);
    if (llvm::is_sorted(moved))
      return reshapeConstant(adaptor.getData(),
                             getStaticType(getTransposed()));
  }
  // Small integer constants (shape values) are permuted outright.
  auto resultType = getStaticType(getTransposed());
  std::optional<IntConstant> data = getSmallInts(adaptor.getData());
  if (!perm || !resultType || !data)
    return nullptr;
  SmallVector<int64_t> strides = rowMajorStrides(type.getShape());
  SmallVector<int64_t> resultStrides = rowMajorStrides(resultType.getShape());
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < resultType.getNumElements(); ++i) {
    int64_t source = 0;
    for (int64_t d = 0; d < rank; ++d)
      source += ((i / resultStrides[d]) % resultType.getDimSize(d)) *
                strides[(*perm)[d]];
    values.push_back(data->values[source]);
  }
  return buildInts(resultType, values);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 &&
      getInputs().front().getType() == getConcatResult().getType())
    return getInputs().front();
  auto resultType = getStaticType(getConcatResult());
  if (!resultType || resultType.getRank() != 1)
    return nullptr;
  SmallVector<int64_t> values;
  for (Attribute attr : adaptor.getInputs()) {
    std::optional<IntConstant> c = getSmallInts(attr);
    if (!c)
      return nullptr;
    values.append(c->values);
  }
  return buildInts(resultType, values);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  auto resultType = getStaticType(getOutput());
  std::optional<IntConstant> data = getSmallInts(adaptor.getData());
  auto starts = getIntValues(adaptor.getStarts());
  if (!resultType || !data || !starts)
    return nullptr;
  int64_t rank = data->type.getRank();
  // Per-dimension start and step; the result type already holds the sizes.
  SmallVector<int64_t> start(rank, 0), step(rank, 1);
  SmallVector<int64_t> axes;
  if (isa<NoneType>(getAxes().getType())) {
    for (int64_t i = 0; i < static_cast<int64_t>(starts->size()); ++i)
      axes.push_back(i);
  } else if (auto values = getIntValues(adaptor.getAxes())) {
    axes = *values;
  } else {
    return nullptr;
  }
  SmallVector<int64_t> steps(axes.size(), 1);
  if (!isa<NoneType>(getSteps().getType())) {
    auto values = getIntValues(adaptor.getSteps());
    if (!values)
      return nullptr;
    steps = *values;
  }
  if (axes.size() != starts->size() || steps.size() != axes.size())
    return nullptr;
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank || steps[i] == 0)
      return nullptr;
    int64_t dim = data->type.getDimSize(axis);
    // Only the start matters: the result type already holds the size.
    start[axis] =
        semantics::resolveSliceRange(dim, (*starts)[i], 0, steps[i]).start;
    step[axis] = steps[i];
  }
  SmallVector<int64_t> strides = rowMajorStrides(data->type.getShape());
  SmallVector<int64_t> resultStrides = rowMajorStrides(resultType.getShape());
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < resultType.getNumElements(); ++i) {
    int64_t source = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t coordinate = (i / resultStrides[d]) % resultType.getDimSize(d);
      int64_t index = start[d] + coordinate * step[d];
      if (index < 0 || index >= data->type.getDimSize(d))
        return nullptr;
      source += index * strides[d];
    }
    values.push_back(data->values[source]);
  }
  return buildInts(resultType, values);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto resultType = getStaticType(getOutput());
  std::optional<IntConstant> data = getSmallInts(adaptor.getData());
  std::optional<IntConstant> indices = getSmallInts(adaptor.getIndices());
  if (!resultType || !data || !indices || data->type.getRank() != 1)
    return nullptr;
  int64_t dim = data->type.getDimSize(0);
  SmallVector<int64_t> values;
  for (int64_t index : indices->values) {
    std::optional<int64_t> at = semantics::normalizeIndex(index, dim);
    if (!at)
      return nullptr;
    values.push_back(data->values[*at]);
  }
  return buildInts(resultType, values);
}

/// Integer arithmetic on shape values. Division follows ONNX (truncation)
/// and is left unfolded for a zero divisor.
static Attribute foldArith(Value result, Attribute lhs, Attribute rhs,
                           llvm::function_ref<std::optional<int64_t>(
                               int64_t, int64_t)> fn) {
  return foldIntElementwise(
      dyn_cast<RankedTensorType>(result.getType()), {lhs, rhs},
      [&](ArrayRef<int64_t> args) { return fn(args[0], args[1]); });
}

// Sums, differences and products that overflow int64 are left unfolded
// (INT64_MAX is a common Slice end).
OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldArith(getC(), adaptor.getA(), adaptor.getB(),
                   [](int64_t a, int64_t b) { return llvm::checkedAdd(a, b); });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldArith(getC(), adaptor.getA(), adaptor.getB(),
                   [](int64_t a, int64_t b) { return llvm::checkedSub(a, b); });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldArith(getC(), adaptor.getA(), adaptor.getB(),
                   [](int64_t a, int64_t b) { return llvm::checkedMul(a, b); });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldArith(getC(), adaptor.getA(), adaptor.getB(),
                   [](int64_t a, int64_t b) -> std::optional<int64_t> {
                     if (b == 0)
                       return std::nullopt;
                     return a / b;
                   });
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  bool fmod = getFmod() != 0;
  return foldArith(getC(), adaptor.getA(), adaptor.getB(),
                   [fmod](int64_t a, int64_t b) -> std::optional<int64_t> {
                     if (b == 0)
                       return std::nullopt;
                     int64_t r = a % b;
                     // Integer Mod takes the sign of the divisor (Python).
                     if (!fmod && r != 0 && ((r < 0) != (b < 0)))
                       r += b;
                     return r;
                   });
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  return foldIntElementwise(
      cast<RankedTensorType>(getC().getType()), {adaptor.getA(), adaptor.getB()},
      [](ArrayRef<int64_t> args) -> std::optional<int64_t> {
        return args[0] == args[1];
      });
}

/// Whether the int64 values getIntValues gives for `type` keep its order
/// (not so for unsigned 64-bit values above INT64_MAX).
static bool hasOrderedIntValues(Type type) {
  auto intType = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return intType && !(intType.isUnsigned() && intType.getWidth() == 64);
}

/// Folds a comparison or logical op of integer (or boolean) constants.
static Attribute foldCompare(Value result, Value lhs, Attribute lhsValue,
                             Attribute rhsValue,
                             llvm::function_ref<bool(int64_t, int64_t)> fn) {
  if (!hasOrderedIntValues(lhs.getType()))
    return nullptr;
  return foldIntElementwise(
      dyn_cast<RankedTensorType>(result.getType()), {lhsValue, rhsValue},
      [&](ArrayRef<int64_t> args) -> std::optional<int64_t> {
        return fn(args[0], args[1]);
      });
}

OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) {
  return foldCompare(getC(), getA(), adaptor.getA(), adaptor.getB(),
                     [](int64_t a, int64_t b) { return a > b; });
}

OpFoldResult GreaterOrEqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(getC(), getA(), adaptor.getA(), adaptor.getB(),
                     [](int64_t a, int64_t b) { return a >= b; });
}

OpFoldResult LessOp::fold(FoldAdaptor adaptor) {
  return foldCompare(getC(), getA(), adaptor.getA(), adaptor.getB(),
                     [](int64_t a, int64_t b) { return a < b; });
}

OpFoldResult LessOrEqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(getC(), getA(), adaptor.getA(), adaptor.getB(),
                     [](int64_t a, int64_t b) { return a <= b; });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  return foldCompare(getC(), getA(), adaptor.getA(), adaptor.getB(),
                     [](int64_t a, int64_t b) { return a && b; });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  return foldCompare(getC(), getA(), adaptor.getA(), adaptor.getB(),
                     [](int64_t a, int64_t b) { return a || b; });
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldCompare(getC(), getA(), adaptor.getA(), adaptor.getB(),
                     [](int64_t a, int64_t b) { return (a != 0) != (b != 0); });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  return foldIntElementwise(
      dyn_cast<RankedTensorType>(getY().getType()), {adaptor.getX()},
      [](ArrayRef<int64_t> args) -> std::optional<int64_t> {
        return args[0] == 0;
      });
}

/// Negation and absolute value of signed integers (INT64_MIN stays
/// unfolded); unsigned values are left alone.
static Attribute foldSignedUnary(Value input, Value result, Attribute value,
                                 bool negate) {
  auto intType = dyn_cast<IntegerType>(getElementTypeOrSelf(input.getType()));
  if (!intType || intType.isUnsigned() || intType.getWidth() == 1)
    return nullptr;
  return foldIntElementwise(
      dyn_cast<RankedTensorType>(result.getType()), {value},
      [&](ArrayRef<int64_t> args) -> std::optional<int64_t> {
        if (!negate && args[0] >= 0)
          return args[0];
        return llvm::checkedSub<int64_t>(0, args[0]);
      });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldSignedUnary(getX(), getY(), adaptor.getX(), /*negate=*/true);
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldSignedUnary(getX(), getY(), adaptor.getX(), /*negate=*/false);
}

OpFoldResult SignOp::fold(FoldAdaptor adaptor) {
  if (!hasOrderedIntValues(getX().getType()))
    return nullptr;
  return foldIntElementwise(
      dyn_cast<RankedTensorType>(getY().getType()), {adaptor.getX()},
      [](ArrayRef<int64_t> args) -> std::optional<int64_t> {
        return (args[0] > 0) - (args[0] < 0);
      });
}

/// Max or Min over any number of broadcast integer constants.
static Attribute foldExtremum(ValueRange inputs, Value result,
                              ArrayRef<Attribute> values, bool isMax) {
  if (inputs.empty() || !hasOrderedIntValues(inputs.front().getType()))
    return nullptr;
  return foldIntElementwise(
      dyn_cast<RankedTensorType>(result.getType()), values,
      [&](ArrayRef<int64_t> args) -> std::optional<int64_t> {
        return isMax ? *llvm::max_element(args) : *llvm::min_element(args);
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldExtremum(getData_0(), getResult(), adaptor.getData_0(),
                      /*isMax=*/true);
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldExtremum(getData_0(), getResult(), adaptor.getData_0(),
                      /*isMax=*/false);
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  return foldIntElementwise(
      cast<RankedTensorType>(getOutput().getType()),
      {adaptor.getCondition(), adaptor.getX(), adaptor.getY()},
      [](ArrayRef<int64_t> args) -> std::optional<int64_t> {
        return args[0] ? args[1] : args[2];
      });
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  // Equal types mean a no-op only when they are static (?x4 may expand).
  if (getInput().getType() == getOutput().getType() &&
      cast<RankedTensorType>(getInput().getType()).hasStaticShape())
    return getInput();
  auto resultType = getStaticType(getOutput());
  auto input = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (resultType && input && input.isSplat())
    return input.resizeSplat(resultType);
  return nullptr;
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  auto resultType = getStaticType(getOutput());
  if (!resultType)
    return nullptr;
  std::optional<ElementsAttr> value = getValue();
  if (!value)
    return DenseElementsAttr::get(resultType,
                                  FloatAttr::get(resultType.getElementType(),
                                                 0.0));
  auto dense = dyn_cast<DenseElementsAttr>(*value);
  if (!dense || dense.getNumElements() != 1)
    return nullptr;
  return DenseElementsAttr::get(resultType,
                                *dense.value_begin<Attribute>());
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  auto resultType = getStaticType(getOutput());
  auto start = getIntValues(adaptor.getStart());
  auto delta = getIntValues(adaptor.getDelta());
  if (!resultType || !start || !delta ||
      resultType.getNumElements() > kMaxFoldedElements)
    return nullptr;
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < resultType.getNumElements(); ++i)
    values.push_back((*start)[0] + i * (*delta)[0]);
  return buildInts(resultType, values);
}

//===----------------------------------------------------------------------===//
// Canonicalization patterns
//===----------------------------------------------------------------------===//

namespace {
/// A Dropout that is not in training mode, or whose ratio is 0, passes its
/// input through and its mask is all true. (PyTorch exports such Dropouts
/// with training_mode=true and ratio 0 for some torchvision models.)
struct RemoveIdentityDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool isIdentity(DropoutOp op) {
    if (isa<NoneType>(op.getTrainingMode().getType()))
      return true;
    Attribute attr;
    if (matchPattern(op.getTrainingMode(), m_Constant(&attr))) {
      auto values = getIntValues(attr);
      if (values && llvm::all_of(*values, [](int64_t v) { return v == 0; }))
        return true;
    }
    auto ratio = dyn_cast_or_null<DenseFPElementsAttr>(
        matchPattern(op.getRatio(), m_Constant(&attr)) ? attr : Attribute());
    return ratio && llvm::all_of(ratio.getValues<APFloat>(),
                                 [](const APFloat &v) { return v.isZero(); });
  }

  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if (!isIdentity(op))
      return failure();
    auto maskType = cast<RankedTensorType>(op.getMask().getType());
    if (!op.getMask().use_empty() && !maskType.hasStaticShape()) {
      if (op.getOutput().use_empty())
        return failure();
      rewriter.replaceAllUsesWith(op.getOutput(), op.getData());
      return success();
    }
    Value mask;
    if (!op.getMask().use_empty())
      mask = rewriter.create<ConstantOp>(
          op.getLoc(), DenseElementsAttr::get(maskType, true));
    rewriter.replaceOp(op, {op.getData(), mask});
    return success();
  }
};
} // namespace

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<RemoveIdentityDropout>(context);
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

/// The yield of a body region must produce `expected` types (compatible up
/// to dynamic dimensions).
static LogicalResult verifyYield(Operation *op, Region &region,
                                 TypeRange expected, StringRef what) {
  Operation *terminator = region.front().getTerminator();
  if (!shape::areCompatibleTypes(terminator->getOperandTypes(), expected))
    return op->emitOpError() << what << " yields "
                             << terminator->getOperandTypes()
                             << " but the op expects " << expected;
  return success();
}

LogicalResult IfOp::verify() {
  // Dynamic dimensions are left to run time; a static one must be 1.
  auto condType = cast<ShapedType>(getCond().getType());
  if (condType.hasRank() &&
      llvm::any_of(condType.getShape(), [](int64_t dim) {
        return !ShapedType::isDynamic(dim) && dim != 1;
      }))
    return emitOpError("condition must hold exactly one element");
  if (failed(verifyYield(*this, getThenBranch(), getResultTypes(),
                         "then branch")) ||
      failed(verifyYield(*this, getElseBranch(), getResultTypes(),
                         "else branch")))
    return failure();
  return success();
}

LogicalResult LoopOp::verify() {
  Block &body = getBody().front();
  size_t numCarried = getVInitial().size();
  if (body.getNumArguments() != numCarried + 2)
    return emitOpError("body must take (iteration, condition, ") << numCarried
           << " loop-carried values), got " << body.getNumArguments()
           << " arguments";
  Operation *terminator = body.getTerminator();
  if (terminator->getNumOperands() < numCarried + 1)
    return emitOpError("body must yield the condition and ")
           << numCarried << " loop-carried values";
  if (getNumResults() != terminator->getNumOperands() - 1)
    return emitOpError("has ")
           << getNumResults() << " results but the body yields "
           << terminator->getNumOperands() - 1 << " values after the condition";
  return success();
}

LogicalResult ScanOp::verify() {
  Block &body = getBody().front();
  int64_t numScanInputs = getNumScanInputs();
  int64_t numInputs = getInitialStateAndScanInputs().size();
  if (numScanInputs < 1 || numScanInputs > numInputs)
    return emitOpError("num_scan_inputs must be in [1, ") << numInputs << "]";
  if (static_cast<int64_t>(body.getNumArguments()) != numInputs)
    return emitOpError("body must take one argument per input");
  if (body.getTerminator()->getNumOperands() != getNumResults())
    return emitOpError("body yields ")
           << body.getTerminator()->getNumOperands() << " values for "
           << getNumResults() << " results";
  return success();
}
