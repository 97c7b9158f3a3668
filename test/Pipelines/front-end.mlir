// The amp-front-end pipeline (lib/Pipelines): import cleanup, amp-autocast
// with its options, amp-cast-cleanup; the same passes amp-opt runs on an
// ONNX model, registered by name with an option struct.
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end)' | FileCheck %s --check-prefix=DEFAULT
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{type=bf16})' | FileCheck %s --check-prefix=BF16
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{deny=MatMul allow=Exp})' | FileCheck %s --check-prefix=LISTS
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{opt-level=0})' | FileCheck %s --check-prefix=O0
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{keep-io-types=false})' | FileCheck %s --check-prefix=IO
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{annotate=true release-weights=false})' | FileCheck %s --check-prefix=KEEP
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-front-end{import-cleanup=false opt-level=0})' | FileCheck %s --check-prefix=NOCLEAN
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-import-cleanup)' | FileCheck %s --check-prefix=CLEANUP
// RUN: not amp-opt %s --pass-pipeline='builtin.module(amp-front-end{type=f8})' 2>&1 | FileCheck %s --check-prefix=BADTYPE

// Cleanup: the duplicate Relu is merged (CSE) before autocast.
// DEFAULT-LABEL: func.func @main
// DEFAULT: amp.cast %{{.*}} {to = f16}
// DEFAULT: amp.matmul {{.*}} {amp.accumulate = f32} : {{.*}} -> tensor<4x8xf16>
// DEFAULT-COUNT-1: amp.relu
// DEFAULT-NOT: amp.relu
// DEFAULT: amp.exp {{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// DEFAULT: return {{.*}} : tensor<4x8xf32>

// BF16: amp.matmul {{.*}} -> tensor<4x8xbf16>

// MatMul denied stays fp32; Exp allowed goes low.
// LISTS: amp.matmul {{.*}} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// LISTS: amp.exp {{.*}} : (tensor<4x8xf16>) -> tensor<4x8xf16>

// O0-NOT: f16

// Without keep-io-types the graph input becomes f16 (no cast in front).
// IO: func.func @main(%arg0: tensor<4x16xf16>)
// IO-NOT: amp.cast %arg0

// Annotated: each op records why autocast chose its precision.
// KEEP: amp.matmul {{.*}}amp.reason = "allow list

// Without the cleanup both Relus remain.
// NOCLEAN-COUNT-2: amp.relu

// CLEANUP-COUNT-1: amp.relu
// CLEANUP-NOT: amp.relu
// CLEANUP-NOT: f16

// BADTYPE: error: {{.*}}f8

func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = amp.constant dense<0.5> : tensor<16x8xf32>
  %0 = amp.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = amp.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = amp.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = amp.add %1, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = amp.exp %3 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}
