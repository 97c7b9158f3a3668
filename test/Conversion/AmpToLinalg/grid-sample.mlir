// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// GridSample: one generic over Y; the body reads the grid's two
// coordinates (x first) and the image's taps (2 x 2 for linear), each
// index clamped into the image; zeros padding selects 0 outside.

// CHECK-LABEL: func.func @grid_sample_linear_zeros
// CHECK: linalg.generic
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c1{{.*}}] : tensor<1x3x3x2xf32>
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c0{{.*}}] : tensor<1x3x3x2xf32>
// CHECK: math.floor
// CHECK-COUNT-4: tensor.extract %{{.*}} : tensor<1x2x4x5xf32>
// CHECK: linalg.yield
func.func @grid_sample_linear_zeros(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = amp.grid_sample %x, %g : (tensor<1x2x4x5xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Cubic reads 4 x 4 taps; nearest rounds half to even and reads one.
// CHECK-LABEL: func.func @grid_sample_cubic_and_nearest
// CHECK-COUNT-16: tensor.extract %{{.*}} : tensor<1x1x4x4xf32>
// CHECK: linalg.generic
// CHECK: math.roundeven
// CHECK: math.roundeven
// CHECK-COUNT-1: tensor.extract %{{.*}} : tensor<1x1x4x4xf32>
// CHECK-NOT: tensor.extract %{{.*}} : tensor<1x1x4x4xf32>
// CHECK: linalg.yield
func.func @grid_sample_cubic_and_nearest(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  %0 = amp.grid_sample %x, %g {mode = "cubic", padding_mode = "border"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  %1 = amp.grid_sample %x, %g {mode = "nearest", padding_mode = "reflection", align_corners = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0, %1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}
