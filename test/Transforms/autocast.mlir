// RUN: amp-opt %s -amp-autocast -split-input-file | FileCheck %s
// RUN: amp-opt %s -amp-autocast="type=bf16" -split-input-file | FileCheck %s --check-prefix=BF16
// The propagation rules of amp-autocast with the default policy.

// Allow ops run in f16 and accumulate in f32; the graph input is cast once
// for both users; constants are converted at compile time; the output is
// cast back (keep-io-types).
// CHECK-LABEL: func.func @allow_ops
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-DAG: %[[W:.*]] = amp.constant dense<{{.*}}> : tensor<4x4xf16>
// CHECK-DAG: %[[XH:.*]] = amp.cast %[[X]] {to = f16} : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CHECK: %[[A:.*]] = amp.matmul %[[XH]], %[[W]] {amp.accumulate = f32} : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// CHECK: %[[B:.*]] = amp.matmul %[[XH]], %[[W]] {amp.accumulate = f32}
// CHECK: %[[S:.*]] = amp.add %[[A]], %[[B]] : (tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<2x4xf16>
// CHECK: %[[OUT:.*]] = amp.cast %[[S]] {to = f32} : (tensor<2x4xf16>) -> tensor<2x4xf32>
// CHECK-NOT: amp.cast
// CHECK: return %[[OUT]]
// BF16-LABEL: func.func @allow_ops
// BF16: amp.cast %{{.*}} {to = bf16}
// BF16: amp.matmul {{.*}} -> tensor<2x4xbf16>
func.func @allow_ops(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = amp.constant dense<0.5> : tensor<4x4xf32>
  %a = amp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %b = amp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %s = amp.add %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// Rule 1: deny spreads forward. Exp (deny) denies the infer op Add reached
// through the clear op Reshape, and so the Reshape too. The Transpose after
// Exp leads only to an allow op, so it is not denied: it goes low with the
// MatMul and the cast sits in front of it.
// CHECK-LABEL: func.func @deny_spreads
// CHECK: %[[E:.*]] = amp.exp %{{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[EH:.*]] = amp.cast %[[E]] {to = f16}
// CHECK: %[[R:.*]] = amp.reshape %[[E]], %{{.*}} : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>
// CHECK: amp.add %[[R]], %{{.*}} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[T:.*]] = amp.transpose %[[EH]] {{.*}} -> tensor<4x4xf16>
// CHECK: amp.matmul %[[T]]
func.func @deny_spreads(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = amp.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %shape = amp.constant dense<[4, 4]> : tensor<2xi64>
  %r = amp.reshape %e, %shape : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  %a = amp.add %r, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = amp.transpose %e {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = amp.matmul %t, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %a, %m : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Rule 2: infer and clear ops between two allow ops become allow, even with
// an fp32 graph input (cast once) as their other operand.
// CHECK-LABEL: func.func @between_allow
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>, %[[BIAS:.*]]: tensor<4x4xf32>)
// CHECK: %[[BH:.*]] = amp.cast %[[BIAS]] {to = f16}
// CHECK: %[[M:.*]] = amp.matmul
// CHECK: %[[A:.*]] = amp.add %[[M]], %[[BH]] : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
// CHECK: %[[T:.*]] = amp.tanh %[[A]] : (tensor<4x4xf16>) -> tensor<4x4xf16>
// CHECK: amp.matmul %[[T]], %[[T]] {amp.accumulate = f32} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
func.func @between_allow(%x: tensor<4x4xf32>, %bias: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = amp.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = amp.add %m, %bias : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = amp.tanh %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = amp.matmul %t, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m2 : tensor<4x4xf32>
}

// -----

// Rule 3: allow spreads backwards through clear ops: the Transpose of the
// graph input runs in f16 (half the bytes moved), the cast is in front.
// CHECK-LABEL: func.func @allow_through_clear
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>
// CHECK: %[[XH:.*]] = amp.cast %[[X]] {to = f16}
// CHECK: %[[T:.*]] = amp.transpose %[[XH]] {{.*}} : (tensor<4x8xf16>) -> tensor<8x4xf16>
// CHECK: amp.matmul %[[T]]
func.func @allow_through_clear(%x: tensor<4x8xf32>, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %t = amp.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %m = amp.matmul %t, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}

// -----

// Rule 4: an infer op whose inputs are low precision (or constants) follows
// them; one with an fp32 input keeps fp32.
// CHECK-LABEL: func.func @infer_follows
// CHECK: %[[M:.*]] = amp.matmul
// CHECK: %[[S:.*]] = amp.sigmoid %[[M]] : (tensor<4x4xf16>) -> tensor<4x4xf16>
// CHECK: %[[C:.*]] = amp.constant dense<2.000000e+00> : tensor<f16>
// CHECK: %[[D:.*]] = amp.mul %[[S]], %[[C]] : (tensor<4x4xf16>, tensor<f16>) -> tensor<4x4xf16>
// CHECK: amp.cast %[[D]] {to = f32}
// CHECK: amp.sigmoid %{{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @infer_follows(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = amp.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = amp.sigmoid %m : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %two = amp.constant dense<2.0> : tensor<f32>
  %d = amp.mul %s, %two : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %plain = amp.sigmoid %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d, %plain : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Fixed-type operands are never cast: Resize's scales stay f32, the Pow
// exponent stays f32; integer operands are untouched; Shape takes the f16
// tensor as it is.
// CHECK-LABEL: func.func @fixed_type_operands
// CHECK: %[[C:.*]] = amp.conv
// CHECK: %[[SCALES:.*]] = amp.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK: amp.resize %[[C]], %{{.*}}, %[[SCALES]], %{{.*}} : (tensor<1x2x4x4xf16>, none, tensor<4xf32>, none) -> tensor<1x2x8x8xf16>
// CHECK: amp.shape %[[C]] : (tensor<1x2x4x4xf16>) -> tensor<4xi64>
// CHECK: amp.pow %{{.*}}, %{{.*}} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
func.func @fixed_type_operands(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %p: tensor<f32>) -> (tensor<1x2x8x8xf32>, tensor<4xi64>, tensor<1x2x4x4xf32>) {
  %none = amp.none
  %c = amp.conv %x, %w, %none : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %scales = amp.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %r = amp.resize %c, %none, %scales, %none : (tensor<1x2x4x4xf32>, none, tensor<4xf32>, none) -> tensor<1x2x8x8xf32>
  %s = amp.shape %c : (tensor<1x2x4x4xf32>) -> tensor<4xi64>
  %pw = amp.pow %c, %p : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  return %r, %s, %pw : tensor<1x2x8x8xf32>, tensor<4xi64>, tensor<1x2x4x4xf32>
}

// -----

// A constant beyond the f16 range keeps its consumer in f32 (no cast at
// all); a tiny epsilon that would flush to zero does too. bf16 has the f32
// range, so there the MatMul goes low.
// CHECK-LABEL: func.func @constant_out_of_range
// CHECK: amp.matmul %{{.*}}, %{{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK: amp.matmul %{{.*}}, %{{.*}} {amp.accumulate = f32} : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
// CHECK: amp.add %{{.*}}, %{{.*}} : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
// BF16-LABEL: func.func @constant_out_of_range
// BF16: amp.matmul %{{.*}}, %{{.*}} {amp.accumulate = f32} : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
func.func @constant_out_of_range(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %big = amp.constant dense<[[1.0, 7.0e4], [2.0, 3.0]]> : tensor<2x2xf32>
  %m = amp.matmul %x, %big : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %m2 = amp.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %eps = amp.constant dense<1.0e-12> : tensor<f32>
  %a = amp.add %m2, %eps : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %m, %a : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Norms and softmax next to low-precision producers stay in f16 and
// accumulate in f32; sum-type reductions are denied.
// CHECK-LABEL: func.func @accumulating_ops
// CHECK: %[[M:.*]] = amp.matmul
// CHECK: %[[N:.*]], %{{.*}}, %{{.*}} = amp.layer_normalization %[[M]], {{.*}} {amp.accumulate = f32} : (tensor<2x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x8xf16>, tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK: amp.softmax %[[N]] {amp.accumulate = f32} : (tensor<2x8xf16>) -> tensor<2x8xf16>
// CHECK: amp.reduce_sum %{{.*}}, %{{.*}} : (tensor<2x8xf32>, none) -> tensor<1x1xf32>
func.func @accumulating_ops(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<1x1xf32>) {
  %m = amp.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %n, %mean, %inv = amp.layer_normalization %m, %g, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %s = amp.softmax %n : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %none = amp.none
  %sum = amp.reduce_sum %s, %none : (tensor<2x8xf32>, none) -> tensor<1x1xf32>
  return %s, %sum : tensor<2x8xf32>, tensor<1x1xf32>
}

// -----

// Regions: the loop-carried value keeps f32 (one precision per carried
// value); the body is rewritten like the main graph; the cast of the outer
// weight is made once, outside the loop.
// CHECK-LABEL: func.func @loop_body
// CHECK-SAME: (%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %[[ACC:.*]]: tensor<2x2xf32>, %[[W:.*]]: tensor<2x2xf32>)
// CHECK: %[[WH:.*]] = amp.cast %[[W]] {to = f16}
// CHECK: amp.loop {{.*}} : (tensor<i64>, tensor<i1>, tensor<2x2xf32>) -> tensor<2x2xf32> {
// CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %[[V:.*]]: tensor<2x2xf32>):
// CHECK: %[[VH:.*]] = amp.cast %[[V]] {to = f16}
// CHECK: %[[M:.*]] = amp.matmul %[[VH]], %[[WH]] {amp.accumulate = f32}
// CHECK: %[[MF:.*]] = amp.cast %[[M]] {to = f32}
// CHECK: amp.yield %{{.*}}, %[[MF]] : tensor<i1>, tensor<2x2xf32>
func.func @loop_body(%n: tensor<i64>, %c: tensor<i1>, %acc: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = amp.loop %n, %c, %acc : (tensor<i64>, tensor<i1>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2x2xf32>):
    %m = amp.matmul %v, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    amp.yield %cond, %m : tensor<i1>, tensor<2x2xf32>
  }
  return %0 : tensor<2x2xf32>
}

// -----

// If branches: each branch is rewritten; the If's results keep f32.
// CHECK-LABEL: func.func @if_branches
// CHECK: amp.if %{{.*}} : tensor<i1> -> tensor<2x2xf32> then {
// CHECK: amp.matmul {{.*}} -> tensor<2x2xf16>
// CHECK: amp.cast %{{.*}} {to = f32}
// CHECK: } else {
// CHECK: amp.relu %{{.*}} : (tensor<2x2xf32>) -> tensor<2x2xf32>
func.func @if_branches(%c: tensor<i1>, %x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = amp.if %c : tensor<i1> -> tensor<2x2xf32> then {
    %m = amp.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    amp.yield %m : tensor<2x2xf32>
  } else {
    %r = amp.relu %x : (tensor<2x2xf32>) -> tensor<2x2xf32>
    amp.yield %r : tensor<2x2xf32>
  }
  return %0 : tensor<2x2xf32>
}

// -----

// Integer and f64 computations are left alone; unlisted ops (Cast) take the
// f16 value directly.
// CHECK-LABEL: func.func @untouched
// CHECK: amp.add %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: amp.matmul %{{.*}}, %{{.*}} : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK: %[[M:.*]] = amp.matmul {{.*}} -> tensor<2x2xf16>
// CHECK: amp.cast %[[M]] {to = i32} : (tensor<2x2xf16>) -> tensor<2x2xi32>
func.func @untouched(%i: tensor<4xi64>, %d: tensor<2x2xf64>, %x: tensor<2x2xf32>) -> (tensor<4xi64>, tensor<2x2xf64>, tensor<2x2xi32>) {
  %a = amp.add %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %b = amp.matmul %d, %d : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %m = amp.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = amp.cast %m {to = i32} : (tensor<2x2xf32>) -> tensor<2x2xi32>
  return %a, %b, %c : tensor<4xi64>, tensor<2x2xf64>, tensor<2x2xi32>
}

// -----

// Rule 3b: ops computed from weights only (an embedding Gather, a position
// Add, a LayerNorm with constant scale) go low with the allow op they feed;
// the embedding table is converted at compile time, no cast at all before
// the MatMul.
// CHECK-LABEL: func.func @weights_only_subgraph
// CHECK-NOT: amp.cast
// CHECK: %[[G:.*]] = amp.gather %{{.*}}, %{{.*}} : (tensor<8x4xf16>, tensor<2xi64>) -> tensor<2x4xf16>
// CHECK: %[[A:.*]] = amp.add %[[G]], %{{.*}} : (tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<2x4xf16>
// CHECK: amp.layer_normalization %[[A]], {{.*}} -> (tensor<2x4xf16>, tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK: amp.matmul {{.*}} -> tensor<2x4xf16>
func.func @weights_only_subgraph(%ids: tensor<2xi64>) -> tensor<2x4xf32> {
  %table = amp.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]> : tensor<8x4xf32>
  %pos = amp.constant dense<0.5> : tensor<2x4xf32>
  %gamma = amp.constant dense<1.0> : tensor<4xf32>
  %beta = amp.constant dense<0.0> : tensor<4xf32>
  %w = amp.constant dense<0.25> : tensor<4x4xf32>
  %g = amp.gather %table, %ids : (tensor<8x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %a = amp.add %g, %pos : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %n, %mean, %inv = amp.layer_normalization %a, %gamma, %beta : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %m = amp.matmul %n, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %m : tensor<2x4xf32>
}

// -----

// Recurrent ops are allow ops that accumulate in fp32: every float operand
// (X, W, R, B) is cast, the integer sequence_lens is not, and the lowering
// then keeps the state and gates in fp32 (recurrent.mlir).
// CHECK-LABEL: func.func @recurrent
// CHECK-SAME: (%[[X:.*]]: tensor<5x2x3xf32>, %[[W:.*]]: tensor<1x16x3xf32>, %[[R:.*]]: tensor<1x16x4xf32>, %[[B:.*]]: tensor<1x32xf32>, %[[L:.*]]: tensor<2xi32>)
// CHECK-DAG: %[[BH:.*]] = amp.cast %[[B]] {to = f16}
// CHECK-DAG: %[[RH:.*]] = amp.cast %[[R]] {to = f16}
// CHECK-DAG: %[[WH:.*]] = amp.cast %[[W]] {to = f16}
// CHECK-DAG: %[[XH:.*]] = amp.cast %[[X]] {to = f16}
// CHECK: %[[Y:.*]], %[[YH:.*]], %{{.*}} = amp.lstm %[[XH]], %[[WH]], %[[RH]], %[[BH]], %[[L]], {{.*}} {amp.accumulate = f32} : (tensor<5x2x3xf16>, tensor<1x16x3xf16>, tensor<1x16x4xf16>, tensor<1x32xf16>, tensor<2xi32>, none, none, none) -> (tensor<5x1x2x4xf16>, tensor<1x2x4xf16>, tensor<1x2x4xf16>)
// CHECK-DAG: amp.cast %[[Y]] {to = f32}
// CHECK-DAG: amp.cast %[[YH]] {to = f32}
// BF16-LABEL: func.func @recurrent
// BF16: amp.lstm {{.*}} {amp.accumulate = f32} : {{.*}} -> (tensor<5x1x2x4xbf16>, tensor<1x2x4xbf16>, tensor<1x2x4xbf16>)
func.func @recurrent(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %b: tensor<1x32xf32>, %l: tensor<2xi32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>) {
  %none = amp.none
  %y, %h, %c = amp.lstm %x, %w, %r, %b, %l, %none, %none, %none : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x32xf32>, tensor<2xi32>, none, none, none) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %h : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// NonMaxSuppression takes fp32 boxes and scores only (ONNX's type
// constraint): an f16 box regression is cast back to f32 once before it;
// the Sigmoid scores, infer-class with an fp32 input, stay fp32.
// CHECK-LABEL: func.func @nms_head
// CHECK: %[[M:.*]] = amp.matmul {{.*}} -> tensor<8x4xf16>
// CHECK: %[[R:.*]] = amp.reshape %[[M]], {{.*}} -> tensor<1x8x4xf16>
// CHECK: %[[B:.*]] = amp.cast %[[R]] {to = f32} : (tensor<1x8x4xf16>) -> tensor<1x8x4xf32>
// CHECK: %[[S:.*]] = amp.sigmoid %{{.*}} : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
// CHECK: amp.non_max_suppression %[[B]], %[[S]], {{.*}} : (tensor<1x8x4xf32>, tensor<1x3x8xf32>, none, none, none) -> tensor<?x3xi64>
// BF16-LABEL: func.func @nms_head
// BF16: amp.cast %{{.*}} {to = f32} : (tensor<1x8x4xbf16>) -> tensor<1x8x4xf32>
// BF16: amp.non_max_suppression {{.*}} : (tensor<1x8x4xf32>, tensor<1x3x8xf32>, none, none, none)
func.func @nms_head(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>, %logits: tensor<1x3x8xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  %m = amp.matmul %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %shape = amp.constant dense<[1, 8, 4]> : tensor<3xi64>
  %boxes = amp.reshape %m, %shape : (tensor<8x4xf32>, tensor<3xi64>) -> tensor<1x8x4xf32>
  %scores = amp.sigmoid %logits : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
  %0 = amp.non_max_suppression %boxes, %scores, %none, %none, %none : (tensor<1x8x4xf32>, tensor<1x3x8xf32>, none, none, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}
