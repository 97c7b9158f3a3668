// RUN: amp-opt %s -amp-linalg-to-gpu -gpu-kernel-outlining -amp-collect-kernels | FileCheck %s
// Outlined kernels are named after the ONNX node of their launch (a C
// identifier plus a counter; "kernel" without a name) and gathered in one
// module.

// CHECK: gpu.launch_func @amp_kernels::@Conv_1_0
// CHECK: gpu.launch_func @amp_kernels::@k_7_weird_name__1
// CHECK: gpu.launch_func @amp_kernels::@kernel_2
// CHECK: gpu.module @amp_kernels
// CHECK-NEXT: gpu.func @Conv_1_0
// CHECK: gpu.func @k_7_weird_name__1
// CHECK: gpu.func @kernel_2
// CHECK-NOT: gpu.module
func.func @ops(%x: memref<8xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } loc("Conv_1")
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%y : memref<8xf32>) outs(%x : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.sqrt %in : f32
    linalg.yield %e : f32
  } loc("7/weird.name!")
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%x : memref<8xf32>) {
  ^bb0(%out: f32):
    %e = math.absf %out : f32
    linalg.yield %e : f32
  }
  return
}
