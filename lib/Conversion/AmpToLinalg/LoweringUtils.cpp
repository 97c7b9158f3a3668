//===- LoweringUtils.cpp - helpers shared by the amp -> linalg patterns ---===//

#include "LoweringUtils.h"

#include "amp/Conversion/AmpToLinalg/Markers.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Matchers.h"

#include <atomic>

namespace mlir::amp::lowering {

bool isLowPrecisionFloat(Type type) {
  return isa<Float16Type, BFloat16Type>(type);
}

Type getComputeType(Type storage) {
  if (isLowPrecisionFloat(storage))
    return Float32Type::get(storage.getContext());
  return storage;
}

bool isUnsignedInt(Type type) {
  auto intType = dyn_cast<IntegerType>(type);
  return intType && intType.isUnsigned();
}

Type elementTypeOf(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

bool isNone(Value value) { return !value || isa<NoneType>(value.getType()); }

Value constantScalar(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(floatType, value));
  if (type.isIndex())
    return b.create<arith::ConstantIndexOp>(loc, static_cast<int64_t>(value));
  auto intType = cast<IntegerType>(type);
  APInt bits(intType.getWidth(), static_cast<int64_t>(value),
             /*isSigned=*/true);
  if (intType.getWidth() == 1)
    bits = APInt(1, value != 0);
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(intType, bits));
}

static Value extremeValue(OpBuilder &b, Location loc, Type type,
                          bool isUnsigned, bool lowest) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(
        loc,
        b.getFloatAttr(floatType, APFloat::getInf(floatType.getFloatSemantics(),
                                                  /*Negative=*/lowest)));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt bits = isUnsigned ? (lowest ? APInt::getMinValue(width)
                                    : APInt::getMaxValue(width))
                          : (lowest ? APInt::getSignedMinValue(width)
                                    : APInt::getSignedMaxValue(width));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, bits));
}

Value lowestValue(OpBuilder &b, Location loc, Type type, bool isUnsigned) {
  return extremeValue(b, loc, type, isUnsigned, /*lowest=*/true);
}
Value highestValue(OpBuilder &b, Location loc, Type type, bool isUnsigned) {
  return extremeValue(b, loc, type, isUnsigned, /*lowest=*/false);
}

Value convertScalar(OpBuilder &b, Location loc, Value value, Type to,
                    bool fromUnsigned, bool toUnsigned) {
  Type from = value.getType();
  if (from == to)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    Value zero = constantScalar(b, loc, from, 0);
    if (fromFloat)
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, value,
                                     zero);
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, value, zero);
  }
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return b.create<arith::ExtFOp>(loc, to, value);
    if (fromFloat.getWidth() > toFloat.getWidth()) {
      // f64 -> bf16 goes through f32 (the bf16 expansion handles f32 only).
      if (isa<BFloat16Type>(to) && fromFloat.getWidth() == 64)
        value = b.create<arith::TruncFOp>(loc, b.getF32Type(), value);
      return b.create<arith::TruncFOp>(loc, to, value);
    }
    // f16 <-> bf16: exact through f32.
    Value wide = b.create<arith::ExtFOp>(loc, b.getF32Type(), value);
    return b.create<arith::TruncFOp>(loc, to, wide);
  }
  if (fromFloat) {
    if (isa<BFloat16Type, Float16Type>(from))
      value = b.create<arith::ExtFOp>(loc, b.getF32Type(), value);
    if (toUnsigned)
      return b.create<arith::FPToUIOp>(loc, to, value);
    return b.create<arith::FPToSIOp>(loc, to, value);
  }
  if (toFloat) {
    bool unsignedSource = fromUnsigned || from.isInteger(1);
    Type via = isa<BFloat16Type>(to) ? b.getF32Type() : to;
    Value converted =
        unsignedSource ? b.create<arith::UIToFPOp>(loc, via, value).getResult()
                       : b.create<arith::SIToFPOp>(loc, via, value).getResult();
    if (via != to)
      converted = b.create<arith::TruncFOp>(loc, to, converted);
    return converted;
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth < toWidth) {
    if (fromUnsigned || from.isInteger(1))
      return b.create<arith::ExtUIOp>(loc, to, value);
    return b.create<arith::ExtSIOp>(loc, to, value);
  }
  if (fromWidth > toWidth)
    return b.create<arith::TruncIOp>(loc, to, value);
  return value; // same width, signedness differs only at the amp level
}

Value toComputeType(OpBuilder &b, Location loc, Value value) {
  Type compute = getComputeType(value.getType());
  if (compute == value.getType())
    return value;
  return b.create<arith::ExtFOp>(loc, compute, value);
}

SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value tensor) {
  return tensor::getMixedSizes(b, loc, tensor);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<OpFoldResult> sizes) {
  // A dynamic dimension stays dynamic even when its size is known here
  // (a constant size would give a static type that no longer matches
  // `type`, e.g. a bias [1, N] broadcast to [?, N]).
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[i]));
  return b.create<tensor::EmptyOp>(loc, shape, type.getElementType(),
                                   dynamicSizes);
}

Value extractAlongAxis(OpBuilder &b, Location loc, Value tensor, int64_t axis,
                       OpFoldResult index) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, tensor);
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      strides(rank, b.getIndexAttr(1));
  offsets[axis] = index;
  sizes[axis] = b.getIndexAttr(1);
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return b.create<tensor::ExtractSliceOp>(loc, resultType, tensor, offsets,
                                          sizes, strides);
}

Value insertAlongAxis(OpBuilder &b, Location loc, Value slice, Value dest,
                      int64_t axis, OpFoldResult index) {
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, slice);
  sizes.insert(sizes.begin() + axis, b.getIndexAttr(1));
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0)),
      strides(sizes.size(), b.getIndexAttr(1));
  offsets[axis] = index;
  return b.create<tensor::InsertSliceOp>(loc, slice, dest, offsets, sizes,
                                         strides);
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   ArrayRef<OpFoldResult> sizes, Value value) {
  Value empty = emptyTensor(b, loc, type, sizes);
  return b.create<linalg::FillOp>(loc, value, empty).getResult(0);
}

Value reshapeTensor(OpBuilder &b, Location loc, Value source,
                    RankedTensorType type, ArrayRef<OpFoldResult> sizes) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  // Equal types are the same shape only with at most one dynamic size.
  if (sourceType == type && type.getNumDynamicDims() <= 1)
    return source;
  SmallVector<OpFoldResult> mixed;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    mixed.push_back(ShapedType::isDynamic(size) ? sizes[i]
                                                : b.getIndexAttr(size));
  // A reassociation is usable when every group of the expanded side is
  // dynamic exactly when its collapsed dimension is.
  auto consistent = [](RankedTensorType collapsed, RankedTensorType expanded,
                       ArrayRef<ReassociationIndices> groups) {
    for (auto [i, group] : llvm::enumerate(groups)) {
      bool anyDynamic = llvm::any_of(
          group, [&](int64_t d) { return expanded.isDynamicDim(d); });
      if (anyDynamic != collapsed.isDynamicDim(i))
        return false;
      if (!anyDynamic) {
        int64_t product = 1;
        for (int64_t d : group)
          product *= expanded.getDimSize(d);
        if (product != collapsed.getDimSize(i))
          return false;
      }
    }
    return true;
  };
  // The reassociation is inferred from the types alone, which is ambiguous
  // when more than one dimension is dynamic ([?, ?, ?] -> [?, ?] could group
  // either pair): then the sizes decide, through tensor.reshape.
  auto countDynamic = [](RankedTensorType t) {
    return llvm::count_if(t.getShape(), ShapedType::isDynamic);
  };
  bool unambiguous =
      std::max(countDynamic(sourceType), countDynamic(type)) <= 1;
  if (auto reassociation =
          unambiguous ? getReassociationIndicesForReshape(sourceType, type)
                      : std::nullopt) {
    if (sourceType.getRank() > type.getRank() &&
        consistent(type, sourceType, *reassociation))
      return b.create<tensor::CollapseShapeOp>(loc, type, source,
                                               *reassociation);
    if (sourceType.getRank() < type.getRank() && type.hasStaticShape() &&
        consistent(sourceType, type, *reassociation))
      return b.create<tensor::ExpandShapeOp>(loc, type, source, *reassociation,
                                             mixed);
  }
  // Dynamic results: tensor.reshape with the sizes as a shape tensor (the
  // bufferization of a dynamic tensor.expand_shape is broken in MLIR 19).
  if (!type.hasStaticShape()) {
    SmallVector<Value> dims;
    for (OpFoldResult size : mixed)
      dims.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
    Value shape = b.create<tensor::FromElementsOp>(
        loc, RankedTensorType::get({type.getRank()}, b.getIndexType()), dims);
    return b.create<tensor::ReshapeOp>(loc, type, source, shape);
  }
  // General case: through a 1-D tensor.
  Value flat = source;
  if (sourceType.getRank() != 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < sourceType.getRank(); ++i)
      all.push_back(i);
    int64_t count = sourceType.hasStaticShape() ? sourceType.getNumElements()
                                                : ShapedType::kDynamic;
    auto flatType = RankedTensorType::get({count}, type.getElementType());
    SmallVector<ReassociationIndices> reassociation;
    if (sourceType.getRank() > 0)
      reassociation.push_back(all);
    flat =
        b.create<tensor::CollapseShapeOp>(loc, flatType, source, reassociation);
  }
  if (type.getRank() == 1) {
    if (flat.getType() == type)
      return flat;
    return b.create<tensor::CastOp>(loc, type, flat);
  }
  // The 1-D tensor is static exactly when the result is.
  auto flatTarget = RankedTensorType::get(
      {type.hasStaticShape() ? type.getNumElements() : ShapedType::kDynamic},
      type.getElementType());
  if (type.getRank() > 0 && flat.getType() != flatTarget)
    flat = b.create<tensor::CastOp>(loc, flatTarget, flat);
  ReassociationIndices all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  SmallVector<ReassociationIndices> reassociation;
  if (type.getRank() > 0)
    reassociation.push_back(all);
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, flat, reassociation);
  return b.create<tensor::ExpandShapeOp>(loc, type, flat, reassociation, mixed);
}

Value keepDims(OpBuilder &b, Location loc, Value reduced, int64_t rank,
               ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(reduced.getType());
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  SmallVector<OpFoldResult> reducedSizes = getSizes(b, loc, reduced);
  int64_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (llvm::is_contained(axes, i)) {
      shape.push_back(1);
      sizes.push_back(b.getIndexAttr(1));
    } else {
      shape.push_back(type.getDimSize(next));
      sizes.push_back(reducedSizes[next]);
      ++next;
    }
  }
  auto keptType = RankedTensorType::get(shape, type.getElementType());
  return reshapeTensor(b, loc, reduced, keptType, sizes);
}

SmallVector<OpFoldResult> broadcastSizes(OpBuilder &b, Location loc,
                                         ValueRange inputs,
                                         RankedTensorType resultType) {
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!resultType.isDynamicDim(d)) {
      sizes.push_back(b.getIndexAttr(resultType.getDimSize(d)));
      continue;
    }
    // ONNX broadcasting: the size is that of any input whose dimension is
    // not 1, i.e. the largest. A static size other than 1 decides; dynamic
    // sizes (any of which may be 1 at run time) take their maximum.
    std::optional<int64_t> known;
    SmallVector<Value> dynamic;
    for (Value input : inputs) {
      auto type = cast<RankedTensorType>(input.getType());
      int64_t inputDim = d - (rank - type.getRank());
      if (inputDim < 0 || type.getDimSize(inputDim) == 1)
        continue;
      if (type.isDynamicDim(inputDim))
        dynamic.push_back(b.create<tensor::DimOp>(loc, input, inputDim));
      else
        known = type.getDimSize(inputDim);
    }
    if (known) {
      sizes.push_back(b.getIndexAttr(*known));
      continue;
    }
    if (dynamic.empty()) {
      sizes.push_back(b.getIndexAttr(1));
      continue;
    }
    Value size = dynamic.front();
    for (Value other : ArrayRef(dynamic).drop_front())
      size = b.create<arith::MaxSIOp>(loc, size, other);
    sizes.push_back(size);
  }
  return sizes;
}

/// The dimensions of `input` (aligned to the trailing dimensions of a
/// result of `resultType`) that are dynamic where the result's is not known
/// to equal them: such a dimension may be 1 at run time and then broadcast.
static SmallVector<int64_t> ambiguousDims(Value input, ValueRange inputs,
                                          RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = resultType.getRank();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    int64_t d = i + rank - type.getRank();
    if (!type.isDynamicDim(i) || resultType.getDimSize(d) == 1)
      continue;
    // The only input with a size other than 1 here gives the result its
    // size: nothing to broadcast.
    int64_t others = llvm::count_if(inputs, [&](Value other) {
      auto otherType = cast<RankedTensorType>(other.getType());
      int64_t j = d - (rank - otherType.getRank());
      return other != input && j >= 0 && otherType.getDimSize(j) != 1;
    });
    if (others == 0 && resultType.isDynamicDim(d))
      continue;
    dims.push_back(i);
  }
  return dims;
}

Value broadcastAtRunTime(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> dims, RankedTensorType resultType,
                         ArrayRef<OpFoldResult> sizes) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t inputRank = type.getRank();
  int64_t offset = resultType.getRank() - inputRank;
  SmallVector<OpFoldResult> inSizes = getSizes(b, loc, input);
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> outSizes(inSizes);
  for (int64_t i : dims) {
    shape[i] = resultType.getDimSize(i + offset);
    outSizes[i] = sizes[i + offset];
  }
  auto outType = RankedTensorType::get(shape, type.getElementType());
  return buildIndexGenerated(
      b, loc, outType, outSizes,
      [&](OpBuilder &nb, Location l, ValueRange outIndices) -> Value {
        SmallVector<Value> indices;
        Value zero = nb.create<arith::ConstantIndexOp>(l, 0);
        Value one = nb.create<arith::ConstantIndexOp>(l, 1);
        for (int64_t i = 0; i < inputRank; ++i) {
          Value index = outIndices[i];
          if (llvm::is_contained(dims, i)) {
            Value size = nb.create<tensor::DimOp>(l, input, i);
            Value isOne = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                                   size, one);
            index = nb.create<arith::SelectOp>(l, isOne, zero, index);
          }
          indices.push_back(index);
        }
        return nb.create<tensor::ExtractOp>(l, input, indices);
      });
}

void buildMultiplyAccumulate(OpBuilder &b, Location loc, ValueRange args,
                             Type acc) {
  Value lhs = toComputeType(b, loc, args[0]);
  Value rhs = toComputeType(b, loc, args[1]);
  Value sum = toComputeType(b, loc, args[2]);
  if (isa<FloatType>(lhs.getType()))
    sum = b.create<arith::AddFOp>(loc, sum,
                                  b.create<arith::MulFOp>(loc, lhs, rhs));
  else
    sum = b.create<arith::AddIOp>(loc, sum,
                                  b.create<arith::MulIOp>(loc, lhs, rhs));
  b.create<linalg::YieldOp>(
      loc, ValueRange{convertScalar(b, loc, sum, acc, false, false)});
}

Value padTensor(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, Value padValue) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> inSizes = getSizes(b, loc, input);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes, offsets;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t extra = low[i] + high[i];
    offsets.push_back(b.getIndexAttr(low[i]));
    if (type.isDynamicDim(i)) {
      shape.push_back(ShapedType::kDynamic);
      Value size = getValueOrCreateConstantIndexOp(b, loc, inSizes[i]);
      sizes.push_back(
          extra == 0
              ? size
              : b.create<arith::AddIOp>(
                     loc, size, b.create<arith::ConstantIndexOp>(loc, extra))
                    .getResult());
    } else {
      shape.push_back(type.getDimSize(i) + extra);
      sizes.push_back(b.getIndexAttr(shape.back()));
    }
  }
  auto paddedType = RankedTensorType::get(shape, type.getElementType());
  Value filled = filledTensor(b, loc, paddedType, sizes, padValue);
  // A distinct fill per padding (Markers.h).
  static std::atomic<int64_t> nextPad{0};
  filled.getDefiningOp()->setAttr(marker::kPadFillAttr,
                                  b.getI64IntegerAttr(nextPad++));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  return b.create<tensor::InsertSliceOp>(loc, input, filled, offsets, inSizes,
                                         strides);
}

Value signedIntAbs(OpBuilder &b, Location loc, Value x) {
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(x.getType()));
  Value isNegative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, zero);
  return b.create<arith::SelectOp>(loc, isNegative,
                                   b.create<arith::SubIOp>(loc, zero, x), x);
}

Value buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       RankedTensorType resultType, ScalarBody body,
                       bool resultUnsigned,
                       ArrayRef<OpFoldResult> resultSizes) {
  int64_t rank = resultType.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<OpFoldResult> sizes =
      resultSizes.empty() ? broadcastSizes(b, loc, inputs, resultType)
                          : SmallVector<OpFoldResult>(resultSizes);
  Type resultElement = resultType.getElementType();
  auto emit = [&](OpBuilder &builder, ValueRange operands) -> Value {
    SmallVector<AffineMap> maps;
    for (Value input : operands) {
      auto type = cast<RankedTensorType>(input.getType());
      SmallVector<AffineExpr> exprs;
      for (int64_t i = 0; i < type.getRank(); ++i) {
        int64_t d = i + rank - type.getRank();
        if (type.getDimSize(i) == 1 && resultType.getDimSize(d) != 1)
          exprs.push_back(getAffineConstantExpr(0, context));
        else
          exprs.push_back(getAffineDimExpr(d, context));
      }
      maps.push_back(AffineMap::get(rank, 0, exprs, context));
    }
    maps.push_back(builder.getMultiDimIdentityMap(rank));
    Value init = emptyTensor(builder, loc, resultType, sizes);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = builder.create<linalg::GenericOp>(
        loc, TypeRange{resultType}, operands, ValueRange{init}, maps, iterators,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          SmallVector<Value> computeArgs;
          for (Value arg : args.drop_back())
            computeArgs.push_back(toComputeType(nested, nestedLoc, arg));
          Value result = body(nested, nestedLoc, computeArgs);
          if (result.getType() != resultElement)
            result = convertScalar(nested, nestedLoc, result, resultElement,
                                   /*fromUnsigned=*/false, resultUnsigned);
          nested.create<linalg::YieldOp>(nestedLoc, result);
        });
    return generic.getResult(0);
  };
  // A dynamic dimension may be 1 at run time where the result's is not
  // (position ids [1, seq] typed [?, ?] added to [batch, seq] embeddings).
  // The indexing maps cannot say so: when all such dimensions equal the
  // result's, the plain form runs; otherwise those inputs are broadcast
  // first, reading index 0 along their dimensions of size 1.
  SmallVector<SmallVector<int64_t>> ambiguous;
  bool anyAmbiguous = false;
  for (Value input : inputs) {
    ambiguous.push_back(ambiguousDims(input, inputs, resultType));
    anyAmbiguous |= !ambiguous.back().empty();
  }
  if (!anyAmbiguous)
    return emit(b, inputs);
  Value allEqual;
  for (auto [input, dims] : llvm::zip(inputs, ambiguous)) {
    auto type = cast<RankedTensorType>(input.getType());
    for (int64_t i : dims) {
      int64_t d = i + rank - type.getRank();
      Value have = b.create<tensor::DimOp>(loc, input, i);
      Value equal = b.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::eq, have,
          getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
      allEqual = allEqual
                     ? b.create<arith::AndIOp>(loc, allEqual, equal).getResult()
                     : equal;
    }
  }
  auto branch = b.create<scf::IfOp>(
      loc, allEqual,
      [&](OpBuilder &then, Location l) {
        then.create<scf::YieldOp>(l, emit(then, inputs));
      },
      [&](OpBuilder &otherwise, Location l) {
        SmallVector<Value> broadcast;
        for (auto [input, dims] : llvm::zip(inputs, ambiguous))
          broadcast.push_back(
              dims.empty() ? input
                           : broadcastAtRunTime(otherwise, l, input, dims,
                                                resultType, sizes));
        otherwise.create<scf::YieldOp>(l, emit(otherwise, broadcast));
      });
  return branch.getResult(0);
}

ReductionShape getReductionShape(OpBuilder &b, Location loc, Value input,
                                 ArrayRef<int64_t> axes) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  SmallVector<OpFoldResult> inputSizes = getSizes(b, loc, input);
  ReductionShape result;
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < rank; ++i) {
    if (llvm::is_contained(axes, i)) {
      result.iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    result.iterators.push_back(utils::IteratorType::parallel);
    result.shape.push_back(inputType.getDimSize(i));
    result.sizes.push_back(inputSizes[i]);
    outExprs.push_back(b.getAffineDimExpr(i));
  }
  result.outMap = AffineMap::get(rank, 0, outExprs, b.getContext());
  return result;
}

Value wrapIndex(OpBuilder &b, Location loc, Value index, Value dim) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value isNegative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, index, zero);
  return b.create<arith::SelectOp>(
      loc, isNegative, b.create<arith::AddIOp>(loc, index, dim), index);
}

Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, Type accType, Value init,
                     ReduceCombine combine, ScalarBody map) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  ReductionShape reduction = getReductionShape(b, loc, input, axes);
  auto resultType = RankedTensorType::get(reduction.shape, accType);
  Value filled = filledTensor(b, loc, resultType, reduction.sizes, init);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 reduction.outMap};
  SmallVector<utils::IteratorType> iterators = reduction.iterators;
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, ValueRange{input}, ValueRange{filled}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value element = toComputeType(nested, nestedLoc, args[0]);
        if (map)
          element = map(nested, nestedLoc, ValueRange{element});
        Value acc = toComputeType(nested, nestedLoc, args[1]);
        if (element.getType() != acc.getType())
          element = convertScalar(nested, nestedLoc, element, acc.getType(),
                                  false, false);
        Value result = combine(nested, nestedLoc, element, acc);
        if (result.getType() != accType)
          result =
              convertScalar(nested, nestedLoc, result, accType, false, false);
        nested.create<linalg::YieldOp>(nestedLoc, result);
      });
  return generic.getResult(0);
}

/// The elements of a constant operand (amp or arith constant, looking
/// through the materialisation casts of the type conversion).
static ElementsAttr getConstantElements(Value value) {
  if (isNone(value))
    return {};
  while (auto cast = value.getDefiningOp<UnrealizedConversionCastOp>())
    value = cast.getOperand(0);
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    return dyn_cast<ElementsAttr>(constant.getValue());
  if (auto constant = value.getDefiningOp<amp::ConstantOp>())
    return constant.getValue();
  return {};
}

FailureOr<SmallVector<int64_t>> getConstantInts(Value value) {
  ElementsAttr attr = getConstantElements(value);
  std::optional<SmallVector<int64_t>> values =
      attr ? getIntValues(attr) : std::nullopt;
  if (!values)
    return failure();
  return *values;
}

LogicalResult notLowerable(Operation *op, const Twine &why) {
  std::string name = op->getName().getStringRef().str();
  if (auto precision = dyn_cast<PrecisionOpInterface>(op))
    name = precision.getOnnxOpType().str();
  op->emitError() << "ONNX " << name
                  << " is not lowerable to the CPU backend yet: " << why;
  return failure();
}

RankedTensorType convertedResultType(const TypeConverter *converter,
                                     Operation *op, unsigned index) {
  return cast<RankedTensorType>(
      converter->convertType(op->getResult(index).getType()));
}

bool accumulatesInF32(Operation *op) {
  return op->hasAttr(kAccumulateAttrName);
}

Type accumulatorType(Operation *op, Type storage) {
  if (isLowPrecisionFloat(storage) && accumulatesInF32(op))
    return Float32Type::get(op->getContext());
  return storage;
}

Value countOver(OpBuilder &b, Location loc, Value tensor,
                ArrayRef<int64_t> axes, Type type) {
  Value count = b.create<arith::ConstantIndexOp>(loc, 1);
  for (int64_t axis : axes) {
    Value dim = b.create<tensor::DimOp>(loc, tensor, axis);
    count = b.create<arith::MulIOp>(loc, count, dim);
  }
  Value asInt = b.create<arith::IndexCastOp>(loc, b.getI64Type(), count);
  return convertScalar(b, loc, asInt, getComputeType(type), false, false);
}

RankedTensorType withElementType(Value tensor, Type element) {
  return cast<RankedTensorType>(tensor.getType()).clone(element);
}

Value convertTensor(OpBuilder &b, Location loc, Value tensor, Type element) {
  if (elementTypeOf(tensor) == element)
    return tensor;
  return buildElementwise(
      b, loc, {tensor}, withElementType(tensor, element),
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

Value indexValue(OpBuilder &b, Location loc, OpFoldResult size) {
  return getValueOrCreateConstantIndexOp(b, loc, size);
}

Value gatherAlongAxis(OpBuilder &b, Location loc, Value data, Value indices,
                      int64_t axis, RankedTensorType type,
                      ArrayRef<OpFoldResult> sizes, Value axisDim) {
  int64_t rank = type.getRank();
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, ValueRange{indices},
          ValueRange{emptyTensor(b, loc, type, sizes)},
          SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(rank)),
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            SmallVector<Value> at;
            for (int64_t d = 0; d < rank; ++d) {
              if (d != axis) {
                at.push_back(nb.create<linalg::IndexOp>(l, d));
                continue;
              }
              Value index = toIndex(nb, l, args[0]);
              at.push_back(axisDim ? clampIndex(nb, l, index, axisDim) : index);
            }
            nb.create<linalg::YieldOp>(
                l, ValueRange{nb.create<tensor::ExtractOp>(l, data, at)});
          })
      .getResult(0);
}

Value toIndex(OpBuilder &b, Location loc, Value integer) {
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), integer);
}

Value extractIndex(OpBuilder &b, Location loc, Value tensor, int64_t i) {
  Value position = b.create<arith::ConstantIndexOp>(loc, i);
  Value element = b.create<tensor::ExtractOp>(loc, tensor, position);
  return toIndex(b, loc, element);
}

Value extractScalar(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> indices(type.getRank(),
                             b.create<arith::ConstantIndexOp>(loc, 0));
  return b.create<tensor::ExtractOp>(loc, tensor, indices);
}

Value readIndex(OpBuilder &b, Location loc, Value indices, ValueRange position,
                Value dim) {
  Value raw = b.create<tensor::ExtractOp>(loc, indices, position);
  Value index = b.create<arith::IndexCastOp>(loc, b.getIndexType(), raw);
  return clampIndex(b, loc, index, dim);
}

Value buildIndexGenerated(OpBuilder &b, Location loc, RankedTensorType type,
                          ArrayRef<OpFoldResult> sizes, IndexBody body) {
  int64_t rank = type.getRank();
  Value init = emptyTensor(b, loc, type, sizes);
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, ValueRange{}, ValueRange{init},
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange) {
            SmallVector<Value> indices;
            for (int64_t i = 0; i < rank; ++i)
              indices.push_back(nb.create<linalg::IndexOp>(l, i));
            nb.create<linalg::YieldOp>(l, body(nb, l, indices));
          })
      .getResult(0);
}

FailureOr<semantics::Window>
resolveWindowForLowering(Operation *op, const semantics::WindowAttrs &attrs,
                         RankedTensorType inputType, ArrayRef<int64_t> kernel) {
  auto window = semantics::resolveWindow(
      attrs, inputType.getShape().drop_front(2), kernel,
      [&](const Twine &message) { (void)op->emitError(message); });
  if (failed(window))
    return failure();
  if (llvm::any_of(window->padBegin, ShapedType::isDynamic))
    return (void)notLowerable(op, "auto_pad with a dynamic spatial size"), failure();
  return window;
}

Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> begin, ArrayRef<int64_t> end,
                 Value padValue) {
  if (llvm::all_of(begin, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(end, [](int64_t v) { return v == 0; }))
    return input;
  SmallVector<int64_t> low = {0, 0}, high = {0, 0};
  low.append(begin.begin(), begin.end());
  high.append(end.begin(), end.end());
  return padTensor(b, loc, input, low, high, padValue);
}

} // namespace mlir::amp::lowering
