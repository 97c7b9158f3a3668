// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// QuantizeLinear and DequantizeLinear: one linalg.generic over x; the scale
// and zero point per tensor, per axis (indexing maps) or per block (read in
// the body).

// QuantizeLinear per tensor: round half to even of x / scale, plus the
// zero point, saturated to uint8's range in f32.
// CHECK: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @quantize_per_tensor
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[SCALAR]], #[[ID]]]
// CHECK: ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %[[Z:.*]]: i8, %{{.*}}: i8):
// CHECK: %[[DIV:.*]] = arith.divf %[[X]], %[[S]] : f32
// CHECK: %[[R:.*]] = math.roundeven %[[DIV]] : f32
// CHECK: %[[ZF:.*]] = arith.uitofp %[[Z]] : i8 to f32
// CHECK: %[[Q:.*]] = arith.addf %[[R]], %[[ZF]] : f32
// CHECK: %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[QL:.*]] = arith.maxnumf %[[Q]], %[[LO]] : f32
// CHECK: %[[HI:.*]] = arith.constant 2.550000e+02 : f32
// CHECK: %[[QH:.*]] = arith.minnumf %[[QL]], %[[HI]] : f32
// CHECK: %[[OUT:.*]] = arith.fptoui %[[QH]] : f32 to i8
// CHECK: linalg.yield %[[OUT]] : i8
func.func @quantize_per_tensor(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<2x3xui8> {
  %0 = amp.quantize_linear %x, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// Per axis (axis 0 here): the scale's map picks d0; no zero point means 0
// (and uint8 without output_dtype); int8's range is [-128, 127].
// CHECK: #[[AXIS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @quantize_per_axis
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[AXIS]], #[[AXIS]], #{{.*}}]
// CHECK: arith.constant -1.280000e+02 : f32
// CHECK: arith.constant 1.270000e+02 : f32
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK-LABEL: func.func @quantize_without_zero_point
// CHECK: linalg.generic
// CHECK-NOT: uitofp
// CHECK: arith.constant 2.550000e+02 : f32
func.func @quantize_per_axis(%x: tensor<2x3xf16>, %s: tensor<2xf16>, %z: tensor<2xi8>) -> tensor<2x3xi8> {
  %0 = amp.quantize_linear %x, %s, %z {axis = 0 : i64} : (tensor<2x3xf16>, tensor<2xf16>, tensor<2xi8>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}
func.func @quantize_without_zero_point(%x: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<2x3xui8> {
  %none = amp.none
  %0 = amp.quantize_linear %x, %s, %none : (tensor<2x3xf32>, tensor<f32>, none) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// Blocked along axis 1 with blocks of 2: scale[i0, i1 / 2] read in the
// body. DequantizeLinear: (x - zero_point) in int64, times the scale in f32.
// CHECK-LABEL: func.func @dequantize_blocked
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<2x4xi8>)
// CHECK: ^bb0(%[[X:.*]]: i8, %{{.*}}: f32):
// CHECK: %[[I0:.*]] = linalg.index 0 : index
// CHECK: %[[I1:.*]] = linalg.index 1 : index
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[B:.*]] = arith.divui %[[I1]], %[[TWO]] : index
// CHECK: %[[S:.*]] = tensor.extract %{{.*}}[%[[I0]], %[[B]]] : tensor<2x2xf32>
// CHECK: %[[Z:.*]] = tensor.extract %{{.*}}[%[[I0]], %[[B]]] : tensor<2x2xi8>
// CHECK: %[[XW:.*]] = arith.extsi %[[X]] : i8 to i64
// CHECK: %[[ZW:.*]] = arith.extsi %[[Z]] : i8 to i64
// CHECK: %[[D:.*]] = arith.subi %[[XW]], %[[ZW]] : i64
// CHECK: %[[DF:.*]] = arith.sitofp %[[D]] : i64 to f32
// CHECK: %[[Y:.*]] = arith.mulf %[[DF]], %[[S]] : f32
// CHECK: linalg.yield %[[Y]] : f32
func.func @dequantize_blocked(%x: tensor<2x4xi8>, %s: tensor<2x2xf32>, %z: tensor<2x2xi8>) -> tensor<2x4xf32> {
  %0 = amp.dequantize_linear %x, %s, %z {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x4xi8>, tensor<2x2xf32>, tensor<2x2xi8>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// ConvInteger: x and w widened to i32 minus their zero points (x's per
// tensor: unsigned extension of a ui8; w's per output channel as
// [M, 1, 1, 1]: signed extension of an i8), then the convolution generic
// of Conv, marked as such, accumulating in i32 (products muli, sums addi)
// from a zero fill.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, 0)>
// CHECK-LABEL: func.func @conv_integer
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x5x5xi8>, %[[W:[^:]*]]: tensor<3x2x3x3xi8>, %[[XZ:[^:]*]]: tensor<i8>, %[[WZ:[^:]*]]: tensor<3xi8>
// CHECK: %[[XS:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], {{.*}} ins(%[[X]], %[[XZ]] : tensor<1x2x5x5xi8>, tensor<i8>) outs(%{{.*}} : tensor<1x2x5x5xi32>)
// CHECK: arith.extui
// CHECK: arith.extui
// CHECK: arith.subi
// CHECK: %[[WZE:.*]] = tensor.expand_shape %[[WZ]] {{.*}} into tensor<3x1x1x1xi8>
// CHECK: %[[WS:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[CHANNEL]], #[[ID]]], {{.*}} ins(%[[W]], %[[WZE]] : tensor<3x2x3x3xi8>, tensor<3x1x1x1xi8>) outs(%{{.*}} : tensor<3x2x3x3xi32>)
// CHECK: arith.extsi
// CHECK: arith.extsi
// CHECK: arith.subi
// CHECK: %[[INIT:.*]] = linalg.fill {amp_linalg.conv_init = {{.*}}} ins(%{{.*}} : i32) outs(%{{.*}} : tensor<1x3x3x3xi32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[XS]], %[[WS]] : tensor<1x2x5x5xi32>, tensor<3x2x3x3xi32>) outs(%[[INIT]] : tensor<1x3x3x3xi32>) attrs = {{.*}}amp_linalg.kind = "conv"
// CHECK: %[[P:.*]] = arith.muli
// CHECK: arith.addi %{{.*}}, %[[P]] : i32
// CHECK: return %[[Y]]
func.func @conv_integer(%x: tensor<1x2x5x5xui8>, %w: tensor<3x2x3x3xi8>, %xz: tensor<ui8>, %wz: tensor<3xi8>) -> tensor<1x3x3x3xi32> {
  %0 = amp.conv_integer %x, %w, %xz, %wz : (tensor<1x2x5x5xui8>, tensor<3x2x3x3xi8>, tensor<ui8>, tensor<3xi8>) -> tensor<1x3x3x3xi32>
  return %0 : tensor<1x3x3x3xi32>
}

// -----

// Without zero points: only widened.
// CHECK-LABEL: func.func @conv_integer_no_zero_points
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1x4x4xi8>) outs(%{{.*}} : tensor<1x1x4x4xi32>)
// CHECK: arith.extsi
// CHECK-NOT: arith.subi
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x1x2x2xi8>) outs(%{{.*}} : tensor<2x1x2x2xi32>)
// CHECK: arith.extui
// CHECK-NOT: arith.subi
// CHECK: amp_linalg.kind = "conv"
func.func @conv_integer_no_zero_points(%x: tensor<1x1x4x4xi8>, %w: tensor<2x1x2x2xui8>) -> tensor<1x2x3x3xi32> {
  %none = amp.none
  %0 = amp.conv_integer %x, %w, %none, %none : (tensor<1x1x4x4xi8>, tensor<2x1x2x2xui8>, none, none) -> tensor<1x2x3x3xi32>
  return %0 : tensor<1x2x3x3xi32>
}
