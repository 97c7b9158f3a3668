// RUN: amp-opt %s -amp-lower-to-llvm | FileCheck %s
// A prefix with only NOT lines scans the whole output:
// RUN: amp-opt %s -amp-lower-to-llvm | FileCheck %s --check-prefix=NONE
// The amp-lower-to-llvm pipeline leaves only the LLVM dialect: runtime
// calls for the fp32 GEMM, libm for erf, malloc for buffers, and the
// elementwise loops (dynamic sizes: parallel) outlined for the runtime's
// thread pool.

// NONE-NOT: amp.
// NONE-NOT: linalg.
// NONE-NOT: memref.
// NONE-NOT: tensor.
// NONE-NOT: arith.
// NONE-NOT: math.
// CHECK-DAG: llvm.func @malloc
// CHECK-DAG: llvm.func @amp_cpu_matmul_f32
// CHECK-DAG: llvm.func @erff(f32) -> f32
// CHECK-DAG: llvm.func @amp_cpu_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// CHECK: llvm.func @main_parallel_2(%{{.+}}: i64, %{{.+}}: i64, %{{.+}}: !llvm.ptr)
// CHECK: llvm.call @erff
// CHECK-LABEL: llvm.func @main(
// CHECK: %[[ERF:.+]] = llvm.mlir.addressof @main_parallel_2
// CHECK: llvm.call @amp_cpu_matmul_f32
// CHECK: llvm.call @amp_cpu_parallel_for(%[[ERF]],
func.func @main(%a: tensor<?x8xf32> {amp.name = "x"}, %b: tensor<8x4xf16>) -> tensor<?x4xf16> {
  %0 = amp.cast %a {to = f16} : (tensor<?x8xf32>) -> tensor<?x8xf16>
  %1 = amp.matmul %0, %b {amp.accumulate = f32} : (tensor<?x8xf16>, tensor<8x4xf16>) -> tensor<?x4xf16>
  %2 = amp.erf %1 : (tensor<?x4xf16>) -> tensor<?x4xf16>
  return %2 : tensor<?x4xf16>
}
