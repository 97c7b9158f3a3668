// RUN: amp-opt %s -canonicalize -split-input-file | FileCheck %s
// Shape arithmetic as exporters write it folds away for static shapes.

// CHECK-LABEL: func.func @shape_gather_unsqueeze_concat_reshape
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>
func.func @shape_gather_unsqueeze_concat_reshape(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  // CHECK: %[[SHAPE:.*]] = amp.constant dense<[2, 12]> : tensor<2xi64>
  // CHECK-NEXT: %[[R:.*]] = amp.reshape %[[X]], %[[SHAPE]]
  // CHECK-NEXT: return %[[R]]
  %shape = amp.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i0 = amp.constant dense<0> : tensor<i64>
  %d0 = amp.gather %shape, %i0 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %axes = amp.constant dense<[0]> : tensor<1xi64>
  %u0 = amp.unsqueeze %d0, %axes : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = amp.constant dense<[12]> : tensor<1xi64>
  %cat = amp.concat %u0, %m1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = amp.reshape %x, %cat : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %c = amp.cast %r {to = f32} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = amp.identity %c : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %fixed = amp.reshape %out, %cat : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %fixed : tensor<2x12xf32>
}

// -----

// CHECK-LABEL: func.func @arith_on_shapes
func.func @arith_on_shapes() -> (tensor<2xi64>, tensor<i64>, tensor<3xi1>, tensor<3xi64>, tensor<i64>) {
  // CHECK-DAG: dense<[24, 4]> : tensor<2xi64>
  // CHECK-DAG: dense<2> : tensor<i64>
  // CHECK-DAG: dense<[true, false, true]> : tensor<3xi1>
  // CHECK-DAG: dense<[7, 5, 7]> : tensor<3xi64>
  // CHECK-DAG: dense<1> : tensor<i64>
  %a = amp.constant dense<[12, 2]> : tensor<2xi64>
  %two = amp.constant dense<2> : tensor<i64>
  %0 = amp.mul %a, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %seven = amp.constant dense<7> : tensor<i64>
  %three = amp.constant dense<3> : tensor<i64>
  %1 = amp.div %seven, %three : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %v = amp.constant dense<[-1, 5, -1]> : tensor<3xi64>
  %m1 = amp.constant dense<-1> : tensor<i64>
  %2 = amp.equal %v, %m1 : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %3 = amp.where %2, %seven, %v : (tensor<3xi1>, tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
  %neg = amp.constant dense<-5> : tensor<i64>
  %4 = amp.mod %neg, %three : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %0, %1, %2, %3, %4 : tensor<2xi64>, tensor<i64>, tensor<3xi1>, tensor<3xi64>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @signs_comparisons_extrema
// ONNX's expanded LayerNormalization computes the reduced shape with Neg;
// exporters clamp indices with Max/Min and test them with Less/Not.
func.func @signs_comparisons_extrema() -> (tensor<2xi64>, tensor<2xi64>, tensor<3xi64>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) {
  // CHECK-DAG: %[[NEG:.*]] = amp.constant dense<[2, -3]> : tensor<2xi64>
  // CHECK-DAG: %[[ABS:.*]] = amp.constant dense<[2, 3]> : tensor<2xi64>
  // CHECK-DAG: %[[SIGN:.*]] = amp.constant dense<[-1, 0, 1]> : tensor<3xi64>
  // CHECK-DAG: %[[GT:.*]] = amp.constant dense<[false, false, true]> : tensor<3xi1>
  // CHECK-DAG: %[[LE:.*]] = amp.constant dense<[true, true, false]> : tensor<3xi1>
  // CHECK-DAG: %[[XOR:.*]] = amp.constant dense<true> : tensor<3xi1>
  // CHECK-DAG: %[[MAX:.*]] = amp.constant dense<[0, 0, 4]> : tensor<3xi64>
  // CHECK-DAG: %[[MIN:.*]] = amp.constant dense<[-4, 0, 1]> : tensor<3xi64>
  // CHECK: return %[[NEG]], %[[ABS]], %[[SIGN]], %[[GT]], %[[LE]], %[[LE]], %[[XOR]], %[[MAX]], %[[MIN]]
  %a = amp.constant dense<[-2, 3]> : tensor<2xi64>
  %0 = amp.neg %a : (tensor<2xi64>) -> tensor<2xi64>
  %1 = amp.abs %a : (tensor<2xi64>) -> tensor<2xi64>
  %v = amp.constant dense<[-4, 0, 4]> : tensor<3xi64>
  %2 = amp.sign %v : (tensor<3xi64>) -> tensor<3xi64>
  %zero = amp.constant dense<0> : tensor<i64>
  %3 = amp.greater %v, %zero : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %4 = amp.less_or_equal %v, %zero : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %5 = amp.not %3 : (tensor<3xi1>) -> tensor<3xi1>
  %6 = amp.xor %3, %4 : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %one = amp.constant dense<1> : tensor<i64>
  %7 = amp.max %v, %zero, %zero : (tensor<3xi64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %8 = amp.min %v, %one : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<2xi64>, tensor<2xi64>, tensor<3xi64>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi64>, tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @no_fold_overflow_or_unsigned_order
// INT64_MAX + 1, -INT64_MIN and ui64 values above INT64_MAX stay ops.
func.func @no_fold_overflow_or_unsigned_order() -> (tensor<i64>, tensor<i64>, tensor<i1>, tensor<ui64>) {
  // CHECK: amp.add
  // CHECK: amp.neg
  // CHECK: amp.greater
  // CHECK: amp.max
  %big = amp.constant dense<9223372036854775807> : tensor<i64>
  %one = amp.constant dense<1> : tensor<i64>
  %0 = amp.add %big, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %min = amp.constant dense<-9223372036854775808> : tensor<i64>
  %1 = amp.neg %min : (tensor<i64>) -> tensor<i64>
  %u = amp.constant dense<18446744073709551615> : tensor<ui64>
  %u1 = amp.constant dense<1> : tensor<ui64>
  %2 = amp.greater %u, %u1 : (tensor<ui64>, tensor<ui64>) -> tensor<i1>
  %3 = amp.max %u, %u1 : (tensor<ui64>, tensor<ui64>) -> tensor<ui64>
  return %0, %1, %2, %3 : tensor<i64>, tensor<i64>, tensor<i1>, tensor<ui64>
}

// -----

// CHECK-LABEL: func.func @no_fold_division_by_zero
func.func @no_fold_division_by_zero() -> tensor<i64> {
  // CHECK: amp.div
  %a = amp.constant dense<7> : tensor<i64>
  %z = amp.constant dense<0> : tensor<i64>
  %0 = amp.div %a, %z : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// CHECK-LABEL: func.func @generators
func.func @generators() -> (tensor<2x3xf32>, tensor<4xi64>, tensor<3xi64>) {
  // CHECK-DAG: dense<1.000000e+00> : tensor<2x3xf32>
  // CHECK-DAG: dense<[0, 3, 6, 9]> : tensor<4xi64>
  // CHECK-DAG: dense<[5, 3, 1]> : tensor<3xi64>
  %shape = amp.constant dense<[2, 3]> : tensor<2xi64>
  %0 = amp.constant_of_shape %shape {value = dense<1.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<2x3xf32>
  %start = amp.constant dense<0> : tensor<i64>
  %limit = amp.constant dense<10> : tensor<i64>
  %delta = amp.constant dense<3> : tensor<i64>
  %1 = amp.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %data = amp.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %st = amp.constant dense<[5]> : tensor<1xi64>
  %en = amp.constant dense<[0]> : tensor<1xi64>
  %ax = amp.constant dense<[0]> : tensor<1xi64>
  %sp = amp.constant dense<[-2]> : tensor<1xi64>
  %2 = amp.slice %data, %st, %en, %ax, %sp : (tensor<6xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<4xi64>, tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @transpose_and_slice_2d
func.func @transpose_and_slice_2d() -> (tensor<2x3xi64>, tensor<2x2xi64>) {
  // CHECK-DAG: dense<{{\[}}[1, 3, 5], [2, 4, 6]]> : tensor<2x3xi64>
  // CHECK-DAG: dense<{{\[}}[5, 6], [3, 4]]> : tensor<2x2xi64>
  %m = amp.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  %0 = amp.transpose %m {perm = array<i64: 1, 0>} : (tensor<3x2xi64>) -> tensor<2x3xi64>
  %st = amp.constant dense<[-1]> : tensor<1xi64>
  %en = amp.constant dense<[0]> : tensor<1xi64>
  %ax = amp.constant dense<[0]> : tensor<1xi64>
  %sp = amp.constant dense<[-1]> : tensor<1xi64>
  %1 = amp.slice %m, %st, %en, %ax, %sp : (tensor<3x2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xi64>
  return %0, %1 : tensor<2x3xi64>, tensor<2x2xi64>
}

// -----

// Identity Dropouts vanish: inference mode (no training_mode) or ratio 0.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>
func.func @dropout(%x: tensor<4xf32>, %train: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  // CHECK-DAG: %[[MASK:.*]] = amp.constant dense<true> : tensor<4xi1>
  // CHECK-DAG: %[[KEEP:.*]], %{{.*}} = amp.dropout
  // CHECK: return %[[X]], %[[X]], %[[MASK]], %[[KEEP]] :
  %none = amp.none
  %0:2 = amp.dropout %x, %none, %none : (tensor<4xf32>, none, none) -> (tensor<4xf32>, tensor<4xi1>)
  %zero = amp.constant dense<0.0> : tensor<f32>
  %1:2 = amp.dropout %x, %zero, %train : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  %half = amp.constant dense<0.5> : tensor<f32>
  %2:2 = amp.dropout %x, %half, %train : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  return %0#0, %1#0, %1#1, %2#0 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}

// -----

// Exact cast chains fold; lossy ones never do.
// CHECK-LABEL: func.func @cast_chains
// CHECK-SAME: %[[H:.*]]: tensor<4xf16>, %[[F:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xbf16>, %[[I:.*]]: tensor<4xi8>
func.func @cast_chains(%h: tensor<4xf16>, %f: tensor<4xf32>, %b: tensor<4xbf16>, %i: tensor<4xi8>)
    -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf64>, tensor<4xf16>, tensor<4xi8>, tensor<4xf32>) {
  // f16 -> f32 -> f16 is the identity.
  %0 = amp.cast %h {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %1 = amp.cast %0 {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  // f32 -> f16 -> f32 rounds: it stays.
  // CHECK: %[[DOWN:.*]] = amp.cast %[[F]] {to = f16}
  // CHECK: %[[UP:.*]] = amp.cast %[[DOWN]] {to = f32}
  %2 = amp.cast %f {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %3 = amp.cast %2 {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  // f16 -> f32 -> f64 becomes f16 -> f64.
  // CHECK: %[[WIDE:.*]] = amp.cast %[[H]] {to = f64}
  %4 = amp.cast %0 {to = f64} : (tensor<4xf32>) -> tensor<4xf64>
  // bf16 -> f32 is exact, so bf16 -> f32 -> f16 rounds once, like a
  // direct bf16 -> f16 cast.
  // CHECK: %[[BF16:.*]] = amp.cast %[[B]] {to = f16}
  %5 = amp.cast %b {to = f32} : (tensor<4xbf16>) -> tensor<4xf32>
  %6 = amp.cast %5 {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  // i8 -> f16 -> i8 is exact (f16 holds every i8).
  %7 = amp.cast %i {to = f16} : (tensor<4xi8>) -> tensor<4xf16>
  %8 = amp.cast %7 {to = i8} : (tensor<4xf16>) -> tensor<4xi8>
  // CHECK: return %[[H]], %[[UP]], %[[WIDE]], %[[BF16]], %[[I]], %[[UP]]
  return %1, %3, %4, %6, %8, %3 : tensor<4xf16>, tensor<4xf32>, tensor<4xf64>, tensor<4xf16>, tensor<4xi8>, tensor<4xf32>
}

// -----

// A reshape between equal types is a no-op only when at most one size is
// dynamic: [8, ?, ?] -> [8, ?, ?] may move elements between the two.
// CHECK-LABEL: func.func @reshape_equal_dynamic_types
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x?x?xf32>, %[[S:[^:]*]]: tensor<3xi64>, %[[Y:[^:]*]]: tensor<8x?x4xf32>
func.func @reshape_equal_dynamic_types(%x: tensor<8x?x?xf32>, %s: tensor<3xi64>,
                                       %y: tensor<8x?x4xf32>)
    -> (tensor<8x?x?xf32>, tensor<8x?x4xf32>) {
  // CHECK: %[[R:.*]] = amp.reshape %[[X]], %[[S]]
  // CHECK-NOT: amp.reshape
  // CHECK: return %[[R]], %[[Y]]
  %r = amp.reshape %x, %s : (tensor<8x?x?xf32>, tensor<3xi64>) -> tensor<8x?x?xf32>
  %same = amp.reshape %y, %s : (tensor<8x?x4xf32>, tensor<3xi64>) -> tensor<8x?x4xf32>
  return %r, %same : tensor<8x?x?xf32>, tensor<8x?x4xf32>
}
