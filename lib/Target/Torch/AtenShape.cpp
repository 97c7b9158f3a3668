//===- AtenShape.cpp - views, concatenation, slicing, sizes, constants ----===//
//
// Symbolic sizes (sym_size, and arithmetic on them) are 1-element i64
// tensors computed at run time, so dynamic dimensions stay dynamic.
//
//===----------------------------------------------------------------------===//

#include "AtenCall.h"

#include <limits>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::torch_import;

namespace {

LogicalResult view(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<Value> shape = call.sizes(1, "size");
  if (failed(x) || failed(shape))
    return failure();
  // torch's sizes are literal: a 0 is an empty dimension (allowzero).
  return call.finish(call.value<ReshapeOp>(*x, *shape,
                                          call.builder.getI64IntegerAttr(1)));
}

LogicalResult permute(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> dims = call.integers(1, "dims");
  if (failed(x) || failed(dims))
    return failure();
  int64_t rank = AtenCall::rankOf(*x);
  for (int64_t &d : *dims)
    if (d < 0)
      d += rank;
  return call.finish(call.value<TransposeOp>(
                        *x, call.builder.getDenseI64ArrayAttr(*dims)));
}

LogicalResult unsqueeze(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<int64_t> dim = call.integer(1, "dim");
  if (failed(x) || failed(dim))
    return failure();
  int64_t axis = *dim < 0 ? *dim + AtenCall::rankOf(*x) + 1 : *dim;
  return call.finish(call.value<UnsqueezeOp>(*x, call.i64s({axis})));
}

/// squeeze.dims / squeeze.dim / squeeze.default: torch skips dimensions
/// that are not 1; a dynamic one is squeezed (checked at run time).
LogicalResult squeeze(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  SmallVector<int64_t> axes;
  if (call.has(1, "dim")) {
    FailureOr<SmallVector<int64_t>> dims = call.integers(1, "dim");
    if (failed(dims))
      return failure();
    for (int64_t d : *dims) {
      int64_t axis = d < 0 ? d + type.getRank() : d;
      if (axis < 0 || axis >= type.getRank())
        return call.fail("dim " + std::to_string(d) + " is out of range");
      if (type.getDimSize(axis) != 1 && !type.isDynamicDim(axis))
        continue;
      axes.push_back(axis);
    }
  } else {
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.getDimSize(i) == 1)
        axes.push_back(i);
  }
  if (axes.empty()) {
    call.setResult(*x);
    return success();
  }
  return call.finish(call.value<SqueezeOp>(*x, call.i64s(axes)));
}

/// expand(x, sizes): -1 keeps a size; amp's Expand broadcasts both ways,
/// so -1 becomes 1.
LogicalResult expand(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  const llvm::json::Value *sizes = call.arg(1, "size");
  const llvm::json::Array *list = sizes ? sizes->getAsArray() : nullptr;
  if (!list)
    return call.fail("size must be a list");
  bool literal = llvm::all_of(*list, [](const llvm::json::Value &v) {
    return v.getAsInteger().has_value();
  });
  FailureOr<Value> shape;
  if (literal) {
    SmallVector<int64_t> values;
    for (const llvm::json::Value &v : *list)
      values.push_back(*v.getAsInteger() == -1 ? 1 : *v.getAsInteger());
    shape = call.i64s(values);
  } else {
    shape = call.sizes(1, "size");
    if (failed(shape))
      return failure();
    // -1 entries as 1: max(size, 1) keeps the others (sizes are >= 0).
    shape = call.value<MaxOp>(ValueRange{*shape, call.i64s({1})});
  }
  if (failed(shape))
    return failure();
  return call.finish(call.value<ExpandOp>(*x, *shape));
}

LogicalResult cat(AtenCall &call) {
  FailureOr<SmallVector<Value>> inputs = call.tensors(0, "tensors");
  FailureOr<int64_t> dim = call.integer(1, "dim", 0);
  if (failed(inputs) || failed(dim))
    return failure();
  if (inputs->empty())
    return call.fail("cat of no tensors");
  // The promoted dtype torch recorded.
  if (Type type = call.resultElementType())
    for (Value &v : *inputs) {
      FailureOr<Value> cast = call.castTo(v, type);
      if (failed(cast))
        return failure();
      v = *cast;
    }
  int64_t rank = AtenCall::rankOf(inputs->front());
  int64_t axis = *dim < 0 ? *dim + rank : *dim;
  return call.finish(call.value<ConcatOp>(ValueRange(*inputs),
                                         call.builder.getI64IntegerAttr(axis)));
}

/// A start/end argument: an int, a symbolic int or None (`dflt`).
FailureOr<Value> bound(AtenCall &call, unsigned i, StringRef name,
                       int64_t dflt) {
  const llvm::json::Value *value = call.arg(i, name);
  if (!value || value->kind() == llvm::json::Value::Null)
    return call.i64s({dflt});
  if (std::optional<int64_t> n = value->getAsInteger())
    return call.i64s({*n});
  FailureOr<Value> v = call.operand(i, name, call.builder.getIntegerType(64));
  if (failed(v))
    return failure();
  return call.value<ReshapeOp>(*v, call.i64s({1}),
                               call.builder.getI64IntegerAttr(0));
}

LogicalResult slice(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<int64_t> dim = call.integer(1, "dim", 0);
  FailureOr<int64_t> step = call.integer(4, "step", 1);
  if (failed(x) || failed(dim) || failed(step))
    return failure();
  if (*step < 1)
    return call.fail("slice step must be positive");
  FailureOr<Value> start = bound(call, 2, "start", 0);
  FailureOr<Value> end =
      bound(call, 3, "end", std::numeric_limits<int64_t>::max());
  if (failed(start) || failed(end))
    return failure();
  return call.finish(call.value<SliceOp>(*x, *start, *end, call.i64s({*dim}),
                                        call.i64s({*step})));
}

/// select.int(x, dim, index): a gather with a scalar index.
LogicalResult select(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<int64_t> dim = call.integer(1, "dim");
  if (failed(x) || failed(dim))
    return failure();
  FailureOr<Value> index =
      call.operand(2, "index", call.builder.getIntegerType(64));
  if (failed(index))
    return failure();
  return call.finish(call.value<GatherOp>(*x, *index,
                                         call.builder.getI64IntegerAttr(*dim)));
}

LogicalResult indexSelect(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<int64_t> dim = call.integer(1, "dim");
  FailureOr<Value> index = call.tensor(2, "index");
  if (failed(x) || failed(dim) || failed(index))
    return failure();
  return call.finish(call.value<GatherOp>(*x, *index,
                                         call.builder.getI64IntegerAttr(*dim)));
}

/// index.Tensor(x, indices): one index tensor, after leading Nones, is a
/// gather on that axis.
LogicalResult index(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  if (failed(x))
    return failure();
  const llvm::json::Value *value = call.arg(1, "indices");
  const llvm::json::Array *list = value ? value->getAsArray() : nullptr;
  if (!list)
    return call.fail("indices must be a list");
  int64_t axis = -1;
  for (auto [i, entry] : llvm::enumerate(*list)) {
    if (entry.kind() == llvm::json::Value::Null)
      continue;
    if (axis >= 0)
      return call.fail("indexing with more than one index tensor is not "
                       "supported");
    axis = i;
  }
  if (axis < 0)
    return call.fail("indexing without an index tensor");
  FailureOr<Value> indices = call.tensorAt((*list)[axis], "the index");
  if (failed(indices))
    return failure();
  if (AtenCall::elementTypeOf(*indices).isInteger(1))
    return call.fail("indexing with a boolean mask is not supported");
  return call.finish(call.value<GatherOp>(*x, *indices,
                                         call.builder.getI64IntegerAttr(axis)));
}

LogicalResult splitWithSizes(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> sizes = call.integers(1, "split_sizes");
  FailureOr<int64_t> dim = call.integer(2, "dim", 0);
  if (failed(x) || failed(sizes) || failed(dim))
    return failure();
  OpBuilder &b = call.builder;
  FailureOr<SplitOp> op = call.create<SplitOp>(
      *x, call.i64s(*sizes), b.getI64IntegerAttr(*dim),
      b.getI64IntegerAttr(sizes->size()));
  if (failed(op))
    return failure();
  call.setResults(op->getOutputs());
  return success();
}

LogicalResult constantPad(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> pad = call.integers(1, "pad");
  if (failed(x) || failed(pad))
    return failure();
  int64_t rank = AtenCall::rankOf(*x);
  if (pad->size() % 2 || static_cast<int64_t>(pad->size()) > 2 * rank)
    return call.fail("pad must hold (begin, end) pairs for at most every "
                     "dimension");
  // torch pads from the last dimension backwards.
  SmallVector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i < pad->size() / 2; ++i) {
    int64_t axis = rank - 1 - i;
    pads[axis] = (*pad)[2 * i];
    pads[rank + axis] = (*pad)[2 * i + 1];
  }
  FailureOr<Value> value =
      call.operand(2, "value", AtenCall::elementTypeOf(*x));
  if (!call.has(2, "value"))
    value = call.scalar(0.0, AtenCall::elementTypeOf(*x));
  if (failed(value))
    return failure();
  return call.finish(call.value<PadOp>(*x, call.i64s(pads), *value,
                                      call.none(),
                                      call.builder.getStringAttr("constant")));
}

/// full(size, value, dtype=...) / full_like(x, value, dtype=...) /
/// scalar_tensor(value, dtype=...): a scalar expanded to the size.
LogicalResult full(AtenCall &call) {
  Type type = call.resultElementType();
  if (!type)
    return call.fail("the result's dtype is not known");
  StringRef target = call.getTarget();
  bool isScalarTensor = target == "aten.scalar_tensor.default";
  FailureOr<Value> fill =
      call.operand(isScalarTensor ? 0 : 1, isScalarTensor ? "s" : "fill_value",
                   type);
  if (failed(fill))
    return failure();
  if (isScalarTensor) {
    call.setResult(*fill);
    return success();
  }
  FailureOr<Value> shape;
  if (target == "aten.full_like.default") {
    FailureOr<Value> like = call.tensor(0, "self");
    if (failed(like))
      return failure();
    shape = call.value<ShapeOp>(*like, IntegerAttr(), IntegerAttr());
  } else {
    shape = call.sizes(0, "size");
  }
  if (failed(shape))
    return failure();
  return call.finish(call.value<ExpandOp>(*fill, *shape));
}

/// arange.start_step(start, end, step, dtype=...) and its shorter forms.
LogicalResult arange(AtenCall &call) {
  Type type = call.resultElementType();
  if (!type)
    return call.fail("the result's dtype is not known");
  StringRef target = call.getTarget();
  FailureOr<Value> start, end, step;
  if (target == "aten.arange.default") {
    start = call.scalar(0, type);
    end = call.operand(0, "end", type);
    step = call.scalar(1, type);
  } else {
    start = call.operand(0, "start", type);
    end = call.operand(1, "end", type);
    step = target == "aten.arange.start_step" && call.has(2, "step")
               ? call.operand(2, "step", type)
               : FailureOr<Value>(call.scalar(1, type));
  }
  if (failed(start) || failed(end) || failed(step))
    return failure();
  return call.finish(call.value<RangeOp>(*start, *end, *step));
}

/// sym_size.int(x, dim): the size at run time, as a symbolic int.
LogicalResult symSize(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<int64_t> dim = call.integer(1, "dim");
  if (failed(x) || failed(dim))
    return failure();
  int64_t axis = *dim < 0 ? *dim + AtenCall::rankOf(*x) : *dim;
  FailureOr<Value> size = call.value<ShapeOp>(
      *x, call.builder.getI64IntegerAttr(axis),
      call.builder.getI64IntegerAttr(axis + 1));
  if (failed(size))
    return failure();
  call.setSymIntResult(*size);
  return success();
}

/// Arithmetic on symbolic ints (operator.mul, ...): on 1-element tensors.
/// floordiv of sizes (non-negative) is amp's truncating integer Div.
template <typename OpTy>
LogicalResult symArith(AtenCall &call) {
  Type i64 = call.builder.getIntegerType(64);
  FailureOr<Value> a = call.operand(0, "", i64);
  FailureOr<Value> b = call.operand(1, "", i64);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Value> result = call.value<OpTy>(*a, *b);
  if (failed(result))
    return failure();
  FailureOr<Value> one = call.value<ReshapeOp>(
      *result, call.i64s({1}), call.builder.getI64IntegerAttr(0));
  if (failed(one))
    return failure();
  call.setSymIntResult(*one);
  return success();
}


/// as_strided(x, size, stride, offset): only the views that are a reshape
/// of the whole tensor (contiguous strides, offset 0); others need the
/// storage, which a value-semantics graph does not have.
LogicalResult asStrided(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> stride = call.integers(2, "stride");
  FailureOr<int64_t> offset = call.integer(3, "storage_offset", 0);
  if (failed(x) || failed(stride) || failed(offset))
    return failure();
  const llvm::json::Value *sizeArg = call.arg(1, "size");
  const llvm::json::Array *sizes = sizeArg ? sizeArg->getAsArray() : nullptr;
  auto unsupported = [&] {
    return call.fail("as_strided is supported only as a reshape of the whole "
                     "tensor (contiguous strides, offset 0)");
  };
  if (!sizes || sizes->size() != stride->size() || *offset != 0)
    return unsupported();
  // Contiguous strides for the sizes (those of size-1 dimensions do not
  // matter); a symbolic size makes the strides to its left unknown, so
  // only size-1 dimensions may follow it leftwards.
  auto type = cast<RankedTensorType>(x->getType());
  std::optional<int64_t> expected = 1;
  for (int64_t i = static_cast<int64_t>(sizes->size()) - 1; i >= 0; --i) {
    std::optional<int64_t> size = (*sizes)[i].getAsInteger();
    if (size && *size == 1)
      continue;
    if (!expected || (*stride)[i] != *expected)
      return unsupported();
    if (size)
      *expected *= *size;
    else
      expected.reset();
  }
  if (expected && type.hasStaticShape() && *expected != type.getNumElements())
    return unsupported();
  FailureOr<Value> shape = call.sizes(1, "size");
  if (failed(shape))
    return failure();
  return call.finish(call.value<ReshapeOp>(*x, *shape,
                                          call.builder.getI64IntegerAttr(1)));
}

/// slice_scatter(x, src, dim, start, end, step=1): the slices of x around
/// [start, end) concatenated with src.
LogicalResult sliceScatter(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "self");
  FailureOr<Value> src = call.tensor(1, "src");
  FailureOr<int64_t> dim = call.integer(2, "dim", 0);
  FailureOr<int64_t> step = call.integer(5, "step", 1);
  if (failed(x) || failed(src) || failed(dim) || failed(step))
    return failure();
  if (*step != 1)
    return call.fail("slice_scatter with a step other than 1 is not "
                     "supported");
  int64_t rank = AtenCall::rankOf(*x);
  int64_t axis = *dim < 0 ? *dim + rank : *dim;
  FailureOr<Value> start = bound(call, 3, "start", 0);
  FailureOr<Value> end =
      bound(call, 4, "end", std::numeric_limits<int64_t>::max());
  if (failed(start) || failed(end))
    return failure();
  Value axes = call.i64s({axis});
  FailureOr<Value> before =
      call.value<SliceOp>(*x, call.i64s({0}), *start, axes, call.none());
  FailureOr<Value> after = call.value<SliceOp>(
      *x, *end, call.i64s({std::numeric_limits<int64_t>::max()}), axes,
      call.none());
  if (failed(before) || failed(after))
    return failure();
  return call.finish(call.value<ConcatOp>(ValueRange{*before, *src, *after},
                                         call.builder.getI64IntegerAttr(axis)));
}

LogicalResult nothing(AtenCall &) { return success(); }

const AtenRule kRules[] = {
    {"aten.view.default", "amp.reshape", view},
    {"aten._unsafe_view.default", "amp.reshape", view},
    {"aten.reshape.default", "amp.reshape", view},
    {"aten.permute.default", "amp.transpose", permute},
    {"aten.unsqueeze.default", "amp.unsqueeze", unsqueeze},
    {"aten.squeeze.dims", "amp.squeeze", squeeze},
    {"aten.squeeze.dim", "amp.squeeze", squeeze},
    {"aten.squeeze.default", "amp.squeeze", squeeze},
    {"aten.expand.default", "amp.expand", expand},
    {"aten.cat.default", "amp.concat", cat},
    {"aten.slice.Tensor", "amp.slice", slice},
    {"aten.select.int", "amp.gather", select},
    {"aten.index_select.default", "amp.gather", indexSelect},
    {"aten.index.Tensor", "amp.gather (one index tensor)", index},
    {"aten.as_strided.default", "amp.reshape (contiguous views)", asStrided},
    {"aten.slice_scatter.default", "amp.slice, amp.concat", sliceScatter},
    {"aten.split_with_sizes.default", "amp.split", splitWithSizes},
    {"aten.constant_pad_nd.default", "amp.pad", constantPad},
    {"aten.full.default", "amp.expand", full},
    {"aten.full_like.default", "amp.shape, amp.expand", full},
    {"aten.scalar_tensor.default", "amp.constant", full},
    {"aten.arange.default", "amp.range", arange},
    {"aten.arange.start", "amp.range", arange},
    {"aten.arange.start_step", "amp.range", arange},
    {"aten.sym_size.int", "amp.shape", symSize},
    {"operator.mul", "amp.mul (symbolic sizes)", symArith<MulOp>},
    {"operator.add", "amp.add (symbolic sizes)", symArith<AddOp>},
    {"operator.sub", "amp.sub (symbolic sizes)", symArith<SubOp>},
    {"operator.floordiv", "amp.div (symbolic sizes)", symArith<DivOp>},
    {"aten._assert_tensor_metadata.default", "(none: an assertion)", nothing},
    {"aten._assert_scalar.default", "(none: an assertion)", nothing},
    {"aten.sym_constrain_range_for_size.default", "(none: an assertion)",
     nothing},
};

} // namespace

ArrayRef<AtenRule> torch_import::getShapeRules() { return kRules; }
