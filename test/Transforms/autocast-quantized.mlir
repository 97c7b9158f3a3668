// RUN: amp-opt %s -amp-autocast="annotate=true" -split-input-file | FileCheck %s
// amp-autocast leaves quantized regions of QDQ models alone: an op that
// reads a DequantizeLinear result or feeds a QuantizeLinear stands for an
// integer kernel (onnxruntime fuses DequantizeLinear -> MatMul ->
// QuantizeLinear); a cast in between would break the pattern. Ops outside
// the region still change.

// CHECK-LABEL: func.func @qdq_matmul
// CHECK: %[[XD:.*]] = amp.dequantize_linear
// CHECK: %[[WD:.*]] = amp.dequantize_linear
// CHECK-NOT: amp.cast
// CHECK: %[[M:.*]] = amp.matmul %[[XD]], %[[WD]] {amp.reason = "quantized region: input from DequantizeLinear 'xd'"} : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
// CHECK: amp.quantize_linear %[[M]]
// The float MatMul beside the region goes to f16.
// CHECK: amp.matmul {{.*}} -> tensor<3x4xf16>
func.func @qdq_matmul(%x: tensor<3x8xui8>, %w: tensor<8x4xi8>, %f: tensor<3x8xf32>, %g: tensor<8x4xf32>) -> (tensor<3x4xui8>, tensor<3x4xf32>) {
  %s = amp.constant dense<0.02> : tensor<f32>
  %z = amp.constant dense<128> : tensor<ui8>
  %ws = amp.constant dense<0.01> : tensor<f32>
  %wz = amp.constant dense<0> : tensor<i8>
  %xd = amp.dequantize_linear %x, %s, %z : (tensor<3x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<3x8xf32> loc("xd")
  %wd = amp.dequantize_linear %w, %ws, %wz : (tensor<8x4xi8>, tensor<f32>, tensor<i8>) -> tensor<8x4xf32> loc("wd")
  %m = amp.matmul %xd, %wd : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32> loc("m")
  %q = amp.quantize_linear %m, %s, %z : (tensor<3x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<3x4xui8> loc("q")
  %other = amp.matmul %f, %g : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32> loc("other")
  return %q, %other : tensor<3x4xui8>, tensor<3x4xf32>
}

// -----

// An op that feeds a QuantizeLinear (its inputs are plain floats) stays
// too.
// CHECK-LABEL: func.func @feeds_quantize
// CHECK: amp.conv {{.*}}amp.reason = "quantized region: output to QuantizeLinear 'q'"{{.*}} -> tensor<1x4x6x6xf32>
func.func @feeds_quantize(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xui8> {
  %s = amp.constant dense<0.02> : tensor<f32>
  %z = amp.constant dense<128> : tensor<ui8>
  %none = amp.none
  %c = amp.conv %x, %w, %none : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32> loc("c")
  %q = amp.quantize_linear %c, %s, %z : (tensor<1x4x6x6xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x6x6xui8> loc("q")
  return %q : tensor<1x4x6x6xui8>
}
