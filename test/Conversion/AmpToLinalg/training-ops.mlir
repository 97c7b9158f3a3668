// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// The lowerings the train steps need: the fused unscale + Inf/NaN check,
// Dropout masks, training-mode BatchNormalization and MaxPool's Indices.

// One loop per gradient: read once, multiply by 1/scale, store, and OR the
// non-finiteness of the stored value into the loop-carried flag.
// CHECK-LABEL: func.func @unscale_check
// CHECK: %[[INV:.*]] = tensor.extract %arg0[] : tensor<f32>
// CHECK: tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<2x3xf16> into tensor<6xf16>
// CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[FLAG:.*]] = %false) -> (tensor<6xf16>, i1)
// CHECK:   %[[X:.*]] = arith.extf
// CHECK:   %[[Y:.*]] = arith.mulf %[[X]], %[[INV]] : f32
// CHECK:   %[[S:.*]] = arith.truncf %[[Y]] : f32 to f16
// CHECK:   %[[V:.*]] = arith.extf %[[S]] : f16 to f32
// CHECK:   %[[D:.*]] = arith.subf %[[V]], %[[V]] : f32
// CHECK:   %[[BAD:.*]] = arith.cmpf uno, %[[D]], %[[D]] : f32
// CHECK:   tensor.insert %[[S]]
// CHECK:   arith.ori %[[FLAG]], %[[BAD]] : i1
// CHECK: tensor.expand_shape %[[LOOP]]#0
// CHECK: scf.for
// found_inf is the max of the per-tensor flags.
// CHECK: arith.maximumf
// CHECK: arith.maximumf
// CHECK: tensor.from_elements %{{.*}} : tensor<f32>
// CHECK: tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xf32>
func.func @unscale_check(%s: tensor<f32>, %a: tensor<2x3xf16>, %b: tensor<4xf32>) -> (tensor<2x3xf16>, tensor<4xf32>, tensor<f32>, tensor<2xf32>) {
  %u:2, %found, %flags = amp.multi_tensor_unscale_check %s, %a, %b : (tensor<f32>, tensor<2x3xf16>, tensor<4xf32>) -> (tensor<2x3xf16>, tensor<4xf32>, tensor<f32>, tensor<2xf32>)
  return %u#0, %u#1, %found, %flags : tensor<2x3xf16>, tensor<4xf32>, tensor<f32>, tensor<2xf32>
}

// -----

// Training mode: batch mean and population variance over (N, H, W) in f32
// for f16 data; running = input * 0.9 + batch * 0.1.
// CHECK-LABEL: func.func @batchnorm_training
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction"]
// CHECK: arith.extf
// CHECK: arith.addf {{.*}} : f32
// CHECK: math.sqrt
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: arith.constant 0.100000024 : f32
// CHECK: arith.constant 0.899999976 : f32
func.func @batchnorm_training(%x: tensor<2x3x4xf16>, %s: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf16>, tensor<3xf32>, tensor<3xf32>) {
  %y, %rm, %rv = amp.batch_normalization %x, %s, %s, %m, %v {training_mode = 1 : i64} : (tensor<2x3x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf16>, tensor<3xf32>, tensor<3xf32>)
  return %y, %rm, %rv : tensor<2x3x4xf16>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Indices: the smallest flat NCHW index whose input equals the window's
// maximum (INT64_MAX where none does, which cannot happen).
// CHECK-LABEL: func.func @maxpool_indices
// CHECK: arith.constant 9223372036854775807 : i64
// CHECK: linalg.generic
// CHECK:   arith.cmpf oeq
// CHECK:   linalg.index 0
// CHECK:   arith.index_cast {{.*}} : index to i64
// CHECK:   arith.select
// CHECK:   arith.minsi
func.func @maxpool_indices(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
  %y, %i = amp.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  return %y, %i : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
}

// -----

// A Dropout mask: Philox4x32-10 keyed by the counter, on the row-major
// linear index (lo, hi), the stream and the seed; 10 rounds of two 32x32->64
// products; keep when (w >> 8) * 2^-24 >= ratio. The bits are checked
// against a numpy Philox in test/python/training/test_dropout.py.
// CHECK-LABEL: func.func @dropout_mask
// CHECK: %[[R:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: %[[C:.*]] = tensor.extract %arg1[] : tensor<i64>
// CHECK-DAG: %[[STREAM:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[SEED:.*]] = arith.constant 9 : i32
// CHECK-DAG: %[[K0:.*]] = arith.trunci %[[C]] : i64 to i32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x3xi1>)
// CHECK: %[[I0:.*]] = linalg.index 0
// CHECK: %[[I1:.*]] = linalg.index 1
// CHECK: %[[ROW:.*]] = arith.muli %[[I0]], %c3
// CHECK: %[[LIN:.*]] = arith.addi %[[ROW]], %[[I1]]
// CHECK: %[[I:.*]] = arith.index_castui %[[LIN]] : index to i64
// CHECK: %[[LO:.*]] = arith.trunci %[[I]] : i64 to i32
// CHECK: %{{.*}}, %[[HI0:.*]] = arith.mului_extended %c-766435501_i32, %[[LO]] : i32
// CHECK: %{{.*}}, %{{.*}} = arith.mului_extended %c-845247145_i32, %[[STREAM]] : i32
// CHECK-COUNT-9: arith.mului_extended %c-766435501_i32
// CHECK: %[[TOP:.*]] = arith.shrui %{{.*}}, %c8_i32 : i32
// CHECK: %[[F:.*]] = arith.uitofp %[[TOP]] : i32 to f32
// CHECK: %[[U:.*]] = arith.mulf %[[F]], %cst{{.*}} : f32
// CHECK: %[[KEEP:.*]] = arith.cmpf oge, %[[U]], %[[R]] : f32
// CHECK: linalg.yield %[[KEEP]] : i1
func.func @dropout_mask(%x: tensor<?x3xf16>, %c: tensor<i64>) -> tensor<?x3xi1> {
  %r = amp.constant dense<0.25> : tensor<f32>
  %m = amp.dropout_mask %x, %r, %c {stream = 2 : i64, seed = 9 : i64} : (tensor<?x3xf16>, tensor<f32>, tensor<i64>) -> tensor<?x3xi1>
  return %m : tensor<?x3xi1>
}

// -----

// The unscaled seed of a reverse pass is the constant 1.
// CHECK-LABEL: func.func @gradient_seed
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: return %[[ONE]]
func.func @gradient_seed() -> tensor<f32> {
  %s = amp.gradient_seed : tensor<f32>
  return %s : tensor<f32>
}
