//===- GradientBuilder.h - building amp graphs in C++ -----------*- C++ -*-===//
//
// The gradient rules and the train-step builder build amp ops (so the
// backward pass and the optimizer go through the same autocast-aware
// lowerings as the forward pass). GradientBuilder makes that short: ops
// with inferred result types, small constants of a given element type, and
// the reductions that undo broadcasting. Each helper returns null after
// reporting an error (at the op being differentiated, else at the
// location), and returns null without a new error when one of its inputs
// is null, so callers can chain helpers and check once at the end.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_GRADIENTS_GRADIENTBUILDER_H
#define AMP_DIALECT_AMP_GRADIENTS_GRADIENTBUILDER_H

#include "amp/Dialect/Amp/IR/AmpGradientInterface.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"

namespace mlir::amp::gradients {

class GradientBuilder {
public:
  /// Builds gradient ops of `forward` (errors are reported there).
  GradientBuilder(OpBuilder &builder, Operation *forward)
      : builder(builder), forward(forward), loc(forward->getLoc()) {}
  /// Builds ops at `loc` (errors too).
  GradientBuilder(OpBuilder &builder, Location loc)
      : builder(builder), forward(nullptr), loc(loc) {}

  Operation *getForward() const { return forward; }
  OpBuilder &getBuilder() { return builder; }
  bool hasFailed() const { return failed; }

  /// Reports `message` at the forward op; returns null.
  Value fail(const Twine &message);

  /// Creates op `OpT` (result types inferred); returns its results, empty
  /// if an operand is null or inference fails.
  template <typename OpT>
  SmallVector<Value> createAll(ValueRange operands,
                               ArrayRef<NamedAttribute> attrs = {}) {
    return createNamed(OpT::getOperationName(), operands, attrs);
  }
  /// Creates op `OpT`; returns its first result (null on failure).
  template <typename OpT>
  Value create(ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
    SmallVector<Value> results = createAll<OpT>(operands, attrs);
    return results.empty() ? Value() : results.front();
  }
  NamedAttribute attr(StringRef name, int64_t value);
  NamedAttribute attr(StringRef name, float value);
  NamedAttribute attr(StringRef name, ArrayRef<int64_t> values);
  NamedAttribute attr(StringRef name, StringRef value);

  Value none();
  /// A rank-0 constant of `like`'s element type.
  Value scalar(Value like, double value);
  /// A rank-0 constant of element type `elementType`.
  Value scalar(Type elementType, double value);
  /// A 1-D i64 constant.
  Value i64s(ArrayRef<int64_t> values);
  /// A 1-D f32 constant.
  Value f32s(ArrayRef<float> values);
  /// A constant of `value`'s type.
  Value constant(DenseElementsAttr value);
  /// The shape of `value` as a 1-D i64 tensor (a constant when static).
  Value shapeOf(Value value);
  /// `value` with the shape of `like` (Reshape to Shape(like)).
  Value reshapeLike(Value value, Value like);
  /// `value` converted to element type `elementType` (no-op when equal).
  Value castTo(Value value, Type elementType);
  /// `value` converted to the element type of `like`.
  Value castLike(Value value, Value like);
  /// The elementwise ops, named as ONNX names them.
  Value add(Value a, Value b);
  Value sub(Value a, Value b);
  Value mul(Value a, Value b);
  Value div(Value a, Value b);
  Value neg(Value a);
  Value mulScalar(Value a, double factor);
  /// Sums `grad` (the gradient of a broadcast result) down to the shape of
  /// `operand`: over the leading dimensions the operand lacks and over the
  /// dimensions where it has size 1. Dynamic sizes are taken as equal.
  Value sumToShape(Value grad, Value operand);
  /// ReduceSum / ReduceMean over `axes`.
  Value reduceSum(Value value, ArrayRef<int64_t> axes, bool keepDims);
  Value reduceMean(Value value, ArrayRef<int64_t> axes, bool keepDims);
  Value transpose(Value value, ArrayRef<int64_t> perm);
  /// Float zeros of `like`'s type.
  Value zerosLike(Value like);

private:
  SmallVector<Value> createNamed(StringRef name, ValueRange operands,
                                 ArrayRef<NamedAttribute> attrs);

  OpBuilder &builder;
  Operation *forward;
  Location loc;
  bool failed = false;
};

/// The element type and rank of a ranked tensor value.
inline RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

} // namespace mlir::amp::gradients

#endif // AMP_DIALECT_AMP_GRADIENTS_GRADIENTBUILDER_H
