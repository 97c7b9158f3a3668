// The amp-lower-to-cuda pipeline's options come from CudaLoweringOptions::bind
// (the same declaration as amp-opt's --amp-cuda-chip/-toolkit/-block-size):
// each reaches the pass it configures; the defaults are the struct's.
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-lower-to-cuda{block-size=128 chip=sm_80 toolkit=/opt/cuda})' --dump-pass-pipeline 2>&1 | FileCheck %s
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-lower-to-cuda)' --dump-pass-pipeline 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: not amp-opt %s --pass-pipeline='builtin.module(amp-lower-to-cuda{block-size=many})' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: amp-linalg-to-gpu{block-size=128}
// CHECK: nvvm-attach-target{{.*}}chip=sm_80
// CHECK: gpu-module-to-binary{{.*}}toolkit=/opt/cuda

// DEFAULT: amp-linalg-to-gpu{block-size=256}
// DEFAULT: nvvm-attach-target{{.*}}chip=sm_90

// BAD: 'many' value invalid for uint argument
module {
}
