// RUN: amp-opt %s -split-input-file -amp-linalg-to-cpu-loops | FileCheck %s
// RUN: amp-opt %s -split-input-file -amp-linalg-to-cpu-loops=min-parallel-work=16 | FileCheck %s --check-prefix=LOW
// amp-linalg-to-cpu-loops: buffer linalg ops -> loops; scf.parallel over the
// parallel dimensions when the op has at least min-parallel-work iteration
// points (or sizes unknown at compile time), scf.for otherwise.

// 32 points: sequential by default, parallel with a lower threshold.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.negf
// LOW-LABEL: func.func @small
// LOW: scf.parallel (%{{.+}}, %{{.+}}) =
// LOW: arith.negf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @small(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// 65536 points: parallel over both dimensions.
// CHECK-LABEL: func.func @large
// CHECK: scf.parallel (%{{.+}}, %{{.+}}) = (%{{.+}}, %{{.+}}) to (%c256{{.*}}, %c256{{.*}})
// CHECK: arith.negf
// CHECK-NOT: scf.for
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @large(%x: memref<256x256xf32>, %y: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<256x256xf32>) outs(%y : memref<256x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Sizes only known at run time: parallel (the runtime decides).
// CHECK-LABEL: func.func @dynamic
// CHECK: scf.parallel
// LOW-LABEL: func.func @dynamic
// LOW: scf.parallel
#id1 = affine_map<(d0) -> (d0)>
func.func @dynamic(%x: memref<?xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Per-channel statistics (reductions over N, H, W): the channel loop moves
// outside the batch loop; the innermost (W) loop stays innermost. The sum
// is read once, carried through the reduction loops as a loop value (a
// register), and written once.
// CHECK-LABEL: func.func @channel_sum
// CHECK: scf.parallel (%[[C:.+]]) = (%{{.+}}) to (%c64)
// CHECK: %[[INIT:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<64xf32>
// CHECK: %[[SUM:.+]] = scf.for %[[N:.+]] = %{{.+}} to %c8{{.*}}iter_args(%[[A0:.+]] = %[[INIT]]) -> (f32)
// CHECK: scf.for %[[H:.+]] = %{{.+}} to %c32{{.*}}iter_args(%[[A1:.+]] = %[[A0]]) -> (f32)
// CHECK: scf.for %[[W:.+]] = %{{.+}} to %c32{{.*}}iter_args(%[[A2:.+]] = %[[A1]]) -> (f32)
// CHECK: %[[X:.+]] = memref.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<8x64x32x32xf32>
// CHECK: %[[ADD:.+]] = arith.addf %[[X]], %[[A2]]
// CHECK: scf.yield %[[ADD]]
// CHECK: memref.store %[[SUM]], %{{.+}}[%{{.+}}] : memref<64xf32>
// CHECK: scf.reduce
func.func @channel_sum(%x: memref<8x64x32x32xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<8x64x32x32xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A small row sum stays sequential, with its accumulator in a register too.
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: scf.parallel
// CHECK: scf.for %{{.+}} = %{{.+}} to %c4
// CHECK: %[[INIT:.+]] = memref.load %{{.+}} : memref<4xf32>
// CHECK: %[[SUM:.+]] = scf.for {{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32)
// CHECK: arith.maximumf %{{.+}}, %[[ACC]]
// CHECK: memref.store %[[SUM]]
func.func @row_sum(%x: memref<4x8xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A column sum keeps its order: the innermost (parallel, contiguous)
// dimension stays innermost, under the sequential row loop.
// CHECK-LABEL: func.func @column_sum
// CHECK: scf.for %{{.+}} = %{{.+}} to %c512
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%c1024)
// CHECK: arith.addf
func.func @column_sum(%x: memref<512x1024xf32>, %s: memref<1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, d) -> (n, d)>, affine_map<(n, d) -> (d)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<512x1024xf32>) outs(%s : memref<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A named op whose reduction is not innermost is generalised and reordered.
// CHECK-LABEL: func.func @named_reduce
// CHECK-NOT: linalg.
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%c256)
// CHECK: scf.for %{{.+}} = %{{.+}} to %c8
// CHECK: scf.for %{{.+}} = %{{.+}} to %c32
// CHECK: arith.addf
func.func @named_reduce(%x: memref<8x256x32xf32>, %s: memref<256xf32>) {
  linalg.reduce ins(%x : memref<8x256x32xf32>) outs(%s : memref<256xf32>) dimensions = [0, 2]
  (%in: f32, %acc: f32) {
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A copy into a strided view (a padded convolution input) becomes parallel
// loops; a contiguous copy stays one memref.copy (memcpy).
// CHECK-LABEL: func.func @copies
// CHECK: %[[VIEW:.+]] = memref.subview
// CHECK: scf.parallel (%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) =
// CHECK: memref.store %{{.+}}, %[[VIEW]]
// CHECK: memref.copy %{{.+}}, %{{.+}} : memref<8x64x56x56xf32> to memref<8x64x56x56xf32>
func.func @copies(%x: memref<8x64x56x56xf32>, %p: memref<8x64x58x58xf32>, %c: memref<8x64x56x56xf32>) {
  %v = memref.subview %p[0, 0, 1, 1] [8, 64, 56, 56] [1, 1, 1, 1] : memref<8x64x58x58xf32> to memref<8x64x56x56xf32, strided<[215296, 3364, 58, 1], offset: 59>>
  memref.copy %x, %v : memref<8x64x56x56xf32> to memref<8x64x56x56xf32, strided<[215296, 3364, 58, 1], offset: 59>>
  memref.copy %x, %c : memref<8x64x56x56xf32> to memref<8x64x56x56xf32>
  return
}
