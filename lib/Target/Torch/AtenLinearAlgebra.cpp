//===- AtenLinearAlgebra.cpp - mm, bmm, addmm, convolution, embedding -----===//

#include "AtenCall.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::torch_import;

namespace {

LogicalResult matmul(AtenCall &call) {
  FailureOr<Value> a = call.tensor(0, "self");
  FailureOr<Value> b = call.tensor(1, "mat2");
  if (failed(a) || failed(b))
    return failure();
  return call.finish(call.value<MatMulOp>(*a, *b));
}

/// addmm(bias, a, b, beta, alpha) = beta * bias + alpha * (a @ b): Gemm.
LogicalResult addmm(AtenCall &call) {
  FailureOr<Value> bias = call.tensor(0, "self");
  FailureOr<Value> a = call.tensor(1, "mat1");
  FailureOr<Value> b = call.tensor(2, "mat2");
  FailureOr<double> beta = call.number(3, "beta", 1.0);
  FailureOr<double> alpha = call.number(4, "alpha", 1.0);
  if (failed(bias) || failed(a) || failed(b) || failed(beta) || failed(alpha))
    return failure();
  OpBuilder &b_ = call.builder;
  return call.finish(call.value<GemmOp>(
      *a, *b, *bias, b_.getF32FloatAttr(*alpha), b_.getF32FloatAttr(*beta),
      b_.getI64IntegerAttr(0), b_.getI64IntegerAttr(0)));
}

/// convolution(input, weight, bias, stride, padding, dilation, transposed,
/// output_padding, groups).
LogicalResult convolution(AtenCall &call) {
  FailureOr<Value> x = call.tensor(0, "input");
  FailureOr<Value> w = call.tensor(1, "weight");
  FailureOr<Value> bias = call.optionalTensor(2, "bias");
  if (failed(x) || failed(w) || failed(bias))
    return failure();
  int64_t spatial = AtenCall::rankOf(*x) - 2;
  if (spatial < 1)
    return call.fail("the input of a convolution needs a batch, a channel "
                     "and at least one spatial dimension");
  auto expand = [&](unsigned i, StringRef name,
                    int64_t dflt) -> FailureOr<SmallVector<int64_t>> {
    FailureOr<SmallVector<int64_t>> values =
        call.integers(i, name, SmallVector<int64_t>{dflt});
    if (failed(values))
      return failure();
    if (values->size() == 1 && spatial > 1)
      values->assign(spatial, values->front());
    if (static_cast<int64_t>(values->size()) != spatial)
      return call.fail(name + " has " + std::to_string(values->size()) +
                       " values for " + std::to_string(spatial) +
                       " spatial dimensions");
    return values;
  };
  FailureOr<SmallVector<int64_t>> stride = expand(3, "stride", 1);
  FailureOr<SmallVector<int64_t>> padding = expand(4, "padding", 0);
  FailureOr<SmallVector<int64_t>> dilation = expand(5, "dilation", 1);
  FailureOr<bool> transposed = call.flag(6, "transposed", false);
  FailureOr<SmallVector<int64_t>> outputPadding = expand(7, "output_padding", 0);
  FailureOr<int64_t> groups = call.integer(8, "groups", 1);
  if (failed(stride) || failed(padding) || failed(dilation) ||
      failed(transposed) || failed(outputPadding) || failed(groups))
    return failure();
  SmallVector<int64_t> pads(*padding);
  pads.append(padding->begin(), padding->end());
  OpBuilder &b = call.builder;
  FailureOr<Value> result;
  if (*transposed) {
    result = call.value<ConvTransposeOp>(
        *x, *w, *bias, StringAttr(), b.getDenseI64ArrayAttr(*dilation),
        b.getI64IntegerAttr(*groups), DenseI64ArrayAttr(),
        b.getDenseI64ArrayAttr(*outputPadding), DenseI64ArrayAttr(),
        b.getDenseI64ArrayAttr(pads), b.getDenseI64ArrayAttr(*stride));
  } else {
    if (llvm::any_of(*outputPadding, [](int64_t p) { return p != 0; }))
      return call.fail("output_padding of a convolution that is not "
                       "transposed");
    result = call.value<ConvOp>(*x, *w, *bias, StringAttr(),
                                b.getDenseI64ArrayAttr(*dilation),
                                b.getI64IntegerAttr(*groups),
                                DenseI64ArrayAttr(), b.getDenseI64ArrayAttr(pads),
                                b.getDenseI64ArrayAttr(*stride));
  }
  if (failed(result))
    return failure();
  call.setResult(*result);
  return success();
}

/// embedding(weight, indices, padding_idx, scale_grad, sparse): Gather.
LogicalResult embedding(AtenCall &call) {
  FailureOr<Value> weight = call.tensor(0, "weight");
  FailureOr<Value> indices = call.tensor(1, "indices");
  if (failed(weight) || failed(indices))
    return failure();
  return call.finish(call.value<GatherOp>(
      *weight, *indices, call.builder.getI64IntegerAttr(0)));
}

const AtenRule kRules[] = {
    {"aten.mm.default", "amp.matmul", matmul},
    {"aten.bmm.default", "amp.matmul", matmul},
    {"aten.matmul.default", "amp.matmul", matmul},
    {"aten.addmm.default", "amp.gemm", addmm},
    {"aten.convolution.default", "amp.conv / amp.conv_transpose",
     convolution},
    {"aten.embedding.default", "amp.gather", embedding},
};

} // namespace

ArrayRef<AtenRule> torch_import::getLinearAlgebraRules() { return kRules; }
