// RUN: amp-opt %s -split-input-file -amp-reuse-argument-buffers | FileCheck %s
// RUN: amp-opt %s -split-input-file -amp-reuse-argument-buffers | mlir-opt -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF
// amp-reuse-argument-buffers: an elementwise update whose results only the
// return reads writes into the argument it updates, when nothing reads that
// argument afterwards; updates move to the end, and after later readers of
// their old value.

#id = affine_map<(d0) -> (d0)>

// p - lr * g: the new parameter takes p's buffer (no allocation after
// bufferization; the function returns its argument's buffer).
// CHECK-LABEL: func.func @sgd
// CHECK-SAME: (%[[P:.+]]: tensor<16xf32>, %[[G:.+]]: tensor<16xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[P]], %[[G]] : tensor<16xf32>, tensor<16xf32>) outs(%[[P]] : tensor<16xf32>)
// BUF-LABEL: func.func @sgd
// BUF-SAME: (%[[P:.+]]: memref<16xf32>, %[[G:.+]]: memref<16xf32>)
// BUF-NOT: memref.alloc
// BUF: linalg.generic {{.+}} outs(%[[P]] : memref<16xf32>)
// BUF: return %[[P]]
func.func @sgd(%p: tensor<16xf32>, %g: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %c = arith.constant 0.1 : f32
    %m = arith.mulf %b, %c : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----
#id = affine_map<(d0) -> (d0)>

// SGD with momentum as fusion leaves it: the new velocity (mu * v + g) is
// computed first, and the parameter's update recomputes it from the old v.
// The velocity's update moves after the parameter's, and both write in
// place.
// CHECK-LABEL: func.func @momentum
// CHECK-SAME: (%[[P:[^:]+]]: tensor<16xf32>, %[[V:[^:]+]]: tensor<16xf32>, %[[G:[^:]+]]: tensor<16xf32>)
// CHECK: %[[NP:.+]] = linalg.generic {{.+}} ins(%[[P]], %[[V]], %[[G]] : {{.+}}) outs(%[[P]] : tensor<16xf32>)
// CHECK: %[[NV:.+]] = linalg.generic {{.+}} ins(%[[V]], %[[G]] : {{.+}}) outs(%[[V]] : tensor<16xf32>)
// CHECK: return %[[NP]], %[[NV]]
// BUF-LABEL: func.func @momentum
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @momentum(%p: tensor<16xf32>, %v: tensor<16xf32>, %g: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %nv = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%v, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %mu = arith.constant 0.9 : f32
    %m = arith.mulf %a, %mu : f32
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %np = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %v, %g : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %mu = arith.constant 0.9 : f32
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %b, %mu : f32
    %s = arith.addf %m, %c : f32
    %t = arith.mulf %s, %lr : f32
    %u = arith.subf %a, %t : f32
    linalg.yield %u : f32
  } -> tensor<16xf32>
  return %np, %nv : tensor<16xf32>, tensor<16xf32>
}

// -----
#id = affine_map<(d0) -> (d0)>

// The old value is also returned: the update must not overwrite it.
// CHECK-LABEL: func.func @old_value_returned
// CHECK: %[[E:.+]] = tensor.empty
// CHECK: linalg.generic {{.+}} outs(%[[E]] : tensor<16xf32>)
func.func @old_value_returned(%p: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r, %p : tensor<16xf32>, tensor<16xf32>
}

// -----
#id = affine_map<(d0) -> (d0)>

// A view of the old value is read by an op that is not an update, after
// the update: the update moves to the end (its result only goes to the
// return) and then writes in place.
// CHECK-LABEL: func.func @later_reader_through_view
// CHECK-SAME: (%[[P:[^:]+]]: tensor<4x4xf32>
// CHECK: tensor.collapse_shape %[[P]]
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[P]] : tensor<4x4xf32>) outs(%[[P]] : tensor<4x4xf32>)
// CHECK: return %[[R]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @later_reader_through_view(%p: tensor<4x4xf32>, %x: tensor<16xf32>) -> (tensor<4x4xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %flat = tensor.collapse_shape %p [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%flat, %x : tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<16xf32>) outs(%x : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r, %sum : tensor<4x4xf32>, tensor<16xf32>
}

// -----
#id = affine_map<(d0) -> (d0)>

// A view of the old value is returned: the update keeps its fresh tensor.
// CHECK-LABEL: func.func @view_returned
// CHECK: %[[E:.+]] = tensor.empty
// CHECK: tensor.expand_shape
// CHECK: linalg.generic {{.+}} outs(%[[E]] : tensor<16xf32>)
func.func @view_returned(%p: tensor<16xf32>) -> (tensor<16xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %v = tensor.expand_shape %p [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  return %r, %v : tensor<16xf32>, tensor<4x4xf32>
}

// -----
#id = affine_map<(d0) -> (d0)>

// Two updates read each other's old values (a swap): the first is moved
// after the second, which then cannot take its argument without passing
// the first's write.
// CHECK-LABEL: func.func @swap
// CHECK-SAME: (%[[A:[^:]+]]: tensor<16xf32>, %[[B:[^:]+]]: tensor<16xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[B]], %[[A]] : {{.+}}) outs(%{{[0-9]+}} : tensor<16xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[A]], %[[B]] : {{.+}}) outs(%[[A]] : tensor<16xf32>)
// BUF-LABEL: func.func @swap
// BUF-NOT: memref.copy
// BUF: return
func.func @swap(%a: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %na = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %nb = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%b, %a : tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %na, %nb : tensor<16xf32>, tensor<16xf32>
}
