// RUN: amp-opt %s -amp-decompose -split-input-file -verify-diagnostics
// The cases amp-decompose cannot give Attention a graph for: errors at the op.

func.func @softmax_precision_not_float(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): softmax_precision 7 is not a float type}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n {softmax_precision = 7 : i64} : (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, none, none, none, none) -> (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x2x3xf32>)
  return %y : tensor<1x1x2x4xf32>
}

// -----

func.func @bad_qk_mode(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): qk_matmul_output_mode must be 0, 1, 2 or 3}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n {qk_matmul_output_mode = 4 : i64} : (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, none, none, none, none) -> (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x2x3xf32>)
  return %y : tensor<1x1x2x4xf32>
}

// -----

func.func @past_key_alone(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>, %past: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): past_key and past_value must be given together}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %past, %n, %n : (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, none, tensor<1x1x2x4xf32>, none, none) -> (tensor<1x1x2x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x2x5xf32>)
  return %y : tensor<1x1x2x4xf32>
}

// -----

func.func @nonpad_with_past(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>, %past: tensor<1x1x2x4xf32>, %len: tensor<1xi64>) -> tensor<1x1x2x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): nonpad_kv_seqlen cannot be combined with past_key}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %past, %past, %len : (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, none, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1xi64>) -> (tensor<1x1x2x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x2x5xf32>)
  return %y : tensor<1x1x2x4xf32>
}

// -----

func.func @heads_not_a_multiple(%q: tensor<1x3x2x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x3x2x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): the query heads (3) must be a multiple of the key/value heads (2)}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n : (tensor<1x3x2x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, none, none, none, none) -> (tensor<1x3x2x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3x2x3xf32>)
  return %y : tensor<1x3x2x4xf32>
}

// -----

func.func @causal_dynamic_length(%q: tensor<1x1x?x4xf32>, %k: tensor<1x1x?x4xf32>, %v: tensor<1x1x?x4xf32>) -> tensor<1x1x?x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): is_causal and the window sizes need static query and key sequence lengths to be decomposed}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n {is_causal = 1 : i64} : (tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>, none, none, none, none) -> (tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x?xf32>)
  return %y : tensor<1x1x?x4xf32>
}

// -----

func.func @dynamic_heads(%q: tensor<1x?x2x4xf32>, %k: tensor<1x?x3x4xf32>, %v: tensor<1x?x3x4xf32>) -> tensor<1x?x2x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): the number of heads must be static to be decomposed}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n : (tensor<1x?x2x4xf32>, tensor<1x?x3x4xf32>, tensor<1x?x3x4xf32>, none, none, none, none) -> (tensor<1x?x2x4xf32>, tensor<1x?x3x4xf32>, tensor<1x?x3x4xf32>, tensor<1x?x2x3xf32>)
  return %y : tensor<1x?x2x4xf32>
}

// -----

func.func @no_scale_dynamic_head_size(%q: tensor<1x1x2x?xf32>, %k: tensor<1x1x3x?xf32>, %v: tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): without a scale, the head size must be static}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n : (tensor<1x1x2x?xf32>, tensor<1x1x3x?xf32>, tensor<1x1x3x4xf32>, none, none, none, none) -> (tensor<1x1x2x4xf32>, tensor<1x1x3x?xf32>, tensor<1x1x3x4xf32>, tensor<1x1x2x3xf32>)
  return %y : tensor<1x1x2x4xf32>
}

// -----

func.func @bad_window(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32> {
  %n = amp.none
  // expected-error @+1 {{(Attention): left_window_size and right_window_size must be -1 or nonnegative}}
  %y, %pk, %pv, %qk = amp.attention %q, %k, %v, %n, %n, %n, %n {left_window_size = -2 : i64} : (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, none, none, none, none) -> (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x2x3xf32>)
  return %y : tensor<1x1x2x4xf32>
}
