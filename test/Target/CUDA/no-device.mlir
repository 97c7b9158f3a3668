// REQUIRES: cuda-toolkit, amp-run-gpu, no-gpu
// RUN: amp-opt %S/artifact.mlir --amp-target=cuda -o %t.ampgpu
// RUN: not amp-run-gpu %t.ampgpu --random-inputs 2>&1 | FileCheck %s
// Without a GPU, running an artifact stops with a clear message (exit 3).
// CHECK: amp-run-gpu: error: no CUDA device: {{.+}}
