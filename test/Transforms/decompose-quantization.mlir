// RUN: amp-opt %s -amp-decompose | FileCheck %s
// amp-decompose of the quantized ops.
//
// DynamicQuantizeLinear becomes its function body: the
// range widened to contain 0, scale (hi - lo) / 255 (1 when hi == lo, as
// onnxruntime), zero point round(clip(-lo / scale, 0, 255)), then
// QuantizeLinear.

// CHECK-LABEL: func.func @dynamic_quantize
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>
// CHECK: %[[ZERO:.*]] = amp.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[MIN:.*]] = amp.reduce_min %[[X]], %{{.*}} {keepdims = 0 : i64}
// CHECK: %[[LO:.*]] = amp.min %[[MIN]], %[[ZERO]]
// CHECK: %[[MAX:.*]] = amp.reduce_max %[[X]], %{{.*}} {keepdims = 0 : i64}
// CHECK: %[[HI:.*]] = amp.max %[[MAX]], %[[ZERO]]
// CHECK: %[[SPAN:.*]] = amp.sub %[[HI]], %[[LO]]
// CHECK: %[[SAME:.*]] = amp.equal %[[HI]], %[[LO]]
// CHECK: %[[ONE:.*]] = amp.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DIV:.*]] = amp.div %[[SPAN]], %{{.*}}
// CHECK: %[[SCALE:.*]] = amp.where %[[SAME]], %[[ONE]], %[[DIV]]
// CHECK: %[[NEGLO:.*]] = amp.neg %[[LO]]
// CHECK: %[[ZPF:.*]] = amp.div %[[NEGLO]], %[[SCALE]]
// CHECK: %[[CLIP:.*]] = amp.clip %[[ZPF]], %[[ZERO]], %{{.*}}
// CHECK: %[[ROUND:.*]] = amp.round %[[CLIP]]
// CHECK: %[[ZP:.*]] = amp.cast %[[ROUND]] {to = ui8}
// CHECK: %[[Y:.*]] = amp.quantize_linear %[[X]], %[[SCALE]], %[[ZP]]
// CHECK: return %[[Y]], %[[SCALE]], %[[ZP]]
func.func @dynamic_quantize(%x: tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) {
  %y, %s, %z = amp.dynamic_quantize_linear %x : (tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>)
  return %y, %s, %z : tensor<2x3xui8>, tensor<f32>, tensor<ui8>
}

// MatMulInteger: both operands widened to i32 minus their zero points (a
// per-row zero point of A reshaped to [M, 1], a per-column one of B as
// given), then an i32 MatMul.
// CHECK-LABEL: func.func @matmul_integer
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x5xui8>, %[[B:[^:]*]]: tensor<5x3xi8>, %[[AZ:[^:]*]]: tensor<4xui8>, %[[BZ:[^:]*]]: tensor<3xi8>
// CHECK: %[[AW:.*]] = amp.cast %[[A]] {to = i32} : (tensor<4x5xui8>) -> tensor<4x5xi32>
// CHECK: %[[ROWS:.*]] = amp.constant dense<[-1, 1]> : tensor<2xi64>
// CHECK: %[[AZR:.*]] = amp.reshape %[[AZ]], %[[ROWS]] : (tensor<4xui8>, tensor<2xi64>) -> tensor<4x1xui8>
// CHECK: %[[AZW:.*]] = amp.cast %[[AZR]] {to = i32}
// CHECK: %[[AS:.*]] = amp.sub %[[AW]], %[[AZW]] : (tensor<4x5xi32>, tensor<4x1xi32>) -> tensor<4x5xi32>
// CHECK: %[[BW:.*]] = amp.cast %[[B]] {to = i32}
// CHECK: %[[BZW:.*]] = amp.cast %[[BZ]] {to = i32} : (tensor<3xi8>) -> tensor<3xi32>
// CHECK: %[[BS:.*]] = amp.sub %[[BW]], %[[BZW]] : (tensor<5x3xi32>, tensor<3xi32>) -> tensor<5x3xi32>
// CHECK: %[[Y:.*]] = amp.matmul %[[AS]], %[[BS]] : (tensor<4x5xi32>, tensor<5x3xi32>) -> tensor<4x3xi32>
// CHECK: return %[[Y]]
func.func @matmul_integer(%a: tensor<4x5xui8>, %b: tensor<5x3xi8>, %az: tensor<4xui8>, %bz: tensor<3xi8>) -> tensor<4x3xi32> {
  %0 = amp.matmul_integer %a, %b, %az, %bz : (tensor<4x5xui8>, tensor<5x3xi8>, tensor<4xui8>, tensor<3xi8>) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// Without zero points the operands are only widened.
// CHECK-LABEL: func.func @matmul_integer_no_zero_points
// CHECK-NOT: amp.sub
// CHECK: amp.matmul %{{.*}}, %{{.*}} : (tensor<2x4x5xi32>, tensor<5xi32>) -> tensor<2x4xi32>
func.func @matmul_integer_no_zero_points(%a: tensor<2x4x5xi8>, %b: tensor<5xui8>) -> tensor<2x4xi32> {
  %none = amp.none
  %0 = amp.matmul_integer %a, %b, %none, %none : (tensor<2x4x5xi8>, tensor<5xui8>, none, none) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// QLinearMatMul: MatMulInteger, then requantized as onnxruntime does: the
// f32 multiplier (a_scale * b_scale) / y_scale (f16 scales widened first;
// onnxruntime's per-column form [1, N] kept), acc * multiplier in f32, and
// QuantizeLinear with scale 1 and y's zero point (a 1-element zero point
// reshaped to a scalar).
// CHECK-LABEL: func.func @qlinear_matmul
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x5xui8>, %[[AS:[^:]*]]: tensor<f16>, %[[AZ:[^:]*]]: tensor<ui8>, %[[B:[^:]*]]: tensor<5x3xi8>, %[[BS:[^:]*]]: tensor<1x3xf16>, %[[BZ:[^:]*]]: tensor<1x3xi8>, %[[YS:[^:]*]]: tensor<f16>, %[[YZ:[^:]*]]: tensor<1xui8>
// CHECK: %[[ACC:.*]] = amp.matmul %{{.*}}, %{{.*}} : (tensor<4x5xi32>, tensor<5x3xi32>) -> tensor<4x3xi32>
// CHECK-DAG: %[[YS32:.*]] = amp.cast %[[YS]] {to = f32} : (tensor<f16>) -> tensor<f32>
// CHECK-DAG: %[[BS32:.*]] = amp.cast %[[BS]] {to = f32} : (tensor<1x3xf16>) -> tensor<1x3xf32>
// CHECK-DAG: %[[AS32:.*]] = amp.cast %[[AS]] {to = f32} : (tensor<f16>) -> tensor<f32>
// CHECK: %[[PROD:.*]] = amp.mul %[[AS32]], %[[BS32]] : (tensor<f32>, tensor<1x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[MULT:.*]] = amp.div %[[PROD]], %[[YS32]]
// CHECK: %[[ACCF:.*]] = amp.cast %[[ACC]] {to = f32}
// CHECK: %[[SCALED:.*]] = amp.mul %[[ACCF]], %[[MULT]] : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[ONE:.*]] = amp.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[YZS:.*]] = amp.reshape %[[YZ]], %{{.*}} : (tensor<1xui8>, tensor<0xi64>) -> tensor<ui8>
// CHECK: %[[Y:.*]] = amp.quantize_linear %[[SCALED]], %[[ONE]], %[[YZS]] : (tensor<4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
// CHECK: return %[[Y]]
func.func @qlinear_matmul(%a: tensor<4x5xui8>, %as: tensor<f16>, %az: tensor<ui8>, %b: tensor<5x3xi8>, %bs: tensor<1x3xf16>, %bz: tensor<1x3xi8>, %ys: tensor<f16>, %yz: tensor<1xui8>) -> tensor<4x3xui8> {
  %0 = amp.qlinear_matmul %a, %as, %az, %b, %bs, %bz, %ys, %yz : (tensor<4x5xui8>, tensor<f16>, tensor<ui8>, tensor<5x3xi8>, tensor<1x3xf16>, tensor<1x3xi8>, tensor<f16>, tensor<1xui8>) -> tensor<4x3xui8>
  return %0 : tensor<4x3xui8>
}

// A 1-D a: y has no row dimension, so b's [1, N] scale applies as [N].
// CHECK-LABEL: func.func @qlinear_matmul_vector
// CHECK: %[[SHAPE:.*]] = amp.constant dense<-1> : tensor<1xi64>
// CHECK: amp.reshape %{{.*}}, %[[SHAPE]] : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<3xf32>
// CHECK: amp.quantize_linear %{{.*}} : (tensor<3xf32>, tensor<f32>, tensor<i8>) -> tensor<3xi8>
func.func @qlinear_matmul_vector(%a: tensor<5xi8>, %as: tensor<f32>, %az: tensor<i8>, %b: tensor<5x3xi8>, %bs: tensor<1x3xf32>, %bz: tensor<1x3xi8>, %ys: tensor<f32>, %yz: tensor<i8>) -> tensor<3xi8> {
  %0 = amp.qlinear_matmul %a, %as, %az, %b, %bs, %bz, %ys, %yz : (tensor<5xi8>, tensor<f32>, tensor<i8>, tensor<5x3xi8>, tensor<1x3xf32>, tensor<1x3xi8>, tensor<f32>, tensor<i8>) -> tensor<3xi8>
  return %0 : tensor<3xi8>
}

// QLinearConv: ConvInteger with the same attributes, the int32 bias added
// as [M, 1, 1], the per-channel multiplier [M, 1, 1], then QuantizeLinear.
// CHECK-LABEL: func.func @qlinear_conv
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x5x5xui8>, %[[XS:[^:]*]]: tensor<f32>, %[[XZ:[^:]*]]: tensor<ui8>, %[[W:[^:]*]]: tensor<3x2x3x3xi8>, %[[WS:[^:]*]]: tensor<3xf32>, %[[WZ:[^:]*]]: tensor<3xi8>, %[[YS:[^:]*]]: tensor<f32>, %[[YZ:[^:]*]]: tensor<ui8>, %[[BIAS:[^:]*]]: tensor<3xi32>
// CHECK: %[[ACC:.*]] = amp.conv_integer %[[X]], %[[W]], %[[XZ]], %[[WZ]] {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>}
// CHECK-SAME: -> tensor<1x3x3x5xi32>
// CHECK: %[[CH:.*]] = amp.constant dense<[-1, 1, 1]> : tensor<3xi64>
// CHECK: %[[B3:.*]] = amp.reshape %[[BIAS]], %[[CH]] : (tensor<3xi32>, tensor<3xi64>) -> tensor<3x1x1xi32>
// CHECK: %[[SUM:.*]] = amp.add %[[ACC]], %[[B3]]
// CHECK: %[[WS3:.*]] = amp.reshape %[[WS]], %{{.*}} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3x1x1xf32>
// CHECK: %[[PROD:.*]] = amp.mul %[[XS]], %[[WS3]]
// CHECK: %[[MULT:.*]] = amp.div %[[PROD]], %[[YS]] : (tensor<3x1x1xf32>, tensor<f32>) -> tensor<3x1x1xf32>
// CHECK: %[[SUMF:.*]] = amp.cast %[[SUM]] {to = f32}
// CHECK: %[[SCALED:.*]] = amp.mul %[[SUMF]], %[[MULT]] : (tensor<1x3x3x5xf32>, tensor<3x1x1xf32>) -> tensor<1x3x3x5xf32>
// CHECK: %[[Y:.*]] = amp.quantize_linear %[[SCALED]], %{{.*}}, %[[YZ]]
// CHECK: return %[[Y]]
func.func @qlinear_conv(%x: tensor<1x2x5x5xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %w: tensor<3x2x3x3xi8>, %ws: tensor<3xf32>, %wz: tensor<3xi8>, %ys: tensor<f32>, %yz: tensor<ui8>, %bias: tensor<3xi32>) -> tensor<1x3x3x5xui8> {
  %0 = amp.qlinear_conv %x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %bias {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<1x2x5x5xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>, tensor<3xi32>) -> tensor<1x3x3x5xui8>
  return %0 : tensor<1x3x3x5xui8>
}
