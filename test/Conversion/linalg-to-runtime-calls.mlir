// RUN: amp-opt %s -amp-linalg-to-runtime-calls | FileCheck %s
// fp32 GEMMs and marked convolutions on buffers become calls into the CPU
// runtime (oneDNN); other element types stay linalg ops.

// CHECK-DAG: func.func private @amp_cpu_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64)
// CHECK-DAG: func.func private @amp_cpu_conv_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64)

// CHECK-LABEL: func.func @gemms
// CHECK: %[[A:.+]] = memref.cast %{{.+}} : memref<4x8xf32> to memref<*xf32>
// CHECK: %[[B:.+]] = memref.cast %{{.+}} : memref<8x5xf32> to memref<*xf32>
// CHECK: %[[C:.+]] = memref.cast %{{.+}} : memref<4x5xf32> to memref<*xf32>
// CHECK: %[[NO:.+]] = arith.constant 0 : i64
// CHECK: call @amp_cpu_matmul_f32(%[[A]], %[[B]], %[[C]], %[[NO]])
// CHECK: %[[YES:.+]] = arith.constant 1 : i64
// CHECK: call @amp_cpu_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %[[YES]])
// CHECK: call @amp_cpu_matmul_f32
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xf64>, memref<8x5xf64>)
func.func @gemms(%a: memref<4x8xf32>, %b: memref<8x5xf32>, %bt: memref<5x8xf32>,
                 %c: memref<4x5xf32>, %ba: memref<2x4x8xf32>, %bb: memref<2x8x5xf32>,
                 %bc: memref<2x4x5xf32>, %da: memref<4x8xf64>, %db: memref<8x5xf64>,
                 %dc: memref<4x5xf64>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x5xf32>) outs(%c : memref<4x5xf32>)
  linalg.matmul_transpose_b ins(%a, %bt : memref<4x8xf32>, memref<5x8xf32>) outs(%c : memref<4x5xf32>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x4x8xf32>, memref<2x8x5xf32>) outs(%bc : memref<2x4x5xf32>)
  linalg.matmul ins(%da, %db : memref<4x8xf64>, memref<8x5xf64>) outs(%dc : memref<4x5xf64>)
  return
}

// CHECK-LABEL: func.func @conv
// Arguments: strides (2, 2, padded with 1), dilations (1, 1, 1), 2 spatial
// dimensions, weights not constant (0).
// CHECK: %[[S0:.+]] = arith.constant 2 : i64
// CHECK: %[[S1:.+]] = arith.constant 2 : i64
// CHECK: %[[S2:.+]] = arith.constant 1 : i64
// CHECK: %[[D0:.+]] = arith.constant 1 : i64
// CHECK: %[[D1:.+]] = arith.constant 1 : i64
// CHECK: %[[D2:.+]] = arith.constant 1 : i64
// CHECK: %[[N:.+]] = arith.constant 2 : i64
// CHECK: %[[C:.+]] = arith.constant 0 : i64
// CHECK: call @amp_cpu_conv_f32(%{{.+}}, %{{.+}}, %{{.+}}, %[[S0]], %[[S1]], %[[S2]], %[[D0]], %[[D1]], %[[D2]], %[[N]], %[[C]])
// CHECK-NOT: linalg.generic
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv(%x: memref<1x3x9x9xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x3x9x9xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
      attrs = {amp_cpu.runtime_call = "conv", amp_cpu.conv_strides = array<i64: 2, 2>, amp_cpu.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// Weights read from a constant global are marked constant (1), through
// views.
// CHECK-LABEL: func.func @conv_constant_weights
// CHECK: arith.constant 2 : i64
// CHECK-NEXT: arith.constant 2 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 2 : i64
// CHECK-NEXT: %[[C:.+]] = arith.constant 1 : i64
// CHECK-NEXT: call @amp_cpu_conv_f32({{.+}}, %[[C]])
memref.global "private" constant @weights : memref<4x3x3x3xf32> = dense<1.0>
func.func @conv_constant_weights(%x: memref<1x3x9x9xf32>, %y: memref<1x4x4x4xf32>) {
  %w = memref.get_global @weights : memref<4x3x3x3xf32>
  linalg.generic {indexing_maps = [#in, #w, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x3x9x9xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
      attrs = {amp_cpu.runtime_call = "conv", amp_cpu.conv_strides = array<i64: 2, 2>, amp_cpu.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
