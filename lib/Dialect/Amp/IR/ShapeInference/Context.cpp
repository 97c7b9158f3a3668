//===- Context.cpp - the inference context and constant operands ----------===//
//
// The shape functions of the amp ops follow the ONNX operator definitions,
// one file per op family in this folder. Unknown sizes become dynamic
// dimensions; inconsistent operands are errors.
//
//===----------------------------------------------------------------------===//

#include "ShapeInferenceUtils.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cstring>
#include <numeric>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;
using llvm::SmallVector;

//===----------------------------------------------------------------------===//
// Constant helpers
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>> mlir::amp::getIntValues(Attribute attr) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  if (!elements)
    return std::nullopt;
  auto intType = dyn_cast<IntegerType>(elements.getElementType());
  if (!intType)
    return std::nullopt;
  SmallVector<int64_t> values;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    values.reserve(dense.getNumElements());
    for (const APInt &v : dense.getValues<APInt>())
      values.push_back(intType.isUnsigned() || intType.getWidth() == 1
                           ? static_cast<int64_t>(v.getZExtValue())
                           : v.getSExtValue());
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource)
    return std::nullopt;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  unsigned width = intType.getWidth();
  if (!blob || (width != 32 && width != 64))
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  int64_t count = resource.getNumElements();
  size_t elementBytes = width / 8;
  if (data.size() != static_cast<size_t>(count) * elementBytes)
    return std::nullopt;
  values.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    if (width == 64) {
      int64_t v;
      std::memcpy(&v, data.data() + i * 8, 8);
      values.push_back(v);
    } else {
      int32_t v;
      std::memcpy(&v, data.data() + i * 4, 4);
      values.push_back(intType.isUnsigned() ? static_cast<uint32_t>(v) : v);
    }
  }
  return values;
}

std::optional<SmallVector<int64_t>>
mlir::amp::getConstantIntValues(Value value) {
  if (!value)
    return std::nullopt;
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  return getIntValues(attr);
}

//===----------------------------------------------------------------------===//
// InferenceContext
//===----------------------------------------------------------------------===//

RankedTensorType InferenceContext::getTensorType(unsigned i) const {
  if (i >= operands.size() || !operands[i])
    return nullptr;
  return dyn_cast<RankedTensorType>(operands[i].getType());
}

std::optional<SmallVector<int64_t>>
InferenceContext::getConstantInts(unsigned i) const {
  if (isAbsent(i))
    return std::nullopt;
  return getConstantIntValues(operands[i]);
}

LogicalResult InferenceContext::emitError(const llvm::Twine &message) const {
  return emitOptionalError(loc, message);
}

FailureOr<int64_t> InferenceContext::normalizeAxis(int64_t axis, int64_t rank,
                                                   StringRef what) const {
  return semantics::normalizeAxis(axis, rank, what, getErrorFn());
}

DictionaryAttr mlir::amp::shape::withDefaultAttributes(StringRef opName,
                                                       MLIRContext *context,
                                                       DictionaryAttr attrs) {
  NamedAttrList list(attrs);
  OperationName(opName, context).populateDefaultAttrs(list);
  return list.getDictionary(context);
}

bool mlir::amp::shape::areCompatibleTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip(lhs, rhs)) {
    if (l == r)
      continue;
    auto lt = dyn_cast<RankedTensorType>(l);
    auto rt = dyn_cast<RankedTensorType>(r);
    if (!lt || !rt || lt.getElementType() != rt.getElementType() ||
        failed(verifyCompatibleShape(lt.getShape(), rt.getShape())))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Helpers of the shape functions
//===----------------------------------------------------------------------===//

std::string mlir::amp::shape::typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

FailureOr<RankedTensorType>
mlir::amp::shape::requireTensor(InferenceContext &ctx, unsigned i) {
  if (RankedTensorType type = ctx.getTensorType(i))
    return type;
  (void)ctx.emitError("operand #" + llvm::Twine(i) +
                      " must be a ranked tensor");
  return failure();
}

LogicalResult mlir::amp::shape::broadcastShapes(InferenceContext &ctx,
                                                unsigned first, unsigned last,
                                                SmallVector<int64_t> &shape) {
  bool initialised = false;
  for (unsigned i = first; i < last; ++i) {
    RankedTensorType type = ctx.getTensorType(i);
    if (!type)
      continue;
    if (!initialised) {
      shape.assign(type.getShape().begin(), type.getShape().end());
      initialised = true;
      continue;
    }
    std::optional<SmallVector<int64_t>> result =
        semantics::broadcastShapes(shape, type.getShape());
    if (!result)
      return ctx.emitError("operands have incompatible broadcast shapes");
    shape = std::move(*result);
  }
  if (!initialised)
    return ctx.emitError("expected at least one tensor operand");
  return success();
}

LogicalResult mlir::amp::shape::requireSameElementTypes(InferenceContext &ctx,
                                                        unsigned first,
                                                        unsigned last) {
  Type elementType;
  for (unsigned i = first; i < last; ++i) {
    RankedTensorType type = ctx.getTensorType(i);
    if (!type)
      continue;
    if (!elementType)
      elementType = type.getElementType();
    else if (elementType != type.getElementType())
      return ctx.emitError("operands must have the same element type, got " +
                           typeToString(elementType) + " and " +
                           typeToString(type.getElementType()));
  }
  return success();
}
