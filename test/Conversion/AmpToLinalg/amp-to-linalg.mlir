// RUN: amp-opt %s -convert-amp-to-linalg -split-input-file | FileCheck %s
// convert-amp-to-linalg: one rule per case below.

// A low-precision elementwise op computes in f32 and rounds its result
// once; broadcasting is an indexing map.
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_f16
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]]
// CHECK: %[[X:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK: %[[Y:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK: %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK: %[[R:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK: linalg.yield %[[R]] : f16
func.func @add_f16(%a: tensor<2x3xf16>, %b: tensor<3xf16>) -> tensor<2x3xf16> {
  %0 = amp.add %a, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// An fp32-accumulating fp16 MatMul widens its operands (exact), runs the
// fp32 GEMM (a runtime call later) and rounds once.
// CHECK-LABEL: func.func @matmul_accumulate_f32
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: %[[ACC:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x5xf32>) outs(%{{.+}} : tensor<4x5xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[ACC]] : tensor<4x5xf32>) outs(%{{.+}} : tensor<4x5xf16>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @matmul_accumulate_f32(%a: tensor<4x8xf16>, %b: tensor<8x5xf16>) -> tensor<4x5xf16> {
  %0 = amp.matmul %a, %b {amp.accumulate = f32} : (tensor<4x8xf16>, tensor<8x5xf16>) -> tensor<4x5xf16>
  return %0 : tensor<4x5xf16>
}

// -----

// Without amp.accumulate, an fp16 MatMul accumulates in fp16: the
// accumulator is rounded after every multiply-add.
// CHECK-LABEL: func.func @matmul_accumulate_f16
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: ^bb0(%[[A:.+]]: f16, %[[B:.+]]: f16, %[[C:.+]]: f16):
// CHECK: %[[P:.+]] = arith.mulf
// CHECK: %[[S:.+]] = arith.addf %{{.+}}, %[[P]] : f32
// CHECK: %[[R:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK: linalg.yield %[[R]] : f16
// CHECK-NOT: linalg.matmul
func.func @matmul_accumulate_f16(%a: tensor<4x8xf16>, %b: tensor<8x5xf16>) -> tensor<4x5xf16> {
  %0 = amp.matmul %a, %b : (tensor<4x8xf16>, tensor<8x5xf16>) -> tensor<4x5xf16>
  return %0 : tensor<4x5xf16>
}

// -----

// Batched MatMul against a 2-D weight: one GEMM over the collapsed rows.
// CHECK-LABEL: func.func @matmul_rows
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK: linalg.matmul ins({{.+}} : tensor<6x8xf32>, tensor<8x5xf32>)
// CHECK: tensor.expand_shape {{.+}} : tensor<6x5xf32> into tensor<2x3x5xf32>
func.func @matmul_rows(%a: tensor<2x3x8xf32>, %b: tensor<8x5xf32>) -> tensor<2x3x5xf32> {
  %0 = amp.matmul %a, %b : (tensor<2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// Batched MatMul with batch dimensions on both sides: linalg.batch_matmul.
// CHECK-LABEL: func.func @matmul_batched
// CHECK: linalg.batch_matmul ins({{.+}} : tensor<6x4x8xf32>, tensor<6x8x5xf32>)
func.func @matmul_batched(%a: tensor<2x3x4x8xf32>, %b: tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = amp.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Gemm with transB: matmul_transpose_b, accumulating into the broadcast C.
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK: %[[INIT:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<5xf32>) outs(%{{.+}} : tensor<4x5xf32>)
// CHECK: linalg.matmul_transpose_b ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<5x8xf32>) outs(%[[INIT]] : tensor<4x5xf32>)
func.func @gemm_trans_b(%a: tensor<4x8xf32>, %b: tensor<5x8xf32>, %c: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = amp.gemm %a, %b, %c {transB = 1 : i64} : (tensor<4x8xf32>, tensor<5x8xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Conv: explicit padding (its fill marked with a distinct id, so that CSE
// keeps paddings apart), a generic convolution marked for the runtime
// (strides and dilations as attributes), initialised with the bias.
// CHECK-LABEL: func.func @conv
// CHECK: %[[E:.+]] = tensor.empty(%[[N:.+]]) : tensor<?x3x18x18xf32>
// CHECK: %[[ZERO:.+]] = linalg.fill {amp_linalg.pad_fill = {{[0-9]+}} : i64} ins(%{{.+}} : f32) outs(%[[E]] : tensor<?x3x18x18xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %[[ZERO]][0, 0, 1, 1] [%[[N]], 3, 16, 16] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<4x1x1xf32>) outs(%{{.+}} : tensor<?x4x8x8xf32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<?x3x18x18xf32>, tensor<4x3x3x3xf32>)
// CHECK-SAME: {amp_linalg.conv_dilations = array<i64: 1, 1>, amp_linalg.conv_strides = array<i64: 2, 2>, amp_linalg.kind = "conv"}
func.func @conv(%x: tensor<?x3x16x16xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4x8x8xf32> {
  %0 = amp.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x16x16xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x8x8xf32>
  return %0 : tensor<?x4x8x8xf32>
}

// -----

// Grouped Conv: channels split into (group, channels/group).
// CHECK-LABEL: func.func @conv_grouped
// CHECK: tensor.expand_shape %{{.+}} : tensor<1x4x8x8xf32> into tensor<1x2x2x8x8xf32>
// CHECK: tensor.expand_shape %{{.+}} : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x2x2x8x8xf32>, tensor<2x3x2x3x3xf32>)
// CHECK: amp_linalg.kind = "conv"
// CHECK: tensor.collapse_shape %{{.+}} : tensor<1x2x3x6x6xf32> into tensor<1x6x6x6xf32>
func.func @conv_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %none = amp.none
  %0 = amp.conv %x, %w, %none {group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, none) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// ConvTranspose, stride 2, kernel 3, pads 1, output_padding 1: four output
// phases (even/odd rows x even/odd columns), each a stride-1 marked
// convolution of X with the taps that reach it (1, then 2 per dimension,
// flipped) written into a stride-2 slice of Y; X is padded by the one
// column/row the two-tap phases read past its end. No zero-stuffed input.
// CHECK-LABEL: func.func @conv_transpose_strided
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.+}} : tensor<?x3x3x3xf32>, tensor<4x3x1x1xf32>)
// CHECK-SAME: amp_linalg.kind = "conv"
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 0] [%{{.+}}, 4, 3, 3] [1, 1, 2, 2] : tensor<?x4x3x3xf32> into tensor<?x4x6x6xf32>
// CHECK: tensor.insert_slice %arg0 into %{{.+}}[0, 0, 0, 0] [%{{.+}}, 3, 3, 3] [1, 1, 1, 1] : tensor<?x3x3x3xf32> into tensor<?x3x3x4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<?x3x3x4xf32>, tensor<4x3x1x2xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 1] [%{{.+}}, 4, 3, 3] [1, 1, 2, 2]
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<?x3x4x3xf32>, tensor<4x3x2x1xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1, 0] [%{{.+}}, 4, 3, 3] [1, 1, 2, 2]
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<?x3x4x4xf32>, tensor<4x3x2x2xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1, 1] [%{{.+}}, 4, 3, 3] [1, 1, 2, 2]
func.func @conv_transpose_strided(%x: tensor<?x3x3x3xf32>, %w: tensor<3x4x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4x6x6xf32> {
  %0 = amp.conv_transpose %x, %w, %b {output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x3x3xf32>, tensor<3x4x3x3xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  return %0 : tensor<?x4x6x6xf32>
}

// -----

// A phase that no kernel tap reaches (kernel 1 < stride 2) gets only the
// bias: one convolution, two slices.
// CHECK-LABEL: func.func @conv_transpose_gaps
// CHECK-COUNT-1: amp_linalg.kind = "conv"
// CHECK-NOT: amp_linalg.kind = "conv"
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [2, 2, 4] [1, 1, 2] : tensor<2x2x4xf32> into tensor<2x2x8xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1] [2, 2, 4] [1, 1, 2] : tensor<2x2x4xf32> into tensor<2x2x8xf32>
func.func @conv_transpose_gaps(%x: tensor<2x3x4xf32>, %w: tensor<3x2x1xf32>, %b: tensor<2xf32>) -> tensor<2x2x8xf32> {
  %0 = amp.conv_transpose %x, %w, %b {output_padding = array<i64: 1>, strides = array<i64: 2>} : (tensor<2x3x4xf32>, tensor<3x2x1xf32>, tensor<2xf32>) -> tensor<2x2x8xf32>
  return %0 : tensor<2x2x8xf32>
}

// -----

// Strides 9 x 8 make 72 phases, above the 64 that get a convolution each:
// one convolution over the zero-stuffed input (stride-9/8 insert) instead.
// CHECK-LABEL: func.func @conv_transpose_large_strides
// CHECK: tensor.insert_slice %arg0 into %{{.+}}[0, 0, 0, 0] [1, 2, 3, 2] [1, 1, 9, 8] : tensor<1x2x3x2xf32> into tensor<1x2x19x9xf32>
// CHECK-COUNT-1: amp_linalg.kind = "conv"
// CHECK-NOT: amp_linalg.kind = "conv"
func.func @conv_transpose_large_strides(%x: tensor<1x2x3x2xf32>, %w: tensor<2x3x4x3xf32>) -> tensor<1x3x21x13xf32> {
  %n = amp.none
  %0 = amp.conv_transpose %x, %w, %n {output_padding = array<i64: 2, 3>, pads = array<i64: 1, 0, 2, 1>, strides = array<i64: 9, 8>} : (tensor<1x2x3x2xf32>, tensor<2x3x4x3xf32>, none) -> tensor<1x3x21x13xf32>
  return %0 : tensor<1x3x21x13xf32>
}

// -----

// conv_weight_grad: the padded X and dY split into groups, one generic over
// (g, m, c, kh, kw, n, oh, ow) accumulating into a zero fill marked as the
// convolution's initialisation; the generic is marked as a weight gradient.
// CHECK-DAG: #[[XMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d2, d6 * 2 + d3, d7 * 2 + d4)>
// CHECK-DAG: #[[DYMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d1, d6, d7)>
// CHECK-DAG: #[[DWMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @conv_weight_grad
// CHECK: tensor.insert_slice %arg0 into %{{.+}}[0, 0, 1, 1] [%{{.+}}, 4, 8, 8] [1, 1, 1, 1] : tensor<?x4x8x8xf32> into tensor<?x4x10x10xf32>
// CHECK: linalg.fill {amp_linalg.conv_init = {{[0-9]+}} : i64} ins(%{{.+}} : f32) outs(%{{.+}} : tensor<6x2x3x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[XMAP]], #[[DYMAP]], #[[DWMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<?x2x2x10x10xf32>, tensor<?x2x3x4x4xf32>) outs(%{{.+}} : tensor<2x3x2x3x3xf32>)
// CHECK-SAME: amp_linalg.conv_dilations = array<i64: 1, 1>, amp_linalg.conv_strides = array<i64: 2, 2>, amp_linalg.kind = "conv_weight_grad"
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %{{.+}} : tensor<2x3x2x3x3xf32> into tensor<6x2x3x3xf32>
func.func @conv_weight_grad(%x: tensor<?x4x8x8xf32>, %dy: tensor<?x6x4x4xf32>) -> tensor<6x2x3x3xf32> {
  %0 = amp.conv_weight_grad %x, %dy {group = 2 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x8x8xf32>, tensor<?x6x4x4xf32>) -> tensor<6x2x3x3xf32>
  return %0 : tensor<6x2x3x3xf32>
}

// -----

// With amp.accumulate = f32 an f16 weight gradient sums in fp32 (the
// operands are extended first) and rounds once at the end.
// CHECK-LABEL: func.func @conv_weight_grad_f16
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x3x7x7xf32>, tensor<2x4x5x5xf32>) outs(%{{.+}} : tensor<4x3x3x3xf32>)
// CHECK-SAME: amp_linalg.kind = "conv_weight_grad"
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @conv_weight_grad_f16(%x: tensor<2x3x5x5xf16>, %dy: tensor<2x4x5x5xf16>) -> tensor<4x3x3x3xf16> {
  %0 = amp.conv_weight_grad %x, %dy {amp.accumulate = f32, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x5x5xf16>, tensor<2x4x5x5xf16>) -> tensor<4x3x3x3xf16>
  return %0 : tensor<4x3x3x3xf16>
}

// -----

// Unsigned tensors become signless; the op picks unsigned arithmetic.
// CHECK-LABEL: func.func @div_u8
// CHECK-SAME: (%{{.+}}: tensor<4xi8>, %{{.+}}: tensor<4xi8>) -> tensor<4xi8>
// CHECK: arith.divui %{{.+}}, %{{.+}} : i8
func.func @div_u8(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = amp.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Cast f32 -> bf16 is one truncf; bool -> float is uitofp.
// CHECK-LABEL: func.func @casts
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: arith.uitofp %{{.+}} : i1 to f32
func.func @casts(%a: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %0 = amp.cast %a {to = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  %1 = amp.cast %b {to = f32} : (tensor<4xi1>) -> tensor<4xf32>
  return %0, %1 : tensor<4xbf16>, tensor<4xf32>
}

// -----

// ReduceMean with fp32 accumulation: the sum is f32, divided, then rounded
// once; keepdims reinserts the unit dimension.
// CHECK-LABEL: func.func @reduce_mean
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<4xf32>)
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: tensor.expand_shape %{{.+}} : tensor<4xf16> into tensor<4x1xf16>
func.func @reduce_mean(%a: tensor<4x8xf16>) -> tensor<4x1xf16> {
  %axes = amp.constant dense<[1]> : tensor<1xi64>
  %0 = amp.reduce_mean %a, %axes {amp.accumulate = f32} : (tensor<4x8xf16>, tensor<1xi64>) -> tensor<4x1xf16>
  return %0 : tensor<4x1xf16>
}

// -----

// Axes known only at run time: a flag per dimension (an axis names it
// after negative axes wrap; an empty list names all of them), then one
// reduction per dimension under scf.if; keepdims = 0 reshapes to sizes
// selected from the flags.
// CHECK-LABEL: func.func @reduce_sum_runtime_axes
// CHECK: %[[FLAGS:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg1 : tensor<1xi64>) outs(%{{.+}} : tensor<2xi1>)
// CHECK: arith.cmpi slt
// CHECK: linalg.index 0
// CHECK: arith.ori
// CHECK: %[[N:.+]] = tensor.dim %arg1
// CHECK: %[[EMPTY:.+]] = arith.cmpi eq, %[[N]]
// CHECK: %[[F0:.+]] = tensor.extract %[[FLAGS]]
// CHECK: %[[A0:.+]] = arith.ori %[[F0]], %[[EMPTY]]
// CHECK: %[[F1:.+]] = tensor.extract %[[FLAGS]]
// CHECK: %[[A1:.+]] = arith.ori %[[F1]], %[[EMPTY]]
// CHECK: %[[R0:.+]] = scf.if %[[A0]] -> (tensor<?x?xf32>)
// CHECK: iterator_types = ["reduction", "parallel"]
// CHECK: arith.addf
// CHECK: } else {
// CHECK: scf.if %[[A1]] -> (tensor<?x?xf32>)
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: tensor.reshape {{.+}} -> tensor<?xf32>
func.func @reduce_sum_runtime_axes(%a: tensor<4x8xf32>, %axes: tensor<1xi64>) -> tensor<?xf32> {
  %0 = amp.reduce_sum %a, %axes {keepdims = 0 : i64} : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// noop_with_empty_axes: an empty list at run time gives the input back
// (an scf.if after the reductions); a mean divides by the product of the
// named dimensions.
// CHECK-LABEL: func.func @reduce_mean_runtime_axes_noop
// CHECK: linalg.yield %{{.+}} : i1
// CHECK-NOT: arith.ori
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// CHECK: arith.muli
// CHECK: arith.divf
// CHECK: scf.if %{{.+}} -> (tensor<?x?xf32>)
// CHECK: tensor.cast %{{.+}} : tensor<?x?xf32> to tensor<4x8xf32>
func.func @reduce_mean_runtime_axes_noop(%a: tensor<4x8xf32>, %axes: tensor<?xi64>) -> tensor<4x8xf32> {
  %0 = amp.reduce_mean %a, %axes {noop_with_empty_axes = 1 : i64} : (tensor<4x8xf32>, tensor<?xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Booleans order as unsigned (true > false): ReduceMax is "any" from
// false, ReduceMin "all" from true.
// CHECK-LABEL: func.func @reduce_bool
// CHECK: %[[FALSE:.+]] = arith.constant false
// CHECK: linalg.fill ins(%[[FALSE]] : i1)
// CHECK: arith.maxui %{{.+}}, %{{.+}} : i1
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: linalg.fill ins(%[[TRUE]] : i1)
// CHECK: arith.minui %{{.+}}, %{{.+}} : i1
func.func @reduce_bool(%a: tensor<4x8xi1>) -> (tensor<4x1xi1>, tensor<4x1xi1>) {
  %axes = amp.constant dense<[1]> : tensor<1xi64>
  %0 = amp.reduce_max %a, %axes : (tensor<4x8xi1>, tensor<1xi64>) -> tensor<4x1xi1>
  %1 = amp.reduce_min %a, %axes : (tensor<4x8xi1>, tensor<1xi64>) -> tensor<4x1xi1>
  return %0, %1 : tensor<4x1xi1>, tensor<4x1xi1>
}

// -----

// Softmax over axis 1 of a rank-3 tensor: max and sum reduce d1 (the
// reduced map drops it), exp(x - max) and the division broadcast back.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[RED:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BC:.+]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-LABEL: func.func @softmax
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.maximumf
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [2, 1, 8]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BC]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.addf
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [2, 1, 8]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BC]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK: arith.divf
func.func @softmax(%a: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %0 = amp.softmax %a {axis = 1 : i64} : (tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

// A Reshape to a dynamic shape resolves 0 and -1 at run time and uses
// tensor.reshape.
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK: tensor.extract %{{.+}}[%{{.+}}] : tensor<2xi64>
// CHECK: arith.divui
// CHECK: tensor.reshape %{{.+}}(%{{.+}}) : (tensor<?x8xf32>, tensor<2xindex>) -> tensor<?x?xf32>
func.func @reshape_dynamic(%a: tensor<?x8xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = amp.reshape %a, %s : (tensor<?x8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Constants keep their blob; names of arguments are dropped.
// CHECK-LABEL: func.func @constant
// CHECK-SAME: (%{{.+}}: tensor<2xf32>) -> tensor<2xf32>
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @constant(%a: tensor<2xf32> {amp.name = "x"}) -> tensor<2xf32> {
  %c = amp.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = amp.mul %a, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Gemm's C broadcast over a dynamic batch keeps the dynamic size (the
// accumulator is as dynamic as the result).
// CHECK-LABEL: func.func @gemm_dynamic_batch
// CHECK: %[[M:.+]] = tensor.dim %{{.+}}, %c0 : tensor<?x8xf32>
// CHECK: %[[E:.+]] = tensor.empty(%[[M]]) : tensor<?x5xf32>
// CHECK: %[[INIT:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<1x5xf32>) outs(%[[E]] : tensor<?x5xf32>)
// CHECK: linalg.matmul_transpose_b ins(%{{.+}}, %{{.+}} : tensor<?x8xf32>, tensor<5x8xf32>) outs(%[[INIT]] : tensor<?x5xf32>)
func.func @gemm_dynamic_batch(%a: tensor<?x8xf32>, %b: tensor<5x8xf32>, %c: tensor<1x5xf32>) -> tensor<?x5xf32> {
  %0 = amp.gemm %a, %b, %c {transB = 1 : i64} : (tensor<?x8xf32>, tensor<5x8xf32>, tensor<1x5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

// Slice with run-time starts and ends (exports compute them from Shape):
// read, counted from the end when negative, clamped to [0, dim], size
// ceil((end - start) / step).
// CHECK-LABEL: func.func @slice_runtime
// CHECK: %[[DIM:.+]] = tensor.dim %arg0, %c1
// CHECK: %[[START:.+]] = tensor.extract %arg1
// CHECK: arith.index_cast %[[START]]
// CHECK: arith.cmpi slt
// CHECK: arith.addi %{{.+}}, %[[DIM]]
// CHECK: arith.select
// CHECK: tensor.extract %arg2
// CHECK: arith.maxsi
// CHECK: arith.minsi %{{.+}}, %[[DIM]]
// CHECK: arith.ceildivsi %{{.+}}, %c2
// CHECK: %[[SIZE:.+]] = arith.maxsi
// CHECK: tensor.extract_slice %arg0[0, %{{.+}}] [4, %[[SIZE]]] [1, 2] : tensor<4x?xf32> to tensor<4x?xf32>
func.func @slice_runtime(%x: tensor<4x?xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<4x?xf32> {
  %axes = amp.constant dense<[1]> : tensor<1xi64>
  %steps = amp.constant dense<[2]> : tensor<1xi64>
  %y = amp.slice %x, %s, %e, %axes, %steps : (tensor<4x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

// Integer Abs: select(x < 0, 0 - x, x) (math.absi has no LLVM lowering).
// CHECK-LABEL: func.func @abs_int
// CHECK: arith.cmpi slt
// CHECK: arith.subi
// CHECK: arith.select
// CHECK-NOT: math.absi
func.func @abs_int(%x: tensor<4xi64>) -> tensor<4xi64> {
  %y = amp.abs %x : (tensor<4xi64>) -> tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

// A convolution whose input lost its static shape: the channel count comes
// from the weights (a cast), the spatial output size is computed at run
// time: (in + 2 - 3) floordiv 2 + 1.
// CHECK-LABEL: func.func @conv_dynamic_spatial
// CHECK: %[[X:.+]] = tensor.cast %arg0 : tensor<?x?x?x?xf32> to tensor<?x3x?x?xf32>
// CHECK: %[[H:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[R:.+]] = arith.addi %[[H]], %c-1
// CHECK: %[[S:.+]] = arith.floordivsi %[[R]], %c2{{.*}} : index
// CHECK: arith.addi %[[S]], %c1{{.*}} : index
// CHECK: amp_linalg.kind = "conv"
// CHECK: tensor.cast %{{.+}} : tensor<?x4x?x?xf32> to tensor<?x?x?x?xf32>
func.func @conv_dynamic_spatial(%x: tensor<?x?x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32> {
  %none = amp.none
  %0 = amp.conv %x, %w, %none {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x?x?x?xf32>, tensor<4x3x3x3xf32>, none) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

// Two dynamic dimensions meet: either may be 1 at run time. The size is
// their maximum; when both equal it the plain generic runs, otherwise the
// inputs are first broadcast (index 0 read along a dimension of size 1).
// CHECK-LABEL: func.func @add_dynamic_broadcast
// CHECK: %[[A:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[B:.+]] = tensor.dim %arg1, %c0
// CHECK: %[[MAX:.+]] = arith.maxsi %[[A]], %[[B]]
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi eq
// CHECK: %[[ALL:.+]] = arith.andi
// CHECK: scf.if %[[ALL]] -> (tensor<?x4xf32>)
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: } else {
// CHECK: linalg.generic
// CHECK: arith.cmpi eq, %{{.+}}, %c1
// CHECK: arith.select
// CHECK: tensor.extract %arg0
// CHECK: arith.addf
func.func @add_dynamic_broadcast(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = amp.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// One dynamic dimension against a static 1: no check needed.
// CHECK-LABEL: func.func @add_single_dynamic
// CHECK-NOT: scf.if
// CHECK: linalg.generic
func.func @add_single_dynamic(%a: tensor<?x4xf32>, %b: tensor<1x4xf32>) -> tensor<?x4xf32> {
  %0 = amp.add %a, %b : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// MatMul of [?, ?, ?] by [8, 8]: the rows collapse through tensor.reshape
// (with more than one dynamic dimension the grouping cannot be read off the
// types).
// CHECK-LABEL: func.func @matmul_dynamic_rows
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[D0:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[D1:.+]] = tensor.dim %arg0, %c1
// CHECK: %[[K:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[P:.+]] = arith.muli %{{.+}}, %[[D0]]
// CHECK: %[[ROWS:.+]] = arith.muli %[[P]], %[[D1]]
// CHECK: %[[SHAPE:.+]] = tensor.from_elements %[[ROWS]], %[[K]] : tensor<2xindex>
// CHECK: %[[FLAT:.+]] = tensor.reshape %arg0(%[[SHAPE]])
// CHECK: linalg.matmul ins(%[[FLAT]], %arg1
func.func @matmul_dynamic_rows(%a: tensor<?x?x?xf32>, %b: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  %0 = amp.matmul %a, %b : (tensor<?x?x?xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// Pad with run-time pads (windowed attention pads to a multiple of the
// window): each output element reads index - low, and the pad value
// outside the input; negative pads crop the same way.
// CHECK-LABEL: func.func @pad_runtime
// CHECK: %[[LOW:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: linalg.generic
// CHECK: %[[I:.+]] = linalg.index 1
// CHECK: %[[S:.+]] = arith.subi %[[I]], %[[LOW]]
// CHECK-DAG: arith.cmpi sge, %[[S]]
// CHECK-DAG: arith.cmpi slt, %[[S]]
// CHECK: tensor.extract %arg0
// CHECK: arith.select
func.func @pad_runtime(%x: tensor<2x?xf32>, %pads: tensor<2xi64>) -> tensor<2x?xf32> {
  %none = amp.none
  %axes = amp.constant dense<[1]> : tensor<1xi64>
  %y = amp.pad %x, %pads, %none, %axes : (tensor<2x?xf32>, tensor<2xi64>, none, tensor<1xi64>) -> tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}

// -----

// Batched MatMul whose batch dimensions are both dynamic: the batch is the
// larger size and each side is broadcast at run time (index 0 where its
// batch is 1).
// CHECK-LABEL: func.func @matmul_dynamic_batch_broadcast
// CHECK: %[[BATCH:.+]] = arith.maxsi
// CHECK: linalg.generic
// CHECK: arith.cmpi eq, %{{.+}}, %c1
// CHECK: arith.select
// CHECK: tensor.extract %arg0
// CHECK: linalg.generic
// CHECK: tensor.extract %arg1
// CHECK: linalg.batch_matmul
func.func @matmul_dynamic_batch_broadcast(%a: tensor<?x2x3xf32>, %b: tensor<?x3x4xf32>) -> tensor<?x2x4xf32> {
  %0 = amp.matmul %a, %b : (tensor<?x2x3xf32>, tensor<?x3x4xf32>) -> tensor<?x2x4xf32>
  return %0 : tensor<?x2x4xf32>
}

// -----

// Every convolution is marked, whatever its element type (here fp16
// accumulating in fp16): backends decide which ones they call a library
// for.
// CHECK-LABEL: func.func @conv_f16
// CHECK: linalg.generic {{.+}} attrs = {amp_linalg.conv_init = {{[0-9]+}} : i64}
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>)
// CHECK-SAME: {amp_linalg.conv_dilations = array<i64: 1, 1>, amp_linalg.conv_strides = array<i64: 1, 1>, amp_linalg.kind = "conv"}
func.func @conv_f16(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %b: tensor<4xf16>) -> tensor<1x4x6x6xf16> {
  %0 = amp.conv %x, %w, %b : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>) -> tensor<1x4x6x6xf16>
  return %0 : tensor<1x4x6x6xf16>
}

// -----

// A reshape between equal types with more than one dynamic size moves
// elements ([8, ?, ?] from [8, b, 32] to [8, 4b, 8]): it is kept.
// CHECK-LABEL: func.func @reshape_equal_dynamic_types
// CHECK: %[[R:.*]] = tensor.reshape %arg0
// CHECK: return %[[R]]
func.func @reshape_equal_dynamic_types(%x: tensor<8x?x?xf32>, %s: tensor<3xi64>) -> tensor<8x?x?xf32> {
  %r = amp.reshape %x, %s {allowzero = 1 : i64} : (tensor<8x?x?xf32>, tensor<3xi64>) -> tensor<8x?x?xf32>
  return %r : tensor<8x?x?xf32>
}

// -----

// A 0-d dense_resource constant becomes a dense one (LLVM lowering reads a
// 0-d global as a splat); larger ones keep sharing their blob.
// CHECK-LABEL: func.func @scalar_resource_constant
// CHECK: arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK: arith.constant dense_resource<v> : tensor<2xf32>
func.func @scalar_resource_constant() -> (tensor<f32>, tensor<2xf32>) {
  %s = amp.constant dense_resource<s> : tensor<f32>
  %v = amp.constant dense_resource<v> : tensor<2xf32>
  return %s, %v : tensor<f32>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      s: "0x0400000000000040",
      v: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// ReverseSequence (time axis 0, batch axis 1): each element reads
// in[len[b] - 1 - t, b, ...] inside the sequence, in[t, b, ...] beyond;
// len[b] is clamped into [0, seq].
// CHECK-LABEL: func.func @reverse_sequence
// CHECK: linalg.generic
// CHECK: %[[T:.*]] = linalg.index 0 : index
// CHECK: %[[B:.*]] = linalg.index 1 : index
// CHECK: %[[L:.*]] = tensor.extract %{{.*}}[%[[B]]] : tensor<4xi64>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i64 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[LI]], %{{.*}} : index
// CHECK: %[[LEN:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: %[[LAST:.*]] = arith.subi %[[LEN]], %{{.*}} : index
// CHECK: %[[REV:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[T]], %[[LEN]] : index
// CHECK: %[[SRC:.*]] = arith.select %[[IN]], %[[REV]], %[[T]] : index
// CHECK: tensor.extract %{{.*}}[%[[SRC]], %[[B]], %{{.*}}] : tensor<5x4x3xf32>
func.func @reverse_sequence(%x: tensor<5x4x3xf32>, %l: tensor<4xi64>) -> tensor<5x4x3xf32> {
  %0 = amp.reverse_sequence %x, %l : (tensor<5x4x3xf32>, tensor<4xi64>) -> tensor<5x4x3xf32>
  return %0 : tensor<5x4x3xf32>
}
