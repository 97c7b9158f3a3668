//===- Dropout.cpp - training-mode Dropout as a seeded mask ---------------===//
//
// A training-mode Dropout becomes
//
//   keep = amp.dropout_mask(x, ratio, counter) {stream = k, seed = s}
//   y    = Where(keep, x * 1/(1 - ratio), 0)       (product in >= fp32,
//                                                   rounded once)
//
// with `counter` the train step (or micro-batch) number and `k` the
// Dropout's position in the function, so masks are reproducible and
// differ between layers and steps. The gradient then follows from the
// Where, Mul and Cast rules. In eval mode (@main) a Dropout is the identity.
//
//===----------------------------------------------------------------------===//

#include "TrainStepInternal.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/IR/AmpShapeInference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::training;
using gradients::tensorType;

/// Whether `dropout` drops in training: its training_mode is a constant
/// true (a Dropout whose mode is a graph input is an error).
static FailureOr<bool> isTrainingDropout(DropoutOp dropout) {
  Value mode = dropout.getTrainingMode();
  if (isa<NoneType>(mode.getType()))
    return false;
  auto values = getConstantIntValues(mode);
  if (!values || values->size() != 1)
    return dropout.emitOpError("has a training_mode that is not a constant; "
                               "amp decides the mode per function (training "
                               "in @train_step, eval in @main)"),
           failure();
  return (*values)[0] != 0;
}

/// The training-mode Dropouts of `func`, in order.
static FailureOr<SmallVector<DropoutOp>>
getTrainingDropouts(func::FuncOp func) {
  SmallVector<DropoutOp> dropouts;
  WalkResult walk = func.walk([&](DropoutOp op) {
    FailureOr<bool> training = isTrainingDropout(op);
    if (failed(training))
      return WalkResult::interrupt();
    if (*training)
      dropouts.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return dropouts;
}

LogicalResult
mlir::amp::training::lowerTrainingDropouts(func::FuncOp func,
                                           function_ref<Value()> getCounter) {
  FailureOr<SmallVector<DropoutOp>> dropouts = getTrainingDropouts(func);
  if (failed(dropouts))
    return failure();
  int64_t stream = 0;
  for (DropoutOp dropout : *dropouts) {
    OpBuilder builder(dropout);
    GradientBuilder gb(builder, dropout.getLoc());
    Value x = dropout.getData();
    Type element = tensorType(x).getElementType();
    if (!isa<FloatType>(element))
      return dropout.emitOpError("drops elements of a ")
             << element << " tensor; amp trains float Dropouts only";
    Value ratio = dropout.getRatio();
    if (isa<NoneType>(ratio.getType()))
      ratio = gb.scalar(builder.getF32Type(), 0.5); // ONNX's default
    NamedAttrList attrs;
    attrs.set("stream", builder.getI64IntegerAttr(stream++));
    if (auto seed = dropout.getSeed())
      attrs.set("seed", builder.getI64IntegerAttr(static_cast<int64_t>(*seed)));
    Value keep =
        gb.create<DropoutMaskOp>({x, ratio, getCounter()}, attrs.getAttrs());
    // The scale and product in fp32 (fp64 stays fp64), rounded once.
    Type compute = element.isF64() ? element : builder.getF32Type();
    Value r = gb.castTo(ratio, compute);
    Value one = gb.scalar(compute, 1.0);
    Value scale = gb.div(one, gb.sub(one, r));
    Value scaled = gb.castLike(gb.mul(gb.castTo(x, compute), scale), x);
    Value y = gb.create<WhereOp>({keep, scaled, gb.scalar(x, 0.0)});
    if (gb.hasFailed())
      return failure();
    dropout.getOutput().replaceAllUsesWith(y);
    dropout.getMask().replaceAllUsesWith(keep);
    dropout.erase();
  }
  return success();
}

LogicalResult mlir::amp::training::makeDropoutsIdentity(func::FuncOp func) {
  FailureOr<SmallVector<DropoutOp>> dropouts = getTrainingDropouts(func);
  if (failed(dropouts))
    return failure();
  for (DropoutOp dropout : *dropouts) {
    // The mode operand becomes "none"; canonicalization removes the op.
    OpBuilder builder(dropout);
    dropout.getTrainingModeMutable().assign(
        builder.create<NoneOp>(dropout.getLoc()));
  }
  return success();
}
