// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// Operator forms that opsets 27 and 28 define: SpaceToDepth's CRD mode,
// Range's stash_type, BitShift on signed types and large shifts, Mod of
// floats with fmod = 0.

// SpaceToDepth splits H and W into (h', by) and (w', bx); DCR orders the
// new channels (by, bx, c), CRD (c, by, bx).
// CHECK-LABEL: func.func @space_to_depth_modes
// CHECK: tensor.expand_shape {{.*}} into tensor<1x2x2x2x2x2xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 5, 1, 2, 4]
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x8x2x2xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 1, 3, 5, 2, 4]
func.func @space_to_depth_modes(%x: tensor<1x2x4x4xf32>) -> (tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>) {
  %0 = amp.space_to_depth %x {blocksize = 2 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x8x2x2xf32>
  %1 = amp.space_to_depth %x {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x2x4x4xf32>) -> tensor<1x8x2x2xf32>
  return %0, %1 : tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>
}

// -----

// A float16 Range computes start + i * delta in stash_type (default 1,
// float; 11, double) and rounds once.
// CHECK-LABEL: func.func @range_stash_type
// CHECK: %[[START:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[DELTA:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: %[[STEP:.*]] = arith.mulf %[[I]], %[[DELTA]] : f32
// CHECK: %[[SUM:.*]] = arith.addf %[[START]], %[[STEP]] : f32
// CHECK: arith.truncf %[[SUM]] : f32 to f16
// CHECK: linalg.generic
// CHECK: %[[I64:.*]] = arith.sitofp %{{.*}} : i64 to f64
// CHECK: %[[STEP64:.*]] = arith.mulf %[[I64]], %{{.*}} : f64
// CHECK: %[[SUM64:.*]] = arith.addf %{{.*}}, %[[STEP64]] : f64
// CHECK: arith.truncf %[[SUM64]] : f64 to f16
func.func @range_stash_type(%s: tensor<f16>, %l: tensor<f16>, %d: tensor<f16>) -> (tensor<?xf16>, tensor<?xf16>) {
  %0 = amp.range %s, %l, %d : (tensor<f16>, tensor<f16>, tensor<f16>) -> tensor<?xf16>
  %1 = amp.range %s, %l, %d {stash_type = 11 : i64} : (tensor<f16>, tensor<f16>, tensor<f16>) -> tensor<?xf16>
  return %0, %1 : tensor<?xf16>, tensor<?xf16>
}

// -----

// A signed right shift is arithmetic; a shift by a negative amount or by
// the width or more gives the fill: the sign (x >> 7) for a signed right
// shift, 0 otherwise.
// CHECK-LABEL: func.func @bit_shift
// CHECK: %[[S:.*]] = arith.shrsi %[[X:.*]], %[[Y:.*]] : i8
// CHECK: %[[W:.*]] = arith.constant 8 : i8
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[Y]], %[[W]] : i8
// CHECK: %[[SEVEN:.*]] = arith.constant 7 : i8
// CHECK: %[[SIGN:.*]] = arith.shrsi %[[X]], %[[SEVEN]] : i8
// CHECK: arith.select %[[IN]], %[[S]], %[[SIGN]] : i8
// CHECK: linalg.generic
// CHECK: %[[U:.*]] = arith.shrui %{{.*}}, %[[UY:.*]] : i8
// CHECK: %[[UW:.*]] = arith.constant 8 : i8
// CHECK: %[[UIN:.*]] = arith.cmpi ult, %[[UY]], %[[UW]] : i8
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK: arith.select %[[UIN]], %[[U]], %[[ZERO]] : i8
// CHECK: linalg.generic
// CHECK: %[[L:.*]] = arith.shli
// CHECK: arith.cmpi ult
// CHECK: %[[LZERO:.*]] = arith.constant 0 : i32
// CHECK: arith.select %{{.*}}, %[[L]], %[[LZERO]] : i32
func.func @bit_shift(%a: tensor<4xi8>, %b: tensor<4xi8>, %ua: tensor<4xui8>, %ub: tensor<4xui8>, %la: tensor<4xi32>, %lb: tensor<4xi32>) -> (tensor<4xi8>, tensor<4xui8>, tensor<4xi32>) {
  %0 = amp.bit_shift %a, %b {direction = "RIGHT"} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %1 = amp.bit_shift %ua, %ub {direction = "RIGHT"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = amp.bit_shift %la, %lb {direction = "LEFT"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1, %2 : tensor<4xi8>, tensor<4xui8>, tensor<4xi32>
}

// -----

// Float Mod with fmod = 0: the remainder moved to the divisor's sign, a
// zero result signed like the divisor; fmod = 1 is C's fmod.
// CHECK-LABEL: func.func @float_mod
// CHECK: %[[R:.*]] = arith.remf %[[X:.*]], %[[Y:.*]] : f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[NZ:.*]] = arith.cmpf one, %[[R]], %[[ZERO]] : f32
// CHECK: %[[YNEG:.*]] = arith.cmpf olt, %[[Y]], %[[ZERO]] : f32
// CHECK: %[[RNEG:.*]] = arith.cmpf olt, %[[R]], %[[ZERO]] : f32
// CHECK: %[[DIFF:.*]] = arith.xori %[[RNEG]], %[[YNEG]] : i1
// CHECK: %[[FIX:.*]] = arith.andi %[[NZ]], %[[DIFF]] : i1
// CHECK: %[[MOVED:.*]] = arith.addf %[[R]], %[[Y]] : f32
// CHECK: %[[RES:.*]] = arith.select %[[FIX]], %[[MOVED]], %[[R]] : f32
// CHECK: %[[ISZ:.*]] = arith.cmpf oeq, %[[R]], %[[ZERO]] : f32
// CHECK: %[[NEGZ:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[YNEG2:.*]] = arith.cmpf olt, %[[Y]], %[[ZERO]] : f32
// CHECK: %[[SZ:.*]] = arith.select %[[YNEG2]], %[[NEGZ]], %[[ZERO]] : f32
// CHECK: arith.select %[[ISZ]], %[[SZ]], %[[RES]] : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[C:.*]] = arith.remf
// CHECK-NEXT: linalg.yield %[[C]] : f32
func.func @float_mod(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = amp.mod %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = amp.mod %a, %b {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
