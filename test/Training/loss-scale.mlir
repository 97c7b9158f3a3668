// amp-loss-scale on the unscaled train step of a small MLP (what
// `amp-opt --train --loss-scale=none` writes): scaler state before `step`,
// the reverse pass seeded with the scale, the check unscaling by 1/scale,
// every state update skipped on overflow and the scale update. The numerics
// (bit-identical to --train's own scaling) are checked in
// test/python/training/test_loss_scaling.py.
//
// RUN: amp-opt %S/Inputs/mlp.mlir --train --amp-opt-level=0 --loss-scale=none -o %t.none.mlir 2>/dev/null
// RUN: FileCheck %s --check-prefix=NONE < %t.none.mlir
// RUN: amp-opt %t.none.mlir --amp-loss-scale | FileCheck %s --check-prefix=DYN
// RUN: amp-opt %t.none.mlir --amp-loss-scale="mode=static scale=128" | FileCheck %s --check-prefix=STATIC
// RUN: amp-opt %t.none.mlir --amp-loss-scale="hysteresis=2" | FileCheck %s --check-prefix=HYST
// RUN: amp-opt %t.none.mlir --amp-loss-scale | not amp-opt --amp-loss-scale 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not amp-opt %t.none.mlir --amp-loss-scale="mode=sometimes" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not amp-opt %t.none.mlir --amp-loss-scale="backoff=2" 2>&1 | FileCheck %s --check-prefix=OPTS
// RUN: not amp-opt %S/Inputs/mlp.mlir --amp-loss-scale 2>&1 | FileCheck %s --check-prefix=NOPROGRAM

// Unscaled: seed 1 (amp.gradient_seed), a check with scale 1, no skip.
// NONE: module attributes {amp.train = {loss_scale = "none"}}
// NONE-LABEL: func.func @train_step(
// NONE-NOT: amp.role = "scaler"
// NONE-DAG: %[[ONE:.*]] = amp.constant dense<1.000000e+00> : tensor<f32>
// NONE-DAG: amp.gradient_seed : tensor<f32>
// NONE: amp.multi_tensor_unscale_check %[[ONE]],
// NONE-NOT: amp.where %{{.*}}, %arg0,

// DYN: module attributes {amp.train = {loss_scale = "dynamic", loss_scale_min = 0.000000e+00 : f32}}
// DYN-LABEL: func.func @train_step(
// DYN-SAME: %[[SCALE:arg3]]: tensor<f32> {amp.name = "loss_scale", amp.role = "scaler"}, %[[TRACKER:arg4]]: tensor<i64> {amp.name = "growth_tracker", amp.role = "scaler"}, %[[STEP:arg5]]: tensor<i64> {amp.name = "step", amp.role = "step"}
// DYN-SAME: -> (tensor<f32> {amp.name = "loss", amp.role = "loss"}, {{.*}}, tensor<f32> {amp.name = "loss_scale", amp.role = "scaler"}, tensor<i64> {amp.name = "growth_tracker", amp.role = "scaler"}, tensor<i64> {amp.name = "step", amp.role = "step"}
// DYN-NOT: amp.gradient_seed
// The cross-entropy gradient is seeded with the scale.
// DYN: amp.div %[[SCALE]],
// DYN: %[[INV:.*]] = amp.reciprocal %[[SCALE]]
// DYN: %{{.*}}, %[[FOUND:.*]], %{{.*}} = amp.multi_tensor_unscale_check %[[INV]],
// DYN: %[[SKIP:.*]] = amp.greater %[[FOUND]],
// Growth only if the grown scale is finite.
// DYN: amp.is_inf
// DYN: %[[W1:.*]] = amp.where %[[SKIP]], %arg0,
// DYN: amp.where %[[SKIP]], %arg1,
// DYN: amp.where %[[SKIP]], %arg2,
// DYN: %[[NEWSTEP:.*]] = amp.where %[[SKIP]], %[[STEP]],
// DYN: return %{{.*}}, %[[W1]], {{.*}}, %[[NEWSTEP]], %[[FOUND]],
// DYN-LABEL: func.func @initial_state(
// DYN: %[[INIT:.*]] = amp.constant dense<6.553600e+04> : tensor<f32>
// DYN: %[[ZERO:.*]] = amp.constant dense<0> : tensor<i64>
// DYN: return %{{.*}}, %{{.*}}, %{{.*}}, %[[INIT]], %[[ZERO]], %{{.*}} :

// A static scale: one state value that comes out unchanged.
// STATIC: module attributes {amp.train = {loss_scale = "static"
// STATIC-LABEL: func.func @train_step(
// STATIC-SAME: %[[SCALE:arg3]]: tensor<f32> {amp.name = "loss_scale", amp.role = "scaler"}, %arg4: tensor<i64> {amp.name = "step", amp.role = "step"}
// STATIC-NOT: growth_tracker
// STATIC: amp.reciprocal %[[SCALE]]
// STATIC: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
// STATIC-LABEL: func.func @initial_state(
// STATIC: amp.constant dense<1.280000e+02> : tensor<f32>

// Hysteresis adds hysteresis_left (initially H).
// HYST-LABEL: func.func @train_step(
// HYST-SAME: {amp.name = "hysteresis_left", amp.role = "scaler"}, %{{.*}}: tensor<i64> {amp.name = "step", amp.role = "step"}
// HYST-LABEL: func.func @initial_state(
// HYST: amp.constant dense<2> : tensor<i64>

// TWICE: error: amp-loss-scale: the training program already has loss scaling (dynamic)
// MODE: error: amp-loss-scale: mode must be 'dynamic' or 'static', not 'sometimes'
// OPTS: error: amp-loss-scale: invalid options
// NOPROGRAM: error: amp-loss-scale: the module holds no training program (amp-opt --train builds one)
