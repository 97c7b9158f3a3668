// RUN: amp-opt %s -amp-linalg-to-cpu-loops -verify-diagnostics
// amp-linalg-to-cpu-loops runs after bufferization.

#id1 = affine_map<(d0) -> (d0)>
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the CPU loop lowering expects bufferized linalg ops}}
  %0 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.negf %in : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
