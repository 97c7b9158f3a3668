//===- AmpShapeInference.cpp - result-type inference for amp ops ----------===//
//
// Shape functions for the amp ops, following the ONNX operator definitions.
// Unknown sizes become dynamic dimensions; inconsistent operands are errors.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cstring>
#include <numeric>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::shape;
using llvm::SmallVector;

static constexpr int64_t kDynamic = ShapedType::kDynamic;

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

Attribute InferenceContext::getAttr(StringRef name) const {
  return attributes ? attributes.get(name) : Attribute();
}

int64_t InferenceContext::getInt(StringRef name, int64_t defaultValue) const {
  return getOptionalInt(name).value_or(defaultValue);
}

std::optional<int64_t> InferenceContext::getOptionalInt(StringRef name) const {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(getAttr(name)))
    return attr.getInt();
  return std::nullopt;
}

std::optional<SmallVector<int64_t>>
InferenceContext::getInts(StringRef name) const {
  if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(getAttr(name)))
    return SmallVector<int64_t>(attr.asArrayRef());
  return std::nullopt;
}

Type InferenceContext::getTypeAttr(StringRef name, Type defaultType) const {
  if (auto attr = dyn_cast_or_null<TypeAttr>(getAttr(name)))
    return attr.getValue();
  return defaultType;
}

StringRef InferenceContext::getString(StringRef name,
                                      StringRef defaultValue) const {
  if (auto attr = dyn_cast_or_null<StringAttr>(getAttr(name)))
    return attr.getValue();
  return defaultValue;
}

LogicalResult InferenceContext::emitError(const llvm::Twine &message) const {
  return emitOptionalError(loc, message);
}

FailureOr<int64_t> InferenceContext::normalizeAxis(int64_t axis, int64_t rank,
                                                   StringRef what) const {
  if (axis < -rank || axis >= rank) {
    (void)emitError(llvm::Twine(what) + " " + llvm::Twine(axis) +
                    " is out of range for rank " + llvm::Twine(rank));
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
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
// Helpers
//===----------------------------------------------------------------------===//

/// Prints a type for a diagnostic.
static std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

namespace {
/// Fails with a message naming the operand when it is missing.
FailureOr<RankedTensorType> requireTensor(InferenceContext &ctx, unsigned i) {
  if (RankedTensorType type = ctx.getTensorType(i))
    return type;
  (void)ctx.emitError("operand #" + llvm::Twine(i) +
                      " must be a ranked tensor");
  return failure();
}

RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

int64_t mulDims(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) ? kDynamic
                                                               : a * b;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Broadcasts the shapes of all present operands (numpy rules).
LogicalResult broadcastShapes(InferenceContext &ctx, unsigned first,
                              unsigned last, SmallVector<int64_t> &shape) {
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
    SmallVector<int64_t> result;
    if (!OpTrait::util::getBroadcastedShape(shape, type.getShape(), result))
      return ctx.emitError("operands have incompatible broadcast shapes");
    shape = std::move(result);
  }
  if (!initialised)
    return ctx.emitError("expected at least one tensor operand");
  return success();
}

LogicalResult requireSameElementTypes(InferenceContext &ctx, unsigned first,
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

/// Reads a spatial attribute (pads, strides, ...) or fills a default.
FailureOr<SmallVector<int64_t>> spatialAttr(InferenceContext &ctx,
                                            StringRef name, size_t count,
                                            int64_t defaultValue) {
  std::optional<SmallVector<int64_t>> values = ctx.getInts(name);
  if (!values)
    return SmallVector<int64_t>(count, defaultValue);
  if (values->size() != count) {
    (void)ctx.emitError("attribute '" + name + "' must have " +
                        llvm::Twine(count) + " elements, got " +
                        llvm::Twine(values->size()));
    return failure();
  }
  return *values;
}

/// Output sizes of a sliding window (Conv and pooling), per ONNX.
FailureOr<SmallVector<int64_t>>
slidingWindowSizes(InferenceContext &ctx, ArrayRef<int64_t> inputSpatial,
                   ArrayRef<int64_t> kernel, bool ceilMode) {
  size_t n = inputSpatial.size();
  if (kernel.size() != n) {
    (void)ctx.emitError("kernel has " + llvm::Twine(kernel.size()) +
                        " spatial dimensions but the input has " +
                        llvm::Twine(n));
    return failure();
  }
  auto strides = spatialAttr(ctx, "strides", n, 1);
  auto dilations = spatialAttr(ctx, "dilations", n, 1);
  auto pads = spatialAttr(ctx, "pads", 2 * n, 0);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  StringRef autoPad = ctx.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> out;
  for (size_t i = 0; i < n; ++i) {
    int64_t stride = (*strides)[i], dilation = (*dilations)[i];
    if (stride <= 0 || dilation <= 0 || kernel[i] <= 0) {
      (void)ctx.emitError("strides, dilations and kernel sizes must be "
                          "positive");
      return failure();
    }
    int64_t in = inputSpatial[i];
    if (ShapedType::isDynamic(in)) {
      out.push_back(kDynamic);
      continue;
    }
    int64_t window = (kernel[i] - 1) * dilation + 1;
    int64_t size;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      size = ceilDiv(in, stride);
    } else if (autoPad == "VALID") {
      size = (in - window) / stride + 1;
    } else if (autoPad == "NOTSET") {
      int64_t padded = in + (*pads)[i] + (*pads)[i + n] - window;
      size = (ceilMode ? ceilDiv(padded, stride) : floorDiv(padded, stride)) +
             1;
      // A ceil-mode window must start inside the input or left padding.
      if (ceilMode && (size - 1) * stride >= in + (*pads)[i])
        --size;
    } else {
      (void)ctx.emitError("unknown auto_pad value '" + autoPad + "'");
      return failure();
    }
    if (size <= 0) {
      (void)ctx.emitError("window of size " + llvm::Twine(window) +
                          " does not fit spatial dimension " + llvm::Twine(i) +
                          " of size " + llvm::Twine(in));
      return failure();
    }
    out.push_back(size);
  }
  return out;
}
} // namespace

//===----------------------------------------------------------------------===//
// Elementwise families
//===----------------------------------------------------------------------===//

LogicalResult shape::inferConstant(InferenceContext &ctx, Types &results) {
  auto value = dyn_cast_or_null<TypedAttr>(ctx.getAttr("value"));
  auto type = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
  if (!type)
    return ctx.emitError("'value' must be a ranked tensor attribute");
  results.push_back(type);
  return success();
}

LogicalResult shape::inferSameAsFirst(InferenceContext &ctx, Types &results) {
  auto type = requireTensor(ctx, 0);
  if (failed(type))
    return failure();
  results.push_back(*type);
  return success();
}

LogicalResult shape::inferBoolLikeFirst(InferenceContext &ctx,
                                        Types &results) {
  auto type = requireTensor(ctx, 0);
  if (failed(type))
    return failure();
  results.push_back(
      tensorOf(type->getShape(), IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult shape::inferDropout(InferenceContext &ctx, Types &results) {
  if (failed(inferSameAsFirst(ctx, results)))
    return failure();
  auto type = cast<RankedTensorType>(results.front());
  results.push_back(
      tensorOf(type.getShape(), IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult shape::inferBroadcast(InferenceContext &ctx, Types &results) {
  SmallVector<int64_t> shape;
  if (failed(requireTensor(ctx, 0)) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())) ||
      failed(broadcastShapes(ctx, 0, ctx.getNumOperands(), shape)))
    return failure();
  results.push_back(tensorOf(shape, ctx.getTensorType(0).getElementType()));
  return success();
}

LogicalResult shape::inferBroadcastMixed(InferenceContext &ctx,
                                         Types &results) {
  SmallVector<int64_t> shape;
  if (failed(requireTensor(ctx, 0)) ||
      failed(broadcastShapes(ctx, 0, ctx.getNumOperands(), shape)))
    return failure();
  results.push_back(tensorOf(shape, ctx.getTensorType(0).getElementType()));
  return success();
}

LogicalResult shape::inferBroadcastBool(InferenceContext &ctx,
                                        Types &results) {
  SmallVector<int64_t> shape;
  if (failed(requireTensor(ctx, 0)) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())) ||
      failed(broadcastShapes(ctx, 0, ctx.getNumOperands(), shape)))
    return failure();
  results.push_back(tensorOf(shape, IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult shape::inferWhere(InferenceContext &ctx, Types &results) {
  SmallVector<int64_t> shape;
  if (failed(requireTensor(ctx, 1)) ||
      failed(requireSameElementTypes(ctx, 1, 3)) ||
      failed(broadcastShapes(ctx, 0, 3, shape)))
    return failure();
  results.push_back(tensorOf(shape, ctx.getTensorType(1).getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult shape::inferReduce(InferenceContext &ctx, Types &results) {
  auto type = requireTensor(ctx, 0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  bool keepDims = ctx.getInt("keepdims", 1) != 0;
  bool noopWithEmptyAxes = ctx.getInt("noop_with_empty_axes", 0) != 0;
  Type elementType = type->getElementType();

  std::optional<SmallVector<int64_t>> axes;
  if (ctx.isAbsent(1)) {
    axes.emplace();
  } else {
    axes = ctx.getConstantInts(1);
    if (!axes) {
      // Axes known only at run time: the rank is still known when the
      // dimensions are kept or the number of axes is static.
      RankedTensorType axesType = ctx.getTensorType(1);
      if (keepDims) {
        results.push_back(tensorOf(SmallVector<int64_t>(rank, kDynamic),
                                   elementType));
        return success();
      }
      if (axesType.getRank() != 1 || axesType.isDynamicDim(0))
        return ctx.emitError("reduction axes must be constant, or have a "
                             "static length when keepdims is 0");
      results.push_back(tensorOf(
          SmallVector<int64_t>(rank - axesType.getDimSize(0), kDynamic),
          elementType));
      return success();
    }
  }
  if (axes->empty()) {
    if (noopWithEmptyAxes) {
      results.push_back(*type);
      return success();
    }
    axes->resize(rank);
    std::iota(axes->begin(), axes->end(), 0);
  }
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : *axes) {
    auto normalized = ctx.normalizeAxis(axis, rank, "reduction axis");
    if (failed(normalized))
      return failure();
    reduced[*normalized] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      shape.push_back(type->getDimSize(i));
    else if (keepDims)
      shape.push_back(1);
  }
  results.push_back(tensorOf(shape, elementType));
  return success();
}

LogicalResult shape::inferArgReduce(InferenceContext &ctx, Types &results) {
  auto type = requireTensor(ctx, 0);
  if (failed(type))
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), type->getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(type->getShape());
  if (ctx.getInt("keepdims", 1))
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  results.push_back(tensorOf(shape, IntegerType::get(ctx.getContext(), 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

static LogicalResult checkContraction(InferenceContext &ctx, int64_t lhs,
                                      int64_t rhs) {
  if (!ShapedType::isDynamic(lhs) && !ShapedType::isDynamic(rhs) && lhs != rhs)
    return ctx.emitError("contracting dimensions differ: " +
                         llvm::Twine(lhs) + " vs " + llvm::Twine(rhs));
  return success();
}

LogicalResult shape::inferMatMul(InferenceContext &ctx, Types &results) {
  auto lhs = requireTensor(ctx, 0);
  auto rhs = requireTensor(ctx, 1);
  if (failed(lhs) || failed(rhs) || failed(requireSameElementTypes(ctx, 0, 2)))
    return failure();
  if (lhs->getRank() == 0 || rhs->getRank() == 0)
    return ctx.emitError("MatMul operands must have rank >= 1");
  SmallVector<int64_t> a(lhs->getShape()), b(rhs->getShape());
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  if (failed(checkContraction(ctx, a.back(), b[b.size() - 2])))
    return failure();
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(ArrayRef(a).drop_back(2),
                                          ArrayRef(b).drop_back(2), batch))
    return ctx.emitError("MatMul batch dimensions do not broadcast");
  if (!lhsVector)
    batch.push_back(a[a.size() - 2]);
  if (!rhsVector)
    batch.push_back(b.back());
  results.push_back(tensorOf(batch, lhs->getElementType()));
  return success();
}

LogicalResult shape::inferGemm(InferenceContext &ctx, Types &results) {
  auto lhs = requireTensor(ctx, 0);
  auto rhs = requireTensor(ctx, 1);
  if (failed(lhs) || failed(rhs) || failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  if (lhs->getRank() != 2 || rhs->getRank() != 2)
    return ctx.emitError("Gemm operands A and B must be 2-d");
  bool transA = ctx.getInt("transA", 0), transB = ctx.getInt("transB", 0);
  int64_t m = lhs->getDimSize(transA ? 1 : 0);
  int64_t k = lhs->getDimSize(transA ? 0 : 1);
  int64_t kb = rhs->getDimSize(transB ? 1 : 0);
  int64_t n = rhs->getDimSize(transB ? 0 : 1);
  if (failed(checkContraction(ctx, k, kb)))
    return failure();
  SmallVector<int64_t> shape = {m, n};
  if (RankedTensorType c = ctx.getTensorType(2)) {
    SmallVector<int64_t> unused;
    if (c.getRank() > 2 ||
        !OpTrait::util::getBroadcastedShape(shape, c.getShape(), unused))
      return ctx.emitError("Gemm operand C does not broadcast to (M, N)");
  }
  results.push_back(tensorOf(shape, lhs->getElementType()));
  return success();
}

LogicalResult shape::inferEinsum(InferenceContext &ctx, Types &results) {
  std::string equation;
  for (char c : ctx.getString("equation", ""))
    if (c != ' ')
      equation.push_back(c);
  if (ctx.getNumOperands() == 0 || failed(requireTensor(ctx, 0)) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())))
    return failure();
  StringRef eq(equation);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ctx.getNumOperands())
    return ctx.emitError("einsum equation has " + llvm::Twine(terms.size()) +
                         " input terms for " +
                         llvm::Twine(ctx.getNumOperands()) + " operands");
  llvm::DenseMap<char, int64_t> letterSize;
  llvm::DenseMap<char, int> letterCount;
  SmallVector<int64_t> ellipsisShape;
  for (auto [index, term] : llvm::enumerate(terms)) {
    if (failed(requireTensor(ctx, index)))
      return failure();
    ArrayRef<int64_t> dims = ctx.getTensorType(index).getShape();
    size_t ellipsis = term.find("...");
    size_t letters = term.size() - (ellipsis == StringRef::npos ? 0 : 3);
    if (letters > dims.size() ||
        (ellipsis == StringRef::npos && letters != dims.size()))
      return ctx.emitError("einsum term '" + term + "' does not match rank " +
                           llvm::Twine(dims.size()));
    size_t ellipsisRank = dims.size() - letters;
    size_t dim = 0;
    for (size_t pos = 0; pos < term.size(); ++pos) {
      if (pos == ellipsis) {
        SmallVector<int64_t> broadcast;
        if (!OpTrait::util::getBroadcastedShape(
                ellipsisShape, dims.slice(dim, ellipsisRank), broadcast))
          return ctx.emitError("einsum ellipsis dimensions do not broadcast");
        ellipsisShape = std::move(broadcast);
        dim += ellipsisRank;
        pos += 2;
        continue;
      }
      char letter = term[pos];
      if (!llvm::isAlpha(letter))
        return ctx.emitError("invalid einsum equation '" + eq + "'");
      int64_t size = dims[dim++];
      auto [it, inserted] = letterSize.try_emplace(letter, size);
      if (!inserted && ShapedType::isDynamic(it->second))
        it->second = size;
      else if (!inserted && !ShapedType::isDynamic(size) &&
               it->second != size && it->second != 1 && size != 1)
        return ctx.emitError("einsum index '" + llvm::Twine(letter) +
                             "' has sizes " + llvm::Twine(it->second) +
                             " and " + llvm::Twine(size));
      else if (!inserted && it->second == 1)
        it->second = size;
      ++letterCount[letter];
    }
  }
  std::string output;
  if (explicitOutput) {
    output = rhs.str();
  } else {
    output = "...";
    SmallVector<char> singles;
    for (auto [letter, count] : letterCount)
      if (count == 1)
        singles.push_back(letter);
    llvm::sort(singles);
    output.append(singles.begin(), singles.end());
  }
  SmallVector<int64_t> shape;
  for (size_t pos = 0; pos < output.size(); ++pos) {
    if (StringRef(output).substr(pos).starts_with("...")) {
      shape.append(ellipsisShape.begin(), ellipsisShape.end());
      pos += 2;
      continue;
    }
    auto it = letterSize.find(output[pos]);
    if (it == letterSize.end())
      return ctx.emitError("einsum output index '" +
                           llvm::Twine(output[pos]) +
                           "' does not appear in the inputs");
    shape.push_back(it->second);
  }
  results.push_back(tensorOf(shape, ctx.getTensorType(0).getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult shape::inferConv(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto w = requireTensor(ctx, 1);
  if (failed(x) || failed(w) || failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  if (x->getRank() < 3 || w->getRank() != x->getRank())
    return ctx.emitError("Conv expects X of rank >= 3 and W of the same rank");
  int64_t group = ctx.getInt("group", 1);
  if (group <= 0)
    return ctx.emitError("group must be positive");
  int64_t channels = x->getDimSize(1), filterChannels = w->getDimSize(1);
  if (!ShapedType::isDynamic(channels) &&
      !ShapedType::isDynamic(filterChannels) &&
      channels != filterChannels * group)
    return ctx.emitError("input has " + llvm::Twine(channels) +
                         " channels but W expects " +
                         llvm::Twine(filterChannels) + " x group " +
                         llvm::Twine(group));
  SmallVector<int64_t> kernel(w->getShape().drop_front(2));
  if (auto attr = ctx.getInts("kernel_shape"))
    kernel = *attr;
  if (llvm::any_of(kernel, ShapedType::isDynamic))
    return ctx.emitError("Conv needs a static kernel shape");
  auto spatial =
      slidingWindowSizes(ctx, x->getShape().drop_front(2), kernel, false);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape = {x->getDimSize(0), w->getDimSize(0)};
  shape.append(spatial->begin(), spatial->end());
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferConvTranspose(InferenceContext &ctx,
                                        Types &results) {
  auto x = requireTensor(ctx, 0);
  auto w = requireTensor(ctx, 1);
  if (failed(x) || failed(w) || failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  if (x->getRank() < 3 || w->getRank() != x->getRank())
    return ctx.emitError(
        "ConvTranspose expects X of rank >= 3 and W of the same rank");
  size_t n = x->getRank() - 2;
  int64_t group = ctx.getInt("group", 1);
  SmallVector<int64_t> kernel(w->getShape().drop_front(2));
  if (auto attr = ctx.getInts("kernel_shape"))
    kernel = *attr;
  auto strides = spatialAttr(ctx, "strides", n, 1);
  auto dilations = spatialAttr(ctx, "dilations", n, 1);
  auto pads = spatialAttr(ctx, "pads", 2 * n, 0);
  auto outputPadding = spatialAttr(ctx, "output_padding", n, 0);
  if (failed(strides) || failed(dilations) || failed(pads) ||
      failed(outputPadding) || kernel.size() != n)
    return ctx.emitError("ConvTranspose attributes do not match the rank");
  std::optional<SmallVector<int64_t>> outputShape = ctx.getInts("output_shape");
  if (outputShape && outputShape->size() == n + 2)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && outputShape->size() != n)
    return ctx.emitError("output_shape must have one entry per spatial dim");
  StringRef autoPad = ctx.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> shape = {x->getDimSize(0),
                                mulDims(w->getDimSize(1), group)};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x->getDimSize(i + 2);
    if (outputShape) {
      shape.push_back((*outputShape)[i]);
    } else if (ShapedType::isDynamic(in)) {
      shape.push_back(kDynamic);
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      shape.push_back(in * (*strides)[i]);
    } else {
      int64_t window = (kernel[i] - 1) * (*dilations)[i] + 1;
      int64_t padTotal = autoPad == "VALID" ? 0 : (*pads)[i] + (*pads)[i + n];
      shape.push_back((*strides)[i] * (in - 1) + (*outputPadding)[i] + window -
                      padTotal);
    }
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferPool(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() < 3)
    return ctx.emitError("pooling expects an input of rank >= 3");
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  if (!kernel)
    return ctx.emitError("pooling requires 'kernel_shape'");
  auto spatial = slidingWindowSizes(ctx, x->getShape().drop_front(2), *kernel,
                                    ctx.getInt("ceil_mode", 0) != 0);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1)};
  shape.append(spatial->begin(), spatial->end());
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferMaxPool(InferenceContext &ctx, Types &results) {
  if (failed(inferPool(ctx, results)))
    return failure();
  auto values = cast<RankedTensorType>(results.front());
  results.push_back(
      tensorOf(values.getShape(), IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferGlobalPool(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() < 3)
    return ctx.emitError("global pooling expects an input of rank >= 3");
  SmallVector<int64_t> shape(x->getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferBatchNorm(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() < 2)
    return ctx.emitError("BatchNormalization expects an input of rank >= 2");
  for (unsigned i = 1; i < 5; ++i) {
    RankedTensorType param = ctx.getTensorType(i);
    if (!param || param.getRank() != 1 ||
        failed(checkContraction(ctx, param.getDimSize(0), x->getDimSize(1))))
      return ctx.emitError("BatchNormalization operand #" + llvm::Twine(i) +
                           " must be a 1-d tensor of size C");
  }
  results.push_back(*x);
  if (ctx.getInt("training_mode", 0)) {
    results.push_back(ctx.getTensorType(3));
    results.push_back(ctx.getTensorType(4));
  }
  return success();
}

LogicalResult shape::inferLayerNorm(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x) || failed(requireTensor(ctx, 1)))
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", -1), x->getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> statsShape(x->getShape());
  std::fill(statsShape.begin() + *axis, statsShape.end(), 1);
  Type statsType = ctx.getInt("stash_type", 1) == 1
                       ? Float32Type::get(ctx.getContext())
                       : x->getElementType();
  results.push_back(*x);
  results.push_back(tensorOf(statsShape, statsType));
  results.push_back(tensorOf(statsShape, statsType));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult shape::inferShapeOp(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  int64_t start = clampIndex(ctx.getInt("start", 0));
  int64_t end = clampIndex(ctx.getInt("end", rank));
  results.push_back(tensorOf({std::max<int64_t>(end - start, 0)},
                             IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferSize(InferenceContext &ctx, Types &results) {
  if (failed(requireTensor(ctx, 0)))
    return failure();
  results.push_back(tensorOf({}, IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferCast(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  Type to = ctx.getTypeAttr("to", nullptr);
  if (failed(x))
    return failure();
  if (!to)
    return ctx.emitError("Cast requires a 'to' type attribute");
  results.push_back(tensorOf(x->getShape(), to));
  return success();
}

LogicalResult shape::inferCastLike(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto target = requireTensor(ctx, 1);
  if (failed(x) || failed(target))
    return failure();
  results.push_back(tensorOf(x->getShape(), target->getElementType()));
  return success();
}

LogicalResult shape::inferReshape(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto shapeType = requireTensor(ctx, 1);
  if (failed(x) || failed(shapeType))
    return failure();
  if (shapeType->getRank() != 1)
    return ctx.emitError("Reshape 'shape' must be 1-d");
  std::optional<SmallVector<int64_t>> target = ctx.getConstantInts(1);
  if (!target) {
    if (shapeType->isDynamicDim(0))
      return ctx.emitError(
          "Reshape 'shape' must be constant or have a static length");
    results.push_back(tensorOf(
        SmallVector<int64_t>(shapeType->getDimSize(0), kDynamic),
        x->getElementType()));
    return success();
  }
  bool allowZero = ctx.getInt("allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int64_t inferredIndex = -1;
  for (auto [i, dim] : llvm::enumerate(*target)) {
    if (dim == -1) {
      if (inferredIndex >= 0)
        return ctx.emitError("Reshape 'shape' has more than one -1");
      inferredIndex = i;
      shape.push_back(kDynamic);
    } else if (dim == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= x->getRank())
        return ctx.emitError("Reshape 'shape' copies dimension " +
                             llvm::Twine(i) + " which the input lacks");
      shape.push_back(x->getDimSize(i));
    } else if (dim < 0) {
      return ctx.emitError("Reshape 'shape' has invalid dimension " +
                           llvm::Twine(dim));
    } else {
      shape.push_back(dim);
    }
  }
  if (x->hasStaticShape()) {
    int64_t known = 1;
    for (auto [i, dim] : llvm::enumerate(shape))
      if (static_cast<int64_t>(i) != inferredIndex) {
        if (ShapedType::isDynamic(dim)) {
          known = -1;
          break;
        }
        known *= dim;
      }
    int64_t total = x->getNumElements();
    if (known > 0 && inferredIndex >= 0) {
      if (total % known != 0)
        return ctx.emitError("cannot reshape " + llvm::Twine(total) +
                             " elements with a -1 dimension");
      shape[inferredIndex] = total / known;
    } else if (known >= 0 && inferredIndex < 0 && known != total) {
      return ctx.emitError("cannot reshape " + llvm::Twine(total) +
                           " elements into " + llvm::Twine(known));
    }
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferFlatten(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.emitError("Flatten axis " + llvm::Twine(axis) +
                         " is out of range for rank " + llvm::Twine(rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) = mulDims(i < axis ? outer : inner,
                                         x->getDimSize(i));
  results.push_back(tensorOf({outer, inner}, x->getElementType()));
  return success();
}

LogicalResult shape::inferSqueeze(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<bool> drop(rank, false);
  if (ctx.isAbsent(1)) {
    for (int64_t i = 0; i < rank; ++i) {
      if (x->isDynamicDim(i))
        return ctx.emitError("Squeeze without axes needs static dimensions");
      drop[i] = x->getDimSize(i) == 1;
    }
  } else {
    std::optional<SmallVector<int64_t>> axes = ctx.getConstantInts(1);
    if (!axes)
      return ctx.emitError("Squeeze axes must be constant");
    for (int64_t axis : *axes) {
      auto normalized = ctx.normalizeAxis(axis, rank, "Squeeze axis");
      if (failed(normalized))
        return failure();
      int64_t dim = x->getDimSize(*normalized);
      if (!ShapedType::isDynamic(dim) && dim != 1)
        return ctx.emitError("cannot squeeze dimension " +
                             llvm::Twine(*normalized) + " of size " +
                             llvm::Twine(dim));
      drop[*normalized] = true;
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      shape.push_back(x->getDimSize(i));
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferUnsqueeze(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> axes = ctx.getConstantInts(1);
  if (!axes)
    return ctx.emitError("Unsqueeze axes must be constant");
  int64_t rank = x->getRank() + axes->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    auto normalized = ctx.normalizeAxis(axis, rank, "Unsqueeze axis");
    if (failed(normalized))
      return failure();
    if (inserted[*normalized])
      return ctx.emitError("Unsqueeze axes repeat " + llvm::Twine(axis));
    inserted[*normalized] = true;
  }
  SmallVector<int64_t> shape;
  auto dims = x->getShape().begin();
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(inserted[i] ? 1 : *dims++);
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferTranspose(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<int64_t> perm;
  if (auto attr = ctx.getInts("perm")) {
    perm = *attr;
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    return ctx.emitError("Transpose perm has " + llvm::Twine(perm.size()) +
                         " entries for rank " + llvm::Twine(rank));
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return ctx.emitError("Transpose perm is not a permutation");
    seen[p] = true;
    shape.push_back(x->getDimSize(p));
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferConcat(InferenceContext &ctx, Types &results) {
  auto first = requireTensor(ctx, 0);
  if (failed(first) ||
      failed(requireSameElementTypes(ctx, 0, ctx.getNumOperands())))
    return failure();
  int64_t rank = first->getRank();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank, "Concat axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first->getShape());
  for (unsigned i = 1; i < ctx.getNumOperands(); ++i) {
    RankedTensorType type = ctx.getTensorType(i);
    if (!type || type.getRank() != rank)
      return ctx.emitError("Concat inputs must have the same rank");
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = type.getDimSize(d);
      if (d == *axis) {
        shape[d] = ShapedType::isDynamic(size) || ShapedType::isDynamic(shape[d])
                       ? kDynamic
                       : shape[d] + size;
      } else if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
      } else if (!ShapedType::isDynamic(size) && size != shape[d]) {
        return ctx.emitError("Concat inputs differ in dimension " +
                             llvm::Twine(d) + ": " + llvm::Twine(shape[d]) +
                             " vs " + llvm::Twine(size));
      }
    }
  }
  results.push_back(tensorOf(shape, first->getElementType()));
  return success();
}

LogicalResult shape::inferSplit(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), x->getRank(),
                                "Split axis");
  if (failed(axis))
    return failure();
  std::optional<int64_t> numOutputs = ctx.getOptionalInt("num_outputs");
  if (!numOutputs || *numOutputs <= 0)
    return ctx.emitError("Split requires a positive 'num_outputs'");
  int64_t dim = x->getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (!ctx.isAbsent(1)) {
    std::optional<SmallVector<int64_t>> split = ctx.getConstantInts(1);
    if (split) {
      if (static_cast<int64_t>(split->size()) != *numOutputs)
        return ctx.emitError("Split has " + llvm::Twine(split->size()) +
                             " sizes for " + llvm::Twine(*numOutputs) +
                             " outputs");
      int64_t total = 0;
      for (int64_t s : *split) {
        if (s < 0)
          return ctx.emitError("Split sizes must be non-negative");
        total += s;
      }
      if (!ShapedType::isDynamic(dim) && total != dim)
        return ctx.emitError("Split sizes add up to " + llvm::Twine(total) +
                             " but the dimension is " + llvm::Twine(dim));
      sizes = *split;
    } else {
      sizes.assign(*numOutputs, kDynamic);
    }
  } else if (ShapedType::isDynamic(dim)) {
    sizes.assign(*numOutputs, kDynamic);
  } else {
    int64_t chunk = ceilDiv(dim, *numOutputs);
    for (int64_t i = 0; i < *numOutputs; ++i)
      sizes.push_back(std::max<int64_t>(
          0, std::min<int64_t>(chunk, dim - i * chunk)));
  }
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(x->getShape());
    shape[*axis] = size;
    results.push_back(tensorOf(shape, x->getElementType()));
  }
  return success();
}

LogicalResult shape::inferSlice(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (failed(requireTensor(ctx, 1)) || failed(requireTensor(ctx, 2)))
    return failure();
  if (ctx.getTensorType(1).getRank() != 1 || ctx.getTensorType(2).getRank() != 1)
    return ctx.emitError("Slice starts and ends must be 1-d");
  int64_t rank = x->getRank();
  auto starts = ctx.getConstantInts(1);
  auto ends = ctx.getConstantInts(2);
  std::optional<SmallVector<int64_t>> axes, steps;
  bool axesKnown = true, stepsKnown = true;
  if (!ctx.isAbsent(3))
    axesKnown = (axes = ctx.getConstantInts(3)).has_value();
  if (!ctx.isAbsent(4))
    stepsKnown = (steps = ctx.getConstantInts(4)).has_value();
  SmallVector<int64_t> shape(x->getShape());
  if (!axesKnown) {
    results.push_back(
        tensorOf(SmallVector<int64_t>(rank, kDynamic), x->getElementType()));
    return success();
  }
  size_t count = starts ? starts->size()
                        : (ctx.getTensorType(1).isDynamicDim(0)
                               ? 0
                               : ctx.getTensorType(1).getDimSize(0));
  if (!axes) {
    axes.emplace(count);
    std::iota(axes->begin(), axes->end(), 0);
  }
  if ((starts && ends && starts->size() != ends->size()) ||
      (starts && axes->size() != starts->size()) ||
      (steps && steps->size() != axes->size()))
    return ctx.emitError("Slice starts, ends, axes and steps must have the "
                         "same length");
  for (size_t i = 0; i < axes->size(); ++i) {
    auto axis = ctx.normalizeAxis((*axes)[i], rank, "Slice axis");
    if (failed(axis))
      return failure();
    int64_t dim = x->getDimSize(*axis);
    if (!starts || !ends || !stepsKnown || ShapedType::isDynamic(dim)) {
      shape[*axis] = kDynamic;
      continue;
    }
    int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0)
      return ctx.emitError("Slice step must not be 0");
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start = std::max<int64_t>(start, -dim) + dim;
    if (end < 0)
      end = std::max<int64_t>(end, -dim - 1) + dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      shape[*axis] = end > start ? ceilDiv(end - start, step) : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      shape[*axis] = start > end ? ceilDiv(start - end, -step) : 0;
    }
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferGather(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto indices = requireTensor(ctx, 1);
  if (failed(x) || failed(indices))
    return failure();
  if (x->getRank() == 0)
    return ctx.emitError("Gather data must have rank >= 1");
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), x->getRank(),
                                "Gather axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(x->getShape().take_front(*axis));
  shape.append(indices->getShape().begin(), indices->getShape().end());
  shape.append(x->getShape().begin() + *axis + 1, x->getShape().end());
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferGatherElements(InferenceContext &ctx,
                                         Types &results) {
  auto x = requireTensor(ctx, 0);
  auto indices = requireTensor(ctx, 1);
  if (failed(x) || failed(indices))
    return failure();
  if (x->getRank() != indices->getRank())
    return ctx.emitError("GatherElements data and indices must have the "
                         "same rank");
  if (failed(ctx.normalizeAxis(ctx.getInt("axis", 0), x->getRank())))
    return failure();
  results.push_back(tensorOf(indices->getShape(), x->getElementType()));
  return success();
}

LogicalResult shape::inferGatherND(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto indices = requireTensor(ctx, 1);
  if (failed(x) || failed(indices))
    return failure();
  int64_t batchDims = ctx.getInt("batch_dims", 0);
  int64_t q = indices->getRank();
  if (q < 1 || indices->isDynamicDim(q - 1))
    return ctx.emitError("GatherND indices need a static last dimension");
  int64_t k = indices->getDimSize(q - 1);
  if (batchDims < 0 || batchDims + k > x->getRank() || batchDims >= q)
    return ctx.emitError("GatherND indices do not fit the data rank");
  SmallVector<int64_t> shape(indices->getShape().drop_back());
  shape.append(x->getShape().begin() + batchDims + k, x->getShape().end());
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferExpand(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto shapeType = requireTensor(ctx, 1);
  if (failed(x) || failed(shapeType))
    return failure();
  std::optional<SmallVector<int64_t>> target = ctx.getConstantInts(1);
  if (!target) {
    if (shapeType->getRank() != 1 || shapeType->isDynamicDim(0))
      return ctx.emitError("Expand shape must be constant or have a static "
                           "length");
    int64_t rank = std::max<int64_t>(x->getRank(), shapeType->getDimSize(0));
    results.push_back(
        tensorOf(SmallVector<int64_t>(rank, kDynamic), x->getElementType()));
    return success();
  }
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(x->getShape(), *target, shape))
    return ctx.emitError("Expand input does not broadcast to the shape");
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferTile(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> repeats = ctx.getConstantInts(1);
  SmallVector<int64_t> shape(x->getRank(), kDynamic);
  if (repeats) {
    if (static_cast<int64_t>(repeats->size()) != x->getRank())
      return ctx.emitError("Tile repeats must have one entry per dimension");
    for (int64_t i = 0; i < x->getRank(); ++i)
      shape[i] = mulDims(x->getDimSize(i), (*repeats)[i]);
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferPad(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  std::optional<SmallVector<int64_t>> pads = ctx.getConstantInts(1);
  std::optional<SmallVector<int64_t>> axes;
  if (!ctx.isAbsent(3))
    axes = ctx.getConstantInts(3);
  SmallVector<int64_t> shape(rank, kDynamic);
  if (pads && (ctx.isAbsent(3) || axes)) {
    if (!axes) {
      axes.emplace(rank);
      std::iota(axes->begin(), axes->end(), 0);
    }
    size_t n = axes->size();
    if (pads->size() != 2 * n)
      return ctx.emitError("Pad pads must have 2 x " + llvm::Twine(n) +
                           " entries, got " + llvm::Twine(pads->size()));
    shape.assign(x->getShape().begin(), x->getShape().end());
    for (size_t i = 0; i < n; ++i) {
      auto axis = ctx.normalizeAxis((*axes)[i], rank, "Pad axis");
      if (failed(axis))
        return failure();
      if (!ShapedType::isDynamic(shape[*axis]))
        shape[*axis] += (*pads)[i] + (*pads)[i + n];
    }
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

LogicalResult shape::inferDepthToSpace(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t b = ctx.getInt("blocksize", 0);
  if (x->getRank() != 4 || b <= 0)
    return ctx.emitError("DepthToSpace expects a 4-d input and a positive "
                         "blocksize");
  int64_t c = x->getDimSize(1);
  if (!ShapedType::isDynamic(c) && c % (b * b) != 0)
    return ctx.emitError("DepthToSpace channels must divide blocksize^2");
  results.push_back(tensorOf({x->getDimSize(0),
                              ShapedType::isDynamic(c) ? kDynamic : c / (b * b),
                              mulDims(x->getDimSize(2), b),
                              mulDims(x->getDimSize(3), b)},
                             x->getElementType()));
  return success();
}

LogicalResult shape::inferSpaceToDepth(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t b = ctx.getInt("blocksize", 0);
  if (x->getRank() != 4 || b <= 0)
    return ctx.emitError("SpaceToDepth expects a 4-d input and a positive "
                         "blocksize");
  auto divide = [&](int64_t d) {
    return ShapedType::isDynamic(d) ? kDynamic : d / b;
  };
  results.push_back(tensorOf({x->getDimSize(0),
                              mulDims(x->getDimSize(1), b * b),
                              divide(x->getDimSize(2)),
                              divide(x->getDimSize(3))},
                             x->getElementType()));
  return success();
}

LogicalResult shape::inferResize(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<int64_t> axes;
  if (auto attr = ctx.getInts("axes")) {
    for (int64_t a : *attr) {
      auto axis = ctx.normalizeAxis(a, rank, "Resize axis");
      if (failed(axis))
        return failure();
      axes.push_back(*axis);
    }
  } else {
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), 0);
  }
  SmallVector<int64_t> shape(x->getShape());
  if (auto sizes = ctx.getConstantInts(3)) {
    if (sizes->size() != axes.size())
      return ctx.emitError("Resize sizes must have one entry per axis");
    if (ctx.getString("keep_aspect_ratio_policy", "stretch") != "stretch") {
      for (int64_t axis : axes)
        shape[axis] = kDynamic;
    } else {
      for (auto [axis, size] : llvm::zip(axes, *sizes))
        shape[axis] = size;
    }
  } else if (!ctx.isAbsent(2)) {
    Attribute scalesAttr;
    auto scales = dyn_cast_or_null<DenseFPElementsAttr>(
        matchPattern(ctx.getOperands()[2], m_Constant(&scalesAttr))
            ? scalesAttr
            : Attribute());
    RankedTensorType scalesType = ctx.getTensorType(2);
    if (scalesType.getRank() == 1 && scalesType.getDimSize(0) == 0) {
      // Empty scales: sizes decide, but they are not constant.
      for (int64_t axis : axes)
        shape[axis] = kDynamic;
    } else if (scales) {
      if (scales.getNumElements() != static_cast<int64_t>(axes.size()))
        return ctx.emitError("Resize scales must have one entry per axis");
      for (auto [axis, scale] : llvm::zip(axes, scales.getValues<APFloat>()))
        if (!ShapedType::isDynamic(shape[axis]))
          shape[axis] = static_cast<int64_t>(
              std::floor(shape[axis] * scale.convertToFloat()));
    } else {
      for (int64_t axis : axes)
        shape[axis] = kDynamic;
    }
  } else if (!ctx.isAbsent(3)) {
    for (int64_t axis : axes)
      shape[axis] = kDynamic;
  } else {
    return ctx.emitError("Resize needs 'scales' or 'sizes'");
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

LogicalResult shape::inferConstantOfShape(InferenceContext &ctx,
                                          Types &results) {
  auto shapeType = requireTensor(ctx, 0);
  if (failed(shapeType))
    return failure();
  Type elementType = Float32Type::get(ctx.getContext());
  if (auto value = dyn_cast_or_null<ElementsAttr>(ctx.getAttr("value"))) {
    if (value.getNumElements() != 1)
      return ctx.emitError("ConstantOfShape value must have one element");
    elementType = value.getElementType();
  }
  if (shapeType->getRank() != 1)
    return ctx.emitError("ConstantOfShape input must be 1-d");
  if (auto dims = ctx.getConstantInts(0)) {
    if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }))
      return ctx.emitError("ConstantOfShape dimensions must be >= 0");
    results.push_back(tensorOf(*dims, elementType));
    return success();
  }
  if (shapeType->isDynamicDim(0))
    return ctx.emitError("ConstantOfShape shape must be constant or have a "
                         "static length");
  results.push_back(tensorOf(
      SmallVector<int64_t>(shapeType->getDimSize(0), kDynamic), elementType));
  return success();
}

LogicalResult shape::inferRange(InferenceContext &ctx, Types &results) {
  auto start = requireTensor(ctx, 0);
  if (failed(start) || failed(requireSameElementTypes(ctx, 0, 3)))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    if (!ctx.getTensorType(i) || ctx.getTensorType(i).getNumElements() != 1)
      return ctx.emitError("Range operands must be scalars");
  int64_t count = kDynamic;
  auto s = ctx.getConstantInts(0), l = ctx.getConstantInts(1),
       d = ctx.getConstantInts(2);
  if (s && l && d) {
    if ((*d)[0] == 0)
      return ctx.emitError("Range delta must not be 0");
    count = std::max<int64_t>(
        0, static_cast<int64_t>(std::ceil(
               static_cast<double>((*l)[0] - (*s)[0]) / (*d)[0])));
  }
  results.push_back(tensorOf({count}, start->getElementType()));
  return success();
}

LogicalResult shape::inferEyeLike(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() != 2)
    return ctx.emitError("EyeLike input must be 2-d");
  results.push_back(
      tensorOf(x->getShape(), ctx.getTypeAttr("dtype", x->getElementType())));
  return success();
}

LogicalResult shape::inferOneHot(InferenceContext &ctx, Types &results) {
  auto indices = requireTensor(ctx, 0);
  auto values = requireTensor(ctx, 2);
  if (failed(indices) || failed(values) || failed(requireTensor(ctx, 1)))
    return failure();
  int64_t rank = indices->getRank() + 1;
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank, "OneHot axis");
  if (failed(axis))
    return failure();
  int64_t depth = kDynamic;
  Attribute depthAttr;
  if (matchPattern(ctx.getOperands()[1], m_Constant(&depthAttr))) {
    if (auto ints = getIntValues(depthAttr))
      depth = (*ints)[0];
    else if (auto floats = dyn_cast<DenseFPElementsAttr>(depthAttr))
      depth = static_cast<int64_t>(
          (*floats.getValues<APFloat>().begin()).convertToDouble());
  }
  SmallVector<int64_t> shape(indices->getShape());
  shape.insert(shape.begin() + *axis, depth);
  results.push_back(tensorOf(shape, values->getElementType()));
  return success();
}

LogicalResult shape::inferTopK(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", -1), x->getRank(),
                                "TopK axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(x->getShape());
  auto k = ctx.getConstantInts(1);
  shape[*axis] = k && k->size() == 1 ? (*k)[0] : kDynamic;
  results.push_back(tensorOf(shape, x->getElementType()));
  results.push_back(tensorOf(shape, IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferNonZero(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  results.push_back(tensorOf({x->getRank(), kDynamic},
                             IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult shape::inferCompress(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (std::optional<int64_t> axisAttr = ctx.getOptionalInt("axis")) {
    auto axis = ctx.normalizeAxis(*axisAttr, x->getRank(), "Compress axis");
    if (failed(axis))
      return failure();
    SmallVector<int64_t> shape(x->getShape());
    shape[*axis] = kDynamic;
    results.push_back(tensorOf(shape, x->getElementType()));
  } else {
    results.push_back(tensorOf({kDynamic}, x->getElementType()));
  }
  return success();
}

LogicalResult shape::inferGridSample(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto grid = requireTensor(ctx, 1);
  if (failed(x) || failed(grid))
    return failure();
  if (x->getRank() < 3 || grid->getRank() != x->getRank())
    return ctx.emitError("GridSample grid must have the rank of X");
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1)};
  shape.append(grid->getShape().begin() + 1, grid->getShape().end() - 1);
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

/// The types yielded by the single block of `region`.
static FailureOr<SmallVector<Type>> yieldedTypes(InferenceContext &ctx,
                                                 Region *region) {
  if (!region || region->empty() || region->front().empty())
    return ctx.emitError("control-flow body is empty"), failure();
  Operation *terminator = &region->front().back();
  return SmallVector<Type>(terminator->getOperandTypes());
}

/// Joins two types: dimensions that differ become dynamic.
static Type joinTypes(Type a, Type b) {
  auto at = dyn_cast<RankedTensorType>(a);
  auto bt = dyn_cast<RankedTensorType>(b);
  if (!at || !bt || at.getRank() != bt.getRank() ||
      at.getElementType() != bt.getElementType())
    return nullptr;
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(at.getShape(), bt.getShape()))
    shape.push_back(x == y ? x : kDynamic);
  return RankedTensorType::get(shape, at.getElementType());
}

LogicalResult shape::inferFromRegions(InferenceContext &ctx, Types &results) {
  RegionRange regions = ctx.getRegions();
  if (regions.size() == 2) { // If
    auto thenTypes = yieldedTypes(ctx, regions[0]);
    auto elseTypes = yieldedTypes(ctx, regions[1]);
    if (failed(thenTypes) || failed(elseTypes))
      return failure();
    if (thenTypes->size() != elseTypes->size())
      return ctx.emitError("If branches yield different numbers of values");
    for (auto [a, b] : llvm::zip(*thenTypes, *elseTypes)) {
      Type joined = joinTypes(a, b);
      if (!joined)
        return ctx.emitError("If branches yield incompatible types " +
                             typeToString(a) + " and " + typeToString(b));
      results.push_back(joined);
    }
    return success();
  }
  if (regions.size() != 1)
    return ctx.emitError("expected a body region");
  auto yielded = yieldedTypes(ctx, regions[0]);
  if (failed(yielded))
    return failure();
  ArrayRef<Type> types = *yielded;
  size_t numStates;
  bool isScan = ctx.getOptionalInt("num_scan_inputs").has_value();
  if (isScan) {
    int64_t numScanInputs = ctx.getInt("num_scan_inputs", 0);
    if (numScanInputs < 0 || numScanInputs > ctx.getNumOperands())
      return ctx.emitError("num_scan_inputs exceeds the operand count");
    numStates = ctx.getNumOperands() - numScanInputs;
  } else {
    if (types.empty() || ctx.getNumOperands() < 2)
      return ctx.emitError("Loop body must yield its condition");
    types = types.drop_front(); // the condition
    numStates = ctx.getNumOperands() - 2;
  }
  if (types.size() < numStates)
    return ctx.emitError("body yields fewer values than loop-carried values");
  std::optional<SmallVector<int64_t>> outputAxes =
      ctx.getInts("scan_output_axes");
  for (auto [i, type] : llvm::enumerate(types)) {
    auto tensor = cast<RankedTensorType>(type);
    if (i < numStates) {
      // The carried value may change shape between iterations.
      Type initial = ctx.getOperands()[isScan ? i : i + 2].getType();
      Type joined = joinTypes(initial, tensor);
      if (!joined)
        return ctx.emitError("loop-carried value #" + llvm::Twine(i) +
                             " changes type in the body");
      results.push_back(joined);
      continue;
    }
    int64_t axis = 0;
    if (isScan && outputAxes && i - numStates < outputAxes->size()) {
      axis = (*outputAxes)[i - numStates];
      if (axis < 0)
        axis += tensor.getRank() + 1;
    }
    SmallVector<int64_t> shape(tensor.getShape());
    if (axis < 0 || axis > static_cast<int64_t>(shape.size()))
      return ctx.emitError("scan output axis out of range");
    shape.insert(shape.begin() + axis, kDynamic);
    results.push_back(tensorOf(shape, tensor.getElementType()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Losses, attention, quantisation, recurrent and random ops
//===----------------------------------------------------------------------===//

LogicalResult shape::inferDet(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  if (rank < 2 || failed(checkContraction(ctx, x->getDimSize(rank - 1),
                                          x->getDimSize(rank - 2))))
    return ctx.emitError("Det expects square matrices in the last two "
                         "dimensions");
  results.push_back(tensorOf(x->getShape().drop_back(2), x->getElementType()));
  return success();
}

/// The loss tensor of NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss.
static FailureOr<RankedTensorType> lossType(InferenceContext &ctx) {
  auto input = requireTensor(ctx, 0);
  auto target = requireTensor(ctx, 1);
  if (failed(input) || failed(target))
    return failure();
  if (input->getRank() < 2 || target->getRank() != input->getRank() - 1)
    return ctx.emitError("loss expects input (N, C, d1...) and target "
                         "(N, d1...)"),
           failure();
  StringRef reduction = ctx.getString("reduction", "mean");
  if (reduction == "none")
    return tensorOf(target->getShape(), input->getElementType());
  if (reduction != "mean" && reduction != "sum")
    return ctx.emitError("unknown reduction '" + reduction + "'"), failure();
  return tensorOf({}, input->getElementType());
}

LogicalResult shape::inferLoss(InferenceContext &ctx, Types &results) {
  auto loss = lossType(ctx);
  if (failed(loss))
    return failure();
  results.push_back(*loss);
  return success();
}

LogicalResult shape::inferSoftmaxCrossEntropyLoss(InferenceContext &ctx,
                                                  Types &results) {
  auto loss = lossType(ctx);
  if (failed(loss))
    return failure();
  results.push_back(*loss);
  results.push_back(ctx.getTensorType(0));
  return success();
}

LogicalResult shape::inferAttention(InferenceContext &ctx, Types &results) {
  auto q = requireTensor(ctx, 0);
  auto k = requireTensor(ctx, 1);
  auto v = requireTensor(ctx, 2);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  int64_t rank = q->getRank();
  if ((rank != 3 && rank != 4) || k->getRank() != rank || v->getRank() != rank)
    return ctx.emitError("Attention expects Q, K and V all 3-d or all 4-d");
  int64_t batch = q->getDimSize(0);
  int64_t qHeads, kvHeads, querySeq, kvSeq, headSize, valueHeadSize;
  if (rank == 4) {
    qHeads = q->getDimSize(1);
    kvHeads = k->getDimSize(1);
    querySeq = q->getDimSize(2);
    kvSeq = k->getDimSize(2);
    headSize = q->getDimSize(3);
    valueHeadSize = v->getDimSize(3);
  } else {
    std::optional<int64_t> qh = ctx.getOptionalInt("q_num_heads");
    std::optional<int64_t> kvh = ctx.getOptionalInt("kv_num_heads");
    if (!qh || !kvh || *qh <= 0 || *kvh <= 0)
      return ctx.emitError("3-d Attention needs q_num_heads and kv_num_heads");
    qHeads = *qh;
    kvHeads = *kvh;
    querySeq = q->getDimSize(1);
    kvSeq = k->getDimSize(1);
    auto perHead = [](int64_t d, int64_t heads) {
      return ShapedType::isDynamic(d) ? kDynamic : d / heads;
    };
    headSize = perHead(q->getDimSize(2), qHeads);
    valueHeadSize = perHead(v->getDimSize(2), kvHeads);
  }
  int64_t totalSeq = kvSeq;
  if (RankedTensorType past = ctx.getTensorType(4)) {
    if (past.getRank() != 4)
      return ctx.emitError("Attention past_key must be 4-d");
    int64_t pastSeq = past.getDimSize(2);
    totalSeq = ShapedType::isDynamic(pastSeq) || ShapedType::isDynamic(kvSeq)
                   ? kDynamic
                   : pastSeq + kvSeq;
  }
  Type elementType = q->getElementType();
  if (rank == 4)
    results.push_back(
        tensorOf({batch, qHeads, querySeq, valueHeadSize}, elementType));
  else
    results.push_back(tensorOf(
        {batch, querySeq, mulDims(qHeads, valueHeadSize)}, elementType));
  results.push_back(
      tensorOf({batch, kvHeads, totalSeq, headSize}, k->getElementType()));
  results.push_back(tensorOf({batch, kvHeads, totalSeq, valueHeadSize},
                             v->getElementType()));
  results.push_back(
      tensorOf({batch, qHeads, querySeq, totalSeq}, elementType));
  return success();
}

LogicalResult shape::inferQuantizeLinear(InferenceContext &ctx,
                                         Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x) || failed(requireTensor(ctx, 1)))
    return failure();
  Type elementType = ctx.getTypeAttr(
      "output_dtype",
      IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned));
  if (RankedTensorType zeroPoint = ctx.getTensorType(2))
    elementType = zeroPoint.getElementType();
  results.push_back(tensorOf(x->getShape(), elementType));
  return success();
}

LogicalResult shape::inferDequantizeLinear(InferenceContext &ctx,
                                           Types &results) {
  auto x = requireTensor(ctx, 0);
  auto scale = requireTensor(ctx, 1);
  if (failed(x) || failed(scale))
    return failure();
  results.push_back(tensorOf(
      x->getShape(), ctx.getTypeAttr("output_dtype", scale->getElementType())));
  return success();
}

LogicalResult shape::inferDynamicQuantizeLinear(InferenceContext &ctx,
                                                Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  Type u8 = IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned);
  results.push_back(tensorOf(x->getShape(), u8));
  results.push_back(tensorOf({}, Float32Type::get(ctx.getContext())));
  results.push_back(tensorOf({}, u8));
  return success();
}

/// Y and Y_h of RNN/GRU/LSTM.
LogicalResult shape::inferRecurrent(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  auto r = requireTensor(ctx, 2);
  if (failed(x) || failed(requireTensor(ctx, 1)) || failed(r))
    return failure();
  if (x->getRank() != 3 || r->getRank() != 3)
    return ctx.emitError("recurrent ops expect 3-d X and R");
  StringRef direction = ctx.getString("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return ctx.emitError("unknown direction '" + direction + "'");
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  int64_t hidden = ctx.getInt("hidden_size", r->getDimSize(2));
  bool batchFirst = ctx.getInt("layout", 0) == 1;
  int64_t seq = x->getDimSize(batchFirst ? 1 : 0);
  int64_t batch = x->getDimSize(batchFirst ? 0 : 1);
  Type elementType = x->getElementType();
  if (batchFirst) {
    results.push_back(tensorOf({batch, seq, directions, hidden}, elementType));
    results.push_back(tensorOf({batch, directions, hidden}, elementType));
  } else {
    results.push_back(tensorOf({seq, directions, batch, hidden}, elementType));
    results.push_back(tensorOf({directions, batch, hidden}, elementType));
  }
  return success();
}

/// LSTM adds Y_c, shaped like Y_h.
LogicalResult shape::inferLSTM(InferenceContext &ctx, Types &results) {
  if (failed(inferRecurrent(ctx, results)))
    return failure();
  results.push_back(results.back());
  return success();
}

LogicalResult shape::inferRandomLike(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  results.push_back(
      tensorOf(x->getShape(), ctx.getTypeAttr("dtype", x->getElementType())));
  return success();
}

LogicalResult shape::inferMaxUnpool(InferenceContext &ctx, Types &results) {
  auto x = requireTensor(ctx, 0);
  if (failed(x))
    return failure();
  if (x->getRank() < 3)
    return ctx.emitError("MaxUnpool expects an input of rank >= 3");
  if (auto shape = ctx.getConstantInts(2)) {
    if (static_cast<int64_t>(shape->size()) != x->getRank())
      return ctx.emitError("MaxUnpool output_shape must match the rank");
    results.push_back(tensorOf(*shape, x->getElementType()));
    return success();
  }
  size_t n = x->getRank() - 2;
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  auto strides = spatialAttr(ctx, "strides", n, 1);
  auto pads = spatialAttr(ctx, "pads", 2 * n, 0);
  if (!kernel || kernel->size() != n || failed(strides) || failed(pads))
    return ctx.emitError("MaxUnpool attributes do not match the rank");
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1)};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x->getDimSize(i + 2);
    shape.push_back(ShapedType::isDynamic(in) || !ctx.isAbsent(2)
                        ? kDynamic
                        : (in - 1) * (*strides)[i] + (*kernel)[i] -
                              (*pads)[i] - (*pads)[i + n]);
  }
  results.push_back(tensorOf(shape, x->getElementType()));
  return success();
}
