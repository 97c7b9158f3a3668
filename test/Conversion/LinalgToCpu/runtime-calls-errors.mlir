// RUN: amp-opt %s -amp-linalg-to-runtime-calls -split-input-file -verify-diagnostics
// Diagnostics of amp-linalg-to-runtime-calls: a marked convolution or
// weight gradient must carry its strides and dilations.

#x = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#y = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv_without_parameters(%x: memref<1x3x5x5xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x3x3xf32>) {
  // expected-error @+1 {{amp_linalg.kind = "conv" without convolution parameters}}
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x3x5x5xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x3x3xf32>)
      attrs = {amp_linalg.kind = "conv"} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(m, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#dy = affine_map<(m, c, kh, kw, n, oh, ow) -> (n, m, oh, ow)>
#dw = affine_map<(m, c, kh, kw, n, oh, ow) -> (m, c, kh, kw)>
func.func @weight_grad_without_parameters(%x: memref<1x3x5x5xf32>, %dy: memref<1x4x3x3xf32>, %dw: memref<4x3x3x3xf32>) {
  // expected-error @+1 {{amp_linalg.kind = "conv_weight_grad" without convolution parameters}}
  linalg.generic {indexing_maps = [#x, #dy, #dw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<1x3x5x5xf32>, memref<1x4x3x3xf32>) outs(%dw : memref<4x3x3x3xf32>)
      attrs = {amp_linalg.kind = "conv_weight_grad", amp_linalg.conv_strides = array<i64: 1, 1>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
