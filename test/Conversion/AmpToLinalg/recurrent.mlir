// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// RNN, GRU and LSTM: the input projection of all steps is one GEMM, an
// scf.for over the steps carries the state, with one recurrent GEMM and one
// elementwise generic per step (Recurrent.cpp).

// GRU (linear_before_reset = 0): X x W^T once ([T*B, I] x [3H, I]^T); per
// step H x R^T over the z and r rows only, r . H, then (r . H) x Rh^T; the
// last generic updates H in place (its first output is the loop's state)
// and writes the step's row.
// CHECK-LABEL: func.func @gru
// CHECK: %[[XW:.*]] = linalg.matmul_transpose_b ins(%{{.*}}, %{{.*}} : tensor<10x3xf32>, tensor<12x3xf32>) outs(%{{.*}} : tensor<10x12xf32>)
// CHECK: scf.for %[[T:.*]] = %{{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[STEPS:.*]] = %{{.*}}) -> (tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: %[[RZR:.*]] = tensor.extract_slice %{{.*}}[0, 0] [8, 4] [1, 1] : tensor<12x4xf32> to tensor<8x4xf32>
// CHECK: %[[HR:.*]] = linalg.matmul_transpose_b ins(%[[H]], %[[RZR]] : tensor<2x4xf32>, tensor<8x4xf32>)
// CHECK: %[[RH:.*]] = linalg.generic
// CHECK: tensor.extract %[[XW]]
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: %[[RHR:.*]] = linalg.matmul_transpose_b ins(%[[RH]], %{{.*}} : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK: %[[NEXT:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[RHR]] : {{.*}}) outs(%[[H]], %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: math.tanh
// CHECK: %[[ROW:.*]] = tensor.insert_slice %[[NEXT]]#1 into %[[STEPS]][%[[T]], 0, 0] [1, 2, 4]
// CHECK: scf.yield %[[NEXT]]#0, %[[ROW]]
func.func @gru(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>) {
  %none = amp.none
  %y, %h = amp.gru %x, %w, %r, %none, %none, %none : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, none, none, none) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %h : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// GRU with linear_before_reset: one recurrent GEMM over all three gates.
// CHECK-LABEL: func.func @gru_linear_before_reset
// CHECK: scf.for
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<12x4xf32>)
// CHECK-NOT: linalg.matmul_transpose_b
// CHECK: scf.yield
func.func @gru_linear_before_reset(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>) -> tensor<5x1x2x4xf32> {
  %none = amp.none
  %y, %h = amp.gru %x, %w, %r, %none, %none, %none {linear_before_reset = 1 : i64} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, none, none, none) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y : tensor<5x1x2x4xf32>
}

// -----

// A bidirectional fp16 LSTM accumulating in fp32, batch-first, with clip and
// sequence lengths: X transposed to time-major and widened once; the
// lengths checked at run time ([0, T]) and clamped where read; every GEMM
// and the state in f32; the four gate pre-activations clipped (h(C_t) is
// not); the reverse direction's rows put back in time order; Y transposed
// back and rounded once.
// CHECK-LABEL: func.func @lstm_f16
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x5x3xf16>) outs(%{{.*}} : tensor<5x2x3xf16>) permutation = [1, 0, 2]
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: func.call @amp_cpu_check_failed
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %{{.*}} : tensor<10x3xf32>, tensor<16x3xf32>)
// CHECK: scf.for {{.*}} -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: linalg.matmul_transpose_b ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<16x4xf32>)
// CHECK: linalg.generic
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK: arith.minsi %{{.*}}, %{{.*}} : index
// CHECK-COUNT-4: arith.minimumf
// CHECK-NOT: arith.minimumf
// CHECK: math.tanh
// CHECK: linalg.yield
// CHECK: scf.yield
// CHECK: scf.for {{.*}} -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: scf.yield
// The reverse direction's rows in time order: row L-1-t, 0 past L.
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5x2x4xf32>)
// CHECK: arith.subi
// CHECK: tensor.extract
// CHECK: arith.select
// CHECK: linalg.transpose ins(%{{.*}} : tensor<5x2x2x4xf32>) outs(%{{.*}} : tensor<2x5x2x4xf32>) permutation = [2, 0, 1, 3]
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @lstm_f16(%x: tensor<2x5x3xf16>, %w: tensor<2x16x3xf16>, %r: tensor<2x16x4xf16>, %l: tensor<2xi32>) -> (tensor<2x5x2x4xf16>, tensor<2x2x4xf16>, tensor<2x2x4xf16>) {
  %none = amp.none
  %y, %h, %c = amp.lstm %x, %w, %r, %none, %l, %none, %none, %none {direction = "bidirectional", layout = 1 : i64, clip = 2.0 : f32, amp.accumulate = f32} : (tensor<2x5x3xf16>, tensor<2x16x3xf16>, tensor<2x16x4xf16>, none, tensor<2xi32>, none, none, none) -> (tensor<2x5x2x4xf16>, tensor<2x2x4xf16>, tensor<2x2x4xf16>)
  return %y, %h, %c : tensor<2x5x2x4xf16>, tensor<2x2x4xf16>, tensor<2x2x4xf16>
}

// -----

// An fp16 RNN without fp32 accumulation: the GEMMs are generics that round
// every product-sum to f16, the state stays f16, the gate math is f32.
// CHECK-LABEL: func.func @rnn_f16
// CHECK-NOT: linalg.matmul
// CHECK: scf.for {{.*}} -> (tensor<2x4xf16>, tensor<3x2x4xf16>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.tanh %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @rnn_f16(%x: tensor<3x2x3xf16>, %w: tensor<1x4x3xf16>, %r: tensor<1x4x4xf16>) -> tensor<3x1x2x4xf16> {
  %none = amp.none
  %y, %h = amp.rnn %x, %w, %r, %none, %none, %none : (tensor<3x2x3xf16>, tensor<1x4x3xf16>, tensor<1x4x4xf16>, none, none, none) -> (tensor<3x1x2x4xf16>, tensor<1x2x4xf16>)
  return %y : tensor<3x1x2x4xf16>
}
