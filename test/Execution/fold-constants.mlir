// amp-fold-constants: ops computed from constants only are evaluated by
// the CPU backend (JIT) and replaced by constants.
//
// RUN: amp-opt %s --amp-fold-constants -split-input-file | FileCheck %s

// An attention scale 1/sqrt(d) written as constant math folds to one
// constant, in the backend's fp32 numerics; the tensor op stays.
// CHECK-LABEL: func.func @attention_scale
// CHECK-NOT: amp.sqrt
// CHECK-NOT: amp.reciprocal
// CHECK-NOT: amp.pow
// CHECK: %[[S:.*]] = amp.constant dense<1.250000e-01> : tensor<f32>
// CHECK: %[[Y:.*]] = amp.mul %arg0, %[[S]]
// CHECK: return %[[Y]]
func.func @attention_scale(%x: tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  %d = amp.constant dense<64.0> : tensor<f32>
  %half = amp.constant dense<0.5> : tensor<f32>
  %p = amp.pow %d, %half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = amp.reciprocal %p : (tensor<f32>) -> tensor<f32>
  %y = amp.mul %x, %r : (tensor<2x64x64xf32>, tensor<f32>) -> tensor<2x64x64xf32>
  return %y : tensor<2x64x64xf32>
}

// -----

// Tensors and casts fold too; fp16 math rounds as the backend rounds it
// (exp(1) = 2.71875 in fp16). Values the function still uses stay.
// CHECK-LABEL: func.func @tensors
// CHECK-DAG: amp.constant dense<[1.000000e+00, 2.718750e+00]> : tensor<2xf16>
// CHECK-DAG: amp.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NOT: amp.exp
// CHECK-NOT: amp.cast
func.func @tensors() -> (tensor<2xf16>, tensor<2xf32>) {
  %a = amp.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %h = amp.cast %a {to = f16} : (tensor<2xf32>) -> tensor<2xf16>
  %e = amp.exp %h : (tensor<2xf16>) -> tensor<2xf16>
  return %e, %a : tensor<2xf16>, tensor<2xf32>
}

// -----

// Not folded: ops with a non-constant operand, results above max-elements,
// Dropout masks and the gradient seed.
// CHECK-LABEL: func.func @kept
// CHECK: amp.exp %arg0
// CHECK: amp.gradient_seed
// CHECK: amp.dropout_mask
// CHECK: amp.expand
func.func @kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>, tensor<4xi1>, tensor<512x256xf32>) {
  %e = amp.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = amp.gradient_seed : tensor<f32>
  %r = amp.constant dense<0.5> : tensor<f32>
  %c = amp.constant dense<3> : tensor<i64>
  %z = amp.constant dense<1.0> : tensor<4xf32>
  %m = amp.dropout_mask %z, %r, %c : (tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xi1>
  %shape = amp.constant dense<[512, 256]> : tensor<2xi64>
  %big = amp.expand %r, %shape : (tensor<f32>, tensor<2xi64>) -> tensor<512x256xf32>
  return %e, %s, %m, %big : tensor<4xf32>, tensor<f32>, tensor<4xi1>, tensor<512x256xf32>
}

// -----

// A DequantizeLinear of constant int8 weights stays: folded, the weight
// would be stored in float (4x the bytes) and leave QDQ form. A
// QuantizeLinear of constants folds (to the smaller integer tensor).
// CHECK-LABEL: func.func @quantized_weights
// CHECK: %[[WQ:.*]] = amp.constant dense<[1, -2, 3, 127]> : tensor<4xi8>
// CHECK: amp.dequantize_linear %[[WQ]]
// CHECK-NOT: amp.quantize_linear
// CHECK: %[[Q:.*]] = amp.constant dense<[5, -10, 15, 127]> : tensor<4xi8>
// CHECK: amp.dequantize_linear %[[Q]]
func.func @quantized_weights() -> (tensor<4xf32>, tensor<4xf32>) {
  %wq = amp.constant dense<[1, -2, 3, 127]> : tensor<4xi8>
  %s = amp.constant dense<0.1> : tensor<f32>
  %z = amp.constant dense<0> : tensor<i8>
  %w = amp.dequantize_linear %wq, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %f = amp.constant dense<[0.5, -1.0, 1.5, 100.0]> : tensor<4xf32>
  %q = amp.quantize_linear %f, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  %d = amp.dequantize_linear %q, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  return %w, %d : tensor<4xf32>, tensor<4xf32>
}
