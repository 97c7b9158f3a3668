// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// Shape inputs read at run time (the result's rank is static).

// CumSum with a run-time axis: one sum per possible axis, chosen by a
// chain of scf.if on the normalized axis.
// CHECK-LABEL: func.func @cumsum_runtime_axis
// CHECK: scf.if
// CHECK: func.call @amp_cpu_check_failed
// CHECK: %[[A:.*]] = arith.select %{{.*}} : index
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[A]], %c0{{.*}} : index
// CHECK: scf.if %[[IS0]] -> (tensor<2x3xf32>)
// CHECK: linalg.generic
// CHECK: } else {
// CHECK: linalg.generic
func.func @cumsum_runtime_axis(%x: tensor<2x3xf32>, %axis: tensor<i64>) -> tensor<2x3xf32> {
  %0 = amp.cumsum %x, %axis : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Split with run-time sizes: each output is an extract_slice of a size
// read from the input (clamped into the axis), after checks that the
// sizes are non-negative and add up to the axis.
// CHECK-LABEL: func.func @split_runtime_sizes
// CHECK: tensor.extract %{{.*}}[%c0{{.*}}] : tensor<2xi64>
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi ne
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}] [3, %{{.*}}] [1, 1] : tensor<3x6xf32> to tensor<3x?xf32>
// CHECK: tensor.extract_slice
func.func @split_runtime_sizes(%x: tensor<3x6xf32>, %sizes: tensor<2xi64>) -> (tensor<3x?xf32>, tensor<3x?xf32>) {
  %0:2 = amp.split %x, %sizes {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<3x6xf32>, tensor<2xi64>) -> (tensor<3x?xf32>, tensor<3x?xf32>)
  return %0#0, %0#1 : tensor<3x?xf32>, tensor<3x?xf32>
}

// -----

// Slice with run-time axes and steps: a generic reads
// data[start + i * step] with every dimension's start and step selected
// at run time.
// CHECK-LABEL: func.func @slice_runtime_axes
// CHECK: linalg.generic
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: tensor.extract %{{.*}} : tensor<4x5xf32>
func.func @slice_runtime_axes(%x: tensor<4x5xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>, %a: tensor<1xi64>, %st: tensor<1xi64>) -> tensor<?x?xf32> {
  %0 = amp.slice %x, %s, %e, %a, %st : (tensor<4x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Unsqueeze with run-time axes: the result's sizes are selected at run
// time (1 where an axis names a position) and the data is reshaped.
// CHECK-LABEL: func.func @unsqueeze_runtime_axes
// CHECK: tensor.from_elements
// CHECK: tensor.reshape
func.func @unsqueeze_runtime_axes(%x: tensor<2x3xf32>, %axes: tensor<1xi64>) -> tensor<?x?x?xf32> {
  %0 = amp.unsqueeze %x, %axes : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}
