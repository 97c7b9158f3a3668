// amp-autocast on TOSA (lib/Transforms/PrecisionModels/Tosa.cpp): ops are
// retyped in place with tosa.cast at the boundaries; matmul and the
// convolutions take f16 input and weight and keep an fp32 bias and result
// (TOSA's f16 x f16 -> f32 form); tosa.const weights are converted at
// compile time; avg_pool2d accumulates in fp32 through acc_type;
// reduce_sum cannot accumulate in fp32 and stays fp32 by default.
//
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{annotate=true})' | FileCheck %s
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{annotate=true}, canonicalize)' | mlir-opt --tosa-validate | FileCheck %s --check-prefix=NOAMP
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{fp32-accumulate=false})' | FileCheck %s --check-prefix=NOACC
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{allow=ReduceSum})' | FileCheck %s --check-prefix=SUM

// NOAMP-NOT: amp.cast
// NOAMP-NOT: amp.constant

// CHECK-LABEL: func.func @cnn(
// CHECK-DAG: %[[B:.+]] = "tosa.const"() <{value = dense<1.000000e-01> : tensor<4xf32>}>
// CHECK-DAG: %[[W:.+]] = "tosa.const"() <{value = dense<5.000000e-01> : tensor<4x3x3x3xf16>}>
// CHECK-DAG: %[[X:.+]] = tosa.cast %arg0 : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf16>
// CHECK: %[[C:.+]] = tosa.conv2d %[[X]], %[[W]], %[[B]] {amp.reason = "allow list{{.*}} : (tensor<1x8x8x3xf16>, tensor<4x3x3x3xf16>, tensor<4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: %[[C16:.+]] = tosa.cast %[[C]] : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf16>
// CHECK: %[[R:.+]] = tosa.clamp %[[C16]] {amp.reason = "follows low-precision input from 'Conv#0'"{{.*}} : (tensor<1x6x6x4xf16>) -> tensor<1x6x6x4xf16>
// CHECK: %[[P:.+]] = tosa.avg_pool2d %[[R]] {acc_type = f32, {{.*}} : (tensor<1x6x6x4xf16>) -> tensor<1x3x3x4xf16>
// CHECK: %[[P32:.+]] = tosa.cast %[[P]] : (tensor<1x3x3x4xf16>) -> tensor<1x3x3x4xf32>
// CHECK: tosa.reduce_sum %[[P32]] {amp.reason = "deny list{{.*}} : (tensor<1x3x3x4xf32>) -> tensor<1x3x3x1xf32>
func.func @cnn(%x: tensor<1x8x8x3xf32>) -> tensor<1x3x3x1xf32> {
  %w = "tosa.const"() {value = dense<0.5> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %b = "tosa.const"() {value = dense<0.1> : tensor<4xf32>} : () -> tensor<4xf32>
  %c = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x6x6x4xf32>
  %r = tosa.clamp %c {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %p = tosa.avg_pool2d %r {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x6x6x4xf32>) -> tensor<1x3x3x4xf32>
  %s = tosa.reduce_sum %p {axis = 3 : i32} : (tensor<1x3x3x4xf32>) -> tensor<1x3x3x1xf32>
  return %s : tensor<1x3x3x1xf32>
}

// NOACC-LABEL: func.func @cnn(
// fp32-accumulate=false does not change TOSA's contractions: their fp32
// result is the accumulator (docs/Embedding.md), as avg_pool2d's acc_type
// stays f32.
// NOACC: tosa.conv2d {{.*}} : (tensor<1x8x8x3xf16>, tensor<4x3x3x3xf16>, tensor<4xf32>) -> tensor<1x6x6x4xf32>

// SUM-LABEL: func.func @cnn(
// SUM: tosa.reduce_sum %{{.+}} {axis = 3 : i32} : (tensor<1x3x3x4xf16>) -> tensor<1x3x3x1xf16>

// Attention scores: the matmul's fp32 result is cast for the clear/infer
// ops after it; exp is denied, so the values are cast back first.
// CHECK-LABEL: func.func @attention(
// CHECK-DAG: %[[K:.+]] = tosa.cast %arg1 : (tensor<1x8x4xf32>) -> tensor<1x8x4xf16>
// CHECK-DAG: %[[Q:.+]] = tosa.cast %arg0 : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK: %[[S:.+]] = tosa.matmul %[[Q]], %[[K]] {{.*}}: (tensor<1x4x8xf16>, tensor<1x8x4xf16>) -> tensor<1x4x4xf32>
// CHECK: %[[S16:.+]] = tosa.cast %[[S]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK: %[[M:.+]] = tosa.reduce_max %[[S16]] {{.*}} -> tensor<1x4x1xf16>
// CHECK: %[[D:.+]] = tosa.sub %[[S16]], %[[M]] {{.*}} -> tensor<1x4x4xf16>
// CHECK: %[[D32:.+]] = tosa.cast %[[D]] : (tensor<1x4x4xf16>) -> tensor<1x4x4xf32>
// CHECK: tosa.exp %[[D32]] {amp.reason = "deny list{{.*}} -> tensor<1x4x4xf32>
func.func @attention(%q: tensor<1x4x8xf32>, %k: tensor<1x8x4xf32>) -> tensor<1x4x4xf32> {
  %s = tosa.matmul %q, %k : (tensor<1x4x8xf32>, tensor<1x8x4xf32>) -> tensor<1x4x4xf32>
  %m = tosa.reduce_max %s {axis = 2 : i32} : (tensor<1x4x4xf32>) -> tensor<1x4x1xf32>
  %d = tosa.sub %s, %m : (tensor<1x4x4xf32>, tensor<1x4x1xf32>) -> tensor<1x4x4xf32>
  %e = tosa.exp %d : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  return %e : tensor<1x4x4xf32>
}

// Data movement follows: reshape and transpose between two matmuls go low
// (clear ops between allow ops); fully_connected keeps an fp32 bias.
// CHECK-LABEL: func.func @movement(
// CHECK: tosa.fully_connected %{{.+}}, %{{.+}}, %{{.+}} {{.*}}: (tensor<2x8xf16>, tensor<8x8xf16>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK: tosa.reshape %{{.+}} {amp.reason = "between allow ops{{.*}} -> tensor<1x2x8xf16>
// CHECK: tosa.transpose %{{.+}}, %{{.+}} {amp.reason = "between allow ops{{.*}} -> tensor<1x8x2xf16>
// CHECK: tosa.matmul %{{.+}}, %{{.+}} {{.*}}: (tensor<1x2x8xf16>, tensor<1x8x2xf16>) -> tensor<1x2x2xf32>
func.func @movement(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<1x2x2xf32> {
  %perms = "tosa.const"() {value = dense<[0, 2, 1]> : tensor<3xi32>} : () -> tensor<3xi32>
  %f = tosa.fully_connected %x, %w, %b : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %r = tosa.reshape %f {new_shape = array<i64: 1, 2, 8>} : (tensor<2x8xf32>) -> tensor<1x2x8xf32>
  %t = tosa.transpose %r, %perms : (tensor<1x2x8xf32>, tensor<3xi32>) -> tensor<1x8x2xf32>
  %m = tosa.matmul %r, %t : (tensor<1x2x8xf32>, tensor<1x8x2xf32>) -> tensor<1x2x2xf32>
  return %m : tensor<1x2x2xf32>
}
