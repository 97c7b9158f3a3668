// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// Data-dependent result sizes: count, allocate, then write in order.

// NonZero: a reduction counts the nonzero elements (NaN included: une),
// then one scf.for over the linear index writes each one's coordinates.
// CHECK-LABEL: func.func @nonzero
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK: arith.cmpf une
// CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: tensor.empty(%[[N]]) : tensor<2x?xi64>
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: scf.if
// CHECK: tensor.insert
// CHECK: tensor.insert
func.func @nonzero(%x: tensor<3x4xf32>) -> tensor<2x?xi64> {
  %0 = amp.non_zero %x : (tensor<3x4xf32>) -> tensor<2x?xi64>
  return %0 : tensor<2x?xi64>
}

// -----

// Compress along an axis: a condition longer than the axis is a run-time
// error; the kept slabs are copied in order with insert_slice.
// CHECK-LABEL: func.func @compress
// CHECK: arith.cmpi sgt
// CHECK: func.call @amp_cpu_check_failed
// CHECK: arith.minsi
// CHECK: tensor.extract_slice %{{.*}}[0] [%{{.*}}] [1] : tensor<?xi1> to tensor<?xi1>
// CHECK: tensor.empty(%{{.*}}) : tensor<2x?xf32>
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.*}} [2, 1] [1, 1] : tensor<2x5xf32> to tensor<2x1xf32>
// CHECK: tensor.insert_slice
func.func @compress(%x: tensor<2x5xf32>, %c: tensor<?xi1>) -> tensor<2x?xf32> {
  %0 = amp.compress %x, %c {axis = 1 : i64} : (tensor<2x5xf32>, tensor<?xi1>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}
