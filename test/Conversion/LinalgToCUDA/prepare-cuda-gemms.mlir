// RUN: amp-opt %s -amp-prepare-cuda-gemms -canonicalize | FileCheck %s
// fp32-accumulating GEMMs on widened fp16/bf16 tensors read the narrow
// tensors directly (the named op widens them itself: same results).

#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @narrowed
// CHECK-NOT: arith.extf
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf16>, tensor<8x16xf16>) outs(%{{.+}} : tensor<4x16xf32>)
func.func @narrowed(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %aw = tensor.empty() : tensor<4x8xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf16>) outs(%aw : tensor<4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %bw = tensor.empty() : tensor<8x16xf32>
  %b32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x16xf16>) outs(%bw : tensor<8x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<8x16xf32>
  %r = linalg.matmul ins(%a32, %b32 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @batched_bf16
// CHECK: linalg.batch_matmul_transpose_b ins(%arg0, %arg1 : tensor<2x4x8xbf16>, tensor<2x5x8xbf16>)
func.func @batched_bf16(%a: tensor<2x4x8xbf16>, %b: tensor<2x5x8xbf16>, %c: tensor<2x4x5xf32>) -> tensor<2x4x5xf32> {
  %aw = tensor.empty() : tensor<2x4x8xf32>
  %a32 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<2x4x8xbf16>) outs(%aw : tensor<2x4x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<2x4x8xf32>
  %bw = tensor.empty() : tensor<2x5x8xf32>
  %b32 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<2x5x8xbf16>) outs(%bw : tensor<2x5x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<2x5x8xf32>
  %r = linalg.batch_matmul_transpose_b ins(%a32, %b32 : tensor<2x4x8xf32>, tensor<2x5x8xf32>) outs(%c : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %r : tensor<2x4x5xf32>
}

// CHECK-LABEL: func.func @mixed_stays
// One operand is not a widened tensor: cuBLASLt wants one operand type.
// CHECK: %[[W:.+]] = linalg.generic
// CHECK: linalg.matmul ins(%[[W]], %arg1 : tensor<4x8xf32>, tensor<8x16xf32>)
func.func @mixed_stays(%a: tensor<4x8xf16>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %aw = tensor.empty() : tensor<4x8xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf16>) outs(%aw : tensor<4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %r = linalg.matmul ins(%a32, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @reshaped_and_zero_filled
// The widened operand was collapsed after widening: the narrow one is
// collapsed instead. The zero fill of the init goes (beta = 0).
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[EMPTY:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-DAG: %[[A:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<1x4x8xf16> into tensor<4x8xf16>
// CHECK: linalg.matmul {amp_cuda.beta = 0.000000e+00 : f32} ins(%[[A]], %arg1 : tensor<4x8xf16>, tensor<8x16xf16>) outs(%[[EMPTY]] : tensor<4x16xf32>)
func.func @reshaped_and_zero_filled(%a: tensor<1x4x8xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf32> {
  %aw = tensor.empty() : tensor<1x4x8xf32>
  %a32 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x4x8xf16>) outs(%aw : tensor<1x4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<1x4x8xf32>
  %a2 = tensor.collapse_shape %a32 [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %bw = tensor.empty() : tensor<8x16xf32>
  %b32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x16xf16>) outs(%bw : tensor<8x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %cw = tensor.empty() : tensor<4x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%cw : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.matmul ins(%a2, %b32 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
