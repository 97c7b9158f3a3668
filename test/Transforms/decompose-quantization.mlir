// RUN: amp-opt %s -amp-decompose | FileCheck %s
// amp-decompose: DynamicQuantizeLinear becomes its function body: the
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
