// amp-autodiff: @main_grad returns the first result of @main and its
// gradient with respect to every float argument (integer ones get none).
// Numerics: test/python/training/test_autodiff_pass.py.
//
// RUN: amp-opt %s --split-input-file --amp-autodiff --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32> {amp.name = "x"}, %[[W:.*]]: tensor<4x2xf32> {amp.name = "w"}, %{{.*}}: tensor<2xi64>)
// CHECK-SAME: -> (tensor<f32>, tensor<3x4xf32> {amp.name = "x.grad"}, tensor<4x2xf32> {amp.name = "w.grad"})
// CHECK: %[[Y:.*]] = amp.matmul %[[X]], %[[W]]
// CHECK: %[[T:.*]] = amp.tanh %[[Y]]
// CHECK: %[[S:.*]] = amp.reduce_sum %[[T]]
// The seed 1, broadcast back over the reduced axes.
// CHECK: amp.expand
// CHECK: %[[TT:.*]] = amp.mul %[[T]], %[[T]]
// CHECK: %[[D:.*]] = amp.sub %{{.*}}, %[[TT]]
// CHECK: %[[G:.*]] = amp.mul %{{.*}}, %[[D]]
// CHECK: %[[WT:.*]] = amp.transpose %[[W]]
// CHECK: %[[DX:.*]] = amp.matmul %[[G]], %[[WT]]
// CHECK: %[[XT:.*]] = amp.transpose %[[X]]
// CHECK: %[[DW:.*]] = amp.matmul %[[XT]], %[[G]]
// CHECK: return %[[S]], %[[DX]], %[[DW]]
func.func @main(%x: tensor<3x4xf32> {amp.name = "x"}, %w: tensor<4x2xf32> {amp.name = "w"}, %n: tensor<2xi64>) -> tensor<f32> {
  %y = amp.matmul %x, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %t = amp.tanh %y : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %none = amp.none
  %s = amp.reduce_sum %t, %none {keepdims = 0 : i64} : (tensor<3x2xf32>, none) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// expected-error @+1 {{amp-autodiff: the first result of @main must be a scalar float tensor to differentiate}}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// -----

// expected-error @+1 {{amp-autodiff: @main has no float argument}}
func.func @main(%x: tensor<3xi64>) -> tensor<f32> {
  %c = amp.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// expected-error @+1 {{amp-autodiff: no function @main}}
module {
  func.func @other(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

func.func @main(%x: tensor<2x2xf32>) -> tensor<f32> {
  // expected-error @+1 {{(Det): no gradient rule for input 0, but the loss depends on trainable values through it}}
  %d = amp.det %x : (tensor<2x2xf32>) -> tensor<f32>
  return %d : tensor<f32>
}
