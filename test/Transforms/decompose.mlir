// RUN: amp-opt %s -amp-decompose -split-input-file | FileCheck %s
// amp-decompose: ONNX Attention becomes its graph (scaled products, caches,
// grouped heads, masks, softcap, the fully-masked-row guard, the
// qk_matmul_output modes); amp.accumulate puts the scores in fp32.

// Plain 4-d attention: sqrt(1/sqrt(8)) on both sides, no bias, no guard.
// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x3x8xf32>, %[[K:.*]]: tensor<2x4x5x8xf32>, %[[V:.*]]: tensor<2x4x5x6xf32>)
// CHECK-NOT: amp.attention
// CHECK: %[[S:.*]] = amp.constant dense<0.594603539> : tensor<f32>
// CHECK: %[[KS:.*]] = amp.mul %[[K]], %[[S]]
// CHECK: %[[KT:.*]] = amp.transpose %[[KS]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK: %[[QS:.*]] = amp.mul %[[Q]], %[[S]]
// CHECK: %[[L:.*]] = amp.matmul %[[QS]], %[[KT]] :
// CHECK-NOT: amp.where
// CHECK: %[[P:.*]] = amp.softmax %[[L]]
// CHECK: %[[Y:.*]] = amp.matmul %[[P]], %[[V]] :
// CHECK: return %[[Y]]
func.func @plain(%q: tensor<2x4x3x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x6xf32>) -> tensor<2x4x3x6xf32> {
  %n = amp.none
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>, none, none, none, none) -> (tensor<2x4x3x6xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>, tensor<2x4x3x5xf32>)
  return %y : tensor<2x4x3x6xf32>
}

// -----

// 3-d fp16 inputs autocast marked (amp.accumulate = f32): heads split and
// merged, the caches concatenated (present_key), each key/value head
// repeated for its 2 query heads, scores and softmax in fp32, the causal
// frontier offset by the past (2): row i sees keys 0..i+2 (no row empty:
// no guard). Mode 3 returns P in fp16.
// CHECK-LABEL: func.func @gqa_cache_causal_fp16
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x3x8xf16>, %[[K:[^:]*]]: tensor<1x3x4xf16>, %[[V:[^:]*]]: tensor<1x3x4xf16>, %[[PK:[^:]*]]: tensor<1x2x2x2xf16>, %[[PV:[^:]*]]: tensor<1x2x2x2xf16>)
// CHECK: %[[QSPLIT:.*]] = amp.reshape %[[Q]], %{{.*}} -> tensor<1x3x4x2xf16>
// CHECK: %[[QH:.*]] = amp.transpose %[[QSPLIT]] {perm = array<i64: 0, 2, 1, 3>} {{.*}} -> tensor<1x4x3x2xf16>
// CHECK: %[[PRESENT:.*]] = amp.concat %[[PK]], %{{.*}} {axis = 2 : i64} {{.*}} -> tensor<1x2x5x2xf16>
// CHECK: amp.concat %[[PV]], %{{.*}} {axis = 2 : i64}
// CHECK: %[[U:.*]] = amp.unsqueeze %[[PRESENT]], %{{.*}} -> tensor<1x2x1x5x2xf16>
// CHECK: %[[E:.*]] = amp.expand %[[U]], %{{.*}} -> tensor<1x2x2x5x2xf16>
// CHECK: amp.constant dense<[0, 4, -1, 2]>
// CHECK: %[[KREP:.*]] = amp.reshape %[[E]], %{{.*}} -> tensor<1x4x5x2xf16>
// CHECK: %[[L16:.*]] = amp.matmul %{{.*}}, %{{.*}} {amp.accumulate = f32} : (tensor<1x4x3x2xf16>, tensor<1x4x2x5xf16>) -> tensor<1x4x3x5xf16>
// CHECK: %[[L:.*]] = amp.cast %[[L16]] {to = f32}
// CHECK: %[[CAUSAL:.*]] = amp.constant dense<{{\[}}[true, true, true, false, false], [true, true, true, true, false], [true, true, true, true, true]]> : tensor<3x5xi1>
// CHECK: %[[BIAS:.*]] = amp.where %[[CAUSAL]], %{{.*}}, %{{.*}} : (tensor<3x5xi1>, tensor<f32>, tensor<f32>) -> tensor<3x5xf32>
// CHECK: %[[B:.*]] = amp.add %[[L]], %[[BIAS]]
// CHECK-NOT: amp.reduce_max
// CHECK: %[[P:.*]] = amp.softmax %[[B]] : (tensor<1x4x3x5xf32>)
// CHECK: %[[P16:.*]] = amp.cast %[[P]] {to = f16}
// CHECK: %[[YH:.*]] = amp.matmul %[[P16]], %{{.*}} {amp.accumulate = f32}
// CHECK: %[[YT:.*]] = amp.transpose %[[YH]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[Y:.*]] = amp.reshape %[[YT]], %{{.*}} -> tensor<1x3x8xf16>
// CHECK: %[[QK:.*]] = amp.cast %[[P]] {to = f16}
// CHECK: return %[[Y]], %[[PRESENT]], %[[QK]]
func.func @gqa_cache_causal_fp16(%q: tensor<1x3x8xf16>, %k: tensor<1x3x4xf16>, %v: tensor<1x3x4xf16>, %pk: tensor<1x2x2x2xf16>, %pv: tensor<1x2x2x2xf16>) -> (tensor<1x3x8xf16>, tensor<1x2x5x2xf16>, tensor<1x4x3x5xf16>) {
  %n = amp.none
  %y, %k2, %v2, %qk = amp.attention %q, %k, %v, %n, %pk, %pv, %n {amp.accumulate = f32, is_causal = 1 : i64, kv_num_heads = 2 : i64, q_num_heads = 4 : i64, qk_matmul_output_mode = 3 : i64} : (tensor<1x3x8xf16>, tensor<1x3x4xf16>, tensor<1x3x4xf16>, none, tensor<1x2x2x2xf16>, tensor<1x2x2x2xf16>, none) -> (tensor<1x3x8xf16>, tensor<1x2x5x2xf16>, tensor<1x2x5x2xf16>, tensor<1x4x3x5xf16>)
  return %y, %k2, %qk : tensor<1x3x8xf16>, tensor<1x2x5x2xf16>, tensor<1x4x3x5xf16>
}

// -----

// A bool mask shorter than the keys: 0 / -inf, padded with -inf; softcap
// before the bias; the guard zeroes rows whose bias is all -inf (scores
// first, then P); mode 2 returns the biased scores; an explicit scale.
// CHECK-LABEL: func.func @bool_mask_softcap
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}}, %[[M:[^:]*]]: tensor<3x4xi1>)
// CHECK: %[[S:.*]] = amp.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[L:.*]] = amp.matmul
// CHECK: %[[CAP:.*]] = amp.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[D:.*]] = amp.div %[[L]], %[[CAP]]
// CHECK: %[[T:.*]] = amp.tanh %[[D]]
// CHECK: %[[C:.*]] = amp.mul %[[T]], %[[CAP]]
// CHECK: %[[ZERO:.*]] = amp.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[NEGINF:.*]] = amp.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[MB:.*]] = amp.where %[[M]], %[[ZERO]], %[[NEGINF]] : (tensor<3x4xi1>, tensor<f32>, tensor<f32>) -> tensor<3x4xf32>
// CHECK: amp.constant dense<[0, 0, 0, 1]> : tensor<4xi64>
// CHECK: %[[PADDED:.*]] = amp.pad %[[MB]], %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> tensor<3x5xf32>
// CHECK: %[[B:.*]] = amp.add %[[C]], %[[PADDED]]
// CHECK: %[[MAX:.*]] = amp.reduce_max %[[PADDED]], %{{.*}} : (tensor<3x5xf32>, tensor<1xi64>) -> tensor<3x1xf32>
// CHECK: %[[EMPTY:.*]] = amp.equal %[[MAX]], %{{.*}}
// CHECK: %[[SAFE:.*]] = amp.where %[[EMPTY]], %{{.*}}, %[[B]]
// CHECK: %[[SM:.*]] = amp.softmax %[[SAFE]]
// CHECK: %[[P:.*]] = amp.where %[[EMPTY]], %{{.*}}, %[[SM]]
// CHECK: %[[Y:.*]] = amp.matmul %[[P]], %[[V]]
// CHECK: return %[[Y]], %[[B]]
func.func @bool_mask_softcap(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x3xf32>, %m: tensor<3x4xi1>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x5xf32>) {
  %n = amp.none
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %m, %n, %n, %n {qk_matmul_output_mode = 2 : i64, scale = 0.25 : f32, softcap = 3.0 : f32} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x3xf32>, tensor<3x4xi1>, none, none, none) -> (tensor<1x2x3x3xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x3xf32>, tensor<1x2x3x5xf32>)
  return %y, %qk : tensor<1x2x3x3xf32>, tensor<1x2x3x5xf32>
}

// -----

// An external cache: nonpad_kv_seqlen (B) as (B, 1, 1, 1); the causal
// frontier j - i + q <= n[b], the window (left 1) n <= 1 + j + q - i, and
// the padding j < n[b] are compared at run time; softmax_precision = 1
// (float) scores an fp16 attention in fp32.
// CHECK-LABEL: func.func @nonpad_window
// CHECK-SAME: %[[N:[^:]*]]: tensor<2xi64>
// CHECK: %[[L:.*]] = amp.cast %{{.*}} {to = f32} : (tensor<2x1x2x4xf16>) -> tensor<2x1x2x4xf32>
// CHECK: %[[NB:.*]] = amp.reshape %[[N]], %{{.*}} -> tensor<2x1x1x1xi64>
// CHECK: %[[CF:.*]] = amp.constant dense<{{\[}}[2, 3, 4, 5], [1, 2, 3, 4]]> : tensor<2x4xi64>
// CHECK: %[[CA:.*]] = amp.less_or_equal %[[CF]], %[[NB]] : (tensor<2x4xi64>, tensor<2x1x1x1xi64>) -> tensor<2x1x2x4xi1>
// CHECK: %[[WF:.*]] = amp.constant dense<{{\[}}[3, 4, 5, 6], [2, 3, 4, 5]]> : tensor<2x4xi64>
// CHECK: %[[WA:.*]] = amp.less_or_equal %[[NB]], %[[WF]]
// CHECK: %[[KEYS:.*]] = amp.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK: %[[PA:.*]] = amp.less %[[KEYS]], %[[NB]] : (tensor<4xi64>, tensor<2x1x1x1xi64>) -> tensor<2x1x1x4xi1>
// CHECK: amp.reduce_max
// CHECK: amp.softmax %{{.*}} : (tensor<2x1x2x4xf32>)
// CHECK: amp.cast %{{.*}} {to = f16}
func.func @nonpad_window(%q: tensor<2x1x2x4xf16>, %k: tensor<2x1x4x4xf16>, %v: tensor<2x1x4x4xf16>, %n: tensor<2xi64>) -> tensor<2x1x2x4xf16> {
  %none = amp.none
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %none, %none, %none, %n {is_causal = 1 : i64, left_window_size = 1 : i64, softmax_precision = 1 : i64} : (tensor<2x1x2x4xf16>, tensor<2x1x4x4xf16>, tensor<2x1x4x4xf16>, none, none, none, tensor<2xi64>) -> (tensor<2x1x2x4xf16>, tensor<2x1x4x4xf16>, tensor<2x1x4x4xf16>, tensor<2x1x2x4xf16>)
  return %y : tensor<2x1x2x4xf16>
}
