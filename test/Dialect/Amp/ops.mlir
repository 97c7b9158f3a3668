// RUN: amp-opt %s | FileCheck %s
// RUN: amp-opt %s --verify-roundtrip | FileCheck %s
// Ops parse, verify (result types are re-inferred) and print back.

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  // CHECK: amp.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = amp.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: amp.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f32}
  %1 = amp.leaky_relu %0 {alpha = 0.2 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: amp.less
  %2 = amp.less %1, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %2 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @dynamic_dims
func.func @dynamic_dims(%x: tensor<?x128xf32>, %w: tensor<128x64xf32>) -> tensor<?x64xf32> {
  // CHECK: amp.matmul {{.*}} -> tensor<?x64xf32>
  %0 = amp.matmul %x, %w : (tensor<?x128xf32>, tensor<128x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// A result type may be more static than what inference can prove.
// CHECK-LABEL: func.func @refined_result
func.func @refined_result(%x: tensor<?x4xf32>, %s: tensor<2xi64>) -> tensor<8x2xf32> {
  %0 = amp.reshape %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// CHECK-LABEL: func.func @optional_operands
func.func @optional_operands(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  // CHECK: %[[NONE:.*]] = amp.none
  %none = amp.none
  // CHECK: amp.conv %{{.*}}, %{{.*}}, %[[NONE]] {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %0 = amp.conv %x, %w, %none {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// The weight gradient of a strided, padded, grouped Conv: dW has the
// weights' shape (M, C/group, kernel); the batch may be dynamic.
// CHECK-LABEL: func.func @conv_weight_grad
func.func @conv_weight_grad(%x: tensor<?x4x8x8xf32>, %dy: tensor<?x6x4x4xf32>) -> tensor<6x2x3x3xf32> {
  // CHECK: amp.conv_weight_grad %{{.*}}, %{{.*}} {group = 2 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %0 = amp.conv_weight_grad %x, %dy {group = 2 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x8x8xf32>, tensor<?x6x4x4xf32>) -> tensor<6x2x3x3xf32>
  return %0 : tensor<6x2x3x3xf32>
}

// CHECK-LABEL: func.func @mixed_types
func.func @mixed_types(%x: tensor<4xbf16>, %y: tensor<4xf16>, %i: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xf16>) {
  // CHECK: amp.cast %{{.*}} {to = f32}
  %0 = amp.cast %x {to = f32} : (tensor<4xbf16>) -> tensor<4xf32>
  // CHECK: amp.cast_like
  %1 = amp.cast_like %i, %y : (tensor<4xui8>, tensor<4xf16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// CHECK-LABEL: func.func @if_with_outer_value
func.func @if_with_outer_value(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: amp.if %{{.*}} : tensor<i1> -> tensor<4xf32> then {
  // CHECK: amp.relu %arg1
  // CHECK: amp.yield
  // CHECK: } else {
  %0 = amp.if %c : tensor<i1> -> tensor<4xf32> then {
    %1 = amp.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    amp.yield %1 : tensor<4xf32>
  } else {
    amp.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @loop
func.func @loop(%n: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  // CHECK: amp.loop
  %0:2 = amp.loop %n, %c, %acc : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    %1 = amp.add %v, %acc : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    amp.yield %cond, %1, %1 : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<?x2xf32>
}
