// RUN: amp-opt %s -split-input-file -amp-fuse-elementwise | FileCheck %s
// RUN: amp-opt %s -split-input-file -convert-amp-to-linalg -amp-fuse-elementwise | FileCheck %s --check-prefix=PIPE
// amp-fuse-elementwise: upstream elementwise fusion of single-use
// producers and of cheap producers with up to three users, except into the
// convolutions and weight gradients the CPU runtime will compute (marked
// amp_linalg.kind = "conv" or "conv_weight_grad", fp32, 1-3 spatial
// dimensions).

// Two elementwise generics become one.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic {{.+}} ins(%arg0 : tensor<4x8xf32>)
// CHECK: %[[N:.+]] = arith.negf
// CHECK: %[[E:.+]] = math.exp %[[N]]
// CHECK: linalg.yield %[[E]]
// CHECK-NOT: linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A cheap producer (a few adds, multiplies, compares, selects or casts)
// with two users is recomputed in each: no intermediate tensor.
// CHECK-LABEL: func.func @shared_cheap_producer
// CHECK: linalg.generic {{.+}} ins(%arg0 : tensor<4xf32>)
// CHECK: %[[N:.+]] = arith.negf
// CHECK: math.exp %[[N]]
// CHECK: linalg.generic {{.+}} ins(%arg0 : tensor<4xf32>)
// CHECK: %[[M:.+]] = arith.negf
// CHECK: math.absf %[[M]]
// CHECK-NOT: linalg.generic
#id1 = affine_map<(d0) -> (d0)>
func.func @shared_cheap_producer(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%n : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%n : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.absf %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// A producer with two users that is not cheap (math.exp) stays: it is not
// recomputed.
// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[N:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<4xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.+}} ins(%[[N]] : tensor<4xf32>)
// CHECK: arith.negf
// CHECK: linalg.generic {{.+}} ins(%[[N]] : tensor<4xf32>)
// CHECK: math.absf
#id1b = affine_map<(d0) -> (d0)>
func.func @shared_producer(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id1b, #id1b], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id1b, #id1b], iterator_types = ["parallel"]}
      ins(%n : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id1b, #id1b], iterator_types = ["parallel"]}
      ins(%n : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.absf %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// An fp32 2-D convolution is computed by the runtime, which reads its
// operands as buffers: the ReLU stays a producer, and the markers of the
// convolution and of its output initialisation pass through.
// CHECK-LABEL: func.func @conv_f32
// CHECK: %[[RELU:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<1x3x8x8xf32>)
// CHECK: arith.maximumf
// CHECK: %[[INIT:.+]] = linalg.fill {amp_linalg.conv_init = 0 : i64}
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[RELU]], %arg1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x6x6xf32>)
// CHECK-SAME: attrs = {amp_linalg.conv_dilations = array<i64: 1, 1>, amp_linalg.conv_strides = array<i64: 1, 1>, amp_linalg.kind = "conv"}
// CHECK-NOT: arith.maximumf
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @conv_f32(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x8x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x3x8x8xf32>) outs(%e : tensor<1x3x8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.maximumf %in, %zero : f32
    linalg.yield %0 : f32
  } -> tensor<1x3x8x8xf32>
  %ye = tensor.empty() : tensor<1x4x6x6xf32>
  %init = linalg.fill {amp_linalg.conv_init = 0 : i64} ins(%zero : f32) outs(%ye : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%relu, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<1x4x6x6xf32>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 1, 1>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

// An f64 convolution stays loops: the ReLU is fused into it. The fused
// generic computes conv(relu(x), w), no longer a convolution of its
// operands, so it carries no marker.
// CHECK-LABEL: func.func @conv_f64
// CHECK: linalg.fill {amp_linalg.conv_init = 1 : i64}
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<1x3x8x8xf64>, tensor<4x3x3x3xf64>)
// CHECK-NOT: amp_linalg.kind
// CHECK: arith.maximumf
// CHECK: arith.mulf
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @conv_f64(%x: tensor<1x3x8x8xf64>, %w: tensor<4x3x3x3xf64>) -> tensor<1x4x6x6xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x3x8x8xf64>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x3x8x8xf64>) outs(%e : tensor<1x3x8x8xf64>) {
  ^bb0(%in: f64, %o: f64):
    %0 = arith.maximumf %in, %zero : f64
    linalg.yield %0 : f64
  } -> tensor<1x3x8x8xf64>
  %ye = tensor.empty() : tensor<1x4x6x6xf64>
  %init = linalg.fill {amp_linalg.conv_init = 1 : i64} ins(%zero : f64) outs(%ye : tensor<1x4x6x6xf64>) -> tensor<1x4x6x6xf64>
  %y = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%relu, %w : tensor<1x3x8x8xf64>, tensor<4x3x3x3xf64>) outs(%init : tensor<1x4x6x6xf64>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 1, 1>, amp_linalg.conv_dilations = array<i64: 1, 1>} {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<1x4x6x6xf64>
  return %y : tensor<1x4x6x6xf64>
}

// -----

// An fp32 convolution with 4 spatial dimensions is beyond the runtime:
// loops, so the ReLU is fused into it.
// CHECK-LABEL: func.func @conv_4d
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<1x1x3x3x3x3xf32>, tensor<1x1x2x2x2x2xf32>)
// CHECK-NOT: amp_linalg.kind
// CHECK: arith.maximumf
// CHECK: arith.mulf
#in4 = affine_map<(n, f, o1, o2, o3, o4, c, k1, k2, k3, k4) -> (n, c, o1 + k1, o2 + k2, o3 + k3, o4 + k4)>
#w4 = affine_map<(n, f, o1, o2, o3, o4, c, k1, k2, k3, k4) -> (f, c, k1, k2, k3, k4)>
#out4 = affine_map<(n, f, o1, o2, o3, o4, c, k1, k2, k3, k4) -> (n, f, o1, o2, o3, o4)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
func.func @conv_4d(%x: tensor<1x1x3x3x3x3xf32>, %w: tensor<1x1x2x2x2x2xf32>) -> tensor<1x1x2x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x3x3x3x3xf32>
  %relu = linalg.generic {indexing_maps = [#id6, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x1x3x3x3x3xf32>) outs(%e : tensor<1x1x3x3x3x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.maximumf %in, %zero : f32
    linalg.yield %0 : f32
  } -> tensor<1x1x3x3x3x3xf32>
  %ye = tensor.empty() : tensor<1x1x2x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ye : tensor<1x1x2x2x2x2xf32>) -> tensor<1x1x2x2x2x2xf32>
  %y = linalg.generic {indexing_maps = [#in4, #w4, #out4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction", "reduction"]}
      ins(%relu, %w : tensor<1x1x3x3x3x3xf32>, tensor<1x1x2x2x2x2xf32>) outs(%init : tensor<1x1x2x2x2x2xf32>)
      attrs = {amp_linalg.kind = "conv", amp_linalg.conv_strides = array<i64: 1, 1, 1, 1>, amp_linalg.conv_dilations = array<i64: 1, 1, 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x2x2x2x2xf32>
  return %y : tensor<1x1x2x2x2x2xf32>
}

// -----

// From amp: convert-amp-to-linalg marks every convolution; after fusion
// the fp32 one keeps its ReLU producer and its markers, the fp16 one (no
// fp32 accumulation: loops) absorbs it.
// PIPE-LABEL: func.func @relu_conv
// PIPE: %[[RELU:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<1x3x8x8xf32>)
// PIPE: arith.cmpf olt
// PIPE: %[[INIT:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<4x1x1xf32>) outs(%{{.+}} : tensor<1x4x6x6xf32>) attrs = {amp_linalg.conv_init = {{[0-9]+}} : i64}
// PIPE: linalg.generic
// PIPE-SAME: ins(%[[RELU]], %arg1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x6x6xf32>)
// PIPE-SAME: amp_linalg.kind = "conv"
// PIPE-LABEL: func.func @relu_conv_f16
// PIPE: linalg.generic {{.+}} attrs = {amp_linalg.conv_init = {{[0-9]+}} : i64}
// PIPE: linalg.generic
// PIPE-SAME: ins(%arg0, %arg1 : tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>)
// PIPE-NOT: amp_linalg.kind
// PIPE: arith.cmpf olt
// PIPE: arith.mulf
// PIPE-NOT: amp_linalg.kind
func.func @relu_conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %r = amp.relu %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %y = amp.conv %r, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}
func.func @relu_conv_f16(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %b: tensor<4xf16>) -> tensor<1x4x6x6xf16> {
  %r = amp.relu %x : (tensor<1x3x8x8xf16>) -> tensor<1x3x8x8xf16>
  %y = amp.conv %r, %w, %b : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>) -> tensor<1x4x6x6xf16>
  return %y : tensor<1x4x6x6xf16>
}
