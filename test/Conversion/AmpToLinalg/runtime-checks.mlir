// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// RUN: amp-opt %s -convert-amp-to-linalg="runtime-checks=false" -split-input-file | FileCheck %s --check-prefix=OFF
// Run-time checks (amp/Conversion/AmpToLinalg/RuntimeChecks.h): the
// extremes of an index operand, one comparison with the bound, and a call
// under scf.if with the check's id into the module's message table; the
// lowered op clamps its indices either way. `runtime-checks=false` (the
// CUDA pipeline) emits no check and no table, and still clamps.

// CHECK: module attributes {amp_linalg.runtime_checks = ["node 'emb' (Gather): index {value} is outside [-{bound}, {bound})"]}
// CHECK: func.func private @amp_cpu_check_failed(i64, i64, i64)
// CHECK-LABEL: func.func @gather
// CHECK-DAG: %[[MAX:.+]] = arith.constant 9223372036854775807 : i64
// CHECK-DAG: %[[MIN:.+]] = arith.constant -9223372036854775808 : i64
// CHECK: %[[EXT:.+]]:2 = linalg.generic {{.+}} iterator_types = ["reduction", "reduction"]} ins(%arg1 : tensor<2x3xi64>)
// CHECK: arith.minsi %{{.+}}, %{{.+}} : i64
// CHECK: arith.maxsi %{{.+}}, %{{.+}} : i64
// CHECK: %[[LO:.+]] = tensor.extract %[[EXT]]#0[]
// CHECK: %[[HI:.+]] = tensor.extract %[[EXT]]#1[]
// CHECK: %[[BOUND:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK: %[[NEG:.+]] = arith.subi %{{.+}}, %[[BOUND]]
// CHECK: %[[BELOW:.+]] = arith.cmpi slt, %[[LO]], %[[NEG]]
// CHECK: %[[ABOVE:.+]] = arith.cmpi sge, %[[HI]], %[[BOUND]]
// CHECK: %[[FAILED:.+]] = arith.ori %[[BELOW]], %[[ABOVE]]
// CHECK: %[[VALUE:.+]] = arith.select %[[ABOVE]], %[[HI]], %[[LO]]
// CHECK: %[[ID:.+]] = arith.constant 0 : i64
// CHECK: scf.if %[[FAILED]] {
// CHECK-NEXT: func.call @amp_cpu_check_failed(%[[ID]], %[[VALUE]], %[[BOUND]]) : (i64, i64, i64) -> ()
// CHECK: linalg.generic
// CHECK: arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: arith.maxsi %{{.+}}, %{{.+}} : index
// CHECK: tensor.extract %arg0
// OFF-NOT: amp_linalg.runtime_checks
// OFF-NOT: amp_cpu_check_failed
// OFF-LABEL: func.func @gather
// OFF-NOT: scf.if
// OFF: arith.minsi %{{.+}}, %{{.+}} : index
// OFF: arith.maxsi %{{.+}}, %{{.+}} : index
func.func @gather(%table: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = amp.gather %table, %ids : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32> loc("emb")
  return %0 : tensor<2x3x4xf32>
}

// -----

// An axis whose size is known only at run time may be empty: then no index
// is valid (the check fails) and the gather must not read at all, so it
// runs under scf.if and the empty case yields zeros.
// CHECK-LABEL: func.func @gather_dynamic_axis
// CHECK: scf.if
// CHECK: func.call @amp_cpu_check_failed
// CHECK: %[[EMPTY:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : index
// CHECK: scf.if %[[EMPTY]] -> (tensor<2x4xf32>) {
// CHECK: linalg.fill
// CHECK: } else {
// CHECK: linalg.generic
// CHECK: tensor.extract %arg0
func.func @gather_dynamic_axis(%x: tensor<?x4xf32>, %ids: tensor<2xi64>) -> tensor<2x4xf32> {
  %0 = amp.gather %x, %ids : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// NegativeLogLikelihoodLoss over classes known only at run time: with no
// class no target is valid, and nothing may be read: the per-element loss
// runs under scf.if, the empty case yields zeros.
// CHECK-LABEL: func.func @nll_dynamic_classes
// CHECK: func.call @amp_cpu_check_failed
// CHECK: %[[NONE:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : index
// CHECK: scf.if %[[NONE]] -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK: linalg.fill
// CHECK: } else {
// CHECK: linalg.generic
// CHECK: tensor.extract %arg0
func.func @nll_dynamic_classes(%x: tensor<3x?xf32>, %t: tensor<3xi64>) -> tensor<f32> {
  %none = amp.none
  %0 = amp.negative_log_likelihood_loss %x, %t, %none : (tensor<3x?xf32>, tensor<3xi64>, none) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Run-time Reduce axes are checked against the rank; the message names
// the op type when the location carries no node name.
// CHECK: module attributes {amp_linalg.runtime_checks = ["ReduceSum: axis {value} is outside [-{bound}, {bound})"]}
// CHECK-LABEL: func.func @reduce_axes
// CHECK: %[[RANK:.+]] = arith.constant 2 : index
// CHECK: linalg.generic {{.+}} ins(%arg1 : tensor<1xi64>)
// CHECK: %[[BOUND:.+]] = arith.index_cast %[[RANK]] : index to i64
// CHECK: func.call @amp_cpu_check_failed(%{{.+}}, %{{.+}}, %[[BOUND]])
func.func @reduce_axes(%a: tensor<4x8xf32>, %axes: tensor<1xi64>) -> tensor<?xf32> {
  %0 = amp.reduce_sum %a, %axes {keepdims = 0 : i64} : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
