// RUN: amp-opt %s -convert-amp-to-linalg | FileCheck %s
// RoiAlign: the batch indices checked against N at run time, then one
// generic over [num_rois, C, output_height, output_width] whose body reads
// its ROI, scales and shifts it (half_pixel: - 0.5), sizes the grid
// (sampling_ratio 0: ceil(roi / output) at run time) and loops over the
// samples, each read from X unless it lies outside [-1, size].

// CHECK: module attributes {amp_linalg.runtime_checks = ["RoiAlign: batch index {value} is outside [0, {bound})"
// CHECK-LABEL: func.func @roi_align_avg
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x8x8xf32>, %[[ROIS:[^:]*]]: tensor<?x4xf32>, %[[B:[^:]*]]: tensor<?xi64>
// CHECK: call @amp_cpu_check_failed
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x3x2x2xf32>)
// CHECK: %[[R:.*]] = linalg.index 0 : index
// CHECK: tensor.extract %[[ROIS]][%[[R]], %{{.*}}] : tensor<?x4xf32>
// CHECK: tensor.extract %[[B]][%[[R]]] : tensor<?xi64>
// CHECK: %[[SCALE:.*]] = arith.constant 6.250000e-02 : f32
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[SC:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: arith.subf %[[SC]], %[[HALF]] : f32
// CHECK: math.ceil
// CHECK: arith.fptosi
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK: } else {
// CHECK: tensor.extract %[[X]]
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: linalg.yield
// CHECK: return %[[OUT]]
func.func @roi_align_avg(%x: tensor<2x3x8x8xf32>, %rois: tensor<?x4xf32>, %b: tensor<?xi64>) -> tensor<?x3x2x2xf32> {
  %0 = amp.roi_align %x, %rois, %b {output_height = 2 : i64, output_width = 2 : i64, spatial_scale = 0.0625 : f32} : (tensor<2x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x3x2x2xf32>
  return %0 : tensor<?x3x2x2xf32>
}

// max, output_half_pixel, a fixed 2 x 2 grid: no ceil; per sample the
// largest weighted corner, the first sample replacing the initial 0 and the
// others taken by maximum; no division.
// CHECK-LABEL: func.func @roi_align_max
// CHECK: linalg.generic
// CHECK-NOT: math.ceil
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if
// CHECK: } else {
// CHECK: %[[M1:.*]] = arith.maximumf %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK-NEXT: %[[M2:.*]] = arith.maximumf %[[M1]], %{{[0-9]+}} : f32
// CHECK-NEXT: %[[M3:.*]] = arith.maximumf %[[M2]], %{{[0-9]+}} : f32
// CHECK-NEXT: scf.yield %[[M3]] : f32
// CHECK: %[[V:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.select %{{.*}}, %{{.*}}, %[[V]] : f32
// CHECK-NOT: arith.divf
// CHECK: linalg.yield
func.func @roi_align_max(%x: tensor<1x3x8x8xf32>, %rois: tensor<4x4xf32>, %b: tensor<4xi64>) -> tensor<4x3x1x1xf32> {
  %0 = amp.roi_align %x, %rois, %b {mode = "max", coordinate_transformation_mode = "output_half_pixel", sampling_ratio = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x3x1x1xf32>
  return %0 : tensor<4x3x1x1xf32>
}
