// RUN: amp-opt %s -split-input-file -amp-outline-parallel-loops | FileCheck %s
// RUN: amp-opt %s -split-input-file -amp-outline-parallel-loops=min-parallel-work=99 | FileCheck %s --check-prefix=MIN
// RUN: amp-opt %s -amp-outline-parallel-loops -amp-lower-to-llvm | FileCheck %s --check-prefix=LLVM
// amp-outline-parallel-loops: each outermost scf.parallel becomes a function
// over a range [begin, end) of its linearised outer dimensions (the
// innermost stays a whole loop) and a call to amp_cpu_parallel_for(function,
// context, count, work per iteration, min-parallel-work). The captured
// values travel in a stack struct; constants are recreated inside.

// CHECK: func.func private @amp_cpu_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// CHECK-LABEL: func.func private @two_d_parallel_0(
// CHECK-SAME: %[[BEGIN:.+]]: i64, %[[END:.+]]: i64, %[[CTX:.+]]: !llvm.ptr)
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.0
// CHECK-DAG: %[[XF:.+]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK-DAG: %[[XD:.+]] = llvm.load %[[XF]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-DAG: %[[X:.+]] = builtin.unrealized_conversion_cast %[[XD]] : {{.+}} to memref<64x128xf32>
// CHECK-DAG: %[[Y:.+]] = builtin.unrealized_conversion_cast %{{.+}} : {{.+}} to memref<64x128xf32>
// CHECK-DAG: %[[B:.+]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK-DAG: %[[E:.+]] = arith.index_cast %[[END]] : i64 to index
// CHECK: scf.for %[[I:.+]] = %[[B]] to %[[E]]
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}}
// CHECK: %[[V:.+]] = memref.load %[[X]][%{{.+}}, %{{.+}}]
// CHECK: %[[M:.+]] = arith.mulf %[[V]], %[[TWO]]
// CHECK: memref.store %[[M]], %[[Y]]
// CHECK-LABEL: func.func @two_d(
// CHECK: %[[SLOT:.+]] = llvm.alloca %{{.+}} x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK: llvm.store
// CHECK: llvm.store
// The 64 rows are shared out; each row is 128 points of work.
// CHECK: %[[ROWS:.+]] = arith.muli %{{.+}}, %c64
// CHECK: %[[F:.+]] = constant @two_d_parallel_0
// CHECK: %[[FP:.+]] = builtin.unrealized_conversion_cast %[[F]] : {{.+}} to !llvm.ptr
// CHECK: %[[COUNT:.+]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: %[[WORK:.+]] = arith.constant 128 : i64
// CHECK: %[[MINW:.+]] = arith.constant 16384 : i64
// CHECK: call @amp_cpu_parallel_for(%[[FP]], %[[SLOT]], %[[COUNT]], %[[WORK]], %[[MINW]])
// CHECK-NOT: scf.parallel
// MIN-LABEL: func.func @two_d(
// MIN: %[[MINW:.+]] = arith.constant 99 : i64
// MIN: call @amp_cpu_parallel_for(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[MINW]])
func.func @two_d(%x: memref<64x128xf32>, %y: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<64x128xf32>
    %m = arith.mulf %v, %two : f32
    memref.store %m, %y[%i, %j] : memref<64x128xf32>
    scf.reduce
  }
  return
}

// -----

// Three dimensions, one of them dynamic, inside a sequential loop: the two
// outer dimensions are linearised (rem/div by the captured trip count),
// the context slot is allocated once in the entry block, and a scalar
// argument travels as is.
// CHECK-LABEL: func.func private @three_d_parallel_0(
// CHECK: %[[S:.+]] = llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK: scf.for %[[L:.+]] = 
// CHECK: %[[J:.+]] = arith.remui %[[L]], %[[T:.+]] : index
// CHECK: %[[I:.+]] = arith.divui %[[L]], %[[T]] : index
// CHECK: scf.for %[[K:.+]] =
// CHECK: memref.store %[[S]], %{{.+}}[%{{.+}}, %{{.+}}, %[[K]]] : memref<8x?x32xf32>
// CHECK-LABEL: func.func @three_d(
// CHECK-NEXT: llvm.mlir.constant(1 : i64)
// CHECK-NEXT: llvm.alloca
// CHECK: scf.for
// CHECK-NOT: llvm.alloca
// CHECK: call @amp_cpu_parallel_for
func.func @three_d(%x: memref<8x?x32xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %n = memref.dim %x, %c1 : memref<8x?x32xf32>
  scf.for %k = %c0 to %c8 step %c1 {
    scf.parallel (%i, %j, %l) = (%c0, %c0, %c0) to (%c8, %n, %c32) step (%c1, %c1, %c1) {
      memref.store %s, %x[%i, %j, %l] : memref<8x?x32xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A batch of one: the innermost dimension is shared out instead, the outer
// one (a single iteration) loops around it.
// CHECK-LABEL: func.func private @batch_one_parallel_0(
// CHECK: %[[B:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[E:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: scf.for %[[R:.+]] = %{{.+}} to %{{.+}}
// CHECK: scf.for %[[C:.+]] = %[[B]] to %[[E]]
// CHECK: %[[COL:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[R]], %[[COL]]]
func.func @batch_one(%x: memref<1x100000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 100000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %cn) step (%c1, %c1) {
    memref.store %zero, %x[%i, %j] : memref<1x100000xf32>
    scf.reduce
  }
  return
}

// -----

// Nested parallel loops run inside the outlined outer one; a loop that
// reduces into results is left alone.
// CHECK-LABEL: func.func private @nested_parallel_0(
// CHECK: scf.parallel
// CHECK-LABEL: func.func @nested(
// CHECK: call @amp_cpu_parallel_for
// CHECK: scf.parallel {{.+}} init
// CHECK-NOT: call @amp_cpu_parallel_for
// CHECK-LABEL: func.func @lowered(
func.func @nested(%x: memref<64x64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      memref.store %zero, %x[%i, %j] : memref<64x64xf32>
      scf.reduce
    }
    scf.reduce
  }
  %sum = scf.parallel (%i) = (%c0) to (%c64) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i, %c0] : memref<64x64xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}

// -----

// Through the rest of the CPU pipeline: only LLVM remains; the function's
// address goes to the runtime.
// LLVM: llvm.func @amp_cpu_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// LLVM: llvm.func @lowered_parallel_0(%{{.+}}: i64, %{{.+}}: i64, %{{.+}}: !llvm.ptr)
// LLVM: llvm.func @lowered(
// LLVM: %[[F:.+]] = llvm.mlir.addressof @lowered_parallel_0 : !llvm.ptr
// LLVM: llvm.call @amp_cpu_parallel_for(%[[F]],
// LLVM-NOT: unrealized_conversion_cast
func.func @lowered(%x: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    memref.store %zero, %x[%i, %j] : memref<64x64xf32>
    scf.reduce
  }
  return
}
