// amp-front-end runs amp-fold-constants (registered by amp-opt) before and
// after autocast: sqrt(64) becomes the constant 8, which autocast converts;
// fold-constants=false keeps the Sqrt op. (The effect on precision
// decisions is in test/python/test_constant_folding.py.)
//
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end)' | FileCheck %s --check-prefix=FOLD
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{fold-constants=false})' | FileCheck %s --check-prefix=NOFOLD

// FOLD-LABEL: func.func @scale
// FOLD-NOT: amp.sqrt
// FOLD: %[[S:.*]] = amp.constant dense<8.000000e+00> : tensor<f16>
// FOLD: amp.div %{{.*}}, %[[S]] : (tensor<8x64xf16>, tensor<f16>) -> tensor<8x64xf16>

// NOFOLD-LABEL: func.func @scale
// NOFOLD: %[[S:.*]] = amp.sqrt
// NOFOLD: amp.div %{{.*}}, %[[S]]
func.func @scale(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %d = amp.constant dense<64.0> : tensor<f32>
  %sd = amp.sqrt %d : (tensor<f32>) -> tensor<f32>
  %y = amp.matmul %x, %w : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  %r = amp.div %y, %sd : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  %z = amp.matmul %r, %w : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  return %z : tensor<8x64xf32>
}

// A folded result equal to a constant already there is merged with it
// (the import cleanup, canonicalize + CSE, runs again after folding):
// sub(3, 1) folds to the 2 that already exists, so one constant feeds both
// uses; without the cleanup both stay.
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{opt-level=0})' | FileCheck %s --check-prefix=MERGE
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{opt-level=0 import-cleanup=false})' | FileCheck %s --check-prefix=NOMERGE
// MERGE-LABEL: func.func @merge
// MERGE-COUNT-1: amp.constant dense<2.000000e+00> : tensor<f32>
// MERGE-NOT: amp.constant dense<2.000000e+00>
// MERGE: amp.mul %arg0, %[[TWO:.+]] :
// NOMERGE-LABEL: func.func @merge
// NOMERGE-COUNT-2: amp.constant dense<2.000000e+00> : tensor<f32>
func.func @merge(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %two = amp.constant dense<2.0> : tensor<f32>
  %three = amp.constant dense<3.0> : tensor<f32>
  %one = amp.constant dense<1.0> : tensor<f32>
  %d = amp.sub %three, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = amp.add %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = amp.mul %x, %d : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %a, %m : tensor<4xf32>, tensor<4xf32>
}
