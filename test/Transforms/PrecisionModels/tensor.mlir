// amp-autocast on tensor data movement (Tensor.cpp): reshapes, slices,
// insert_slice, concat and pad between low-precision ops stay low; pad's
// padding value is truncated in its region.
//
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{annotate=true})' | FileCheck %s

// CHECK-LABEL: func.func @movement(
// CHECK: %[[MM:.+]] = amp.matmul {{.*}} -> tensor<4x8xf16>
// CHECK: %[[E:.+]] = tensor.expand_shape %[[MM]] {{.*}} : tensor<4x8xf16> into tensor<4x2x4xf16>
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[E]] {{.*}} : tensor<4x2x4xf16> into tensor<8x4xf16>
// CHECK: %[[S:.+]] = tensor.extract_slice %[[C]][0, 0] [4, 4] [1, 1] {{.*}} : tensor<8x4xf16> to tensor<4x4xf16>
// CHECK: %[[CAT:.+]] = tensor.concat dim(1) %[[S]], %[[S]] {{.*}} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x8xf16>
// CHECK: %[[P:.+]] = tensor.pad %[[CAT]] low[1, 0] high[1, 0]
// CHECK: %[[PV:.+]] = arith.truncf %{{.+}} : f32 to f16
// CHECK-NEXT: tensor.yield %[[PV]] : f16
// CHECK: } {amp.reason = "between allow ops{{.*}} : tensor<4x8xf16> to tensor<6x8xf16>
// CHECK: amp.matmul %[[P]], %{{.+}} {{.*}} -> tensor<6x4xf16>
func.func @movement(%x: tensor<4x16xf32>) -> tensor<6x4xf32> {
  %w = amp.constant dense<0.5> : tensor<16x8xf32>
  %w2 = amp.constant dense<0.25> : tensor<8x4xf32>
  %zero = arith.constant 0.0 : f32
  %mm = amp.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %e = tensor.expand_shape %mm [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2]] : tensor<4x2x4xf32> into tensor<8x4xf32>
  %s = tensor.extract_slice %c[0, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  %cat = tensor.concat dim(1) %s, %s : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %p = tensor.pad %cat low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x8xf32>
  %mm2 = amp.matmul %p, %w2 : (tensor<6x8xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
  return %mm2 : tensor<6x4xf32>
}
