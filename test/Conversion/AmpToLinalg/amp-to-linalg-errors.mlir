// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file -verify-diagnostics
// Ops (or forms of ops) without a CPU lowering are reported on the op with
// the ONNX operator name and, where known, the reason.

func.func @no_lowering(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{ONNX Bernoulli is not lowerable to the CPU backend yet (amp-run cannot run this model; docs/CpuBackend.md lists the lowered operators)}}
  %y = amp.bernoulli %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @max_unpool_dynamic_batch(%x: tensor<?x1x2x2xf32>, %i: tensor<?x1x2x2xi64>) -> tensor<?x1x4x4xf32> {
  %none = amp.none
  // expected-error@+1 {{ONNX MaxUnpool is not lowerable to the CPU backend yet: a dynamic output without output_shape}}
  %y = amp.max_unpool %x, %i, %none {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x1x2x2xf32>, tensor<?x1x2x2xi64>, none) -> tensor<?x1x4x4xf32>
  return %y : tensor<?x1x4x4xf32>
}

// -----

// Axes read at run time lower (runtime-shape-inputs.mlir) when every list
// has the starts' static length.
func.func @slice_runtime_axes_of_unknown_length(%x: tensor<8xf32>, %s: tensor<?xi64>) -> tensor<?xf32> {
  %c = amp.constant dense<[6]> : tensor<1xi64>
  %none = amp.none
  // expected-error@+1 {{ONNX Slice is not lowerable to the CPU backend yet: starts, ends, axes and steps are not all of the same static length}}
  %y = amp.slice %x, %c, %c, %s, %none : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<?xi64>, none) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

func.func @conv_dynamic_weights(%x: tensor<1x3x8x8xf32>, %w: tensor<?x3x3x3xf32>) -> tensor<1x?x6x6xf32> {
  %none = amp.none
  // expected-error@+1 {{ONNX Conv is not lowerable to the CPU backend yet: weights with a dynamic shape}}
  %y = amp.conv %x, %w, %none : (tensor<1x3x8x8xf32>, tensor<?x3x3x3xf32>, none) -> tensor<1x?x6x6xf32>
  return %y : tensor<1x?x6x6xf32>
}
