// REQUIRES: cuda-toolkit, amp-run-gpu
// RUN: amp-opt %s --amp-target=cuda -o %t.ampgpu
// RUN: amp-run-gpu %t.ampgpu --describe | FileCheck %s
// RUN: amp-opt %s --amp-target=cuda --amp-cuda-no-cubin --amp-cuda-chip=sm_80 -o %t.ptx.ampgpu
// RUN: amp-run-gpu %t.ptx.ampgpu --describe | FileCheck %s --check-prefix=PTX
// An fp16 MLP compiled for CUDA: the GEMMs are cuBLASLt calls with fp16
// operands, fp32 compute and output (their zero fills folded: beta=0), the
// rest generated kernels named after the ONNX nodes; the weights are
// stored in fp16; buffers share arena bytes.

// CHECK: amp GPU artifact v1 (amp-opt)
// CHECK: source: artifact.mlir
// CHECK: arena: {{[0-9]+}} bytes in {{[0-9]+}} buffers ({{[0-9]+}} without reuse); weights: 1536 bytes in 2 buffers
// CHECK: input 'x': f32[4, 16] at %0
// CHECK: output 'probabilities': f32[4, 8] at %{{[0-9]+}}
// CHECK: module cubin sm_90:
// CHECK: module ptx sm_90:
// CHECK: step 0: kernel x_cast_{{[0-9]+}} grid(1,1,1) block(64,1,1)
// CHECK: gemm f16xf16->f32 batch=1 m=4 n=32 k=16 transA=0 transB=0 beta=0 {{.*}} // fc1
// CHECK: kernel relu_{{[0-9]+}}
// CHECK: gemm f16xf16->f32 batch=1 m=4 n=8 k=32 transA=0 transB=0 beta=0 {{.*}} // fc2
// CHECK: kernel softmax_{{[0-9]+}}

// PTX-NOT: cubin
// PTX: module ptx sm_80:
// PTX-NOT: cubin

module {
  func.func @main(%x: tensor<4x16xf32> {amp.name = "x"}) -> (tensor<4x8xf32> {amp.name = "probabilities"}) {
    %w1 = amp.constant dense<0.5> : tensor<16x32xf16>
    %w2 = amp.constant dense<0.25> : tensor<32x8xf16>
    %xh = amp.cast %x {to = f16} : (tensor<4x16xf32>) -> tensor<4x16xf16> loc("x_cast")
    %h = amp.matmul %xh, %w1 {amp.accumulate = f32} : (tensor<4x16xf16>, tensor<16x32xf16>) -> tensor<4x32xf16> loc("fc1")
    %r = amp.relu %h : (tensor<4x32xf16>) -> tensor<4x32xf16> loc("relu")
    %o = amp.matmul %r, %w2 {amp.accumulate = f32} : (tensor<4x32xf16>, tensor<32x8xf16>) -> tensor<4x8xf16> loc("fc2")
    %of = amp.cast %o {to = f32} : (tensor<4x8xf16>) -> tensor<4x8xf32> loc("out_cast")
    %p = amp.softmax %of {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("softmax")
    return %p : tensor<4x8xf32>
  }
}
