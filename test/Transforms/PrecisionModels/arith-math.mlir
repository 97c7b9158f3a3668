// amp-autocast on arith and math ops on tensors (ArithMath.cpp): retyped in
// place, converted with arith.truncf / arith.extf, classified by the ONNX
// operator they compute (math.exp is Exp: denied by default). An amp op
// next to them gets amp.cast; arith.select's i1 condition is never
// converted.
//
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{annotate=true})' | FileCheck %s

// CHECK-LABEL: func.func @mixed(
// CHECK: %[[X:.+]] = amp.cast %arg0 {to = f16}
// CHECK: %[[MM:.+]] = amp.matmul %[[X]], %{{.+}} {amp.accumulate = f32{{.*}} -> tensor<4x8xf16>
// CHECK: %[[ADD:.+]] = arith.addf %[[MM]], %[[MM]] {amp.reason = "follows low-precision input from 'MatMul#0'"} : tensor<4x8xf16>
// CHECK: %[[MUL:.+]] = arith.mulf %[[ADD]], %{{.+}} {{.*}}: tensor<4x8xf16>
// CHECK: %[[SEL:.+]] = arith.select %arg1, %[[MUL]], %[[ADD]] {{.*}}: tensor<4x8xi1>, tensor<4x8xf16>
// CHECK: %[[SEL32:.+]] = arith.extf %[[SEL]] : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK: math.exp %[[SEL32]] {amp.reason = "deny list{{.*}} : tensor<4x8xf32>
func.func @mixed(%x: tensor<4x16xf32>, %mask: tensor<4x8xi1>) -> tensor<4x8xf32> {
  %w = amp.constant dense<0.5> : tensor<16x8xf32>
  %half = arith.constant dense<0.5> : tensor<4x8xf32>
  %mm = amp.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %add = arith.addf %mm, %mm : tensor<4x8xf32>
  %mul = arith.mulf %add, %half : tensor<4x8xf32>
  %sel = arith.select %mask, %mul, %add : tensor<4x8xi1>, tensor<4x8xf32>
  %exp = math.exp %sel : tensor<4x8xf32>
  return %exp : tensor<4x8xf32>
}

// Only arith/math: nothing on the allow list, so nothing changes.
// CHECK-LABEL: func.func @unchanged(
// CHECK-NOT: truncf
// CHECK: math.tanh %{{.+}} {amp.reason = {{.*}} : tensor<8xf32>
func.func @unchanged(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = arith.mulf %x, %x : tensor<8xf32>
  %t = math.tanh %a : tensor<8xf32>
  return %t : tensor<8xf32>
}
