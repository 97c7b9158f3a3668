// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// Det (LU with partial pivoting in f64), MaxUnpool (scatter into the
// unpooled shape, padded to output_shape) and MaxPool's column-major
// Indices (storage_order = 1).

// Det: widened once to f64; per matrix and column the first largest |a_ik|
// is the pivot (strictly greater replaces it), a swap flips the sign, a zero
// pivot divides by 1 and eliminates nothing; the result is rounded once.
// CHECK-LABEL: func.func @det
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: scf.for {{.*}} -> (tensor<2x3x3xf64>, tensor<2xf64>)
// CHECK: scf.for {{.*}} -> (tensor<2x3x3xf64>, f64)
// CHECK: math.absf
// CHECK: scf.for {{.*}} -> (index, f64)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpi ne
// CHECK: scf.if {{.*}} -> (tensor<2x3x3xf64>)
// CHECK: %[[NEG:.*]] = arith.constant -1.000000e+00 : f64
// CHECK: arith.select %{{.*}}, %[[NEG]]
// CHECK: %[[ZERO:.*]] = arith.cmpf oeq
// CHECK: arith.select %[[ZERO]]
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK: tensor.insert
// CHECK: arith.truncf %{{.*}} : f64 to f16
func.func @det(%x: tensor<2x3x3xf16>) -> tensor<2xf16> {
  %0 = amp.det %x : (tensor<2x3x3xf16>) -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// A single matrix: [M, M] -> [] through a batch of one.
// CHECK-LABEL: func.func @det_2d
// CHECK: tensor.expand_shape %{{.*}} : tensor<4x4xf32> into tensor<1x4x4xf32>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @det_2d(%x: tensor<4x4xf32>) -> tensor<f32> {
  %0 = amp.det %x : (tensor<4x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// MaxUnpool: indices checked against the unpooled size (16), clamped, each
// element written in order; the 4x4 unpooled plane lands in the corner of
// the 5x5 output_shape.
// CHECK-LABEL: func.func @unpool
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK: call @amp_cpu_check_failed
// CHECK: scf.for {{.*}} -> (tensor<16xf32>)
// CHECK: arith.minsi
// CHECK: tensor.insert %{{.*}} into %{{.*}} : tensor<16xf32>
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 1, 4, 4]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 1, 4, 4] [1, 1, 1, 1] : tensor<1x1x4x4xf32> into tensor<1x1x5x5xf32>
func.func @unpool(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x5x5xf32> {
  %s = amp.constant dense<[1, 1, 5, 5]> : tensor<4xi64>
  %0 = amp.max_unpool %x, %i, %s {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

// storage_order = 1: the row-major index of the first maximum renumbered
// with the spatial dimensions column-major: (n C + c) H W + h + w H.
// CHECK-LABEL: func.func @maxpool_column_major
// CHECK: arith.minsi
// CHECK: %[[PLANE:.*]] = arith.constant 25 : i64
// CHECK: arith.divsi %{{.*}}, %[[PLANE]]
// CHECK: arith.remsi %{{.*}}, %[[PLANE]]
// CHECK: %[[W:.*]] = arith.constant 5 : i64
// CHECK: arith.remsi %{{.*}}, %[[W]]
// CHECK: arith.divsi %{{.*}}, %[[W]]
func.func @maxpool_column_major(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
  %y, %i = amp.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, storage_order = 1 : i64} : (tensor<1x2x5x5xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  return %y, %i : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
}

// -----

// output_shape read at run time: each dynamic size checked (batch and
// channels equal to X's, spatial sizes at least the unpooled ones) and
// raised to the unpooled size meanwhile.
// CHECK-LABEL: func.func @unpool_run_time_shape
// CHECK: tensor.extract %{{.*}} : tensor<4xi64>
// CHECK: arith.cmpi slt
// CHECK: call @amp_cpu_check_failed
// CHECK: arith.maxsi
// CHECK: scf.for
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x?x?xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 1, 4, 4] [1, 1, 1, 1] : tensor<1x1x4x4xf32> into tensor<1x1x?x?xf32>
func.func @unpool_run_time_shape(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>, %s: tensor<4xi64>) -> tensor<1x1x?x?xf32> {
  %0 = amp.max_unpool %x, %i, %s {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x?x?xf32>
  return %0 : tensor<1x1x?x?xf32>
}
