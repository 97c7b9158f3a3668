// RUN: not amp-opt %s -amp-decompose 2>&1 | FileCheck %s
// amp-decompose's errors name the ONNX node first (its NameLoc), so that a
// user finds it in a large model.

// CHECK: error: {{.*}}node 'layer.3/attn' (Attention): the query heads (3) must be a multiple of the key/value heads (2)
func.func @named(%q: tensor<1x3x2x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x3x2x4xf32> {
  %n = amp.none
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n : (tensor<1x3x2x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, none, none, none, none) -> (tensor<1x3x2x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3x2x3xf32>) loc("layer.3/attn")
  return %y : tensor<1x3x2x4xf32>
}
