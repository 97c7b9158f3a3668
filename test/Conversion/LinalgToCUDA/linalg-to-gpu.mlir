// RUN: amp-opt %s --split-input-file --verify-diagnostics -amp-linalg-to-gpu | FileCheck %s
// Bufferized linalg -> one gpu.launch per op (one thread per point of the
// parallel iteration space, linearised, innermost dimension fastest) and
// cuBLASLt-able GEMMs left in place with their zero fill folded.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @gemm_and_reduction
// The zero fill before the GEMM is folded into it (beta = 0).
// CHECK-NOT: linalg.fill
// CHECK: linalg.matmul {amp_cuda.beta = 0.000000e+00 : f32} ins(%{{.+}}, %{{.+}} : memref<4x8xf16>, memref<8x16xf16>) outs(%[[C:.+]] : memref<4x16xf32>)
// The fill of the sum: 5 points, one block of 32 threads (a warp).
// CHECK: %[[C32:.+]] = arith.constant 32 : index
// CHECK: gpu.launch blocks({{.+}}) in ({{.+}} = %{{.+}}, {{.+}}) threads({{.+}}) in (%{{.+}} = %[[C32]],
// CHECK: arith.cmpi ult
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<5xf32>
// CHECK: gpu.terminator
// The column sum: the reduction loop (first in the op) runs inside each
// of the 5 threads.
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[SIX:.+]] step
// CHECK: memref.load %{{.+}} : memref<6x5xf32>
// CHECK: arith.addf
// CHECK: gpu.terminator
// Deallocations are gone: the artifact's memory plan places buffers.
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @gemm_and_reduction(%a: memref<4x8xf16>, %b: memref<8x16xf16>, %x: memref<6x5xf32>) -> (memref<4x16xf32>, memref<5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf16>, memref<8x16xf16>) outs(%c : memref<4x16xf32>)
  %s = memref.alloc() : memref<5xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<5xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<6x5xf32>) outs(%s : memref<5xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  }
  %t = memref.alloc() : memref<5xf32>
  memref.copy %s, %t : memref<5xf32> to memref<5xf32>
  memref.dealloc %t : memref<5xf32>
  return %c, %s : memref<4x16xf32>, memref<5xf32>
}

// -----

// CHECK-LABEL: func.func @linearised
// 3 x 1000 points: 12 blocks of 256 threads; the point's indices are the
// linear index's remainder and quotient by the inner size.
// CHECK-DAG: %[[BLOCKS:.+]] = arith.constant 12 : index
// CHECK-DAG: %[[THREADS:.+]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], {{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[THREADS]],
// CHECK: %[[BASE:.+]] = arith.muli %[[BX]], %{{.+}} : index
// CHECK: %[[LINEAR:.+]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[LINEAR]], %{{.+}} : index
// CHECK: scf.if %[[IN]]
// CHECK: %[[J:.+]] = arith.remui %[[LINEAR]], %{{.+}} : index
// CHECK: %[[I:.+]] = arith.divui %[[LINEAR]], %{{.+}} : index
// CHECK: memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<3x1000xf32>
// CHECK: math.exp
func.func @linearised(%x: memref<3x1000xf32>, %y: memref<3x1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x1000xf32>) outs(%y : memref<3x1000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @transposed_views
// A GEMM reading a transposed view stays a library call (transA); a
// strided copy becomes a kernel; a contiguous one stays a copy.
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xf32, strided<[1, 4]>>, memref<8x5xf32>)
// CHECK: gpu.launch
// CHECK: memref.copy %{{.+}}, %{{.+}} : memref<4x5xf32> to memref<4x5xf32>
func.func @transposed_views(%at: memref<8x4xf32>, %b: memref<8x5xf32>, %c: memref<4x5xf32>, %d: memref<4x5xf32>, %e: memref<5x4xf32>) {
  %a = memref.transpose %at (i, j) -> (j, i) : memref<8x4xf32> to memref<4x8xf32, strided<[1, 4]>>
  linalg.matmul ins(%a, %b : memref<4x8xf32, strided<[1, 4]>>, memref<8x5xf32>) outs(%c : memref<4x5xf32>)
  %et = memref.transpose %e (i, j) -> (j, i) : memref<5x4xf32> to memref<4x5xf32, strided<[1, 4]>>
  memref.copy %et, %d : memref<4x5xf32, strided<[1, 4]>> to memref<4x5xf32>
  memref.copy %c, %d : memref<4x5xf32> to memref<4x5xf32>
  return
}

// -----

// CHECK-LABEL: func.func @integer_and_scalar
// Integer GEMMs are not cuBLASLt's: they become kernels. Scalar work runs
// in a single-thread launch.
// CHECK-NOT: linalg.matmul
// CHECK: gpu.launch
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %[[ONE:.+]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) threads(%{{.+}}) in (%{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]])
// CHECK: memref.load %{{.+}}[] : memref<f32>
// CHECK: memref.store
func.func @integer_and_scalar(%a: memref<4x8xi32>, %b: memref<8x5xi32>, %c: memref<4x5xi32>, %s: memref<f32>, %t: memref<f32>) {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x5xi32>) outs(%c : memref<4x5xi32>)
  %v = memref.load %s[] : memref<f32>
  %w = arith.mulf %v, %v : f32
  memref.store %w, %t[] : memref<f32>
  return
}

// -----

// CHECK-LABEL: func.func @split_sum
// A long reduction with one output point is split: 512 threads sum 16
// elements each into a partial buffer (filled with 0, the neutral element
// of addf), then one thread adds the partials into the output.
// CHECK: %[[CHUNKS:.+]] = memref.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [512, 16] : memref<8192xf32> into memref<512x16xf32>
// CHECK: %[[PARTIAL:.+]] = memref.alloc() : memref<512xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[PARTIAL]]
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %[[TWO:.+]], {{.+}}) threads(%{{.+}}) in (%{{.+}} = %[[T256:.+]],
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step
// CHECK: memref.load %[[CHUNKS]][%{{.+}}, %{{.+}}] : memref<512x16xf32>
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: memref.store %{{.+}}, %[[PARTIAL]]
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: memref.load %[[PARTIAL]]
// CHECK: arith.addf
// CHECK: memref.store %{{.+}}, %{{.+}}[] : memref<f32>
func.func @split_sum(%x: memref<8192xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<8192xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %sum = arith.addf %sq, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// expected-error @+1 {{the CUDA target needs static shapes; argument 'memref<?x4xf32>' has dynamic dimensions}}
func.func @dynamic(%x: memref<?x4xf32>) {
  return
}
