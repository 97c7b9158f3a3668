// RUN: amp-opt %s -amp-cast-cleanup -split-input-file | FileCheck %s
// amp-cast-cleanup: exact cast chains fold, lossy ones stay, unused casts
// and constants go.

// CHECK-LABEL: func.func @chains
// CHECK-SAME: (%[[H:.*]]: tensor<4xf16>, %[[F:.*]]: tensor<4xf32>)
// CHECK-NOT: amp.constant
// CHECK: %[[LOSSY1:.*]] = amp.cast %[[F]] {to = f16}
// CHECK: %[[LOSSY2:.*]] = amp.cast %[[LOSSY1]] {to = f32}
// CHECK: return %[[H]], %[[LOSSY2]]
func.func @chains(%h: tensor<4xf16>, %f: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>) {
  %unused = amp.constant dense<1.0> : tensor<4xf32>
  %dead = amp.cast %f {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  // f16 -> f32 -> f16 is exact: folds to %h.
  %up = amp.cast %h {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %down = amp.cast %up {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  // f32 -> f16 -> f32 rounds: stays.
  %l1 = amp.cast %f {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %l2 = amp.cast %l1 {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  return %down, %l2 : tensor<4xf16>, tensor<4xf32>
}
