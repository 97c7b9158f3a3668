//===- Quantization.cpp - QuantizeLinear / DequantizeLinear ---------------===//

#include "amp/Dialect/Amp/Semantics/Quantization.h"

#include "amp/Dialect/Amp/Semantics/Indexing.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::semantics;

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      text += ", ";
    text += ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
  }
  return text + "]";
}

FailureOr<QuantLayout> semantics::resolveQuantLayout(
    ArrayRef<int64_t> xShape, ArrayRef<int64_t> scaleShape,
    std::optional<ArrayRef<int64_t>> zeroPointShape, const QuantAttrs &attrs,
    ErrorFn error) {
  // A scalar and a one-element vector are both one value for the tensor
  // (onnx's node tests mix them).
  auto isOneValue = [](ArrayRef<int64_t> shape) {
    return shape.size() <= 1 && (shape.empty() || shape[0] == 1);
  };
  bool sameValue = zeroPointShape && attrs.blockSize == 0 &&
                   isOneValue(*zeroPointShape) && isOneValue(scaleShape);
  if (zeroPointShape && *zeroPointShape != scaleShape && !sameValue) {
    error("the zero point's shape " + shapeText(*zeroPointShape) +
          " differs from the scale's " + shapeText(scaleShape));
    return failure();
  }
  auto rank = static_cast<int64_t>(xShape.size());
  QuantLayout layout;
  bool single = scaleShape.empty() ||
                (scaleShape.size() == 1 && scaleShape[0] == 1 &&
                 attrs.blockSize == 0);
  if (single) {
    if (attrs.blockSize != 0) {
      error("block_size " + Twine(attrs.blockSize) +
            " needs a scale of x's rank, not a scalar");
      return failure();
    }
    return layout;
  }
  FailureOr<int64_t> axis =
      normalizeAxis(attrs.axis, std::max<int64_t>(rank, 1), "axis", error);
  if (failed(axis))
    return failure();
  if (rank == 0) {
    error("a scale of shape " + shapeText(scaleShape) +
          " needs x of rank 1 or more");
    return failure();
  }
  layout.axis = *axis;
  int64_t dim = xShape[*axis];
  if (attrs.blockSize == 0) {
    layout.granularity = QuantGranularity::PerAxis;
    if (scaleShape.size() != 1 ||
        (!ShapedType::isDynamic(dim) && !ShapedType::isDynamic(scaleShape[0]) &&
         scaleShape[0] != dim)) {
      error("a per-axis scale must be 1-D with x's size along axis " +
            Twine(*axis) + " (" + shapeText({dim}) + "), not " +
            shapeText(scaleShape));
      return failure();
    }
    return layout;
  }
  if (attrs.blockSize < 0) {
    error("block_size must not be negative, not " + Twine(attrs.blockSize));
    return failure();
  }
  layout.granularity = QuantGranularity::Blocked;
  layout.blockSize = attrs.blockSize;
  if (static_cast<int64_t>(scaleShape.size()) != rank) {
    error("a blocked scale must have x's rank " + Twine(rank) + ", not " +
          shapeText(scaleShape));
    return failure();
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t want = xShape[d];
    if (d == *axis && !ShapedType::isDynamic(want))
      want = ceilDiv(want, attrs.blockSize);
    if (!ShapedType::isDynamic(want) && !ShapedType::isDynamic(scaleShape[d]) &&
        scaleShape[d] != want) {
      error("a blocked scale for x of shape " + shapeText(xShape) +
            " with block_size " + Twine(attrs.blockSize) + " along axis " +
            Twine(*axis) + " must have size " + Twine(want) +
            " in dimension " + Twine(d) + ", not " + shapeText(scaleShape));
      return failure();
    }
  }
  return layout;
}

bool semantics::isFloat8Type(Type type) {
  return type.isFloat8E4M3FN() || type.isFloat8E4M3FNUZ() ||
         type.isFloat8E5M2() || type.isFloat8E5M2FNUZ();
}

std::optional<semantics::Float8Layout> semantics::getFloat8Layout(Type type) {
  if (!isFloat8Type(type))
    return std::nullopt;
  const llvm::fltSemantics &sem = cast<FloatType>(type).getFloatSemantics();
  Float8Layout layout;
  layout.mantissaBits = llvm::APFloat::semanticsPrecision(sem) - 1;
  layout.exponentBits = 7 - layout.mantissaBits;
  layout.bias = 1 - llvm::APFloat::semanticsMinExponent(sem);
  layout.hasInfinity = isa<Float8E5M2Type>(type);
  layout.fnuz = isa<Float8E4M3FNUZType, Float8E5M2FNUZType>(type);
  llvm::APFloat largest = llvm::APFloat::getLargest(sem);
  layout.maxBits =
      static_cast<uint8_t>(largest.bitcastToAPInt().getZExtValue());
  bool lost;
  largest.convert(llvm::APFloat::IEEEdouble(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
  layout.maxFinite = largest.convertToDouble();
  return layout;
}

std::optional<std::pair<int64_t, int64_t>>
semantics::getQuantizedRange(Type type) {
  auto intType = dyn_cast<IntegerType>(type);
  if (!intType)
    return std::nullopt;
  unsigned width = intType.getWidth();
  if (width != 2 && width != 4 && width != 8 && width != 16 && width != 32)
    return std::nullopt;
  if (intType.isUnsigned())
    return width == 32 ? std::nullopt
                       : std::optional(std::make_pair<int64_t, int64_t>(
                             0, (int64_t(1) << width) - 1));
  return std::make_pair(-(int64_t(1) << (width - 1)),
                        (int64_t(1) << (width - 1)) - 1);
}
