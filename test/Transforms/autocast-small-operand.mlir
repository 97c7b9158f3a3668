// RUN: amp-opt %s -amp-autocast="annotate=true" -split-input-file | FileCheck %s
// A scalar fp32 operand (one element) from a denied op does not pull
// the op it feeds into fp32 when that op has a larger float operand: it is
// cast to the low type instead (an attention scale Reciprocal(Sqrt(d)) of a
// run-time d keeps the Mul and the Softmax after it in f16).

// CHECK-LABEL: func.func @attention_scale
// CHECK: %[[S:.*]] = amp.matmul {{.*}} -> tensor<2x8x8xf16>
// CHECK: %[[SQRT:.*]] = amp.sqrt %{{.*}} {amp.reason = "fp32 inputs: infer list
// CHECK: %[[R:.*]] = amp.reciprocal %[[SQRT]] {amp.reason = "deny list{{.*}} : (tensor<f32>) -> tensor<f32>
// CHECK: %[[RL:.*]] = amp.cast %[[R]] {to = f16} : (tensor<f32>) -> tensor<f16>
// CHECK: %[[M:.*]] = amp.mul %[[S]], %[[RL]] {amp.reason = "follows low-precision input from 'scores'; scalar fp32 operand from 'r' cast to f16"} : (tensor<2x8x8xf16>, tensor<f16>) -> tensor<2x8x8xf16>
// CHECK: amp.softmax %[[M]] {{.*}} -> tensor<2x8x8xf16>
func.func @attention_scale(%q: tensor<2x8x16xf32>, %k: tensor<2x16x8xf32>, %d: tensor<f32>) -> tensor<2x8x8xf32> {
  %s = amp.matmul %q, %k : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32> loc("scores")
  %sq = amp.sqrt %d : (tensor<f32>) -> tensor<f32> loc("sqrt")
  %r = amp.reciprocal %sq : (tensor<f32>) -> tensor<f32> loc("r")
  %m = amp.mul %s, %r : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32> loc("scaled")
  %p = amp.softmax %m : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32> loc("probs")
  return %p : tensor<2x8x8xf32>
}

// -----

// A larger denied result still spreads: the Mul by a 2x8x8 fp32 tensor from
// Exp stays fp32, and so does one by per-row statistics (2x8x1, as a
// decomposed LayerNorm divides by): a cast there would add a rounding
// inside the normalisation.
// CHECK-LABEL: func.func @large_operand_spreads
// CHECK: amp.mul {{.*}}amp.reason = "fp32 spread from 'e' (infer op)"{{.*}} -> tensor<2x8x8xf32>
func.func @large_operand_spreads(%q: tensor<2x8x16xf32>, %k: tensor<2x16x8xf32>, %x: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %s = amp.matmul %q, %k : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32> loc("scores")
  %e = amp.exp %x : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32> loc("e")
  %m = amp.mul %s, %e : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32> loc("scaled")
  return %m : tensor<2x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @per_row_statistics_spread
// CHECK: amp.div {{.*}}amp.reason = "fp32 spread from 'std' (infer op)"{{.*}} -> tensor<2x8x8xf32>
func.func @per_row_statistics_spread(%q: tensor<2x8x16xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x8x1xf32>) -> tensor<2x8x8xf32> {
  %s = amp.matmul %q, %k : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32> loc("scores")
  %std = amp.reciprocal %v : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32> loc("std")
  %d = amp.div %s, %std : (tensor<2x8x8xf32>, tensor<2x8x1xf32>) -> tensor<2x8x8xf32> loc("normed")
  return %d : tensor<2x8x8xf32>
}

// -----

// Only small operands: a scalar computation stays with its denied input.
// CHECK-LABEL: func.func @all_small
// CHECK: amp.mul {{.*}}amp.reason = "fp32 spread from 'r' (infer op)"{{.*}} -> tensor<f32>
func.func @all_small(%d: tensor<f32>, %e: tensor<f32>) -> tensor<f32> {
  %r = amp.reciprocal %d : (tensor<f32>) -> tensor<f32> loc("r")
  %m = amp.mul %r, %e : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("m")
  return %m : tensor<f32>
}
