// RUN: amp-opt %s --amp-sort-constants | FileCheck %s

// Constants move to the start of their block in the order of their first
// use: ops in pre-order (an op before the ops in its regions), then the
// operand's number; unused constants go last, in their order. Other ops
// (amp.none is not constant-like) keep theirs.

// CHECK-LABEL: func.func @order
// CHECK-NEXT: %[[B:.*]] = amp.constant dense<2.000000e+00>
// CHECK-NEXT: %[[A:.*]] = amp.constant dense<1.000000e+00>
// CHECK-NEXT: %[[C:.*]] = arith.constant true
// CHECK-NEXT: %[[R:.*]] = amp.constant dense<5.000000e+00>
// CHECK-NEXT: %[[U1:.*]] = amp.constant dense<3.000000e+00>
// CHECK-NEXT: %[[U2:.*]] = amp.constant dense<4.000000e+00>
// CHECK-NEXT: %[[X:.*]] = amp.add %arg0, %[[B]]
// CHECK-NEXT: %[[Y:.*]] = amp.mul %[[X]], %[[A]]
// CHECK-NEXT: %[[N:.*]] = amp.none
// CHECK-NEXT: scf.if %[[C]]
// CHECK-NEXT: amp.sub %[[Y]], %[[R]]
// CHECK: amp.clip %{{.*}}, %[[N]], %[[N]]
func.func @order(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %u1 = amp.constant dense<3.0> : tensor<2xf32>
  %a = amp.constant dense<1.0> : tensor<2xf32>
  %b = amp.constant dense<2.0> : tensor<2xf32>
  %x = amp.add %arg0, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %y = amp.mul %x, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %n = amp.none
  %u2 = amp.constant dense<4.0> : tensor<2xf32>
  // Used inside the scf.if's region: after the if's own operand.
  %r = amp.constant dense<5.0> : tensor<2xf32>
  %c = arith.constant true
  %s = scf.if %c -> tensor<2xf32> {
    %t = amp.sub %y, %r : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %t : tensor<2xf32>
  } else {
    scf.yield %y : tensor<2xf32>
  }
  %z = amp.clip %s, %n, %n : (tensor<2xf32>, none, none) -> tensor<2xf32>
  return %z : tensor<2xf32>
}
