// Diagnostics of the train-step builder and its options.
//
// RUN: split-file %s %t
// RUN: not amp-opt %t/no-rule.mlir --train --amp-opt-level=0 2>&1 | FileCheck %s --check-prefix=NORULE
// RUN: not amp-opt %t/no-params.mlir --train --amp-opt-level=0 2>&1 | FileCheck %s --check-prefix=NOPARAMS
// RUN: not amp-opt %t/dropout.mlir --train --amp-opt-level=0 2>&1 | FileCheck %s --check-prefix=DROPOUT
// RUN: amp-opt %t/conv.mlir --train --amp-opt-level=0 2>/dev/null | FileCheck %s --check-prefix=CONVOK
// RUN: amp-opt %t/conv.mlir --train --amp-opt-level=0 --static-batch=2 2>/dev/null | FileCheck %s --check-prefix=CONVSTATIC
// RUN: not amp-opt %t/vector.mlir --train --amp-opt-level=0 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not amp-opt %t/vector.mlir --train --amp-opt-level=0 --loss=output 2>&1 | FileCheck %s --check-prefix=OUTPUT
// RUN: not amp-opt %t/no-params.mlir --train --frozen='(' 2>&1 | FileCheck %s --check-prefix=REGEX
// RUN: not amp-opt %t/no-params.mlir --train --loss-scale=sometimes 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not amp-opt %t/no-params.mlir --train --loss-scale=static:-1 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not amp-opt %t/no-params.mlir --train --lr-schedule=linear 2>&1 | FileCheck %s --check-prefix=TOTAL
// RUN: not amp-opt %t/no-params.mlir --train --optimizer=adamw --nesterov 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not amp-opt %t/no-params.mlir --train --loss-scale-backoff=2 2>&1 | FileCheck %s --check-prefix=SCALER
// RUN: not amp-opt %t/no-params.mlir --train -o %t/out.onnx 2>&1 | FileCheck %s --check-prefix=ONNXOUT

// NORULE: error: (Det): no gradient rule for input 0, but the loss depends on trainable values through it (freeze what feeds it with --frozen, or file the missing rule)
// NOPARAMS: error: nothing to train: no float initializer reaches the loss
// DROPOUT: error: 'amp.dropout' op has a training_mode that is not a constant; amp decides the mode per function
// A convolution's weight gradient needs no static batch: dY gets its
// static (filters, output) sizes back through a Reshape that keeps the batch.
// CONVOK-LABEL: func.func @train_step(
// CONVOK: %[[DY:.*]] = amp.reshape {{.*}} -> tensor<?x2x4x4xf32>
// CONVOK: amp.conv_weight_grad %arg2, %[[DY]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x1x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<2x1x3x3xf32>
// CONVSTATIC-LABEL: func.func @train_step(
// CONVSTATIC: amp.conv_weight_grad %arg2, %{{.*}} {{.*}} : (tensor<2x1x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x1x3x3xf32>
// RANK: error: --loss=cross-entropy needs (N, C, ...) logits as the first output; it has type 'tensor<?xf32>'
// OUTPUT: error: --loss=output needs a scalar loss as the model's first output; it has type 'tensor<?xf32>'
// REGEX: error: --frozen: invalid regular expression '('
// MODE: error: --loss-scale must be dynamic, none or static:S, got 'sometimes'
// STATIC: error: --loss-scale=static:S needs a number S > 0, got 'static:-1'
// TOTAL: error: --lr-schedule=linear/cosine needs --total-steps greater than --warmup-steps
// NESTEROV: error: --nesterov applies to sgd/momentum, not adamw
// SCALER: error: invalid loss-scale options
// ONNXOUT: error: --train writes MLIR

//--- no-rule.mlir
func.func @main(%x: tensor<?x4x4xf32>) -> tensor<?x4xf32> {
  %w = amp.constant {amp.initializer} dense<0.5> : tensor<4xf32> loc("w")
  %axis = amp.constant dense<1> : tensor<1xi64>
  %m = amp.mul %x, %w : (tensor<?x4x4xf32>, tensor<4xf32>) -> tensor<?x4x4xf32>
  %d = amp.det %m : (tensor<?x4x4xf32>) -> tensor<?xf32>
  %u = amp.unsqueeze %d, %axis : (tensor<?xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %c = amp.mul %u, %w : (tensor<?x1xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %c : tensor<?x4xf32>
}

//--- no-params.mlir
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %w = amp.constant dense<0.5> : tensor<4xf32>
  %m = amp.mul %x, %w : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %m : tensor<?x4xf32>
}

//--- dropout.mlir
func.func @main(%x: tensor<?x4xf32>, %train: tensor<i1>) -> tensor<?x4xf32> {
  %w = amp.constant {amp.initializer} dense<0.5> : tensor<4xf32> loc("w")
  %ratio = amp.constant dense<0.5> : tensor<f32>
  %m = amp.mul %x, %w : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %d, %mask = amp.dropout %m, %ratio, %train : (tensor<?x4xf32>, tensor<f32>, tensor<i1>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
  return %d : tensor<?x4xf32>
}

//--- conv.mlir
func.func @main(%x: tensor<?x1x4x4xf32>) -> tensor<?x2xf32> {
  %w = amp.constant {amp.initializer} dense<0.5> : tensor<2x1x3x3xf32> loc("conv.weight")
  %none = amp.none
  %c = amp.conv %x, %w, %none {pads = array<i64: 1, 1, 1, 1>} : (tensor<?x1x4x4xf32>, tensor<2x1x3x3xf32>, none) -> tensor<?x2x4x4xf32>
  %g = amp.global_average_pool %c : (tensor<?x2x4x4xf32>) -> tensor<?x2x1x1xf32>
  %f = amp.flatten %g : (tensor<?x2x1x1xf32>) -> tensor<?x2xf32>
  return %f : tensor<?x2xf32>
}

//--- vector.mlir
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %w = amp.constant {amp.initializer} dense<0.5> : tensor<1xf32> loc("w")
  %m = amp.mul %x, %w : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  return %m : tensor<?xf32>
}
