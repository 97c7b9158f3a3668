// libAmpPlugin.so in Debian's upstream mlir-opt-19 (%mlir-opt-amp: mlir-opt
// with --load-dialect-plugin and --load-pass-plugin, and LD_BIND_NOW=1 so
// that a symbol the host lacks fails the load instead of a later call).
// The amp dialect parses and verifies, and each named pipeline gives the
// same program, byte for byte, as amp-opt's own registration.
//
// RUN: %mlir-opt-amp %s --pass-pipeline='builtin.module(amp-front-end{type=bf16 fold-constants=false})' -o %t.plugin.mlir
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{type=bf16 fold-constants=false})' -o %t.tool.mlir
// RUN: diff %t.tool.mlir %t.plugin.mlir
// RUN: FileCheck %s --check-prefix=FRONT < %t.plugin.mlir
//
// RUN: %mlir-opt-amp %s --pass-pipeline='builtin.module(amp-front-end{fold-constants=false}, amp-lower-to-llvm)' -o %t.plugin.ll.mlir
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{fold-constants=false}, amp-lower-to-llvm)' -o %t.tool.ll.mlir
// RUN: diff %t.tool.ll.mlir %t.plugin.ll.mlir
// RUN: FileCheck %s --check-prefix=LLVM < %t.plugin.ll.mlir
//
// RUN: %mlir-opt-amp %S/../Training/Inputs/mlp.mlir --pass-pipeline='builtin.module(amp-train-step{optimizer=adamw loss-scale=static:128 split-step=true})' -o %t.plugin.train.mlir
// RUN: amp-opt %S/../Training/Inputs/mlp.mlir --pass-pipeline='builtin.module(amp-train-step{optimizer=adamw loss-scale=static:128 split-step=true})' -o %t.tool.train.mlir
// RUN: diff %t.tool.train.mlir %t.plugin.train.mlir
// RUN: FileCheck %s --check-prefix=TRAIN < %t.plugin.train.mlir
//
// amp-autocast on upstream dialects (the precision models come with the
// dialect plugin):
// RUN: %mlir-opt-amp %S/../Transforms/PrecisionModels/tosa.mlir --pass-pipeline='builtin.module(amp-autocast{annotate=true})' -o %t.plugin.tosa.mlir
// RUN: amp-opt %S/../Transforms/PrecisionModels/tosa.mlir --pass-pipeline='builtin.module(amp-autocast{annotate=true})' -o %t.tool.tosa.mlir
// RUN: diff %t.tool.tosa.mlir %t.plugin.tosa.mlir
// RUN: %mlir-opt-amp %S/../Transforms/PrecisionModels/linalg.mlir --pass-pipeline='builtin.module(amp-autocast)' -o %t.plugin.linalg.mlir
// RUN: amp-opt %S/../Transforms/PrecisionModels/linalg.mlir --pass-pipeline='builtin.module(amp-autocast)' -o %t.tool.linalg.mlir
// RUN: diff %t.tool.linalg.mlir %t.plugin.linalg.mlir
// RUN: FileCheck %s --check-prefix=UPSTREAM < %t.plugin.tosa.mlir
//
// Every verifier diagnostic of the dialect, and its round trip:
// RUN: %mlir-opt-amp %S/../Dialect/Amp/invalid.mlir -split-input-file -verify-diagnostics
// RUN: %mlir-opt-amp %S/../Dialect/Amp/ops.mlir | %mlir-opt-amp | FileCheck %s --check-prefix=ROUNDTRIP
//
// Single passes with their options, and a pass's error:
// RUN: %mlir-opt-amp %s --pass-pipeline='builtin.module(amp-autocast{deny=MatMul report=-})' 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not %mlir-opt-amp %s --pass-pipeline='builtin.module(amp-front-end{type=f8})' 2>&1 | FileCheck %s --check-prefix=BADTYPE
// RUN: not %mlir-opt-amp %s --pass-pipeline='builtin.module(amp-autocast{policy=no-such-preset})' 2>&1 | FileCheck %s --check-prefix=BADPOLICY

// FRONT-LABEL: func.func @main
// FRONT: amp.matmul {{.*}} {amp.accumulate = f32} : {{.*}} -> tensor<4x8xbf16>
// FRONT: amp.exp {{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>

// LLVM: llvm.func @amp_cpu_matmul_f32
// LLVM-LABEL: llvm.func @main(

// TRAIN-LABEL: func.func @compute_gradients(
// TRAIN-LABEL: func.func @apply_gradients(

// PASS: amp.matmul {{.*}} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>

// ROUNDTRIP: amp.

// UPSTREAM: tosa.conv2d {{.*}} : (tensor<1x8x8x3xf16>, tensor<4x3x3x3xf16>, tensor<4xf32>) -> tensor<1x6x6x4xf32>

// BADTYPE: error: {{.*}}f8
// BADPOLICY: no-such-preset

func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = amp.constant dense<0.5> : tensor<16x8xf32>
  %0 = amp.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = amp.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = amp.exp %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
