//===- AtenNormalization.cpp - norms, pooling, softmax, reductions --------===//

#include "AtenCall.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::torch_import;

namespace {

/// A constant filled with `value`, of `shape` (static) and x's type.
FailureOr<Value> filled(AtenCall &call, ArrayRef<int64_t> shape, double value,
                        Type elementType) {
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return call.fail("a missing weight or bias needs a static size");
  return call.value<ExpandOp>(call.scalar(value, elementType),
                              call.i64s(shape));
}

/// The operands of a BatchNormalization from torch's batch-norm ops
/// (input, weight, bias, running_mean, running_var first); a missing
/// weight or bias is ones or zeros.
struct BatchNormOperands {
  Value x, scale, bias, mean, var;
};
FailureOr<BatchNormOperands> batchNormOperands(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "input");
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 2)
    return call.fail("batch norm needs a channel dimension");
  Type element = type.getElementType();
  SmallVector<int64_t> channels{type.getDimSize(1)};
  FailureOr<Value> scale = call.has(1, "weight")
                               ? call.tensor(1, "weight")
                               : filled(call, channels, 1.0, element);
  FailureOr<Value> bias = call.has(2, "bias")
                              ? call.tensor(2, "bias")
                              : filled(call, channels, 0.0, element);
  FailureOr<Value> mean = call.tensor(3, "running_mean");
  FailureOr<Value> var = call.tensor(4, "running_var");
  if (failed(scale) || failed(bias) || failed(mean) || failed(var))
    return failure();
  return BatchNormOperands{*x, *scale, *bias, *mean, *var};
}

/// _native_batch_norm_legit_no_training(x, weight, bias, running_mean,
/// running_var, momentum, eps) -> (y, empty, empty).
LogicalResult batchNormInference(AtenCall &call) {
  FailureOr<BatchNormOperands> in = batchNormOperands(call);
  FailureOr<double> momentum = call.number(5, "momentum", 0.1);
  FailureOr<double> eps = call.number(6, "eps", 1e-5);
  if (failed(in) || failed(momentum) || failed(eps))
    return failure();
  OpBuilder &b = call.builder;
  FailureOr<BatchNormalizationOp> op = call.create<BatchNormalizationOp>(
      in->x, in->scale, in->bias, in->mean, in->var, b.getF32FloatAttr(*eps),
      b.getF32FloatAttr(1.0 - *momentum), b.getI64IntegerAttr(0));
  if (failed(op))
    return failure();
  call.setResults({op->getY(), Value(), Value()});
  return success();
}

/// _native_batch_norm_legit_functional(x, weight, bias, running_mean,
/// running_var, training, momentum, eps) -> (y, save_mean, save_rstd,
/// new_running_mean, new_running_var): a training-mode export. With
/// training, a BatchNormalization in training mode whose running-statistics
/// results are the new buffers (ONNX's momentum is 1 - torch's).
LogicalResult batchNormFunctional(AtenCall &call) {
  FailureOr<bool> training = call.flag(5, "training");
  FailureOr<BatchNormOperands> in = batchNormOperands(call);
  FailureOr<double> momentum = call.number(6, "momentum", 0.1);
  FailureOr<double> eps = call.number(7, "eps", 1e-5);
  if (failed(training) || failed(in) || failed(momentum) || failed(eps))
    return failure();
  OpBuilder &b = call.builder;
  FailureOr<BatchNormalizationOp> op = call.create<BatchNormalizationOp>(
      in->x, in->scale, in->bias, in->mean, in->var, b.getF32FloatAttr(*eps),
      b.getF32FloatAttr(1.0 - *momentum), b.getI64IntegerAttr(*training));
  if (failed(op))
    return failure();
  if (*training)
    call.setResults({op->getY(), Value(), Value(), op->getRunningStats()[0],
                     op->getRunningStats()[1]});
  else
    call.setResults({op->getY(), Value(), Value(), in->mean, in->var});
  return success();
}

/// native_layer_norm(x, normalized_shape, weight, bias, eps) ->
/// (y, mean, rstd).
LogicalResult layerNorm(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "input");
  FailureOr<SmallVector<int64_t>> shape = call.integers(1, "normalized_shape");
  FailureOr<double> eps = call.number(4, "eps", 1e-5);
  if (failed(x) || failed(shape) || failed(eps))
    return failure();
  Type element = AtenCall::elementTypeOf(*x);
  int64_t rank = AtenCall::rankOf(*x);
  int64_t axis = rank - static_cast<int64_t>(shape->size());
  if (axis < 0)
    return call.fail("normalized_shape has more dimensions than the input");
  FailureOr<Value> scale = call.has(2, "weight")
                               ? call.tensor(2, "weight")
                               : filled(call, *shape, 1.0, element);
  FailureOr<Value> bias = call.optionalTensor(3, "bias");
  if (failed(scale) || failed(bias))
    return failure();
  OpBuilder &b = call.builder;
  FailureOr<LayerNormalizationOp> op = call.create<LayerNormalizationOp>(
      *x, *scale, *bias, b.getI64IntegerAttr(axis), b.getF32FloatAttr(*eps),
      b.getI64IntegerAttr(1));
  if (failed(op))
    return failure();
  call.setResults({op->getY(), op->getMean(), op->getInvStdDev()});
  return success();
}

/// native_group_norm(x, weight, bias, N, C, HxW, group, eps) ->
/// (y, mean, rstd); only y is computed.
LogicalResult groupNorm(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "input");
  FailureOr<int64_t> groups = call.integer(6, "group");
  FailureOr<double> eps = call.number(7, "eps", 1e-5);
  if (failed(x) || failed(groups) || failed(eps))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  SmallVector<int64_t> channels{type.getDimSize(1)};
  FailureOr<Value> scale =
      call.has(1, "weight") ? call.tensor(1, "weight")
                            : filled(call, channels, 1.0, type.getElementType());
  FailureOr<Value> bias =
      call.has(2, "bias") ? call.tensor(2, "bias")
                          : filled(call, channels, 0.0, type.getElementType());
  if (failed(scale) || failed(bias))
    return failure();
  OpBuilder &b = call.builder;
  FailureOr<Value> y = call.value<GroupNormalizationOp>(
      *x, *scale, *bias, b.getF32FloatAttr(*eps), b.getI64IntegerAttr(*groups),
      b.getI64IntegerAttr(1));
  if (failed(y))
    return failure();
  call.setResults({*y, Value(), Value()});
  return success();
}

/// Window arguments: a list of one value per spatial dim (one value
/// repeated; an empty stride is the kernel).
FailureOr<SmallVector<int64_t>> window(AtenCall &call, unsigned i,
                                       StringRef name, int64_t spatial,
                                       std::optional<SmallVector<int64_t>> dflt) {
  FailureOr<SmallVector<int64_t>> values = call.integers(i, name, dflt);
  if (failed(values))
    return failure();
  if (values->size() == 1 && spatial > 1)
    values->assign(spatial, values->front());
  if (static_cast<int64_t>(values->size()) != spatial)
    return call.fail(name + " does not have one value per spatial dimension");
  return values;
}

/// max_pool{1,2,3}d_with_indices(x, kernel, stride, padding, dilation,
/// ceil_mode) -> (y, indices); amp's indices differ from torch's, so only y
/// is computed.
LogicalResult maxPool(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  int64_t spatial = AtenCall::rankOf(*x) - 2;
  FailureOr<SmallVector<int64_t>> kernel =
      window(call, 1, "kernel_size", spatial, std::nullopt);
  if (failed(kernel))
    return failure();
  FailureOr<SmallVector<int64_t>> stride =
      call.has(2, "stride") && !call.arg(2, "stride")->getAsArray()->empty()
          ? window(call, 2, "stride", spatial, std::nullopt)
          : FailureOr<SmallVector<int64_t>>(*kernel);
  FailureOr<SmallVector<int64_t>> padding =
      window(call, 3, "padding", spatial, SmallVector<int64_t>{0});
  FailureOr<SmallVector<int64_t>> dilation =
      window(call, 4, "dilation", spatial, SmallVector<int64_t>{1});
  FailureOr<bool> ceil = call.flag(5, "ceil_mode", false);
  if (failed(stride) || failed(padding) || failed(dilation) || failed(ceil))
    return failure();
  SmallVector<int64_t> pads(*padding);
  pads.append(padding->begin(), padding->end());
  OpBuilder &b = call.builder;
  FailureOr<MaxPoolOp> op = call.create<MaxPoolOp>(
      *x, StringAttr(), b.getI64IntegerAttr(*ceil),
      b.getDenseI64ArrayAttr(*dilation), b.getDenseI64ArrayAttr(*kernel),
      b.getDenseI64ArrayAttr(pads), IntegerAttr(),
      b.getDenseI64ArrayAttr(*stride));
  if (failed(op))
    return failure();
  call.setResults({op->getY(), Value()});
  return success();
}

/// avg_pool{1,2,3}d(x, kernel, stride, padding, ceil_mode,
/// count_include_pad, divisor_override).
LogicalResult avgPool(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  int64_t spatial = AtenCall::rankOf(*x) - 2;
  FailureOr<SmallVector<int64_t>> kernel =
      window(call, 1, "kernel_size", spatial, std::nullopt);
  if (failed(kernel))
    return failure();
  FailureOr<SmallVector<int64_t>> stride =
      call.has(2, "stride") && !call.arg(2, "stride")->getAsArray()->empty()
          ? window(call, 2, "stride", spatial, std::nullopt)
          : FailureOr<SmallVector<int64_t>>(*kernel);
  FailureOr<SmallVector<int64_t>> padding =
      window(call, 3, "padding", spatial, SmallVector<int64_t>{0});
  FailureOr<bool> ceil = call.flag(4, "ceil_mode", false);
  FailureOr<bool> includePad = call.flag(5, "count_include_pad", true);
  if (failed(stride) || failed(padding) || failed(ceil) || failed(includePad))
    return failure();
  if (call.has(6, "divisor_override"))
    return call.fail("divisor_override is not supported");
  SmallVector<int64_t> pads(*padding);
  pads.append(padding->begin(), padding->end());
  OpBuilder &b = call.builder;
  return call.finish(call.value<AveragePoolOp>(
      *x, StringAttr(), b.getI64IntegerAttr(*ceil),
      b.getI64IntegerAttr(*includePad), DenseI64ArrayAttr(),
      b.getDenseI64ArrayAttr(*kernel), b.getDenseI64ArrayAttr(pads),
      b.getDenseI64ArrayAttr(*stride)));
}

/// _adaptive_avg_pool2d(x, output_size): global pooling for 1x1, a plain
/// average pool where the input divides evenly.
LogicalResult adaptiveAvgPool(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> output = call.integers(1, "output_size");
  if (failed(x) || failed(output))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t spatial = type.getRank() - 2;
  if (static_cast<int64_t>(output->size()) != spatial)
    return call.fail("output_size does not have one value per spatial "
                     "dimension");
  if (llvm::all_of(*output, [](int64_t s) { return s == 1; })) {
    FailureOr<Value> y = call.value<GlobalAveragePoolOp>(*x);
    if (failed(y))
      return failure();
    call.setResult(*y);
    return success();
  }
  SmallVector<int64_t> kernel;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t in = type.getDimSize(d + 2);
    if (ShapedType::isDynamic(in) || (*output)[d] <= 0 ||
        in % (*output)[d] != 0)
      return call.fail("adaptive average pooling to a size that does not "
                       "divide the (static) input size is not supported");
    kernel.push_back(in / (*output)[d]);
  }
  OpBuilder &b = call.builder;
  return call.finish(call.value<AveragePoolOp>(
      *x, StringAttr(), IntegerAttr(), IntegerAttr(), DenseI64ArrayAttr(),
      b.getDenseI64ArrayAttr(kernel), DenseI64ArrayAttr(),
      b.getDenseI64ArrayAttr(kernel)));
}

template <typename OpTy>
LogicalResult softmax(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<int64_t> dim = call.integer(1, "dim");
  if (failed(x) || failed(dim))
    return failure();
  FailureOr<Value> input = x;
  if (Type type = call.resultElementType())
    input = call.castTo(*x, type); // half_to_float
  if (failed(input))
    return failure();
  return call.finish(call.value<OpTy>(*input, call.builder.getI64IntegerAttr(*dim)));
}

/// mean.dim / sum.dim_IntList / amax / amin (x, dims, keepdim, dtype) and
/// their all-element forms.
template <typename OpTy>
LogicalResult reduce(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  bool allDims = !call.has(1, "dim") ||
                 (call.arg(1, "dim")->getAsArray() &&
                  call.arg(1, "dim")->getAsArray()->empty());
  // sum.default / mean.default take (self, dtype).
  bool defaultForm = call.getTarget().ends_with(".default") &&
                     !call.getTarget().starts_with("aten.amax") &&
                     !call.getTarget().starts_with("aten.amin");
  if (defaultForm)
    allDims = true;
  FailureOr<bool> keepdim =
      defaultForm ? FailureOr<bool>(false) : call.flag(2, "keepdim", false);
  if (failed(keepdim))
    return failure();
  Value input = *x;
  if (Type type = call.resultElementType()) {
    FailureOr<Value> cast = call.castTo(input, type);
    if (failed(cast))
      return failure();
    input = *cast;
  }
  Value axes = call.none();
  if (!allDims) {
    FailureOr<SmallVector<int64_t>> dims = call.integers(1, "dim");
    if (failed(dims))
      return failure();
    axes = call.i64s(*dims);
  }
  OpBuilder &b = call.builder;
  return call.finish(call.value<OpTy>(input, axes,
                                        b.getI64IntegerAttr(*keepdim),
                                        b.getI64IntegerAttr(0)));
}

/// any.dim / any.dims / any.default: a max over the values as 0/1.
LogicalResult any(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  OpBuilder &b = call.builder;
  FailureOr<Value> flags = call.castTo(*x, b.getI1Type());
  if (failed(flags))
    return failure();
  FailureOr<Value> numbers = call.castTo(*flags, b.getIntegerType(32));
  if (failed(numbers))
    return failure();
  bool allDims = call.getTarget() == "aten.any.default";
  Value axes = call.none();
  if (!allDims) {
    FailureOr<SmallVector<int64_t>> dims = call.integers(1, "dim");
    if (failed(dims))
      return failure();
    axes = call.i64s(*dims);
  }
  FailureOr<bool> keepdim =
      allDims ? FailureOr<bool>(false) : call.flag(2, "keepdim", false);
  if (failed(keepdim))
    return failure();
  FailureOr<Value> reduced = call.value<ReduceMaxOp>(
      *numbers, axes, b.getI64IntegerAttr(*keepdim), b.getI64IntegerAttr(0));
  if (failed(reduced))
    return failure();
  return call.finish(call.castTo(*reduced, b.getI1Type()));
}

template <typename OpTy>
LogicalResult argReduce(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  if (!call.has(1, "dim"))
    return call.fail("argmax/argmin over all elements (no dim) is not "
                     "supported");
  FailureOr<int64_t> dim = call.integer(1, "dim");
  FailureOr<bool> keepdim = call.flag(2, "keepdim", false);
  if (failed(dim) || failed(keepdim))
    return failure();
  OpBuilder &b = call.builder;
  return call.finish(call.value<OpTy>(*x, b.getI64IntegerAttr(*dim),
                       b.getI64IntegerAttr(*keepdim), b.getI64IntegerAttr(0)));
}

const AtenRule kRules[] = {
    {"aten._native_batch_norm_legit_no_training.default",
     "amp.batch_normalization", batchNormInference},
    {"aten._native_batch_norm_legit_functional.default",
     "amp.batch_normalization (training mode; train_step only)",
     batchNormFunctional},
    {"aten.native_layer_norm.default", "amp.layer_normalization", layerNorm},
    {"aten.native_group_norm.default", "amp.group_normalization", groupNorm},
    {"aten.max_pool1d_with_indices.default", "amp.max_pool", maxPool},
    {"aten.max_pool2d_with_indices.default", "amp.max_pool", maxPool},
    {"aten.max_pool3d_with_indices.default", "amp.max_pool", maxPool},
    {"aten.avg_pool1d.default", "amp.average_pool", avgPool},
    {"aten.avg_pool2d.default", "amp.average_pool", avgPool},
    {"aten.avg_pool3d.default", "amp.average_pool", avgPool},
    {"aten._adaptive_avg_pool2d.default",
     "amp.global_average_pool / amp.average_pool", adaptiveAvgPool},
    {"aten._adaptive_avg_pool1d.default",
     "amp.global_average_pool / amp.average_pool", adaptiveAvgPool},
    {"aten._softmax.default", "amp.softmax", softmax<SoftmaxOp>},
    {"aten._log_softmax.default", "amp.log_softmax", softmax<LogSoftmaxOp>},
    {"aten.mean.dim", "amp.reduce_mean", reduce<ReduceMeanOp>},
    {"aten.mean.default", "amp.reduce_mean", reduce<ReduceMeanOp>},
    {"aten.sum.dim_IntList", "amp.reduce_sum", reduce<ReduceSumOp>},
    {"aten.sum.default", "amp.reduce_sum", reduce<ReduceSumOp>},
    {"aten.prod.dim_int", "amp.reduce_prod", reduce<ReduceProdOp>},
    {"aten.amax.default", "amp.reduce_max", reduce<ReduceMaxOp>},
    {"aten.amin.default", "amp.reduce_min", reduce<ReduceMinOp>},
    {"aten.any.dim", "amp.reduce_max", any},
    {"aten.any.dims", "amp.reduce_max", any},
    {"aten.any.default", "amp.reduce_max", any},
    {"aten.argmax.default", "amp.arg_max", argReduce<ArgMaxOp>},
    {"aten.argmin.default", "amp.arg_min", argReduce<ArgMinOp>},
};

} // namespace

ArrayRef<AtenRule> torch_import::getNormalizationRules() { return kRules; }
