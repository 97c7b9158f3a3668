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

int64_t semantics::getQuantParamAxisSize(ArrayRef<int64_t> operandShape,
                                         QuantParamScope scope) {
  int64_t rank = operandShape.size();
  switch (scope) {
  case QuantParamScope::PerTensor:
    return 1;
  case QuantParamScope::PerRow:
    return rank >= 2 ? operandShape[rank - 2] : 1;
  case QuantParamScope::PerColumn:
    return rank >= 2 ? operandShape[rank - 1] : 1;
  case QuantParamScope::PerOutputChannel:
    return rank >= 1 ? operandShape[0] : 1;
  }
  llvm_unreachable("unknown scope");
}

FailureOr<semantics::QuantParamScope> semantics::resolveQuantParam(
    ArrayRef<int64_t> paramShape, ArrayRef<int64_t> operandShape,
    QuantParamScope allowed, StringRef what, ErrorFn error) {
  // One element (whatever the rank): per tensor.
  if (llvm::all_of(paramShape, [](int64_t d) { return d == 1; }))
    return QuantParamScope::PerTensor;
  static constexpr const char *kAxisNames[] = {
      "", "the rows of A (its dimension -2)",
      "the columns of B (its dimension -1)",
      "the output channels of W (its dimension 0)"};
  if (allowed == QuantParamScope::PerTensor) {
    error(what + " must be a scalar (per-tensor quantization), not of shape " +
          shapeText(paramShape));
    return failure();
  }
  int64_t want = getQuantParamAxisSize(operandShape, allowed);
  const char *axis = kAxisNames[static_cast<int>(allowed)];
  auto matches = [](int64_t size, int64_t expected) {
    return ShapedType::isDynamic(size) || ShapedType::isDynamic(expected) ||
           size == expected;
  };
  // Per column, onnxruntime's form too: B's rank (or less) with 1 in
  // dimension -2, [..., 1, N], broadcasting against B like the 1-D [N].
  int64_t rank = paramShape.size(), operandRank = operandShape.size();
  if (allowed == QuantParamScope::PerColumn && rank >= 2 &&
      rank <= operandRank) {
    bool fits =
        paramShape[rank - 2] == 1 && matches(paramShape[rank - 1], want);
    for (int64_t i = 0; i + 2 < rank; ++i)
      fits &= paramShape[i] == 1 ||
              matches(paramShape[i], operandShape[operandRank - rank + i]);
    if (fits)
      return allowed;
    error(what + " of shape " + shapeText(paramShape) +
          " does not fit B of shape " + shapeText(operandShape) +
          " (per column: [N] or [..., 1, N])");
    return failure();
  }
  if (paramShape.size() != 1) {
    error(what + " must be a scalar or a 1-D tensor with one element per " +
          axis + ", not of shape " + shapeText(paramShape));
    return failure();
  }
  if (!matches(paramShape[0], want)) {
    error(what + " has " + Twine(paramShape[0]) + " elements but " + axis +
          " number " + Twine(want));
    return failure();
  }
  return allowed;
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
