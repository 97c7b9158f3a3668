// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// If, Scan and Loop (ControlFlow.cpp): bodies move into scf regions and
// are lowered with the rest of the program.

// If: scf.if on the condition's element; branches of different static
// shapes are cast to the If's dynamic result.
// CHECK-LABEL: func.func @if_shapes
// CHECK: %[[C:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: scf.if %[[C]] -> (tensor<?xf32>) {
// CHECK:   arith.negf
// CHECK:   %[[T:.*]] = tensor.cast %{{.*}} : tensor<4xf32> to tensor<?xf32>
// CHECK:   scf.yield %[[T]] : tensor<?xf32>
// CHECK: } else {
// CHECK:   %[[E:.*]] = tensor.cast %{{.*}} : tensor<8xf32> to tensor<?xf32>
// CHECK:   scf.yield %[[E]] : tensor<?xf32>
func.func @if_shapes(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<?xf32> {
  %y = amp.if %c : tensor<i1> -> tensor<?xf32> then {
    %a = amp.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    amp.yield %a : tensor<4xf32>
  } else {
    %b = amp.concat %x, %x {axis = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    amp.yield %b : tensor<8xf32>
  }
  return %y : tensor<?xf32>
}

// -----

// A condition of dynamic size: checked to hold one element at run time,
// and not read when empty.
// CHECK-LABEL: func.func @if_dynamic_condition
// CHECK: arith.cmpi ne
// CHECK: func.call @amp_cpu_check_failed
// CHECK: %[[EMPTY:.*]] = arith.cmpi eq
// CHECK: %[[C:.*]] = scf.if %[[EMPTY]] -> (i1) {
// CHECK:   scf.yield %false
// CHECK: } else {
// CHECK:   tensor.extract
// CHECK: scf.if %[[C]] -> (tensor<1xf32>)
func.func @if_dynamic_condition(%c: tensor<?xi1>, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = amp.if %c : tensor<?xi1> -> tensor<1xf32> then {
    amp.yield %x : tensor<1xf32>
  } else {
    %a = amp.neg %x : (tensor<1xf32>) -> tensor<1xf32>
    amp.yield %a : tensor<1xf32>
  }
  return %y : tensor<1xf32>
}

// -----

// Scan: scf.for over the scan length; x is read forward along axis 0, y
// backward along axis 1 (L-1-i); the scan output is written along axis 1
// in reverse; the state is loop-carried.
// CHECK-LABEL: func.func @scan
// CHECK: %[[L:.*]] = tensor.dim %{{.*}}, %c0 : tensor<5x3xf32>
// CHECK: %[[ACC:.*]] = tensor.empty(%[[L]]) : tensor<3x?xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[L]] step %{{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[OUT:.*]] = %[[ACC]]) -> (tensor<3xf32>, tensor<3x?xf32>)
// CHECK:   %[[LAST:.*]] = arith.subi %[[L]], %c1
// CHECK:   %[[REV:.*]] = arith.subi %[[LAST]], %[[I]]
// CHECK:   tensor.extract_slice %{{.*}}[%[[I]], 0] [1, 3] [1, 1] : tensor<5x3xf32> to tensor<3xf32>
// CHECK:   tensor.extract_slice %{{.*}}[0, %[[REV]]] [3, 1] [1, 1] : tensor<3x5xf32> to tensor<3xf32>
// CHECK:   arith.addf
// CHECK:   arith.mulf
// CHECK:   %[[W:.*]] = tensor.insert_slice %{{.*}} into %[[OUT]][0, %[[REV]]] [3, 1] [1, 1] : tensor<3xf32> into tensor<3x?xf32>
// CHECK:   scf.yield %{{.*}}, %[[W]]
func.func @scan(%s0: tensor<3xf32>, %x: tensor<5x3xf32>, %y: tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3x?xf32>) {
  %s, %t = amp.scan %s0, %x, %y {num_scan_inputs = 2 : i64, scan_input_axes = array<i64: 0, 1>, scan_input_directions = array<i64: 0, 1>, scan_output_axes = array<i64: 1>, scan_output_directions = array<i64: 1>} : (tensor<3xf32>, tensor<5x3xf32>, tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3x?xf32>) {
  ^bb0(%a: tensor<3xf32>, %xs: tensor<3xf32>, %ys: tensor<3xf32>):
    %n = amp.add %a, %xs : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %p = amp.mul %xs, %ys : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    amp.yield %n, %p : tensor<3xf32>, tensor<3xf32>
  }
  return %s, %t : tensor<3xf32>, tensor<3x?xf32>
}

// -----

// Scan inputs whose lengths are known only at run time: checked equal.
// CHECK-LABEL: func.func @scan_dynamic_lengths
// CHECK: %[[L0:.*]] = tensor.dim %arg1, %c0
// CHECK: %[[L1:.*]] = tensor.dim %arg2, %c0
// CHECK: arith.cmpi ne, %[[L1]], %[[L0]]
// CHECK: func.call @amp_cpu_check_failed
// CHECK: %[[L:.*]] = arith.minsi %[[L0]], %[[L1]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[L]]
func.func @scan_dynamic_lengths(%s0: tensor<3xf32>, %x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<3xf32> {
  %s = amp.scan %s0, %x, %y {num_scan_inputs = 2 : i64} : (tensor<3xf32>, tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>, %xs: tensor<3xf32>, %ys: tensor<3xf32>):
    %p = amp.mul %xs, %ys : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %n = amp.add %a, %p : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    amp.yield %n : tensor<3xf32>
  }
  return %s : tensor<3xf32>
}

// -----

// Loop: scf.while on (i < M) && cond; the body gets i and cond as tensors
// and its yielded condition replaces cond; the scan output's accumulator
// doubles its capacity when full and is cut to the iteration count.
// CHECK-LABEL: func.func @loop
// CHECK: %[[M:.*]] = tensor.extract %arg0[] : tensor<i64>
// CHECK: %[[C0:.*]] = tensor.extract %arg1[] : tensor<i1>
// CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<?x2xf32>
// CHECK: %[[W:.*]]:4 = scf.while (%[[I:.*]] = %c0_i64, %[[C:.*]] = %[[C0]], %{{.*}} = %arg2, %{{.*}} = %[[EMPTY]]) : (i64, i1, tensor<2xf32>, tensor<?x2xf32>)
// CHECK:   %[[BELOW:.*]] = arith.cmpi slt, %[[I]], %[[M]] : i64
// CHECK:   %[[GO:.*]] = arith.andi %[[C]], %[[BELOW]] : i1
// CHECK:   scf.condition(%[[GO]])
// CHECK: } do {
// CHECK: ^bb0(%[[J:.*]]: i64, %[[CJ:.*]]: i1, %[[V:.*]]: tensor<2xf32>, %[[ACC:.*]]: tensor<?x2xf32>):
// CHECK:   tensor.from_elements %[[J]] : tensor<i64>
// CHECK:   %[[CT:.*]] = tensor.from_elements %[[CJ]] : tensor<i1>
// CHECK:   arith.addf
// CHECK:   %[[NEXT:.*]] = arith.addi %[[J]], %c1_i64
// CHECK:   %[[NC:.*]] = tensor.extract %[[CT]][] : tensor<i1>
// CHECK:   %[[POS:.*]] = arith.index_cast %[[J]] : i64 to index
// CHECK:   %[[CAP:.*]] = tensor.dim %[[ACC]], %c0
// CHECK:   %[[FULL:.*]] = arith.cmpi eq, %[[POS]], %[[CAP]]
// CHECK:   scf.if %[[FULL]] -> (tensor<?x2xf32>) {
// CHECK:     arith.muli %[[CAP]], %c2
// CHECK:     arith.maxsi
// CHECK:     tensor.insert_slice %[[ACC]] into
// CHECK:   tensor.insert_slice %[[V]] into %{{.*}}[%[[POS]], 0] [1, 2] [1, 1]
// CHECK:   scf.yield %[[NEXT]], %[[NC]]
// CHECK: %[[N:.*]] = arith.index_cast %[[W]]#0 : i64 to index
// CHECK: tensor.extract_slice %[[W]]#3[0, 0] [%[[N]], 2] [1, 1]
func.func @loop(%m: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %r:2 = amp.loop %m, %c, %v : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<2xf32>):
    %n = amp.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    amp.yield %cond, %n, %a : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return %r#0, %r#1 : tensor<2xf32>, tensor<?x2xf32>
}

// -----

// Loop without M or cond: only the body's condition ends it.
// CHECK-LABEL: func.func @while_loop
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: scf.while (%{{.*}} = %c0_i64, %[[C:.*]] = %[[TRUE]], %{{.*}} = %arg0)
// CHECK-NOT: arith.cmpi slt
// CHECK: scf.condition(%[[C]])
func.func @while_loop(%v: tensor<f32>) -> tensor<f32> {
  %none = amp.none
  %r = amp.loop %none, %none, %v : (none, none, tensor<f32>) -> tensor<f32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<f32>):
    %n = amp.add %a, %a : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %lim = amp.constant dense<1.0e+03> : tensor<f32>
    %go = amp.less %n, %lim : (tensor<f32>, tensor<f32>) -> tensor<i1>
    amp.yield %go, %n : tensor<i1>, tensor<f32>
  }
  return %r : tensor<f32>
}
