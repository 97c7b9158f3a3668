// REQUIRES: amp-run-gpu
// RUN: amp-opt %s --amp-target=cuda --amp-cuda-no-cubin -o %t.ampgpu
// RUN: amp-run-gpu %t.ampgpu --print-ptx | FileCheck %s
// The generated PTX: one module for sm_90; Exp and the Cast after it are
// one fused kernel (named after the last node); exp comes from libdevice
// (ex2), the fp16 rounding is one cvt.rn; the 1000 threads' bounds are
// guarded (index > 999 does nothing).

// CHECK: .target sm_90
// CHECK-NOT: .entry exp
// CHECK: .visible .entry to_f16_0(
// CHECK: setp.gt.u64 {{.+}}, 999;
// CHECK: ex2.approx
// CHECK: cvt.rn.f16.f32
// CHECK-NOT: .entry

func.func @main(%x: tensor<1000xf32> {amp.name = "x"}) -> (tensor<1000xf16> {amp.name = "y"}) {
  %e = amp.exp %x : (tensor<1000xf32>) -> tensor<1000xf32> loc("exp")
  %y = amp.cast %e {to = f16} : (tensor<1000xf32>) -> tensor<1000xf16> loc("to_f16")
  return %y : tensor<1000xf16>
}
