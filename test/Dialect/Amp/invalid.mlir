// RUN: amp-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{operands have incompatible broadcast shapes}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @element_type_mismatch(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+2 {{operands must have the same element type, got f32 and f16}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.mul %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @wrong_result_type(%a: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.relu %a : (tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{contracting dimensions differ: 3 vs 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %none = amp.none
  // expected-error @+2 {{input has 3 channels but W expects 2 x group 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv %x, %w, %none : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{Transpose perm is not a permutation}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<5x3xf32> {
  // expected-error @+2 {{Concat inputs must have the same rank}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @axis_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{Concat axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.concat %x, %x {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %s = amp.constant dense<[4, 2]> : tensor<2xi64>
  // expected-error @+2 {{cannot reshape 6 elements into 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @split_sizes(%x: tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %s = amp.constant dense<[2, 2]> : tensor<2xi64>
  // expected-error @+2 {{Split sizes add up to 4 but the dimension is 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = amp.split %x, %s {num_outputs = 2 : i64} : (tensor<6xf32>, tensor<2xi64>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %none = amp.none
  // expected-error @+2 {{Gemm operands A and B must be 2-d}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.gemm %a, %b, %none : (tensor<2x3x4xf32>, tensor<4x5xf32>, none) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @pool_window(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+2 {{window of size 3 does not fit spatial dimension 0 of size 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.average_pool %x {kernel_shape = array<i64: 3, 3>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  return %0 : tensor<1x1x1x1xf32>
}

// -----

func.func @float_only(%x: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = amp.exp %x : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @if_branches(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{else branch yields 'tensor<4xi32>' but the op expects 'tensor<4xf32>'}}
  %0 = amp.if %c : tensor<i1> -> tensor<4xf32> then {
    amp.yield %x : tensor<4xf32>
  } else {
    amp.yield %y : tensor<4xi32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @if_condition_two_elements(%c: tensor<2xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{condition must hold exactly one element}}
  %0 = amp.if %c : tensor<2xi1> -> tensor<4xf32> then {
    amp.yield %x : tensor<4xf32>
  } else {
    amp.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A condition of dynamic shape (found by fuzzing: the verifier asked a
// dynamic type for its element count, an assertion) is left to run time.
func.func @if_condition_dynamic(%c: tensor<?xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = amp.if %c : tensor<?xi1> -> tensor<4xf32> then {
    amp.yield %x : tensor<4xf32>
  } else {
    amp.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @loop_body_arguments(%n: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{body must take (iteration, condition, 1 loop-carried values), got 2 arguments}}
  %0 = amp.loop %n, %c, %v : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>):
    amp.yield %cond, %v : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @unscale_check_vector_scale(%s: tensor<1xf32>, %g: tensor<3xf32>) {
  // expected-error @+2 {{inv_scale must be a rank-0 f32 tensor}}
  // expected-error @+1 {{failed to infer returned types}}
  %u, %f, %n = amp.multi_tensor_unscale_check %s, %g : (tensor<1xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>, tensor<1xf32>)
  return
}

// -----

func.func @dropout_mask_vector_ratio(%x: tensor<3xf32>, %r: tensor<1xf32>, %c: tensor<i64>) {
  // expected-error @+2 {{ratio must be a rank-0 tensor}}
  // expected-error @+1 {{failed to infer returned types}}
  %m = amp.dropout_mask %x, %r, %c : (tensor<3xf32>, tensor<1xf32>, tensor<i64>) -> tensor<3xi1>
  return
}

// -----

func.func @dropout_mask_vector_counter(%x: tensor<3xf32>, %r: tensor<f32>, %c: tensor<2xi64>) {
  // expected-error @+2 {{counter must be a rank-0 i64 tensor}}
  // expected-error @+1 {{failed to infer returned types}}
  %m = amp.dropout_mask %x, %r, %c : (tensor<3xf32>, tensor<f32>, tensor<2xi64>) -> tensor<3xi1>
  return
}

// -----

func.func @cwg_rank(%x: tensor<2x3x8xf32>, %dy: tensor<2x4x6x6xf32>) -> tensor<4x3x3xf32> {
  // expected-error @+2 {{conv_weight_grad expects X of rank >= 3 and dY of the same rank}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_weight_grad %x, %dy {kernel_shape = array<i64: 3>} : (tensor<2x3x8xf32>, tensor<2x4x6x6xf32>) -> tensor<4x3x3xf32>
  return %0 : tensor<4x3x3xf32>
}

// -----

func.func @cwg_kernel(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error @+2 {{kernel_shape must have one positive size per spatial dimension of X}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_weight_grad %x, %dy {kernel_shape = array<i64: 3>} : (tensor<2x3x8x8xf32>, tensor<2x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

func.func @cwg_group_x(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x4x6x6xf32>) -> tensor<4x1x3x3xf32> {
  // expected-error @+2 {{X has 3 channels, not a multiple of group 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_weight_grad %x, %dy {group = 2 : i64, kernel_shape = array<i64: 3, 3>} : (tensor<2x3x8x8xf32>, tensor<2x4x6x6xf32>) -> tensor<4x1x3x3xf32>
  return %0 : tensor<4x1x3x3xf32>
}

// -----

func.func @cwg_group_dy(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x3x6x6xf32>) -> tensor<3x2x3x3xf32> {
  // expected-error @+2 {{dY has 3 channels, not a multiple of group 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_weight_grad %x, %dy {group = 2 : i64, kernel_shape = array<i64: 3, 3>} : (tensor<2x4x8x8xf32>, tensor<2x3x6x6xf32>) -> tensor<3x2x3x3xf32>
  return %0 : tensor<3x2x3x3xf32>
}

// -----

func.func @cwg_batch(%x: tensor<2x3x8x8xf32>, %dy: tensor<4x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error @+2 {{X has batch 2 but dY has 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_weight_grad %x, %dy {kernel_shape = array<i64: 3, 3>} : (tensor<2x3x8x8xf32>, tensor<4x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

func.func @cwg_spatial(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x4x5x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error @+2 {{dY has spatial size 5 in dimension 2 but the convolution's output has 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_weight_grad %x, %dy {kernel_shape = array<i64: 3, 3>} : (tensor<2x3x8x8xf32>, tensor<2x4x5x6xf32>) -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

func.func @cwg_group_zero(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error @+2 {{group must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_weight_grad %x, %dy {group = 0 : i64, kernel_shape = array<i64: 3, 3>} : (tensor<2x3x8x8xf32>, tensor<2x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

// Window values from a model file are held to [.., 2^31] before any window
// arithmetic (found by fuzzing: int64 overflow in the output size).
func.func @conv_transpose_huge_pad(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<?x?x?x?xf32> {
  %none = amp.none
  // expected-error @+2 {{pad value 4611686018427387904 is outside [-2147483648, 2147483648]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_transpose %x, %w, %none {pads = array<i64: 0, 4611686018427387904, 0, 0>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, none) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @max_pool_huge_stride(%x: tensor<1x2x4x4xf32>) -> tensor<?x?x?x?xf32> {
  // expected-error @+2 {{stride value 1099511627776 is outside [1, 2147483648]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %i = amp.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1099511627776, 1>} : (tensor<1x2x4x4xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xi64>)
  return %y : tensor<?x?x?x?xf32>
}

// -----

// Reshape(x, Shape(y)) takes y's static sizes (here 8 and 4, not 9).
func.func @reshape_like_shape(%x: tensor<?x32xf32>, %y: tensor<?x8x4xf32>) -> tensor<?x9x4xf32> {
  %s = amp.shape %y : (tensor<?x8x4xf32>) -> tensor<3xi64>
  // expected-error @+2 {{inferred type(s) 'tensor<?x8x4xf32>' are incompatible with return type(s) of operation 'tensor<?x9x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.reshape %x, %s : (tensor<?x32xf32>, tensor<3xi64>) -> tensor<?x9x4xf32>
  return %0 : tensor<?x9x4xf32>
}

// -----

func.func @reshape_like_shape_count(%x: tensor<2x3xf32>, %y: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %s = amp.shape %y : (tensor<4x2xf32>) -> tensor<2xi64>
  // expected-error @+2 {{cannot reshape 6 elements into 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// expected-error @+1 {{'amp.onnx_source' must be a 1-D i8 dense_resource on the module}}
module attributes {amp.onnx_source = dense<[1, 2]> : tensor<2xi8>} {
}

// -----

func.func @space_to_depth_mode(%x: tensor<1x2x4x4xf32>) -> tensor<1x8x2x2xf32> {
  // expected-error @+2 {{SpaceToDepth mode must be 'DCR' or 'CRD', not 'RDC'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.space_to_depth %x {blocksize = 2 : i64, mode = "RDC"} : (tensor<1x2x4x4xf32>) -> tensor<1x8x2x2xf32>
  return %0 : tensor<1x8x2x2xf32>
}

// -----

func.func @depth_to_space_mode(%x: tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+2 {{DepthToSpace mode must be 'DCR' or 'CRD', not 'dcr'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.depth_to_space %x {blocksize = 2 : i64, mode = "dcr"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @space_to_depth_indivisible(%x: tensor<1x2x5x4xf32>) -> tensor<1x8x2x2xf32> {
  // expected-error @+2 {{SpaceToDepth blocksize must divide the height and the width}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.space_to_depth %x {blocksize = 2 : i64} : (tensor<1x2x5x4xf32>) -> tensor<1x8x2x2xf32>
  return %0 : tensor<1x8x2x2xf32>
}

// -----

func.func @range_stash_type(%s: tensor<f16>, %l: tensor<f16>, %d: tensor<f16>) -> tensor<?xf16> {
  // expected-error @+2 {{Range stash_type 10 is not supported (1 float or 11 double)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.range %s, %l, %d {stash_type = 10 : i64} : (tensor<f16>, tensor<f16>, tensor<f16>) -> tensor<?xf16>
  return %0 : tensor<?xf16>
}

// -----

func.func @quantize_per_axis_scale_size(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<2x3xui8> {
  %none = amp.none
  // expected-error @+2 {{a per-axis scale must be 1-D with x's size along axis 1 ([3]), not [2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.quantize_linear %x, %s, %none : (tensor<2x3xf32>, tensor<2xf32>, none) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

func.func @quantize_zero_point_shape(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<ui8>) -> tensor<2x3xui8> {
  // expected-error @+2 {{the zero point's shape [] differs from the scale's [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.quantize_linear %x, %s, %z : (tensor<2x3xf32>, tensor<3xf32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

func.func @quantize_output_dtype_conflict(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<2x3xui8> {
  // expected-error @+2 {{QuantizeLinear output_dtype i8 differs from the zero point's type ui8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.quantize_linear %x, %s, %z {output_dtype = i8} : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

func.func @dequantize_blocked_scale_shape(%x: tensor<2x5xi8>, %s: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %none = amp.none
  // expected-error @+2 {{a blocked scale for x of shape [2, 5] with block_size 2 along axis 1 must have size 3 in dimension 1, not [2, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.dequantize_linear %x, %s, %none {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x5xi8>, tensor<2x2xf32>, none) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @dequantize_float_input(%x: tensor<2xf32>, %s: tensor<f32>) -> tensor<2xf32> {
  %none = amp.none
  // expected-error @+2 {{DequantizeLinear input of element type f32 is not supported (int2, uint2, int4, uint4, int8, uint8, int16, uint16, int32 and the 8-bit floats)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.dequantize_linear %x, %s, %none : (tensor<2xf32>, tensor<f32>, none) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reverse_sequence_axes(%x: tensor<5x4x3xf32>, %l: tensor<4xi64>) -> tensor<5x4x3xf32> {
  // expected-error @+2 {{ReverseSequence batch_axis and time_axis must be 0 and 1 in either order, not 2 and 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.reverse_sequence %x, %l {batch_axis = 2 : i64, time_axis = 0 : i64} : (tensor<5x4x3xf32>, tensor<4xi64>) -> tensor<5x4x3xf32>
  return %0 : tensor<5x4x3xf32>
}

// -----

func.func @reverse_sequence_lens(%x: tensor<5x4x3xf32>, %l: tensor<5xi64>) -> tensor<5x4x3xf32> {
  // expected-error @+2 {{ReverseSequence sequence_lens must be 1-D with the batch size 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.reverse_sequence %x, %l : (tensor<5x4x3xf32>, tensor<5xi64>) -> tensor<5x4x3xf32>
  return %0 : tensor<5x4x3xf32>
}

// -----

// 8-bit floats and 4-/2-bit integers are storage types: only Cast,
// CastLike, QuantizeLinear, DequantizeLinear and data movement take them.
func.func @arithmetic_on_float8(%a: tensor<3xf8E4M3FN>) -> tensor<3xf8E4M3FN> {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = amp.add %a, %a : (tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>) -> tensor<3xf8E4M3FN>
  return %0 : tensor<3xf8E4M3FN>
}

// -----

func.func @matmul_on_int4(%a: tensor<2x2xi4>) -> tensor<2x2xi4> {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = amp.matmul %a, %a : (tensor<2x2xi4>, tensor<2x2xi4>) -> tensor<2x2xi4>
  return %0 : tensor<2x2xi4>
}

// -----

func.func @grid_sample_coordinates(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x3x3xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+2 {{GridSample grid holds 3 coordinates per point but X has 2 spatial dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.grid_sample %x, %g : (tensor<1x2x4x4xf32>, tensor<1x3x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @grid_sample_batch(%x: tensor<2x2x4x4xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<2x2x3x3xf32> {
  // expected-error @+2 {{GridSample grid has batch size 1 but X has 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.grid_sample %x, %g : (tensor<2x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<2x2x3x3xf32>
  return %0 : tensor<2x2x3x3xf32>
}

// -----

func.func @compress_condition_rank(%x: tensor<2x5xf32>, %c: tensor<2x5xi1>) -> tensor<?xf32> {
  // expected-error @+2 {{Compress condition must be 1-D, not of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.compress %x, %c : (tensor<2x5xf32>, tensor<2x5xi1>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Recurrent ops: every operand is checked against the gates, directions and
// hidden size (Semantics/Recurrent.h).
func.func @lstm_w_gates(%x: tensor<2x1x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x16x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{W must be [num_directions, 4*hidden_size, input_size] = [1, 16, 3], not [1, 12, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = amp.lstm %x, %w, %r, %none, %none, %none, %none, %none : (tensor<2x1x3xf32>, tensor<1x12x3xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @gru_direction_count(%x: tensor<2x1x3xf32>, %w: tensor<2x12x3xf32>, %r: tensor<1x12x4xf32>) -> tensor<2x2x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{R must be [num_directions, 3*hidden_size, hidden_size] = [2, 12, 4], not [1, 12, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.gru %x, %w, %r, %none, %none, %none {direction = "bidirectional"} : (tensor<2x1x3xf32>, tensor<2x12x3xf32>, tensor<1x12x4xf32>, none, none, none) -> (tensor<2x2x1x4xf32>, tensor<2x1x4xf32>)
  return %y : tensor<2x2x1x4xf32>
}

// -----

func.func @rnn_input_size(%x: tensor<2x1x5xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{W must be [num_directions, 1*hidden_size, input_size] = [1, 4, 5], not [1, 4, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.rnn %x, %w, %r, %none, %none, %none : (tensor<2x1x5xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @rnn_hidden_size_attr(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<2x1x1x5xf32> {
  %none = amp.none
  // expected-error @+2 {{W must be [num_directions, 1*hidden_size, input_size] = [1, 5, 3], not [1, 4, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.rnn %x, %w, %r, %none, %none, %none {hidden_size = 5 : i64} : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<2x1x1x5xf32>, tensor<1x1x5xf32>)
  return %y : tensor<2x1x1x5xf32>
}

// -----

func.func @rnn_bias(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{B must be [num_directions, 2*hidden_size] = [1, 8], not [1, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.rnn %x, %w, %r, %b, %none, %none : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @rnn_sequence_lens(%x: tensor<2x3x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %s: tensor<2xi32>) -> tensor<2x1x3x4xf32> {
  %none = amp.none
  // expected-error @+2 {{sequence_lens must be [batch_size] = [3], not [2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.rnn %x, %w, %r, %none, %s, %none : (tensor<2x3x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, tensor<2xi32>, none) -> (tensor<2x1x3x4xf32>, tensor<1x3x4xf32>)
  return %y : tensor<2x1x3x4xf32>
}

// -----

func.func @gru_initial_h_layout(%x: tensor<3x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %h0: tensor<1x3x4xf32>) -> tensor<3x2x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{initial_h must be [batch_size, num_directions, hidden_size] = [3, 1, 4], not [1, 3, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.gru %x, %w, %r, %none, %none, %h0 {layout = 1 : i64} : (tensor<3x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, none, none, tensor<1x3x4xf32>) -> (tensor<3x2x1x4xf32>, tensor<3x1x4xf32>)
  return %y : tensor<3x2x1x4xf32>
}

// -----

func.func @lstm_peepholes(%x: tensor<2x1x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %p: tensor<1x8xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{P must be [num_directions, 3*hidden_size] = [1, 12], not [1, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = amp.lstm %x, %w, %r, %none, %none, %none, %none, %p : (tensor<2x1x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, none, none, none, none, tensor<1x8xf32>) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @lstm_initial_c_type(%x: tensor<2x1x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %c0: tensor<1x1x4xf16>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{initial_c has element type f16 but X has f32}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = amp.lstm %x, %w, %r, %none, %none, %none, %c0, %none : (tensor<2x1x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, none, none, none, tensor<1x1x4xf16>, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @rnn_direction(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{unknown direction 'backward' (forward, reverse or bidirectional)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.rnn %x, %w, %r, %none, %none, %none {direction = "backward"} : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @rnn_layout(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{layout must be 0 or 1, not 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.rnn %x, %w, %r, %none, %none, %none {layout = 2 : i64} : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @rnn_hidden_size_zero(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{hidden_size must be positive, not 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.rnn %x, %w, %r, %none, %none, %none {hidden_size = 0 : i64} : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @lstm_clip(%x: tensor<2x1x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{clip must be positive, not -1.000000}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = amp.lstm %x, %w, %r, %none, %none, %none, %none, %none {clip = -1.0 : f32} : (tensor<2x1x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @gru_activation_name(%x: tensor<2x1x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{unknown activation 'Swish' (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h = amp.gru %x, %w, %r, %none, %none, %none {activations = ["Sigmoid", "Swish"]} : (tensor<2x1x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @lstm_activation_count(%x: tensor<2x1x3xf32>, %w: tensor<2x16x3xf32>, %r: tensor<2x16x4xf32>) -> tensor<2x2x1x4xf32> {
  %none = amp.none
  // expected-error @+2 {{activations has 3 entries; expected 6 (3 per direction)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %h, %c = amp.lstm %x, %w, %r, %none, %none, %none, %none, %none {direction = "bidirectional", activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<2x1x3xf32>, tensor<2x16x3xf32>, tensor<2x16x4xf32>, none, none, none, none, none) -> (tensor<2x2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>)
  return %y : tensor<2x2x1x4xf32>
}

// -----

func.func @matmul_integer_zero_point_type(%a: tensor<4x5xui8>, %b: tensor<5x3xi8>, %bz: tensor<ui8>) -> tensor<4x3xi32> {
  %none = amp.none
  // expected-error @+2 {{MatMulInteger b_zero_point is ui8 but B is i8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.matmul_integer %a, %b, %none, %bz : (tensor<4x5xui8>, tensor<5x3xi8>, none, tensor<ui8>) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// -----

func.func @matmul_integer_rows(%a: tensor<4x5xui8>, %b: tensor<5x3xi8>, %az: tensor<5xui8>) -> tensor<4x3xi32> {
  %none = amp.none
  // expected-error @+2 {{MatMulInteger a_zero_point has 5 elements but the rows of A (its dimension -2) number 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.matmul_integer %a, %b, %az, %none : (tensor<4x5xui8>, tensor<5x3xi8>, tensor<5xui8>, none) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// -----

func.func @matmul_integer_rank(%a: tensor<4x5xui8>, %b: tensor<5x3xi8>, %az: tensor<4x1xui8>) -> tensor<4x3xi32> {
  %none = amp.none
  // expected-error @+2 {{MatMulInteger a_zero_point must be a scalar or a 1-D tensor with one element per the rows of A (its dimension -2), not of shape [4, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.matmul_integer %a, %b, %az, %none : (tensor<4x5xui8>, tensor<5x3xi8>, tensor<4x1xui8>, none) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// -----

func.func @matmul_integer_columns(%a: tensor<4x5xui8>, %b: tensor<2x5x3xi8>, %bz: tensor<3x1x3xi8>) -> tensor<2x4x3xi32> {
  %none = amp.none
  // expected-error @+2 {{MatMulInteger b_zero_point of shape [3, 1, 3] does not fit B of shape [2, 5, 3] (per column: [N] or [..., 1, N])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.matmul_integer %a, %b, %none, %bz : (tensor<4x5xui8>, tensor<2x5x3xi8>, none, tensor<3x1x3xi8>) -> tensor<2x4x3xi32>
  return %0 : tensor<2x4x3xi32>
}

// -----

func.func @matmul_integer_operand_type(%a: tensor<4x5xi16>, %b: tensor<5x3xi8>) -> tensor<4x3xi32> {
  %none = amp.none
  // expected-error @+1 {{operand #0 must be ranked tensor of 8-bit signless integer or 8-bit unsigned integer values}}
  %0 = amp.matmul_integer %a, %b, %none, %none : (tensor<4x5xi16>, tensor<5x3xi8>, none, none) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// -----

func.func @conv_integer_x_zero_point(%x: tensor<1x2x4x4xui8>, %w: tensor<3x2x1x1xi8>, %xz: tensor<2xui8>) -> tensor<1x3x4x4xi32> {
  %none = amp.none
  // expected-error @+2 {{ConvInteger x_zero_point must be a scalar (per-tensor quantization), not of shape [2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_integer %x, %w, %xz, %none : (tensor<1x2x4x4xui8>, tensor<3x2x1x1xi8>, tensor<2xui8>, none) -> tensor<1x3x4x4xi32>
  return %0 : tensor<1x3x4x4xi32>
}

// -----

func.func @conv_integer_channels(%x: tensor<1x2x4x4xui8>, %w: tensor<3x2x1x1xi8>, %wz: tensor<2xi8>) -> tensor<1x3x4x4xi32> {
  %none = amp.none
  // expected-error @+2 {{ConvInteger w_zero_point has 2 elements but the output channels of W (its dimension 0) number 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_integer %x, %w, %none, %wz : (tensor<1x2x4x4xui8>, tensor<3x2x1x1xi8>, none, tensor<2xi8>) -> tensor<1x3x4x4xi32>
  return %0 : tensor<1x3x4x4xi32>
}

// -----

func.func @conv_integer_group(%x: tensor<1x2x4x4xui8>, %w: tensor<3x2x1x1xi8>) -> tensor<1x3x4x4xi32> {
  %none = amp.none
  // expected-error @+2 {{input has 2 channels but W expects 2 x group 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.conv_integer %x, %w, %none, %none {group = 2 : i64} : (tensor<1x2x4x4xui8>, tensor<3x2x1x1xi8>, none, none) -> tensor<1x3x4x4xi32>
  return %0 : tensor<1x3x4x4xi32>
}

// -----

func.func @qlinear_matmul_scale_types(%a: tensor<4x5xui8>, %as: tensor<f32>, %az: tensor<ui8>, %b: tensor<5x3xi8>, %bs: tensor<f16>, %bz: tensor<i8>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<4x3xui8> {
  // expected-error @+2 {{QLinearMatMul scales must share one float type (f32 and f16)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.qlinear_matmul %a, %as, %az, %b, %bs, %bz, %ys, %yz : (tensor<4x5xui8>, tensor<f32>, tensor<ui8>, tensor<5x3xi8>, tensor<f16>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  return %0 : tensor<4x3xui8>
}

// -----

func.func @qlinear_matmul_y_scale(%a: tensor<4x5xui8>, %as: tensor<f32>, %az: tensor<ui8>, %b: tensor<5x3xi8>, %bs: tensor<f32>, %bz: tensor<i8>, %ys: tensor<3xf32>, %yz: tensor<ui8>) -> tensor<4x3xui8> {
  // expected-error @+2 {{QLinearMatMul y_scale must be a scalar (per-tensor quantization), not of shape [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.qlinear_matmul %a, %as, %az, %b, %bs, %bz, %ys, %yz : (tensor<4x5xui8>, tensor<f32>, tensor<ui8>, tensor<5x3xi8>, tensor<f32>, tensor<i8>, tensor<3xf32>, tensor<ui8>) -> tensor<4x3xui8>
  return %0 : tensor<4x3xui8>
}

// -----

func.func @qlinear_conv_bias(%x: tensor<1x2x4x4xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %w: tensor<3x2x1x1xi8>, %ws: tensor<f32>, %wz: tensor<i8>, %ys: tensor<f32>, %yz: tensor<ui8>, %bias: tensor<2xi32>) -> tensor<1x3x4x4xui8> {
  // expected-error @+2 {{QLinearConv B must be 1-D with one element per output channel (3), not of shape tensor<2xi32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.qlinear_conv %x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %bias : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x3x4x4xui8>
  return %0 : tensor<1x3x4x4xui8>
}

// -----

func.func @qlinear_conv_w_zero_point_type(%x: tensor<1x2x4x4xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %w: tensor<3x2x1x1xi8>, %ws: tensor<3xf32>, %wz: tensor<3xui8>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<1x3x4x4xui8> {
  %none = amp.none
  // expected-error @+2 {{QLinearConv w_zero_point is ui8 but w is i8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.qlinear_conv %x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %none : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x1x1xi8>, tensor<3xf32>, tensor<3xui8>, tensor<f32>, tensor<ui8>, none) -> tensor<1x3x4x4xui8>
  return %0 : tensor<1x3x4x4xui8>
}

// -----

func.func @nms_boxes_shape(%boxes: tensor<1x6x3xf32>, %scores: tensor<1x2x6xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  // expected-error @+2 {{NonMaxSuppression boxes must be [num_batches, num_boxes, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.non_max_suppression %boxes, %scores, %none, %none, %none : (tensor<1x6x3xf32>, tensor<1x2x6xf32>, none, none, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

func.func @nms_scores_rank(%boxes: tensor<1x6x4xf32>, %scores: tensor<2x6xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  // expected-error @+2 {{NonMaxSuppression scores must be [num_batches, num_classes, num_boxes]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.non_max_suppression %boxes, %scores, %none, %none, %none : (tensor<1x6x4xf32>, tensor<2x6xf32>, none, none, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

func.func @nms_batches(%boxes: tensor<2x6x4xf32>, %scores: tensor<1x2x6xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  // expected-error @+2 {{NonMaxSuppression boxes have 2 batches but scores 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.non_max_suppression %boxes, %scores, %none, %none, %none : (tensor<2x6x4xf32>, tensor<1x2x6xf32>, none, none, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

func.func @nms_boxes(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x5xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  // expected-error @+2 {{NonMaxSuppression boxes hold 6 boxes per batch but scores score 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.non_max_suppression %boxes, %scores, %none, %none, %none : (tensor<1x6x4xf32>, tensor<1x2x5xf32>, none, none, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

func.func @nms_threshold_shape(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %iou: tensor<2xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  // expected-error @+2 {{NonMaxSuppression iou_threshold must be a scalar or hold one element}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.non_max_suppression %boxes, %scores, %none, %iou, %none : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, none, tensor<2xf32>, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

func.func @nms_center_point_box(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  // expected-error @+2 {{NonMaxSuppression center_point_box must be 0 or 1, not 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.non_max_suppression %boxes, %scores, %none, %none, %none {center_point_box = 2 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, none, none, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

func.func @roi_align_mode(%x: tensor<1x2x8x8xf32>, %rois: tensor<3x4xf32>, %b: tensor<3xi64>) -> tensor<3x2x1x1xf32> {
  // expected-error @+2 {{RoiAlign mode must be avg or max, not 'mean'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.roi_align %x, %rois, %b {mode = "mean"} : (tensor<1x2x8x8xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x1x1xf32>
  return %0 : tensor<3x2x1x1xf32>
}

// -----

func.func @roi_align_rois(%x: tensor<1x2x8x8xf32>, %rois: tensor<3x5xf32>, %b: tensor<3xi64>) -> tensor<3x2x1x1xf32> {
  // expected-error @+2 {{RoiAlign rois must be [num_rois, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.roi_align %x, %rois, %b : (tensor<1x2x8x8xf32>, tensor<3x5xf32>, tensor<3xi64>) -> tensor<3x2x1x1xf32>
  return %0 : tensor<3x2x1x1xf32>
}

// -----

func.func @roi_align_batch_indices(%x: tensor<1x2x8x8xf32>, %rois: tensor<3x4xf32>, %b: tensor<2xi64>) -> tensor<3x2x1x1xf32> {
  // expected-error @+2 {{RoiAlign batch_indices must be [num_rois] with rois' 3 rois}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.roi_align %x, %rois, %b : (tensor<1x2x8x8xf32>, tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x2x1x1xf32>
  return %0 : tensor<3x2x1x1xf32>
}

// -----

func.func @roi_align_rank(%x: tensor<2x8x8xf32>, %rois: tensor<3x4xf32>, %b: tensor<3xi64>) -> tensor<3x2x1x1xf32> {
  // expected-error @+2 {{RoiAlign X must be [N, C, H, W], not of rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.roi_align %x, %rois, %b : (tensor<2x8x8xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x1x1xf32>
  return %0 : tensor<3x2x1x1xf32>
}

// -----

func.func @roi_align_sizes(%x: tensor<1x2x8x8xf32>, %rois: tensor<3x4xf32>, %b: tensor<3xi64>) -> tensor<3x2x1x1xf32> {
  // expected-error @+2 {{RoiAlign output_height and output_width must be positive, not 0 and 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.roi_align %x, %rois, %b {output_height = 0 : i64} : (tensor<1x2x8x8xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x1x1xf32>
  return %0 : tensor<3x2x1x1xf32>
}

// -----

func.func @roi_align_types(%x: tensor<1x2x8x8xf32>, %rois: tensor<3x4xf16>, %b: tensor<3xi64>) -> tensor<3x2x1x1xf32> {
  // expected-error @+2 {{operands must have the same element type, got f32 and f16}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = amp.roi_align %x, %rois, %b : (tensor<1x2x8x8xf32>, tensor<3x4xf16>, tensor<3xi64>) -> tensor<3x2x1x1xf32>
  return %0 : tensor<3x2x1x1xf32>
}
