// RUN: amp-opt %s -convert-amp-to-linalg | FileCheck %s
// NonMaxSuppression: the result allocated for B * C * min(N, max) rows and
// cut to the rows written; per (batch, class) an i1 candidate vector, then
// rounds (scf.while) that pick the best candidate (highest score, lowest
// index: strict ogt in index order), write its row and drop the boxes it
// suppresses. center_point_box = 1: extents from centre +- size / 2; an
// absent score_threshold makes every box a candidate.

// CHECK-LABEL: func.func @nms_center
// CHECK-SAME: %[[BOXES:[^:]*]]: tensor<1x6x4xf32>, %[[SCORES:[^:]*]]: tensor<1x2x6xf32>, %[[MAX:[^:]*]]: tensor<1xi64>, %[[IOU:[^:]*]]: tensor<1xf32>
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[SCORES]], %c0
// CHECK-DAG: %[[C:.*]] = tensor.dim %[[SCORES]], %c1
// CHECK-DAG: %[[N:.*]] = tensor.dim %[[SCORES]], %c2
// CHECK: %[[M:.*]] = tensor.extract %[[MAX]]
// CHECK: %[[MPOS:.*]] = arith.maxsi %[[M]], %{{.*}} : i64
// CHECK: %[[MIDX:.*]] = arith.index_cast %[[MPOS]] : i64 to index
// CHECK: %[[PER:.*]] = arith.minui %[[MIDX]], %[[N]] : index
// CHECK: %[[THR:.*]] = tensor.extract %[[IOU]]
// CHECK: %[[BC:.*]] = arith.muli %[[B]], %[[C]] : index
// CHECK: %[[CAP:.*]] = arith.muli %[[BC]], %[[PER]] : index
// CHECK: %[[ROWS:.*]] = tensor.empty(%[[CAP]]) : tensor<?x3xi64>
// CHECK: %[[OUT:.*]]:2 = scf.for %[[BATCH:.*]] = %c0 to %[[B]] step %c1 iter_args(%{{.*}} = %[[ROWS]], %{{.*}} = %c0)
// CHECK: scf.for %[[CLS:.*]] = %c0 to %[[C]]
// CHECK: %[[MASK:.*]] = tensor.empty(%[[N]]) : tensor<?xi1>
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: tensor.insert %[[TRUE]]
// CHECK: scf.while
// CHECK: scf.for {{.*}} -> (index, f32)
// CHECK: %[[S:.*]] = tensor.extract %[[SCORES]][%[[BATCH]], %[[CLS]], %{{.*}}]
// CHECK: arith.cmpf ogt, %[[S]]
// CHECK: scf.condition
// CHECK: } do {
// CHECK: arith.index_cast %[[BATCH]] : index to i64
// CHECK: tensor.insert
// CHECK: arith.index_cast %[[CLS]] : index to i64
// CHECK: tensor.insert
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf %{{.*}}, %[[HALF]]
// CHECK: scf.for
// CHECK: scf.if
// CHECK: %[[IOUV:.*]] = arith.divf
// CHECK: arith.cmpf ogt, %[[IOUV]], %[[THR]] : f32
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: tensor.insert %[[FALSE]]
// CHECK: %[[RESULT:.*]] = tensor.extract_slice %[[OUT]]#0[%c0, %c0] [%[[OUT]]#1, 3] [1, 1]
// CHECK: return %[[RESULT]]
func.func @nms_center(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>) -> tensor<?x3xi64> {
  %none = amp.none
  %0 = amp.non_max_suppression %boxes, %scores, %max, %iou, %none {center_point_box = 1 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, none) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// Corners in either order: min/max per axis. A score threshold keeps the
// boxes scoring above it (ogt). Without max_output_boxes_per_class: 0.
// CHECK-LABEL: func.func @nms_corners
// CHECK-SAME: %[[BOXES:[^:]*]]: tensor<2x5x4xf32>, %[[SCORES:[^:]*]]: tensor<2x1x5xf32>, %[[ST:[^:]*]]: tensor<f32>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: arith.maxsi %[[ZERO]]
// CHECK: %[[THR:.*]] = tensor.extract %[[ST]][]
// CHECK: scf.for
// CHECK: %[[S:.*]] = tensor.extract %[[SCORES]]
// CHECK: %[[KEEP:.*]] = arith.cmpf ogt, %[[S]], %[[THR]] : f32
// CHECK: tensor.insert %[[KEEP]]
// CHECK: scf.while
// CHECK: arith.minimumf
// CHECK: arith.maximumf
func.func @nms_corners(%boxes: tensor<2x5x4xf32>, %scores: tensor<2x1x5xf32>, %st: tensor<f32>) -> tensor<?x3xi64> {
  %none = amp.none
  %0 = amp.non_max_suppression %boxes, %scores, %none, %none, %st : (tensor<2x5x4xf32>, tensor<2x1x5xf32>, none, none, tensor<f32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}
