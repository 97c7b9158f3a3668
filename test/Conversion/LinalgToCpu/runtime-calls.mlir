// RUN: amp-opt %s -amp-linalg-to-runtime-calls | FileCheck %s
// fp32 GEMMs and marked convolutions on buffers become calls into the CPU
// runtime (oneDNN); other element types stay linalg ops.

// CHECK-DAG: func.func private @amp_cpu_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64)
// CHECK-DAG: func.func private @amp_cpu_conv_weight_grad_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @amp_cpu_conv_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)

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

// Convolution arguments after the four buffers (x, w, y, bias): strides
// (3), dilations (3), spatial rank, constant weights, pads begin (3), pads
// end (3), mode (0 accumulate, 1 bias + conv, 2 conv), relu.

#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#in1 = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c, 0, 0)>

// A plain convolution accumulates into its output (mode 0), no fusion.
// CHECK-LABEL: func.func @conv
// CHECK: %[[X:.+]] = memref.cast %arg0
// CHECK: %[[Y:.+]] = memref.cast %arg2
// CHECK: %[[Y2:.+]] = memref.cast %arg2
// CHECK-COUNT-6: arith.constant {{[12]}} : i64
// CHECK-NEXT: %[[N:.+]] = arith.constant 2 : i64
// CHECK-NEXT: %[[CW:.+]] = arith.constant 0 : i64
// CHECK-COUNT-6: arith.constant 0 : i64
// CHECK-NEXT: %[[MODE:.+]] = arith.constant 0 : i64
// CHECK-NEXT: %[[RELU:.+]] = arith.constant 0 : i64
// CHECK-NEXT: call @amp_cpu_conv_f32(%[[X]], %{{.+}}, %[[Y]], %[[Y2]], {{.+}}, %[[N]], %[[CW]], {{.+}}, %[[MODE]], %[[RELU]])
// CHECK-NOT: linalg.generic
func.func @conv(%x: memref<1x3x9x9xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x3x9x9xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 2, 2>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// The padding copy, the bias initialisation and the in-place ReLU that
// follows fold into the call: the source is passed unpadded with pads
// (1, 1), mode 1 with the bias, relu 1; weights from a constant global.
// CHECK-LABEL: func.func @conv_fused
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.map
// CHECK: %[[X:.+]] = memref.cast %arg0 : memref<1x3x8x8xf32> to memref<*xf32>
// CHECK: %[[B:.+]] = memref.cast %arg1 : memref<4xf32> to memref<*xf32>
// CHECK-COUNT-6: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 2 : i64
// CHECK-NEXT: %[[CW:.+]] = arith.constant 1 : i64
// CHECK-NEXT: %[[P0:.+]] = arith.constant 1 : i64
// CHECK-NEXT: %[[P1:.+]] = arith.constant 1 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: %[[E0:.+]] = arith.constant 1 : i64
// CHECK-NEXT: %[[E1:.+]] = arith.constant 1 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: %[[MODE:.+]] = arith.constant 1 : i64
// CHECK-NEXT: %[[RELU:.+]] = arith.constant 1 : i64
// CHECK-NEXT: call @amp_cpu_conv_f32(%[[X]], %{{.+}}, %{{.+}}, %[[B]], {{.+}}, %[[CW]], %[[P0]], %[[P1]], %{{.+}}, %[[E0]], %[[E1]], %{{.+}}, %[[MODE]], %[[RELU]])
// CHECK-NOT: linalg.generic
memref.global "private" constant @weights : memref<4x3x3x3xf32> = dense<1.0>
func.func @conv_fused(%src: memref<1x3x8x8xf32>, %bias: memref<4xf32>) -> memref<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.map outs(%padded : memref<1x3x10x10xf32>) () {
    linalg.yield %zero : f32
  }
  %inner = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %src, %inner : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  %w = memref.get_global @weights : memref<4x3x3x3xf32>
  %b3 = memref.expand_shape %bias [[0, 1, 2]] output_shape [4, 1, 1] : memref<4xf32> into memref<4x1x1xf32>
  %y = memref.alloc() : memref<1x4x8x8xf32>
  linalg.generic {indexing_maps = [#chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b3 : memref<4x1x1xf32>) outs(%y : memref<1x4x8x8xf32>) attrs = {amp_linalg.conv_init = 7 : i64} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#in1, #w, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 1, 1>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : memref<1x4x8x8xf32>) outs(%y : memref<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.cmpf olt, %in, %zero : f32
    %r = arith.select %neg, %zero, %in : f32
    linalg.yield %r : f32
  }
  return %y : memref<1x4x8x8xf32>
}

// A marked convolution beyond the runtime (4 spatial dimensions) stays a
// loop nest.
// CHECK-LABEL: func.func @conv_4d
// CHECK-NOT: call
// CHECK: linalg.generic
// CHECK-SAME: amp_linalg.kind = "conv"
#in4 = affine_map<(n, f, o1, o2, o3, o4, c, k1, k2, k3, k4) -> (n, c, o1 + k1, o2 + k2, o3 + k3, o4 + k4)>
#w4 = affine_map<(n, f, o1, o2, o3, o4, c, k1, k2, k3, k4) -> (f, c, k1, k2, k3, k4)>
#out4 = affine_map<(n, f, o1, o2, o3, o4, c, k1, k2, k3, k4) -> (n, f, o1, o2, o3, o4)>
func.func @conv_4d(%x: memref<1x1x3x3x3x3xf32>, %w: memref<1x1x2x2x2x2xf32>, %y: memref<1x1x2x2x2x2xf32>) {
  linalg.generic {indexing_maps = [#in4, #w4, #out4],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x1x3x3x3x3xf32>, memref<1x1x2x2x2x2xf32>) outs(%y : memref<1x1x2x2x2x2xf32>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 1, 1, 1, 1>, amp_linalg.conv_dilations = array<i64: 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// Weight-gradient arguments after the three buffers (x, dy, dw): strides
// (3), dilations (3), spatial rank, pads begin (3), pads end (3),
// accumulate (0: the zero fill before it is folded, the call overwrites dW).
#wx = affine_map<(m, c, kh, kw, n, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#wdy = affine_map<(m, c, kh, kw, n, oh, ow) -> (n, m, oh, ow)>
#wdw = affine_map<(m, c, kh, kw, n, oh, ow) -> (m, c, kh, kw)>

// The padding copy and the marked zero fill fold into the call: X unpadded
// with pads (1, 1) .. (0, 0), accumulate 0.
// CHECK-LABEL: func.func @weight_grad_fused
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.fill
// CHECK: %[[X:.+]] = memref.cast %arg0 : memref<2x3x8x8xf32> to memref<*xf32>
// CHECK: %[[DY:.+]] = memref.cast %arg1 : memref<2x4x4x4xf32> to memref<*xf32>
// CHECK: %[[DW:.+]] = memref.cast %{{.+}} : memref<4x3x3x3xf32> to memref<*xf32>
// CHECK-COUNT-3: arith.constant {{[12]}} : i64
// CHECK-COUNT-3: arith.constant 1 : i64
// CHECK-NEXT: %[[N:.+]] = arith.constant 2 : i64
// CHECK-NEXT: %[[P0:.+]] = arith.constant 1 : i64
// CHECK-NEXT: %[[P1:.+]] = arith.constant 1 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-COUNT-3: arith.constant 0 : i64
// CHECK-NEXT: %[[ACC:.+]] = arith.constant 0 : i64
// CHECK-NEXT: call @amp_cpu_conv_weight_grad_f32(%[[X]], %[[DY]], %[[DW]], {{.+}}, %[[N]], %[[P0]], %[[P1]], {{.+}}, %[[ACC]])
// CHECK-NOT: linalg.generic
func.func @weight_grad_fused(%src: memref<2x3x8x8xf32>, %dy: memref<2x4x4x4xf32>) -> memref<4x3x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x3x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x3x9x9xf32>)
  %inner = memref.subview %padded[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x9x9xf32> to memref<2x3x8x8xf32, strided<[243, 81, 9, 1], offset: 10>>
  memref.copy %src, %inner : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[243, 81, 9, 1], offset: 10>>
  %dw = memref.alloc() : memref<4x3x3x3xf32>
  linalg.fill {amp_linalg.conv_init = 3 : i64} ins(%zero : f32) outs(%dw : memref<4x3x3x3xf32>)
  linalg.generic {indexing_maps = [#wx, #wdy, #wdw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%padded, %dy : memref<2x3x9x9xf32>, memref<2x4x4x4xf32>) outs(%dw : memref<4x3x3x3xf32>)
      attrs = {amp_linalg.kind = "conv_weight_grad", amp_linalg.conv_strides = array<i64: 2, 2>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return %dw : memref<4x3x3x3xf32>
}

// Without a marked zero fill before it the call accumulates into dW
// (accumulate 1); an f64 weight gradient stays a loop nest.
// CHECK-LABEL: func.func @weight_grad_accumulate
// CHECK-COUNT-6: arith.constant 0 : i64
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK-NEXT: call @amp_cpu_conv_weight_grad_f32({{.+}}, %[[ONE]])
// CHECK: linalg.generic
// CHECK-SAME: amp_linalg.kind = "conv_weight_grad"
func.func @weight_grad_accumulate(%x: memref<2x3x9x9xf32>, %dy: memref<2x4x4x4xf32>, %dw: memref<4x3x3x3xf32>,
                                  %x64: memref<2x3x9x9xf64>, %dy64: memref<2x4x4x4xf64>, %dw64: memref<4x3x3x3xf64>) {
  linalg.generic {indexing_maps = [#wx, #wdy, #wdw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<2x3x9x9xf32>, memref<2x4x4x4xf32>) outs(%dw : memref<4x3x3x3xf32>)
      attrs = {amp_linalg.kind = "conv_weight_grad", amp_linalg.conv_strides = array<i64: 2, 2>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#wx, #wdy, #wdw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x64, %dy64 : memref<2x3x9x9xf64>, memref<2x4x4x4xf64>) outs(%dw64 : memref<4x3x3x3xf64>)
      attrs = {amp_linalg.kind = "conv_weight_grad", amp_linalg.conv_strides = array<i64: 2, 2>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  }
  return
}

// A padded buffer that bufferization reuses for the next padding: the
// padding before each convolution folds into its call (pads 1), and the
// fills and copies go; the buffer stays for nothing.
// CHECK-LABEL: func.func @conv_reused_padding
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.copy
// CHECK: %[[A:.+]] = memref.cast %arg0 : memref<1x3x8x8xf32> to memref<*xf32>
// CHECK-COUNT-6: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 2 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: %[[PB:.+]] = arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: %[[PE:.+]] = arith.constant 1 : i64
// CHECK: call @amp_cpu_conv_f32(%[[A]], {{.+}}, %[[PB]], {{.+}}, %[[PE]],
// CHECK: %[[B:.+]] = memref.cast %arg1 : memref<1x3x8x8xf32> to memref<*xf32>
// CHECK: call @amp_cpu_conv_f32(%[[B]],
// CHECK-NOT: linalg.generic
func.func @conv_reused_padding(%a: memref<1x3x8x8xf32>, %b: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>,
                               %y1: memref<1x4x8x8xf32>, %y2: memref<1x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %inner = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %a, %inner : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#in1, #w, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y1 : memref<1x4x8x8xf32>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 1, 1>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %m = arith.mulf %x, %k : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %inner2 = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %b, %inner2 : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#in1, #w, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y2 : memref<1x4x8x8xf32>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 1, 1>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %m = arith.mulf %x, %k : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// The padded contents are read again after the convolution (here: the
// padded buffer is returned): the padding stays and the call reads the
// padded buffer with pads 0.
// CHECK-LABEL: func.func @conv_padding_read_later
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: call @amp_cpu_conv_f32
// CHECK: return %{{.+}} : memref<1x3x10x10xf32>
func.func @conv_padding_read_later(%a: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>,
                                   %y: memref<1x4x8x8xf32>) -> memref<1x3x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %inner = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %a, %inner : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#in1, #w, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 1, 1>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %m = arith.mulf %x, %k : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return %padded : memref<1x3x10x10xf32>
}
