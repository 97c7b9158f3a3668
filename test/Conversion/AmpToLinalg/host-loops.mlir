// RUN: amp-opt %s -convert-amp-to-linalg="host-loops=false target-name='the CUDA target'" -split-input-file -verify-diagnostics
// Without host-side loops (the CUDA target's setting), If/Loop/Scan and the
// recurrent ops and NonMaxSuppression are refused by name, in the
// target's words.

func.func @lstm(%x: tensor<2x1x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) -> tensor<2x1x1x4xf32> {
  %none = amp.none
  // expected-error@+1 {{ONNX LSTM is not lowerable to the CUDA target yet (docs/CudaBackend.md lists what it runs)}}
  %y, %h, %c = amp.lstm %x, %w, %r, %none, %none, %none, %none, %none : (tensor<2x1x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>)
  return %y : tensor<2x1x1x4xf32>
}

// -----

func.func @if(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{ONNX If is not lowerable to the CUDA target yet}}
  %y = amp.if %c : tensor<i1> -> tensor<4xf32> then {
    amp.yield %x : tensor<4xf32>
  } else {
    %a = amp.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    amp.yield %a : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @nms(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  // expected-error@+1 {{ONNX NonMaxSuppression is not lowerable to the CUDA target yet}}
  %0 = amp.non_max_suppression %boxes, %scores, %none, %none, %none : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, none, none, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}
