//===- ControlFlow.cpp - If, Loop and Scan --------------------------------===//
//
// The bodies are moved into scf regions and lowered with the rest of the
// program (the patterns below run first on the control-flow op, then on
// the ops of its bodies; a body may use any value of the enclosing
// scope).
//
// - If -> scf.if on the condition's single element (a condition whose
//   size is known only at run time is checked to hold one element). Each
//   branch's values are cast to the If's result types (branches may yield
//   different static shapes; the result is then dynamic there).
// - Scan (opset 9+) -> scf.for over the scan axis: the states are
//   loop-carried, each scan input's slice at i (or L-1-i, reversed) is
//   extracted along its axis, each scan output's slice inserted along its
//   axis. Every scan input must have the same length (checked at compile
//   time or, for dynamic sizes, at run time). Scan outputs whose slice
//   size is dynamic are allocated at the first step, from its sizes.
// - Loop -> scf.while: `while (i < M && cond)` with M and cond optional
//   (absent: no bound / true); the body's yielded condition always replaces
//   cond (as onnxruntime). Loop-carried values may change shape between
//   iterations (their types are the Loop's results, dynamic where shapes
//   differ). Scan outputs grow by doubling their capacity and are cut to the
//   iteration count at the end (no iteration: an empty first dimension).
//   A Loop without M whose condition never becomes false runs forever, as
//   in onnxruntime: the model asks for it.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {

namespace {

RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Whether a value of type `from` can be cast (tensor.cast) to `to`: same
/// element type and rank, static sizes equal where both are static.
bool areCastCompatible(Type from, Type to) {
  auto a = dyn_cast<RankedTensorType>(from);
  auto b = dyn_cast<RankedTensorType>(to);
  if (!a || !b)
    return from == to;
  if (a.getElementType() != b.getElementType() || a.getRank() != b.getRank())
    return false;
  for (auto [x, y] : llvm::zip(a.getShape(), b.getShape()))
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  return true;
}

/// `value` as `type` (a tensor.cast where the static sizes differ).
Value castTo(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return b.create<tensor::CastOp>(loc, type, value);
}

/// `cond ? thenValue() : elseValue`, where the then-value is built only when
/// `cond` holds (an scf.if of one result).
Value buildIfElse(OpBuilder &b, Location loc, Value cond,
                  function_ref<Value(OpBuilder &, Location)> thenValue,
                  Value elseValue) {
  return b
      .create<scf::IfOp>(
          loc, cond,
          [&](OpBuilder &tb, Location tl) {
            tb.create<scf::YieldOp>(tl, thenValue(tb, tl));
          },
          [&](OpBuilder &eb, Location el) {
            eb.create<scf::YieldOp>(el, elseValue);
          })
      .getResult(0);
}

/// The single element of a condition or trip count: a 0-d or one-element
/// tensor; a size known only at run time is checked to be 1.
Value readSingleElement(OpBuilder &b, Location loc, Operation *op, Value tensor,
                        StringRef what) {
  RankedTensorType type = tensorTypeOf(tensor);
  SmallVector<Value> zeros(type.getRank(),
                           b.create<arith::ConstantIndexOp>(loc, 0));
  if (type.hasStaticShape())
    return b.create<tensor::ExtractOp>(loc, tensor, zeros);
  Value count = b.create<arith::ConstantIndexOp>(loc, 1);
  for (OpFoldResult size : getSizes(b, loc, tensor))
    count = b.create<arith::MulIOp>(loc, count, indexValue(b, loc, size));
  if (collectsRuntimeChecks(b)) {
    Type i64 = b.getI64Type();
    Value bad =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, count,
                                b.create<arith::ConstantIndexOp>(loc, 1));
    emitRuntimeCheck(b, loc, bad, b.create<arith::IndexCastOp>(loc, i64, count),
                     b.create<arith::ConstantIntOp>(loc, 1, 64),
                     describeNode(op) + ": " + what +
                         " holds {value} elements instead of {bound}");
  }
  // An empty tensor (reported above) is not read: false / 0 meanwhile.
  Value empty =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, count,
                              b.create<arith::ConstantIndexOp>(loc, 0));
  Type element = type.getElementType();
  auto guarded = b.create<scf::IfOp>(
      loc, empty,
      [&](OpBuilder &tb, Location tl) {
        tb.create<scf::YieldOp>(tl, constantScalar(tb, tl, element, 0));
      },
      [&](OpBuilder &eb, Location el) {
        eb.create<scf::YieldOp>(
            el, eb.create<tensor::ExtractOp>(el, tensor, zeros).getResult());
      });
  return guarded.getResult(0);
}

/// The converted result types of `op`.
FailureOr<SmallVector<Type>> convertResultTypes(const TypeConverter *converter,
                                                Operation *op) {
  SmallVector<Type> types;
  if (failed(converter->convertTypes(op->getResultTypes(), types)))
    return failure();
  return types;
}

/// The values for a body's block arguments, cast to their types; fails
/// (naming the argument) when a value cannot be.
LogicalResult castArguments(OpBuilder &b, Location loc, Operation *op,
                            Block &body, SmallVectorImpl<Value> &values) {
  for (auto [i, pair] : llvm::enumerate(llvm::zip(values, body.getArguments())))
    if (!areCastCompatible(std::get<0>(pair).getType(),
                           std::get<1>(pair).getType()))
      return notLowerable(op, "body argument #" + Twine(i) +
                                  " has another "
                                  "type than the value it receives");
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = castTo(b, loc, values[i], body.getArgument(i).getType());
  return success();
}

struct IfOpLowering : public OpConversionPattern<IfOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IfOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultTypes = convertResultTypes(getTypeConverter(), op);
    if (failed(resultTypes))
      return notLowerable(op, "a result type without a lowering");
    Location loc = op.getLoc();
    Value cond = readSingleElement(rewriter, loc, op, adaptor.getCond(),
                                   "the condition");
    auto ifOp = rewriter.create<scf::IfOp>(loc, *resultTypes, cond,
                                           /*addThenBlock=*/false,
                                           /*addElseBlock=*/false);
    rewriter.inlineRegionBefore(op.getThenBranch(), ifOp.getThenRegion(),
                                ifOp.getThenRegion().end());
    rewriter.inlineRegionBefore(op.getElseBranch(), ifOp.getElseRegion(),
                                ifOp.getElseRegion().end());
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

/// amp.yield of a branch (now in an scf.if): scf.yield of the values cast
/// to the If's result types. The yields of Loop and Scan bodies are
/// rewritten by their ops' patterns.
struct YieldOpLowering : public OpConversionPattern<YieldOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(YieldOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto ifOp = dyn_cast<scf::IfOp>(op->getParentOp());
    if (!ifOp)
      return failure();
    SmallVector<Value> values;
    for (auto [value, type] :
         llvm::zip(adaptor.getValues(), ifOp.getResultTypes())) {
      if (!areCastCompatible(value.getType(), type))
        return notLowerable(op, "a branch yields another type than the If's "
                                "result");
      values.push_back(castTo(rewriter, op.getLoc(), value, type));
    }
    rewriter.replaceOpWithNewOp<scf::YieldOp>(op, values);
    return success();
  }
};

/// The sizes of a scan output's accumulator: `slice`'s sizes with `length`
/// inserted at `axis`.
SmallVector<OpFoldResult> accumulatorSizes(OpBuilder &b, Location loc,
                                           Value slice, int64_t axis,
                                           OpFoldResult length) {
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, slice);
  sizes.insert(sizes.begin() + axis, length);
  return sizes;
}

/// An accumulator of `type` before its first slice: `length` at `axis`,
/// the static sizes, and 0 where the slice's size is not known yet.
Value initialAccumulator(OpBuilder &b, Location loc, RankedTensorType type,
                         int64_t axis, OpFoldResult length) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == axis)
      sizes.push_back(length);
    else if (type.isDynamicDim(d))
      sizes.push_back(b.getIndexAttr(0));
    else
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  }
  return emptyTensor(b, loc, type, sizes);
}

/// Whether a scan output of `type` (scan dimension at `axis`) has every
/// other size static: its accumulator is allocated once before the loop.
bool hasStaticSlice(RankedTensorType type, int64_t axis) {
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != axis && type.isDynamicDim(d))
      return false;
  return true;
}

struct ScanOpLowering : public OpConversionPattern<ScanOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultTypes = convertResultTypes(getTypeConverter(), op);
    if (failed(resultTypes))
      return notLowerable(op, "a result type without a lowering");
    ValueRange inputs = adaptor.getInitialStateAndScanInputs();
    int64_t numScanInputs = op.getNumScanInputs();
    int64_t numStates = static_cast<int64_t>(inputs.size()) - numScanInputs;
    int64_t numScanOutputs =
        static_cast<int64_t>(resultTypes->size()) - numStates;
    if (numScanOutputs < 0)
      return notLowerable(op, "fewer results than states");
    auto attrOr = [&](std::optional<ArrayRef<int64_t>> values, int64_t count,
                      StringRef name,
                      SmallVectorImpl<int64_t> &out) -> LogicalResult {
      if (!values) {
        out.assign(count, 0);
        return success();
      }
      if (static_cast<int64_t>(values->size()) != count)
        return notLowerable(
            op, name + " has " + Twine(values->size()) + " entries for " +
                    Twine(count) + " " +
                    (name.contains("input") ? "scan inputs" : "scan outputs"));
      out.assign(values->begin(), values->end());
      return success();
    };
    SmallVector<int64_t> inAxes, inDirections, outAxes, outDirections;
    if (failed(attrOr(op.getScanInputAxes(), numScanInputs, "scan_input_axes",
                      inAxes)) ||
        failed(attrOr(op.getScanInputDirections(), numScanInputs,
                      "scan_input_directions", inDirections)) ||
        failed(attrOr(op.getScanOutputAxes(), numScanOutputs,
                      "scan_output_axes", outAxes)) ||
        failed(attrOr(op.getScanOutputDirections(), numScanOutputs,
                      "scan_output_directions", outDirections)))
      return failure();
    for (auto [j, axis] : llvm::enumerate(inAxes)) {
      int64_t rank = tensorTypeOf(inputs[numStates + j]).getRank();
      if (axis < -rank || axis >= rank)
        return notLowerable(op, "scan input axis " + Twine(axis) +
                                    " is outside the input's rank " +
                                    Twine(rank));
      axis = axis < 0 ? axis + rank : axis;
    }
    for (auto [k, axis] : llvm::enumerate(outAxes)) {
      int64_t rank =
          cast<RankedTensorType>((*resultTypes)[numStates + k]).getRank();
      if (axis < -rank || axis >= rank)
        return notLowerable(op, "scan output axis " + Twine(axis) +
                                    " is outside the output's rank " +
                                    Twine(rank));
      axis = axis < 0 ? axis + rank : axis;
    }

    // The scan length: every scan input's size along its axis.
    Value length =
        rewriter.create<tensor::DimOp>(loc, inputs[numStates], inAxes[0]);
    for (int64_t j = 1; j < numScanInputs; ++j) {
      Value input = inputs[numStates + j];
      int64_t first = tensorTypeOf(inputs[numStates]).getDimSize(inAxes[0]);
      int64_t other = tensorTypeOf(input).getDimSize(inAxes[j]);
      if (!ShapedType::isDynamic(first) && !ShapedType::isDynamic(other)) {
        if (first != other)
          return notLowerable(op, "scan inputs of lengths " + Twine(first) +
                                      " and " + Twine(other));
        continue;
      }
      if (!collectsRuntimeChecks(rewriter))
        continue;
      Value dim = rewriter.create<tensor::DimOp>(loc, input, inAxes[j]);
      Type i64 = rewriter.getI64Type();
      emitRuntimeCheck(rewriter, loc,
                       rewriter.create<arith::CmpIOp>(
                           loc, arith::CmpIPredicate::ne, dim, length),
                       rewriter.create<arith::IndexCastOp>(loc, i64, dim),
                       rewriter.create<arith::IndexCastOp>(loc, i64, length),
                       describeNode(op) + ": scan input #" + Twine(j) +
                           " has length {value}, scan input #0 {bound}");
      // Meanwhile the shorter length keeps every read inside.
      length = rewriter.create<arith::MinSIOp>(loc, length, dim);
    }

    Block &body = op.getBody().front();
    if (body.getNumArguments() != inputs.size())
      return notLowerable(op, "a body that does not take one argument per "
                              "input");
    SmallVector<Value> init;
    for (int64_t i = 0; i < numStates; ++i) {
      Type type = (*resultTypes)[i];
      if (!areCastCompatible(inputs[i].getType(), type))
        return notLowerable(op, "state #" + Twine(i) + " changes type");
      init.push_back(castTo(rewriter, loc, inputs[i], type));
    }
    for (int64_t k = 0; k < numScanOutputs; ++k) {
      auto type = cast<RankedTensorType>((*resultTypes)[numStates + k]);
      init.push_back(
          initialAccumulator(rewriter, loc, type, outAxes[k], length));
    }
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = rewriter.create<scf::ForOp>(loc, zero, length, one, init);
    Block *loopBody = loop.getBody();
    // The builder may have added an empty scf.yield; the body brings its
    // own terminator.
    if (!loopBody->empty())
      rewriter.eraseOp(&loopBody->back());
    rewriter.setInsertionPointToStart(loopBody);
    Value step = loop.getInductionVar();
    Value last = rewriter.create<arith::SubIOp>(loc, length, one);
    Value reversed = rewriter.create<arith::SubIOp>(loc, last, step);
    SmallVector<Value> arguments;
    for (int64_t i = 0; i < numStates; ++i)
      arguments.push_back(loop.getRegionIterArgs()[i]);
    for (int64_t j = 0; j < numScanInputs; ++j)
      arguments.push_back(extractAlongAxis(rewriter, loc, inputs[numStates + j],
                                           inAxes[j],
                                           inDirections[j] ? reversed : step));
    if (failed(castArguments(rewriter, loc, op, body, arguments)))
      return failure();
    // The body, then its yield: states and scan output slices.
    auto yield = cast<YieldOp>(body.getTerminator());
    rewriter.inlineBlockBefore(&body, loopBody, loopBody->end(), arguments);
    rewriter.setInsertionPoint(yield);
    SmallVector<Value> next;
    for (int64_t i = 0; i < numStates; ++i) {
      Value value = yield.getValues()[i];
      if (!areCastCompatible(value.getType(), init[i].getType()))
        return notLowerable(op, "the body yields state #" + Twine(i) +
                                    " with another type");
      next.push_back(castTo(rewriter, loc, value, init[i].getType()));
    }
    for (int64_t k = 0; k < numScanOutputs; ++k) {
      Value slice = yield.getValues()[numStates + k];
      Value acc = loop.getRegionIterArgs()[numStates + k];
      auto accType = tensorTypeOf(acc);
      if (tensorTypeOf(slice).getRank() + 1 != accType.getRank())
        return notLowerable(op, "scan output #" + Twine(k) +
                                    " has another rank than its slices");
      if (!hasStaticSlice(accType, outAxes[k])) {
        // Allocated at the first step, from the slice's sizes.
        Value first = rewriter.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::eq, step, zero);
        SmallVector<OpFoldResult> sizes =
            accumulatorSizes(rewriter, loc, slice, outAxes[k], length);
        acc = buildIfElse(
            rewriter, loc, first,
            [&](OpBuilder &tb, Location tl) {
              return emptyTensor(tb, tl, accType, sizes);
            },
            acc);
      }
      Value position = outDirections[k] ? reversed : step;
      next.push_back(
          insertAlongAxis(rewriter, loc, slice, acc, outAxes[k], position));
    }
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, next);
    rewriter.setInsertionPointAfter(loop);
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

struct LoopOpLowering : public OpConversionPattern<LoopOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultTypes = convertResultTypes(getTypeConverter(), op);
    if (failed(resultTypes))
      return notLowerable(op, "a result type without a lowering");
    ValueRange initial = adaptor.getVInitial();
    int64_t numCarried = static_cast<int64_t>(initial.size());
    int64_t numScanOutputs =
        static_cast<int64_t>(resultTypes->size()) - numCarried;
    Block &body = op.getBody().front();
    Type i64 = rewriter.getI64Type();
    Type i1 = rewriter.getI1Type();

    Value maxTrips;
    if (!isNone(adaptor.getM()))
      maxTrips = readSingleElement(rewriter, loc, op, adaptor.getM(),
                                   "the trip count M");
    Value cond = isNone(adaptor.getCond())
                     ? rewriter.create<arith::ConstantIntOp>(loc, 1, 1)
                     : readSingleElement(rewriter, loc, op, adaptor.getCond(),
                                         "the condition");
    // State: i, cond, carried values, scan accumulators [capacity, ...].
    SmallVector<Value> init = {
        rewriter.create<arith::ConstantIntOp>(loc, 0, 64), cond};
    for (int64_t i = 0; i < numCarried; ++i) {
      Type type = (*resultTypes)[i];
      if (!areCastCompatible(initial[i].getType(), type))
        return notLowerable(op, "loop-carried value #" + Twine(i) +
                                    " changes type");
      init.push_back(castTo(rewriter, loc, initial[i], type));
    }
    for (int64_t k = 0; k < numScanOutputs; ++k) {
      auto type = cast<RankedTensorType>((*resultTypes)[numCarried + k]);
      // Dynamic first dimension: the capacity.
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = ShapedType::kDynamic;
      init.push_back(initialAccumulator(
          rewriter, loc, RankedTensorType::get(shape, type.getElementType()), 0,
          rewriter.getIndexAttr(0)));
    }
    SmallVector<Type> stateTypes = llvm::to_vector(ValueRange(init).getTypes());
    auto loop = rewriter.create<scf::WhileOp>(loc, stateTypes, init);

    // Before: (i < M) && cond.
    SmallVector<Location> locs(stateTypes.size(), loc);
    Block *before =
        rewriter.createBlock(&loop.getBefore(), {}, stateTypes, locs);
    {
      Value go = before->getArgument(1);
      if (maxTrips) {
        Value below = rewriter.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::slt, before->getArgument(0), maxTrips);
        go = rewriter.create<arith::AndIOp>(loc, go, below);
      }
      rewriter.create<scf::ConditionOp>(loc, go, before->getArguments());
    }

    // After: the body on (i, cond, carried...).
    Block *after = rewriter.createBlock(&loop.getAfter(), {}, stateTypes, locs);
    Value iteration = after->getArgument(0);
    auto scalarTensor = [&](Value scalar, Type argType) -> Value {
      auto type = cast<RankedTensorType>(argType);
      auto exact = RankedTensorType::get(
          SmallVector<int64_t>(type.getRank(), 1), scalar.getType());
      Value tensor =
          rewriter.create<tensor::FromElementsOp>(loc, exact, scalar);
      return castTo(rewriter, loc, tensor, type);
    };
    if (body.getNumArguments() != static_cast<unsigned>(numCarried + 2))
      return notLowerable(op, "a body without (iteration, condition, "
                              "carried values) arguments");
    for (unsigned a = 0; a < 2; ++a) {
      auto type = dyn_cast<RankedTensorType>(body.getArgument(a).getType());
      Type want = a == 0 ? i64 : i1;
      if (!type || type.getElementType() != want || type.getRank() > 1 ||
          (type.getRank() == 1 && !type.isDynamicDim(0) &&
           type.getDimSize(0) != 1))
        return notLowerable(op, a == 0 ? "an iteration argument that is no "
                                         "int64 scalar"
                                       : "a condition argument that is no "
                                         "bool scalar");
    }
    SmallVector<Value> arguments = {
        scalarTensor(iteration, body.getArgument(0).getType()),
        scalarTensor(after->getArgument(1), body.getArgument(1).getType())};
    for (int64_t i = 0; i < numCarried; ++i)
      arguments.push_back(after->getArgument(2 + i));
    if (failed(castArguments(rewriter, loc, op, body, arguments)))
      return failure();
    auto yield = cast<YieldOp>(body.getTerminator());
    rewriter.inlineBlockBefore(&body, after, after->end(), arguments);
    rewriter.setInsertionPoint(yield);
    SmallVector<Value> next = {
        rewriter.create<arith::AddIOp>(
            loc, iteration, rewriter.create<arith::ConstantIntOp>(loc, 1, 64)),
        readSingleElement(rewriter, loc, op, yield.getValues()[0],
                          "the body's condition")};
    for (int64_t i = 0; i < numCarried; ++i) {
      Value value = yield.getValues()[1 + i];
      if (!areCastCompatible(value.getType(), stateTypes[2 + i]))
        return notLowerable(op, "the body yields loop-carried value #" +
                                    Twine(i) + " with another type");
      next.push_back(castTo(rewriter, loc, value, stateTypes[2 + i]));
    }
    Value position = rewriter.create<arith::IndexCastOp>(
        loc, rewriter.getIndexType(), iteration);
    for (int64_t k = 0; k < numScanOutputs; ++k) {
      Value slice = yield.getValues()[1 + numCarried + k];
      Value acc = after->getArgument(2 + numCarried + k);
      auto accType = tensorTypeOf(acc);
      if (tensorTypeOf(slice).getRank() + 1 != accType.getRank())
        return notLowerable(op, "scan output #" + Twine(k) +
                                    " has another rank than its slices");
      // Full: a new accumulator of twice the capacity (at least 1) holding
      // the old one.
      Value capacity = rewriter.create<tensor::DimOp>(loc, acc, 0);
      Value full = rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                  position, capacity);
      auto grow = [&](OpBuilder &tb, Location tl) -> Value {
        Value doubled = tb.create<arith::MaxSIOp>(
            tl,
            tb.create<arith::MulIOp>(tl, capacity,
                                     tb.create<arith::ConstantIndexOp>(tl, 2)),
            tb.create<arith::ConstantIndexOp>(tl, 1));
        Value grown = emptyTensor(tb, tl, accType,
                                  accumulatorSizes(tb, tl, slice, 0, doubled));
        SmallVector<OpFoldResult> offsets(accType.getRank(),
                                          tb.getIndexAttr(0)),
            strides(accType.getRank(), tb.getIndexAttr(1));
        return tb.create<tensor::InsertSliceOp>(tl, acc, grown, offsets,
                                                getSizes(tb, tl, acc), strides);
      };
      acc = buildIfElse(rewriter, loc, full, grow, acc);
      next.push_back(insertAlongAxis(rewriter, loc, slice, acc, 0, position));
    }
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, next);

    // Results: the carried values, the accumulators cut to the count.
    rewriter.setInsertionPointAfter(loop);
    SmallVector<Value> results;
    for (int64_t i = 0; i < numCarried; ++i)
      results.push_back(loop.getResult(2 + i));
    Value count = rewriter.create<arith::IndexCastOp>(
        loc, rewriter.getIndexType(), loop.getResult(0));
    for (int64_t k = 0; k < numScanOutputs; ++k) {
      Value acc = loop.getResult(2 + numCarried + k);
      auto accType = tensorTypeOf(acc);
      SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, acc);
      sizes[0] = count;
      SmallVector<OpFoldResult> offsets(accType.getRank(),
                                        rewriter.getIndexAttr(0)),
          strides(accType.getRank(), rewriter.getIndexAttr(1));
      Value cut = rewriter.create<tensor::ExtractSliceOp>(
          loc, accType, acc, offsets, sizes, strides);
      results.push_back(
          castTo(rewriter, loc, cut, (*resultTypes)[numCarried + k]));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateControlFlowPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns) {
  patterns.add<IfOpLowering, YieldOpLowering, ScanOpLowering, LoopOpLowering>(
      converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
