//===- Recurrent.cpp - RNN, GRU and LSTM ----------------------------------===//
//
// Each direction is computed in three parts:
//  - the input projection of every time step at once, X[T*B, I] x W^T
//    (one GEMM: linalg.matmul_transpose_b, a oneDNN call like MatMul's);
//  - an scf.for over the steps carrying H (and LSTM's C): per step one GEMM
//    H[B, H] x R^T (GRU without linear_before_reset: the z/r part, then
//    (r . H) x Rh^T), and one linalg.generic over [B, H] that adds the
//    biases, reads the step's projection row, applies the activations
//    (clipped first when `clip` is set) and the cell equations, and yields
//    the next state and the step's output;
//  - for the reverse direction, a generic that puts the step outputs back
//    in time order.
// sequence_lens: batch entry b runs steps 0..len_b-1 (reverse: times
// len_b-1 down to 0); its later outputs are 0 and Y_h/Y_c hold the state of
// its last step (0 when len_b = 0, as onnxruntime). A length outside
// [0, seq_length] is a run-time error naming the node (the lengths are
// clamped into that range meanwhile).
//
// Precision: the op computes in its accumulator type (fp32 for
// fp32-accumulating fp16/bf16 ops: the state, gates and GEMMs stay fp32 and
// Y, Y_h, Y_c are rounded once); otherwise in its own type (f16/bf16 state
// and GEMM results rounded at every step, elementwise math in fp32).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "amp/Dialect/Amp/Semantics/Recurrent.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp::lowering {

namespace {

using semantics::Activation;
using semantics::ActivationKind;
using semantics::RecurrentAttrs;
using semantics::RecurrentKind;

/// f(x) for a float scalar.
Value applyActivation(OpBuilder &b, Location loc, const Activation &f,
                      Value x) {
  Type t = x.getType();
  auto c = [&](double v) { return constantScalar(b, loc, t, v); };
  auto less = [&](Value l, Value r) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, l, r);
  };
  auto select = [&](Value cond, Value l, Value r) -> Value {
    return b.create<arith::SelectOp>(loc, cond, l, r);
  };
  auto mul = [&](Value l, Value r) -> Value {
    return b.create<arith::MulFOp>(loc, l, r);
  };
  auto add = [&](Value l, Value r) -> Value {
    return b.create<arith::AddFOp>(loc, l, r);
  };
  switch (f.kind) {
  case ActivationKind::Relu:
    return select(less(x, c(0)), c(0), x);
  case ActivationKind::Tanh:
    return b.create<math::TanhOp>(loc, x);
  case ActivationKind::Sigmoid:
    return b.create<arith::DivFOp>(
        loc, c(1),
        add(c(1), b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x))));
  case ActivationKind::Affine:
    return add(mul(c(f.alpha), x), c(f.beta));
  case ActivationKind::LeakyRelu:
    return select(less(x, c(0)), mul(c(f.alpha), x), x);
  case ActivationKind::ThresholdedRelu:
    return select(less(c(f.alpha), x), x, c(0));
  case ActivationKind::ScaledTanh:
    return mul(c(f.alpha), b.create<math::TanhOp>(loc, mul(c(f.beta), x)));
  case ActivationKind::HardSigmoid: {
    Value y = add(mul(c(f.alpha), x), c(f.beta));
    return select(less(y, c(0)), c(0), select(less(c(1), y), c(1), y));
  }
  case ActivationKind::Elu:
    return select(less(x, c(0)),
                  mul(c(f.alpha), b.create<math::ExpM1Op>(loc, x)), x);
  case ActivationKind::Softsign:
    return b.create<arith::DivFOp>(loc, x,
                                   add(c(1), b.create<math::AbsFOp>(loc, x)));
  case ActivationKind::Softplus: {
    // max(x, 0) + log1p(exp(-|x|)): no overflow for large x.
    Value tail = b.create<math::Log1pOp>(
        loc,
        b.create<math::ExpOp>(
            loc, b.create<arith::NegFOp>(loc, b.create<math::AbsFOp>(loc, x))));
    return add(select(less(c(0), x), x, c(0)), tail);
  }
  }
  llvm_unreachable("unknown activation");
}

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

bool isPresent(Value value) { return value && !isNone(value); }

/// linalg.transpose of `value` (result dimension i = input dimension
/// perm[i]).
Value transposeTensor(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> perm) {
  RankedTensorType type = tensorType(value);
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, value), outSizes;
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    shape.push_back(type.getDimSize(p));
    outSizes.push_back(sizes[p]);
  }
  Value init = emptyTensor(
      b, loc, RankedTensorType::get(shape, type.getElementType()), outSizes);
  return b.create<linalg::TransposeOp>(loc, value, init, perm)->getResult(0);
}

/// Entries [first, first + count) of a 2-d tensor along `dim` (dim 0: a
/// block of gates of R; dim 1: one gate's columns of H x R^T).
Value sliceBlock(OpBuilder &b, Location loc, Value value, int64_t dim,
                 int64_t first, int64_t count) {
  RankedTensorType type = tensorType(value);
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, value);
  SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0));
  SmallVector<int64_t> shape(type.getShape());
  sizes[dim] = b.getIndexAttr(count);
  offsets[dim] = b.getIndexAttr(first);
  shape[dim] = count;
  return b.create<tensor::ExtractSliceOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), value, offsets,
      sizes, SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
}

/// The converted operands of a recurrent op (absent ones null or none).
struct RecurrentOperands {
  Value x, w, r, bias, lengths, initialH, initialC, peepholes;
};

class RecurrentBuilder {
public:
  RecurrentBuilder(Operation *op, const RecurrentAttrs &attrs,
                   ArrayRef<Activation> activations,
                   const semantics::RecurrentDims &dims, Type work,
                   ConversionPatternRewriter &rewriter)
      : op(op), attrs(attrs), activations(activations), dims(dims), work(work),
        compute(getComputeType(work)), b(rewriter), loc(op->getLoc()),
        gates(semantics::getGateCount(attrs.kind)), hidden(dims.hidden) {}

  /// Y, Y_h (and Y_c) in the work type, time-major.
  SmallVector<Value> build(const RecurrentOperands &in);

private:
  struct Direction {
    int64_t index;
    bool reverse;
    Value projected;  // [T*B, G*H]: X x W^T
    Value recurrence; // [G*H, H]
    Value bias;       // [2*G*H]: W biases, then R biases
    Value peepholes;  // [3*H] or null
  };
  /// Values of one generic body: the batch row's step and activity.
  struct StepPosition {
    Value batchIndex, unit, active, row;
  };

  Value zeros(ArrayRef<int64_t> shape, ArrayRef<OpFoldResult> sizes) {
    return filledTensor(b, loc, RankedTensorType::get(shape, work), sizes,
                        constantScalar(b, loc, work, 0));
  }
  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  /// The sequence length of batch entry `batch` (clamped into [0, T]), or T.
  Value lengthOf(OpBuilder &nb, Location l, Value batch);
  StepPosition position(OpBuilder &nb, Location l, Value step,
                        const Direction &dir);
  /// A compute-typed element of a 1-d or 2-d work tensor.
  Value read(OpBuilder &nb, Location l, Value tensor, ValueRange indices) {
    return toComputeType(
        nb, l, nb.create<tensor::ExtractOp>(l, tensor, indices).getResult());
  }
  /// The pre-activation input part of gate `gate`: X x W^T + Wb (+ Rb).
  Value inputPart(OpBuilder &nb, Location l, const Direction &dir,
                  const StepPosition &at, int64_t gate, bool withRBias);
  Value rBias(OpBuilder &nb, Location l, const Direction &dir, Value unit,
              int64_t gate);
  /// Activation `k` of the direction on a gate's pre-activation, clipped
  /// first when `clip` is set (`clipped` false: LSTM's h(C_t), whose input
  /// is no gate and is not clipped, as in onnxruntime).
  Value activate(OpBuilder &nb, Location l, const Direction &dir, int64_t k,
                 Value x, bool clipped = true);
  /// One step: the next H (and C) and the step's output row.
  SmallVector<Value> buildStep(OpBuilder &nb, Location l, Value step,
                               const Direction &dir, ValueRange state);
  /// The step outputs [T, B, H] of a reverse direction in time order.
  Value toTimeOrder(Value steps, const Direction &dir);
  /// A final state [B, H] with the rows of empty sequences zeroed.
  Value zeroEmptySequences(Value state);

  Operation *op;
  const RecurrentAttrs &attrs;
  ArrayRef<Activation> activations;
  const semantics::RecurrentDims &dims;
  Type work, compute;
  ConversionPatternRewriter &b;
  Location loc;
  int64_t gates, hidden;
  Value seqLength, batch, lengths;
  SmallVector<OpFoldResult> stateSizes; // [B, H]
};

Value RecurrentBuilder::lengthOf(OpBuilder &nb, Location l, Value batchIndex) {
  if (!lengths)
    return seqLength;
  Value length = toIndex(
      nb, l, nb.create<tensor::ExtractOp>(l, lengths, batchIndex).getResult());
  Value zero = nb.create<arith::ConstantIndexOp>(l, 0);
  return nb.create<arith::MinSIOp>(
      l, nb.create<arith::MaxSIOp>(l, length, zero), seqLength);
}

RecurrentBuilder::StepPosition
RecurrentBuilder::position(OpBuilder &nb, Location l, Value step,
                           const Direction &dir) {
  StepPosition at;
  at.batchIndex = nb.create<linalg::IndexOp>(l, 0);
  at.unit = nb.create<linalg::IndexOp>(l, 1);
  Value length = lengthOf(nb, l, at.batchIndex);
  at.active =
      nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, step, length);
  Value time = step;
  if (dir.reverse) {
    Value one = nb.create<arith::ConstantIndexOp>(l, 1);
    time = nb.create<arith::SubIOp>(l, nb.create<arith::SubIOp>(l, length, one),
                                    step);
  }
  time = nb.create<arith::SelectOp>(l, at.active, time,
                                    nb.create<arith::ConstantIndexOp>(l, 0));
  at.row = nb.create<arith::AddIOp>(l, nb.create<arith::MulIOp>(l, time, batch),
                                    at.batchIndex);
  return at;
}

Value RecurrentBuilder::rBias(OpBuilder &nb, Location l, const Direction &dir,
                              Value unit, int64_t gate) {
  Value offset = nb.create<arith::ConstantIndexOp>(l, (gates + gate) * hidden);
  return read(nb, l, dir.bias,
              ValueRange{nb.create<arith::AddIOp>(l, offset, unit)});
}

Value RecurrentBuilder::inputPart(OpBuilder &nb, Location l,
                                  const Direction &dir, const StepPosition &at,
                                  int64_t gate, bool withRBias) {
  Value column = nb.create<arith::AddIOp>(
      l, nb.create<arith::ConstantIndexOp>(l, gate * hidden), at.unit);
  Value sum = nb.create<arith::AddFOp>(
      l, read(nb, l, dir.projected, ValueRange{at.row, column}),
      read(nb, l, dir.bias, ValueRange{column}));
  if (withRBias)
    sum = nb.create<arith::AddFOp>(l, sum, rBias(nb, l, dir, at.unit, gate));
  return sum;
}

Value RecurrentBuilder::activate(OpBuilder &nb, Location l,
                                 const Direction &dir, int64_t k, Value x,
                                 bool clipped) {
  if (attrs.clip && clipped) {
    Value bound = constantScalar(nb, l, x.getType(), *attrs.clip);
    Value negBound = constantScalar(nb, l, x.getType(), -*attrs.clip);
    x = nb.create<arith::MinimumFOp>(
        l, nb.create<arith::MaximumFOp>(l, x, negBound), bound);
  }
  int64_t count = semantics::getActivationCount(attrs.kind);
  return applyActivation(nb, l, activations[dir.index * count + k], x);
}

SmallVector<Value> RecurrentBuilder::buildStep(OpBuilder &nb, Location l,
                                               Value step, const Direction &dir,
                                               ValueRange state) {
  bool lstm = attrs.kind == RecurrentKind::LSTM;
  bool gru = attrs.kind == RecurrentKind::GRU;
  bool resetFirst = gru && !attrs.linearBeforeReset;
  Value h = state[0];
  Value c = lstm ? state[1] : Value();
  RankedTensorType stateType = tensorType(h);
  auto zerosOf = [&](int64_t columns) {
    return filledTensor(
        nb, l, RankedTensorType::get({stateType.getDimSize(0), columns}, work),
        {stateSizes[0], nb.getIndexAttr(columns)},
        constantScalar(nb, l, work, 0));
  };
  // H x R^T: every gate, or GRU's z and r before the reset.
  int64_t columns = (resetFirst ? 2 : gates) * hidden;
  Value recurrence = resetFirst
                         ? sliceBlock(nb, l, dir.recurrence, 0, 0, columns)
                         : dir.recurrence;
  Value hr = buildMatmul(nb, l, h, recurrence, zerosOf(columns), true);
  // The gates' parts of H x R^T; the final generic updates H (and C) in
  // place (its outputs are the loop's own state: bufferized in place).
  SmallVector<Value> inputs;
  for (int64_t g = 0; g < columns / hidden; ++g)
    inputs.push_back(sliceBlock(nb, l, hr, 1, g * hidden, hidden));
  auto identity = nb.getMultiDimIdentityMap(2);
  SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);
  auto emptyState = [&]() {
    return emptyTensor(nb, l, RankedTensorType::get(stateType.getShape(), work),
                       stateSizes);
  };
  auto toWork = [&](OpBuilder &gb, Location gl, Value v) {
    return convertScalar(gb, gl, v, work, false, false);
  };
  auto widen = [&](OpBuilder &gb, Location gl, Value v) {
    return toComputeType(gb, gl, v);
  };

  if (resetFirst) {
    // GRU: (r . H) x Rh^T.
    auto resetH = nb.create<linalg::GenericOp>(
        l, TypeRange{stateType.clone(work)}, ValueRange{h, inputs[1]},
        ValueRange{emptyState()}, SmallVector<AffineMap>(3, identity), parallel,
        [&](OpBuilder &gb, Location gl, ValueRange args) {
          StepPosition at = position(gb, gl, step, dir);
          Value pre = gb.create<arith::AddFOp>(
              gl, inputPart(gb, gl, dir, at, 1, true), widen(gb, gl, args[1]));
          Value r = activate(gb, gl, dir, 0, pre);
          Value rh = gb.create<arith::MulFOp>(gl, r, widen(gb, gl, args[0]));
          gb.create<linalg::YieldOp>(gl, toWork(gb, gl, rh));
        });
    Value rh = resetH.getResult(0);
    Value rhR = buildMatmul(
        nb, l, rh, sliceBlock(nb, l, dir.recurrence, 0, 2 * hidden, hidden),
        zerosOf(hidden), true);
    inputs.push_back(rhR);
  }

  SmallVector<Value> outs = {h};
  if (lstm)
    outs.push_back(c);
  outs.push_back(emptyState()); // the step's output
  size_t numInputs = inputs.size();
  SmallVector<Type> outTypes(outs.size(), stateType.clone(work));
  SmallVector<AffineMap> maps(inputs.size() + outs.size(), identity);
  auto generic = nb.create<linalg::GenericOp>(
      l, outTypes, inputs, outs, maps, parallel,
      [&](OpBuilder &gb, Location gl, ValueRange args) {
        StepPosition at = position(gb, gl, step, dir);
        Value hPrev = widen(gb, gl, args[numInputs]);
        auto hrGate = [&](int64_t g) { return widen(gb, gl, args[g]); };
        auto add = [&](Value x, Value y) -> Value {
          return gb.create<arith::AddFOp>(gl, x, y);
        };
        auto mul = [&](Value x, Value y) -> Value {
          return gb.create<arith::MulFOp>(gl, x, y);
        };
        Value one = constantScalar(gb, gl, compute, 1);
        // pre-activation of gate g: X W^T + H R^T + Wb + Rb.
        auto full = [&](int64_t g) {
          return add(inputPart(gb, gl, dir, at, g, true), hrGate(g));
        };
        Value hNew, cNew, cPrev;
        switch (attrs.kind) {
        case RecurrentKind::RNN:
          hNew = activate(gb, gl, dir, 0, full(0));
          break;
        case RecurrentKind::GRU: {
          Value z = activate(gb, gl, dir, 0, full(0));
          Value candidate;
          if (resetFirst) {
            // Wb_h + Rb_h + (r . H) Rh^T.
            candidate = add(inputPart(gb, gl, dir, at, 2, true),
                            widen(gb, gl, args[numInputs - 1]));
          } else {
            Value r = activate(gb, gl, dir, 0, full(1));
            candidate =
                add(inputPart(gb, gl, dir, at, 2, false),
                    mul(r, add(hrGate(2), rBias(gb, gl, dir, at.unit, 2))));
          }
          Value hTilde = activate(gb, gl, dir, 1, candidate);
          hNew = add(mul(gb.create<arith::SubFOp>(gl, one, z), hTilde),
                     mul(z, hPrev));
          break;
        }
        case RecurrentKind::LSTM: {
          cPrev = widen(gb, gl, args[numInputs + 1]);
          auto peephole = [&](int64_t g, Value cell) -> Value {
            if (!dir.peepholes)
              return Value();
            Value offset =
                gb.create<arith::ConstantIndexOp>(gl, g * hidden).getResult();
            return mul(
                read(gb, gl, dir.peepholes,
                     ValueRange{gb.create<arith::AddIOp>(gl, offset, at.unit)}),
                cell);
          };
          auto withPeephole = [&](Value pre, int64_t g, Value cell) {
            Value p = peephole(g, cell);
            return p ? add(pre, p) : pre;
          };
          // Gates in W: i, o, f, c; peepholes: i, o, f.
          Value i = activate(gb, gl, dir, 0, withPeephole(full(0), 0, cPrev));
          Value f =
              attrs.inputForget
                  ? gb.create<arith::SubFOp>(gl, one, i).getResult()
                  : activate(gb, gl, dir, 0, withPeephole(full(2), 2, cPrev));
          Value g = activate(gb, gl, dir, 1, full(3));
          cNew = add(mul(f, cPrev), mul(i, g));
          Value o = activate(gb, gl, dir, 0, withPeephole(full(1), 1, cNew));
          hNew = mul(o, activate(gb, gl, dir, 2, cNew, /*clipped=*/false));
          break;
        }
        }
        auto select = [&](Value x, Value y) -> Value {
          return gb.create<arith::SelectOp>(gl, at.active, x, y);
        };
        SmallVector<Value> results = {toWork(gb, gl, select(hNew, hPrev))};
        if (lstm)
          results.push_back(toWork(gb, gl, select(cNew, cPrev)));
        results.push_back(
            toWork(gb, gl, select(hNew, constantScalar(gb, gl, compute, 0))));
        gb.create<linalg::YieldOp>(gl, results);
      });
  return SmallVector<Value>(generic.getResults());
}

Value RecurrentBuilder::toTimeOrder(Value steps, const Direction &dir) {
  RankedTensorType type = tensorType(steps);
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, steps);
  return buildIndexGenerated(
      b, loc, type, sizes, [&](OpBuilder &nb, Location l, ValueRange idx) {
        Value time = idx[0], batchIndex = idx[1];
        Value length = lengthOf(nb, l, batchIndex);
        Value active = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt,
                                                time, length);
        Value one = nb.create<arith::ConstantIndexOp>(l, 1);
        Value step = nb.create<arith::SubIOp>(
            l, nb.create<arith::SubIOp>(l, length, one), time);
        step = nb.create<arith::SelectOp>(
            l, active, step, nb.create<arith::ConstantIndexOp>(l, 0));
        Value value = nb.create<tensor::ExtractOp>(
            l, steps, ValueRange{step, batchIndex, idx[2]});
        return nb
            .create<arith::SelectOp>(l, active, value,
                                     constantScalar(nb, l, work, 0))
            .getResult();
      });
}

Value RecurrentBuilder::zeroEmptySequences(Value state) {
  if (!lengths)
    return state;
  return buildIndexGenerated(
      b, loc, tensorType(state), getSizes(b, loc, state),
      [&](OpBuilder &nb, Location l, ValueRange idx) {
        Value empty = nb.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::eq, lengthOf(nb, l, idx[0]),
            nb.create<arith::ConstantIndexOp>(l, 0));
        Value value = nb.create<tensor::ExtractOp>(l, state, idx);
        return nb
            .create<arith::SelectOp>(l, empty, constantScalar(nb, l, work, 0),
                                     value)
            .getResult();
      });
}

SmallVector<Value> RecurrentBuilder::build(const RecurrentOperands &in) {
  bool lstm = attrs.kind == RecurrentKind::LSTM;
  bool batchMajor = dims.batchMajor;
  int64_t directions = dims.directions;
  auto prepare = [&](Value v, bool isState) -> Value {
    if (!isPresent(v))
      return Value();
    if (isState && batchMajor)
      v = transposeTensor(b, loc, v, {1, 0, 2});
    return convertTensor(b, loc, v, work);
  };
  Value x = in.x;
  if (batchMajor)
    x = transposeTensor(b, loc, x, {1, 0, 2});
  x = convertTensor(b, loc, x, work);
  Value w = prepare(in.w, false), r = prepare(in.r, false);
  Value bias = prepare(in.bias, false),
        peepholes = prepare(in.peepholes, false);
  Value initialH = prepare(in.initialH, true);
  Value initialC = prepare(in.initialC, true);
  lengths = isPresent(in.lengths) ? in.lengths : Value();

  RankedTensorType xType = tensorType(x);
  SmallVector<OpFoldResult> xSizes = getSizes(b, loc, x);
  seqLength = indexValue(b, loc, xSizes[0]);
  batch = indexValue(b, loc, xSizes[1]);
  int64_t staticT = xType.getDimSize(0), staticB = xType.getDimSize(1);
  int64_t gateRows = gates * hidden;
  stateSizes = {xSizes[1], b.getIndexAttr(hidden)};
  SmallVector<int64_t> stateShape = {staticB, hidden};

  if (lengths) {
    // Every length in [0, T].
    if (collectsRuntimeChecks(b)) {
      auto [lowest, highest] = getIntegerExtremes(b, loc, lengths);
      Value bound =
          b.create<arith::IndexCastOp>(loc, b.getI64Type(), seqLength);
      Value zero = b.create<arith::ConstantIntOp>(loc, 0, 64);
      Value tooLow =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, lowest, zero);
      Value tooHigh = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt,
                                              highest, bound);
      emitRuntimeCheck(b, loc, b.create<arith::OrIOp>(loc, tooLow, tooHigh),
                       b.create<arith::SelectOp>(loc, tooHigh, highest, lowest),
                       bound,
                       describeNode(op) + ": sequence length {value} is "
                                          "outside [0, {bound}] (the sequence "
                                          "length of X)");
    }
  }

  // [T, B, I] -> [T*B, I] for the input projection.
  int64_t staticRows = semantics::mulDims(staticT, staticB);
  Value rows = b.create<arith::MulIOp>(loc, seqLength, batch);
  Value x2d = reshapeTensor(
      b, loc, x, RankedTensorType::get({staticRows, xType.getDimSize(2)}, work),
      {rows, xSizes[2]});

  Value y = emptyTensor(
      b, loc,
      RankedTensorType::get({staticT, directions, staticB, hidden}, work),
      {xSizes[0], b.getIndexAttr(directions), xSizes[1],
       b.getIndexAttr(hidden)});
  auto stateAllType =
      RankedTensorType::get({directions, staticB, hidden}, work);
  SmallVector<OpFoldResult> stateAllSizes = {b.getIndexAttr(directions),
                                             xSizes[1], b.getIndexAttr(hidden)};
  Value yH = emptyTensor(b, loc, stateAllType, stateAllSizes);
  Value yC = lstm ? emptyTensor(b, loc, stateAllType, stateAllSizes) : Value();

  for (int64_t d = 0; d < directions; ++d) {
    Direction dir;
    dir.index = d;
    dir.reverse = attrs.direction == "reverse" || d == 1;
    Value wd = extractAlongAxis(b, loc, w, 0, b.getIndexAttr(d));
    dir.projected = buildMatmul(
        b, loc, x2d, wd,
        zeros({staticRows, gateRows}, {rows, b.getIndexAttr(gateRows)}), true);
    dir.recurrence = extractAlongAxis(b, loc, r, 0, b.getIndexAttr(d));
    dir.bias = bias ? extractAlongAxis(b, loc, bias, 0, b.getIndexAttr(d))
                    : zeros({2 * gateRows}, {b.getIndexAttr(2 * gateRows)});
    dir.peepholes =
        peepholes ? extractAlongAxis(b, loc, peepholes, 0, b.getIndexAttr(d))
                  : Value();
    SmallVector<Value> init = {
        initialH ? extractAlongAxis(b, loc, initialH, 0, b.getIndexAttr(d))
                 : zeros(stateShape, stateSizes)};
    if (lstm)
      init.push_back(
          initialC ? extractAlongAxis(b, loc, initialC, 0, b.getIndexAttr(d))
                   : zeros(stateShape, stateSizes));
    init.push_back(emptyTensor(
        b, loc, RankedTensorType::get({staticT, staticB, hidden}, work),
        {xSizes[0], xSizes[1], b.getIndexAttr(hidden)}));
    auto loop = b.create<scf::ForOp>(
        loc, index(0), seqLength, index(1), init,
        [&](OpBuilder &lb, Location l, Value step, ValueRange state) {
          SmallVector<Value> next = buildStep(lb, l, step, dir, state);
          Value steps = state.back();
          next.back() = insertAlongAxis(lb, l, next.back(), steps, 0, step);
          lb.create<scf::YieldOp>(l, next);
        });
    Value steps = loop.getResults().back();
    Value outputs = dir.reverse ? toTimeOrder(steps, dir) : steps;
    y = insertAlongAxis(b, loc, outputs, y, 1, b.getIndexAttr(d));
    yH = insertAlongAxis(b, loc, zeroEmptySequences(loop.getResult(0)), yH, 0,
                         b.getIndexAttr(d));
    if (lstm)
      yC = insertAlongAxis(b, loc, zeroEmptySequences(loop.getResult(1)), yC, 0,
                           b.getIndexAttr(d));
  }
  SmallVector<Value> results = {y, yH};
  if (lstm)
    results.push_back(yC);
  if (batchMajor) {
    results[0] = transposeTensor(b, loc, results[0], {2, 0, 1, 3});
    for (size_t i = 1; i < results.size(); ++i)
      results[i] = transposeTensor(b, loc, results[i], {1, 0, 2});
  }
  return results;
}

RecurrentAttrs getRecurrentAttrs(RNNOp op) {
  return RecurrentAttrs::getRNN(op);
}
RecurrentAttrs getRecurrentAttrs(GRUOp op) {
  return RecurrentAttrs::getGRU(op);
}
RecurrentAttrs getRecurrentAttrs(LSTMOp op) {
  return RecurrentAttrs::getLSTM(op);
}

template <typename OpT>
struct RecurrentOpLowering : public OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  using OpAdaptor = typename OpT::Adaptor;

  LogicalResult
  matchAndRewrite(OpT op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RecurrentOperands in{adaptor.getX(),
                         adaptor.getW(),
                         adaptor.getR(),
                         adaptor.getB(),
                         adaptor.getSequenceLens(),
                         adaptor.getInitialH(),
                         {},
                         {}};
    if constexpr (std::is_same_v<OpT, LSTMOp>) {
      in.initialC = adaptor.getInitialC();
      in.peepholes = adaptor.getP();
    }
    RecurrentAttrs attrs = getRecurrentAttrs(op);
    auto shapeOf = [](Value v) -> std::optional<ArrayRef<int64_t>> {
      if (!isPresent(v))
        return std::nullopt;
      return tensorType(v).getShape();
    };
    semantics::RecurrentShapes shapes{tensorType(in.x).getShape(),
                                      tensorType(in.w).getShape(),
                                      tensorType(in.r).getShape()};
    shapes.b = shapeOf(in.bias);
    shapes.sequenceLens = shapeOf(in.lengths);
    shapes.initialH = shapeOf(in.initialH);
    shapes.initialC = shapeOf(in.initialC);
    shapes.p = shapeOf(in.peepholes);
    std::string message;
    auto error = [&](const Twine &text) { message = text.str(); };
    FailureOr<semantics::RecurrentDims> dims =
        semantics::resolveRecurrentDims(attrs, shapes, error);
    if (failed(dims))
      return notLowerable(op, message);
    FailureOr<SmallVector<Activation>> activations =
        semantics::resolveActivations(attrs, dims->directions, error);
    if (failed(activations))
      return notLowerable(op, message);
    if (ShapedType::isDynamic(dims->hidden))
      return notLowerable(op, "a dynamic hidden size");
    SmallVector<Type> resultTypes;
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      resultTypes.push_back(
          convertedResultType(this->getTypeConverter(), op, i));
    Type storage = cast<RankedTensorType>(resultTypes[0]).getElementType();
    Type work = accumulatorType(op, storage);
    RecurrentBuilder builder(op, attrs, *activations, *dims, work, rewriter);
    SmallVector<Value> results = builder.build(in);
    for (size_t i = 0; i < results.size(); ++i) {
      results[i] = convertTensor(rewriter, op.getLoc(), results[i], storage);
      if (results[i].getType() != resultTypes[i])
        results[i] = rewriter.create<tensor::CastOp>(
            op.getLoc(), resultTypes[i], results[i]);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateRecurrentPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns) {
  patterns.add<RecurrentOpLowering<RNNOp>, RecurrentOpLowering<GRUOp>,
               RecurrentOpLowering<LSTMOp>>(converter, patterns.getContext());
}

} // namespace mlir::amp::lowering
