// A failing pipeline writes an MLIR reproducer (the input module and the
// pipeline) that `amp-opt --run-reproducer` replays to the same error; no
// output file is left behind.
//
// RUN: rm -f %t.repro.mlir %t.out.mlir
// RUN: not amp-opt %s --amp-loss-scale="backoff=2" --mlir-pass-pipeline-crash-reproducer=%t.repro.mlir -o %t.out.mlir 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: not test -e %t.out.mlir
// RUN: FileCheck %s --check-prefix=REPRO < %t.repro.mlir
// RUN: not amp-opt %t.repro.mlir --run-reproducer 2>&1 | FileCheck %s --check-prefix=FAIL

// FAIL: error: amp-loss-scale: invalid options

// REPRO: module attributes {amp.train = {loss_scale = "none"}}
// REPRO: func.func @train_step
// REPRO: external_resources: {
// REPRO: mlir_reproducer: {
// REPRO: pipeline: "builtin.module(amp-loss-scale{
// REPRO-SAME: backoff=2

module attributes {amp.train = {loss_scale = "none"}} {
  func.func @train_step(%w: tensor<2xf32> {amp.name = "w", amp.role = "param"}, %step: tensor<i64> {amp.name = "step", amp.role = "step"}) -> (tensor<2xf32> {amp.name = "w", amp.role = "param"}, tensor<i64> {amp.name = "step", amp.role = "step"}) {
    %one = amp.constant dense<1.0> : tensor<f32>
    %g, %found, %flags = amp.multi_tensor_unscale_check %one, %w : (tensor<f32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<f32>, tensor<1xf32>)
    return %g, %step : tensor<2xf32>, tensor<i64>
  }
}
