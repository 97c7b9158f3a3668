// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// The storage types (8-bit floats, 4- and 2-bit integers) lower to i8
// tensors, one element per byte; Cast decodes and encodes their bits.

// Decoding E4M3FN: rebias the exponent into f32's, widen the mantissa;
// the subnormal range is mantissa * 2^-9; S.1111.111 is NaN.
// CHECK-LABEL: func.func @from_e4m3fn
// CHECK-SAME: (%{{.*}}: tensor<8xi8>) -> tensor<8xf32>
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: i8, %{{.*}}: f32):
// CHECK: %[[U:.*]] = arith.extui %[[IN]] : i8 to i32
// CHECK-DAG: arith.constant 120 : i32
// CHECK-DAG: arith.uitofp %{{.*}} : i32 to f32
// CHECK-DAG: arith.constant 0.001953125 : f32
// CHECK-DAG: arith.constant 2143289344 : i32
// CHECK: linalg.yield %{{.*}} : f32
func.func @from_e4m3fn(%x: tensor<8xf8E4M3FN>) -> tensor<8xf32> {
  %0 = amp.cast %x {to = f32} : (tensor<8xf8E4M3FN>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Encoding to E5M2 from f16 goes through f64 (exact): the quantum of the
// value's binade (at least 2^-16), roundeven, then the overflow rule:
// saturate (the default) gives S.11110.11 = 0x7b.
// CHECK-LABEL: func.func @to_e5m2_saturating
// CHECK-SAME: -> tensor<4xi8>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK-DAG: arith.constant -14 : i64
// CHECK-DAG: arith.maxsi
// CHECK-DAG: math.roundeven %{{.*}} : f64
// CHECK-DAG: arith.constant 123 : i8
// CHECK-DAG: arith.constant 5.734400e+04 : f64
// CHECK-DAG: arith.cmpf ogt
// CHECK-DAG: arith.cmpf uno
// CHECK: linalg.yield %{{.*}} : i8
func.func @to_e5m2_saturating(%x: tensor<4xf16>) -> tensor<4xf8E5M2> {
  %0 = amp.cast %x {to = f8E5M2} : (tensor<4xf16>) -> tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

// Without saturation E5M2 overflows to Inf (0x7c); E4M3FNUZ to NaN (0x80),
// which is also its only NaN; it has no -0.
// CHECK-LABEL: func.func @to_float8_not_saturating
// CHECK: arith.constant 124 : i8
// CHECK: linalg.generic
// CHECK-DAG: arith.constant -128 : i8
// CHECK-DAG: arith.cmpf oeq
func.func @to_float8_not_saturating(%x: tensor<4xf32>) -> (tensor<4xf8E5M2>, tensor<4xf8E4M3FNUZ>) {
  %0 = amp.cast %x {to = f8E5M2, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  %1 = amp.cast %x {to = f8E4M3FNUZ, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
  return %0, %1 : tensor<4xf8E5M2>, tensor<4xf8E4M3FNUZ>
}

// -----

// A 4-bit integer is its i8 extension: from float, values outside
// [-8, 7] (after truncation) and NaN give 0; from a wider integer the
// high bits are dropped and the sign bit extended (shift left 4, then
// arithmetic shift right 4); unsigned 2-bit values are masked.
// CHECK-LABEL: func.func @to_narrow_integers
// CHECK-DAG: arith.constant -9.000000e+00 : f64
// CHECK-DAG: arith.constant 8.000000e+00 : f64
// CHECK: arith.fptosi %{{.*}} : f64 to i8
// CHECK: linalg.generic
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: arith.shli
// CHECK: arith.shrsi
// CHECK: linalg.generic
// CHECK: arith.constant 3 : i8
// CHECK: arith.andi
func.func @to_narrow_integers(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xi4>, tensor<4xi4>, tensor<4xui2>) {
  %0 = amp.cast %x {to = i4} : (tensor<4xf32>) -> tensor<4xi4>
  %1 = amp.cast %i {to = i4} : (tensor<4xi32>) -> tensor<4xi4>
  %2 = amp.cast %i {to = ui2} : (tensor<4xi32>) -> tensor<4xui2>
  return %0, %1, %2 : tensor<4xi4>, tensor<4xi4>, tensor<4xui2>
}

// -----

// Constants: a 4-bit integer constant becomes its extended bytes, an
// 8-bit float constant its bit patterns.
// CHECK-LABEL: func.func @storage_constants
// CHECK: arith.constant dense<[-8, 7, -1]> : tensor<3xi8>
// CHECK: arith.constant dense<[15, 0]> : tensor<2xi8>
// CHECK: arith.constant dense<[56, -72]> : tensor<2xi8>
func.func @storage_constants() -> (tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) {
  %a = amp.constant dense<[-8, 7, -1]> : tensor<3xi4>
  %b = amp.constant dense<[15, 0]> : tensor<2xui4>
  %c = amp.constant dense<[1.0, -1.0]> : tensor<2xf8E4M3FN>
  %0 = amp.cast %a {to = f32} : (tensor<3xi4>) -> tensor<3xf32>
  %1 = amp.cast %b {to = f32} : (tensor<2xui4>) -> tensor<2xf32>
  %2 = amp.cast %c {to = f32} : (tensor<2xf8E4M3FN>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<2xf32>, tensor<2xf32>
}
