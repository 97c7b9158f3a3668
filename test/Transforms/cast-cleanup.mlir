// RUN: amp-opt %s -amp-cast-cleanup -split-input-file | FileCheck %s
// RUN: amp-opt %s -amp-cast-cleanup -split-input-file | FileCheck %s --check-prefix=RELEASED
// RUN: amp-opt %s -amp-cast-cleanup="release-weights=false" -split-input-file | FileCheck %s --check-prefix=KEPT
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

// -----

// The data of an erased weight is freed (release-weights, the default): the
// resource is left without a blob. With release-weights=false it stays, for
// other users of the context's resource (here an attribute that stands for
// another module holding the same weight).
// CHECK-LABEL: func.func @released_weight
// RELEASED: dead_weight: "0x00000000"{{$}}
// KEPT: dead_weight: "0x0400000000003C00003C
func.func @released_weight(%x: tensor<2xf16>) -> tensor<2xf16> attributes {other_user = dense_resource<dead_weight> : tensor<2xf16>} {
  %w = amp.constant dense_resource<dead_weight> : tensor<2xf16>
  return %x : tensor<2xf16>
}

{-#
  dialect_resources: {
    builtin: {
      dead_weight: "0x0400000000003C00003C"
    }
  }
#-}
