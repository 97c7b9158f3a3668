// RUN: amp-opt %s -split-input-file -amp-return-arguments-uncloned | FileCheck %s
// amp-return-arguments-uncloned: a public function nothing in the module
// calls returns its argument buffers themselves, not the clones that
// ownership-based deallocation made of them.

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[P:[^:]+]]: memref<16xf32>, %[[V:[^:]+]]: memref<16xf32>)
// CHECK-NOT: bufferization.clone
// CHECK: return %[[P]], %[[V]] : memref<16xf32>, memref<16xf32>
func.func @step(%p: memref<16xf32>, %v: memref<16xf32>) -> (memref<16xf32>, memref<16xf32>) {
  %cp = bufferization.clone %p : memref<16xf32> to memref<16xf32>
  %cv = bufferization.clone %v : memref<16xf32> to memref<16xf32>
  return %cp, %cv : memref<16xf32>, memref<16xf32>
}

// -----

// A function the module calls keeps its clones (its caller deallocates the
// results); so does a private function.
// CHECK-LABEL: func.func @called
// CHECK: %[[C:.+]] = bufferization.clone
// CHECK: return %[[C]]
// CHECK-LABEL: func.func private @internal
// CHECK: %[[C2:.+]] = bufferization.clone
// CHECK: return %[[C2]]
// CHECK-LABEL: func.func @caller
func.func @called(%p: memref<16xf32>) -> memref<16xf32> {
  %c = bufferization.clone %p : memref<16xf32> to memref<16xf32>
  return %c : memref<16xf32>
}
func.func private @internal(%p: memref<16xf32>) -> memref<16xf32> {
  %c = bufferization.clone %p : memref<16xf32> to memref<16xf32>
  return %c : memref<16xf32>
}
func.func @caller(%p: memref<16xf32>) -> memref<16xf32> {
  %r = func.call @called(%p) : (memref<16xf32>) -> memref<16xf32>
  return %r : memref<16xf32>
}

// -----

// A clone with another user, or of a buffer that is not an argument, stays.
// CHECK-LABEL: func.func @other_clones
// CHECK-COUNT-2: bufferization.clone
// CHECK: return
func.func @other_clones(%p: memref<16xf32>) -> (memref<16xf32>, memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  %ca = bufferization.clone %a : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  %cp = bufferization.clone %p : memref<16xf32> to memref<16xf32>
  %c0 = arith.constant 0 : index
  %x = memref.load %cp[%c0] : memref<16xf32>
  return %ca, %cp : memref<16xf32>, memref<16xf32>
}
