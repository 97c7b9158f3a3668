// The train-step builder (amp-opt --train) on a small MLP: signatures and
// names, the backward GEMMs, every optimizer, schedule, clipping and
// loss-scale option. Numerics are checked against PyTorch in
// test/python/training.
//
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 2>/dev/null | FileCheck %s --check-prefix=SGD
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --optimizer=momentum --nesterov 2>/dev/null | FileCheck %s --check-prefix=MOM
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --optimizer=adamw 2>/dev/null | FileCheck %s --check-prefix=ADAM
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --loss=mse 2>/dev/null | FileCheck %s --check-prefix=MSE
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --lr-schedule=cosine --warmup-steps=10 --total-steps=100 2>/dev/null | FileCheck %s --check-prefix=COS
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --lr-schedule=step --lr-step-size=30 2>/dev/null | FileCheck %s --check-prefix=STEP
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --clip-grad-norm=1.0 --loss-scale=dynamic 2>/dev/null | FileCheck %s --check-prefix=CLIP
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-type=f16 2>/dev/null | FileCheck %s --check-prefix=F16
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-type=fp16 2>/dev/null | FileCheck %s --check-prefix=F16
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-type=float16 2>/dev/null | FileCheck %s --check-prefix=F16
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-type=bf16 2>/dev/null | FileCheck %s --check-prefix=BF16
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-type=f16 --loss-scale=static:1024 2>/dev/null | FileCheck %s --check-prefix=STATIC
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-type=f16 --loss-scale-hysteresis=3 2>/dev/null | FileCheck %s --check-prefix=HYST
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --frozen='fc1\..*' 2>/dev/null | FileCheck %s --check-prefix=FROZEN
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --static-batch=8 --split-step 2>/dev/null | FileCheck %s --check-prefix=SPLIT
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-type=f16 --static-batch=8 --split-step 2>/dev/null | FileCheck %s --check-prefix=SPLIT16
// RUN: amp-opt %S/Inputs/dropout.mlir --train --amp-opt-level=0 2>/dev/null | FileCheck %s --check-prefix=DROP
// RUN: amp-opt %S/Inputs/dropout.mlir --train --amp-type=f16 --split-step --static-batch=2 2>/dev/null | FileCheck %s --check-prefix=DROP16

// @main takes the parameters as arguments; the train step threads them.
// SGD-LABEL: func.func @main(%arg0: tensor<5x4xf32> {amp.name = "fc1.weight", amp.role = "param"}, %arg1: tensor<5xf32> {amp.name = "fc1.bias", amp.role = "param"}, %arg2: tensor<3x5xf32> {amp.name = "fc2.weight", amp.role = "param"}, %arg3: tensor<?x4xf32> {amp.name = "x"})
// SGD-LABEL: func.func @train_step(
// SGD-SAME: {amp.name = "step", amp.role = "step"}, %arg4: tensor<?x4xf32> {amp.name = "x", amp.role = "input"}, %arg5: tensor<?xi64> {amp.name = "labels", amp.role = "labels"})
// SGD-SAME: -> (tensor<f32> {amp.name = "loss", amp.role = "loss"}, tensor<5x4xf32> {amp.name = "fc1.weight", amp.role = "param"}
// SGD-SAME: tensor<f32> {amp.name = "found_inf", amp.role = "found_inf"}, tensor<3xf32> {amp.name = "nonfinite", amp.role = "nonfinite"}, tensor<f32> {amp.name = "lr", amp.role = "lr"})
// SGD: %[[LOSS:.*]], %[[LOGP:.*]] = amp.softmax_cross_entropy_loss
// The cross-entropy gradient: softmax - one_hot(labels), over the batch.
// SGD: amp.exp %[[LOGP]]
// SGD: amp.equal
// The backward GEMMs fold the transposes into transA/transB.
// SGD: amp.gemm %{{.*}}, %arg2, %{{.*}} : (tensor<?x3xf32>, tensor<3x5xf32>, none) -> tensor<?x5xf32>
// SGD: amp.gemm %{{.*}}, %{{.*}}, %{{.*}} {transA = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>, none) -> tensor<3x5xf32>
// SGD: amp.where
// SGD: amp.gemm %{{.*}}, %arg4, %{{.*}} {transA = 1 : i64} : (tensor<?x5xf32>, tensor<?x4xf32>, none) -> tensor<5x4xf32>
// The bias gradient sums over the batch.
// SGD: amp.reduce_sum
// SGD: amp.sub %arg0
// SGD: amp.add %arg3
// SGD-LABEL: func.func @initial_state() -> (tensor<5x4xf32> {amp.name = "fc1.weight", amp.role = "param"}, tensor<5xf32> {amp.name = "fc1.bias", amp.role = "param"}, tensor<3x5xf32> {amp.name = "fc2.weight", amp.role = "param"}, tensor<i64> {amp.name = "step", amp.role = "step"})
// SGD: amp.constant dense<5.000000e-01> : tensor<5x4xf32>
// SGD: amp.constant dense<0> : tensor<i64>

// MOM-LABEL: func.func @train_step(
// MOM-SAME: {amp.name = "fc1.weight.momentum_buffer", amp.role = "optimizer"}
// MOM: amp.constant dense<0.899999976> : tensor<f32>
// MOM-LABEL: func.func @initial_state()
// MOM-SAME: {amp.name = "fc2.weight.momentum_buffer", amp.role = "optimizer"}

// AdamW: bias corrections from the step counter, decoupled weight decay.
// ADAM-LABEL: func.func @train_step(
// ADAM-SAME: {amp.name = "fc1.weight.exp_avg", amp.role = "optimizer"}
// ADAM-SAME: {amp.name = "fc1.weight.exp_avg_sq", amp.role = "optimizer"}
// ADAM: amp.pow
// ADAM: amp.sqrt
// ADAM-LABEL: func.func @initial_state()

// MSE-LABEL: func.func @train_step(
// MSE-SAME: %arg5: tensor<?x3xf32> {amp.name = "labels", amp.role = "labels"}
// MSE: amp.sub
// MSE: amp.reduce_mean

// Warm-up then cosine decay, from the step counter.
// COS-LABEL: func.func @train_step(
// COS: amp.cast %arg3 {to = f32}
// COS: amp.cos
// COS: amp.less
// COS: amp.where

// STEP-LABEL: func.func @train_step(
// STEP: amp.floor
// STEP: amp.pow

// Clipping uses the unscaled gradients: after the fused unscale + check.
// CLIP-LABEL: func.func @train_step(
// CLIP-SAME: {amp.name = "loss_scale", amp.role = "scaler"}, %arg4: tensor<i64> {amp.name = "growth_tracker", amp.role = "scaler"}
// CLIP: amp.multi_tensor_unscale_check
// CLIP: amp.reduce_sum_square
// CLIP: amp.sqrt
// CLIP: amp.min

// fp16: casts of the fp32 parameters, fp32 accumulation also in the
// backward GEMMs, dynamic loss scaling by default.
// Every spelling of fp16 gets fp16's dynamic loss scaling.
// F16: amp.train = {loss_scale = "dynamic"
// F16-LABEL: func.func @train_step(
// F16-SAME: {amp.name = "loss_scale", amp.role = "scaler"}
// F16: amp.cast %arg0 {to = f16}
// F16: amp.gemm {{.*}}amp.accumulate = f32{{.*}} -> tensor<?x5xf16>
// F16: %[[UNSCALED:.*]]:3, %[[FOUND:.*]], %[[FLAGS:.*]] = amp.multi_tensor_unscale_check
// F16: %[[SKIP:.*]] = amp.greater %[[FOUND]]
// The scale grows only to a finite value.
// F16: amp.is_inf
// Skipped steps keep the parameters.
// F16: amp.where %[[SKIP]], %arg0,
// F16-LABEL: func.func @initial_state()
// F16: amp.constant dense<6.553600e+04> : tensor<f32>

// BF16: amp.train = {loss_scale = "none"
// BF16-NOT: multi_tensor_unscale_check
// BF16: amp.cast %arg0 {to = bf16}

// STATIC: amp.train = {loss_scale = "static"
// STATIC-LABEL: func.func @train_step(
// STATIC-SAME: {amp.name = "loss_scale", amp.role = "scaler"}, %arg4: tensor<i64> {amp.name = "step", amp.role = "step"}
// STATIC: amp.multi_tensor_unscale_check
// STATIC-LABEL: func.func @initial_state()
// STATIC: amp.constant dense<1.024000e+03> : tensor<f32>

// HYST-LABEL: func.func @train_step(
// HYST-SAME: {amp.name = "hysteresis_left", amp.role = "scaler"}
// HYST-LABEL: func.func @initial_state()
// HYST: amp.constant dense<3> : tensor<i64>

// Frozen initializers stay constants.
// FROZEN-LABEL: func.func @train_step(%arg0: tensor<3x5xf32> {amp.name = "fc2.weight", amp.role = "param"}, %arg1: tensor<i64>
// FROZEN: amp.constant dense<5.000000e-01> : tensor<5x4xf32>

// @apply_gradients takes the caller's found_inf (a reduction over ranks):
// the skip and the scale update act on the maximum of it and its own.
// SPLIT16-LABEL: func.func @apply_gradients(
// SPLIT16-SAME: %[[EXT:[a-z0-9]+]]: tensor<f32> {amp.name = "found_inf", amp.role = "found_inf"})
// SPLIT16: %{{.*}}, %[[OWN:.*]], %{{.*}} = amp.multi_tensor_unscale_check
// SPLIT16: %[[ANY:.*]] = amp.max %[[OWN]], %[[EXT]]
// SPLIT16: amp.greater %[[ANY]],
// SPLIT16: return {{.*}}, %[[ANY]], %{{.*}}, %{{.*}} :
// SPLIT-LABEL: func.func @main(
// SPLIT-SAME: tensor<?x4xf32>
// SPLIT-LABEL: func.func @compute_gradients(
// SPLIT-SAME: {amp.name = "fc1.weight.grad", amp.role = "grad"}
// SPLIT-SAME: %arg6: tensor<f32> {amp.name = "grad_scale", amp.role = "grad_scale"}, %arg7: tensor<8x4xf32> {amp.name = "x", amp.role = "input"}, %arg8: tensor<8xi64>
// SPLIT-SAME: -> (tensor<f32> {amp.name = "loss", amp.role = "loss"}, tensor<5x4xf32> {amp.name = "fc1.weight.grad", amp.role = "grad"}
// SPLIT-LABEL: func.func @train_step(
// SPLIT-LABEL: func.func @apply_gradients(
// SPLIT-SAME: {amp.name = "fc1.weight.grad", amp.role = "grad"}
// SPLIT-SAME: %[[EXT:.*]]: tensor<f32> {amp.name = "found_inf", amp.role = "found_inf"})
// SPLIT-SAME: -> (tensor<5x4xf32> {amp.name = "fc1.weight", amp.role = "param"}

// Training-mode Dropout: the eval @main has none; @train_step draws a keep
// mask from `step` (stream 0, the node's seed) and scales the kept values by
// 1/(1 - ratio); the backward pass reuses the mask.
// DROP-LABEL: func.func @main(
// DROP-NOT: dropout
// DROP-LABEL: func.func @train_step(
// DROP-SAME: %[[STEPN:arg[0-9]+]]: tensor<i64> {amp.name = "step", amp.role = "step"}
// DROP-SAME: %[[REPLICA:arg[0-9]+]]: tensor<i64> {amp.name = "dropout_replica", amp.role = "dropout_replica"}
// The generator's counter: step + replica * 2^32 (replica 0: one process's masks).
// DROP: %[[HIGH:.*]] = amp.mul %[[REPLICA]], %{{.*}} : (tensor<i64>, tensor<i64>)
// DROP: %[[COUNTER:.*]] = amp.add %[[STEPN]], %[[HIGH]]
// DROP: %[[H:.*]] = amp.gemm
// DROP: %[[KEEP:.*]] = amp.dropout_mask %[[H]], %[[RATIO:.*]], %[[COUNTER]] {seed = 7 : i64}
// DROP: %[[REST:.*]] = amp.sub %[[ONE:.*]], %[[RATIO]]
// DROP: %[[SCALE:.*]] = amp.div %[[ONE]], %[[REST]]
// DROP: %[[SCALED:.*]] = amp.mul %[[H]], %[[SCALE]]
// DROP: amp.where %[[KEEP]], %[[SCALED]]
// DROP-NOT: amp.dropout_mask
// DROP: amp.where %[[KEEP]],
// DROP-NOT: amp.dropout
// DROP-LABEL: func.func @initial_state(

// In fp16 the scaling is done in fp32 and rounded once; @compute_gradients
// takes the micro-batch's counter.
// DROP16-LABEL: func.func @compute_gradients(
// DROP16-SAME: %[[MB:arg[0-9]+]]: tensor<i64> {amp.name = "dropout_counter", amp.role = "dropout_counter"}
// DROP16-SAME: %[[R:arg[0-9]+]]: tensor<i64> {amp.name = "dropout_replica", amp.role = "dropout_replica"}
// DROP16: %[[RH:.*]] = amp.mul %[[R]],
// DROP16: %[[C:.*]] = amp.add %[[MB]], %[[RH]]
// DROP16: %[[H:.*]] = amp.gemm
// DROP16-NEXT: %[[KEEP:.*]] = amp.dropout_mask %[[H]], %{{.*}}, %[[C]] {seed = 7 : i64} : (tensor<2x5xf16>, tensor<f32>, tensor<i64>) -> tensor<2x5xi1>
// DROP16: %[[UP:.*]] = amp.cast %[[H]] {to = f32}
// DROP16-NEXT: %[[MUL:.*]] = amp.mul %[[UP]],
// DROP16-NEXT: %[[DOWN:.*]] = amp.cast %[[MUL]] {to = f16}
// DROP16-NEXT: amp.where %[[KEEP]], %[[DOWN]]
// DROP16-LABEL: func.func @train_step(
// DROP16: amp.dropout_mask
