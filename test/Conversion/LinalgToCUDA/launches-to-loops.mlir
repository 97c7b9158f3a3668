// RUN: amp-opt %s -amp-linalg-to-gpu -amp-gpu-launches-to-loops | FileCheck %s
// The CPU emulation of the CUDA lowering: each launch is loops over its
// blocks and threads; a folded zero fill comes back before its GEMM.

// CHECK-LABEL: func.func @emulated
// CHECK-NOT: gpu.launch
// CHECK: %[[C:.+]] = memref.alloc() : memref<4x16xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%[[C]] : memref<4x16xf32>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xf16>, memref<8x16xf16>) outs(%[[C]] : memref<4x16xf32>)
// CHECK-NOT: amp_cuda.beta
// Blocks z, y, x, then threads z, y, x (1 x 1 x 1 block of 64 threads).
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[BX:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TX:.+]] = %{{.+}} to %[[T:.+]] step
// CHECK: %[[BASE:.+]] = arith.muli %[[BX]], %{{.+}} : index
// CHECK: arith.addi %[[BASE]], %[[TX]] : index
// CHECK: math.exp
// CHECK-NOT: gpu.terminator
func.func @emulated(%a: memref<4x8xf16>, %b: memref<8x16xf16>, %x: memref<64xf32>) -> memref<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf16>, memref<8x16xf16>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%x : memref<64xf32>) {
  ^bb0(%out: f32):
    %e = math.exp %out : f32
    linalg.yield %e : f32
  }
  return %c : memref<4x16xf32>
}
