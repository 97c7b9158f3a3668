// The writer targets the operator version the export opset selects: an
// attribute is written whenever its value differs from *that* version's
// default (Softmax's axis: 1 before opset 13, -1 from 13), Softmax-like ops
// over a non-last axis become Transpose -> op -> Transpose before opset 13
// (those versions flatten the input to 2-D at `axis`), GridSample modes
// take their pre-opset-20 names, and Resize gets the empty roi/scales
// inputs opset 11 requires.
// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/softmax.mlir -o %t/o11.onnx --amp-export-opset=11
// RUN: %onnx-print %t/o11.onnx --check | FileCheck %s --check-prefix=OPSET11
// RUN: amp-opt %t/softmax.mlir -o %t/o13.onnx --amp-export-opset=13
// RUN: %onnx-print %t/o13.onnx --check | FileCheck %s --check-prefix=OPSET13
// RUN: amp-opt %t/grid.mlir -o %t/g16.onnx --amp-export-opset=16
// RUN: %onnx-print %t/g16.onnx --check | FileCheck %s --check-prefix=GRID16
// RUN: amp-opt %t/grid.mlir -o %t/g20.onnx --amp-export-opset=20
// RUN: %onnx-print %t/g20.onnx --check | FileCheck %s --check-prefix=GRID20

// OPSET11: checker: ok
// OPSET11: opset_import: '' 11
// OPSET11-DAG: initializer: Resize_roi TensorProto.FLOAT [0]
// OPSET11-DAG: initializer: Resize_scales TensorProto.FLOAT [0]
// The default axis (-1) is written explicitly: opset 11's default is 1.
// OPSET11: [Softmax] output_0 = Softmax <axis: int = 2> (input_0)
// OPSET11-NEXT: [Softmax_1_axis_last] [[IN1:.*]] = Transpose <perm: ints = [0, 2, 1]> (input_0)
// OPSET11-NEXT: [Softmax_1] [[OUT1:.*]] = Softmax <axis: int = 2> ([[IN1]])
// OPSET11-NEXT: [Softmax_1_axis_last_1] output_1 = Transpose <perm: ints = [0, 2, 1]> ([[OUT1]])
// OPSET11-NEXT: [LogSoftmax_axis_last] [[IN2:.*]] = Transpose <perm: ints = [2, 1, 0]> (input_0)
// OPSET11-NEXT: [LogSoftmax] [[OUT2:.*]] = LogSoftmax <axis: int = 2> ([[IN2]])
// OPSET11-NEXT: [LogSoftmax_axis_last_1] output_2 = Transpose <perm: ints = [2, 1, 0]> ([[OUT2]])
// OPSET11-NEXT: [Hardmax_axis_last] [[IN3:.*]] = Transpose <perm: ints = [0, 2, 1]> (input_0)
// OPSET11-NEXT: [Hardmax] [[OUT3:.*]] = Hardmax <axis: int = 2> ([[IN3]])
// OPSET11-NEXT: [Hardmax_axis_last_1] output_3 = Transpose <perm: ints = [0, 2, 1]> ([[OUT3]])
// OPSET11-NEXT: [Resize] output_4 = Resize (input_1, Resize_roi, Resize_scales, constant)

// OPSET13: checker: ok
// OPSET13-NOT: Transpose
// OPSET13: [Softmax] output_0 = Softmax (input_0)
// OPSET13-NEXT: [Softmax_1] output_1 = Softmax <axis: int = 1> (input_0)
// OPSET13-NEXT: [LogSoftmax] output_2 = LogSoftmax <axis: int = 0> (input_0)
// OPSET13-NEXT: [Hardmax] output_3 = Hardmax <axis: int = -2> (input_0)
// OPSET13-NEXT: [Resize] output_4 = Resize (input_1, "", "", constant)

// GRID16: checker: ok
// GRID16: GridSample <mode: string = "bilinear"> (input_0, input_1)
// GRID16: GridSample <mode: string = "bicubic"> (input_0, input_1)
// GRID16: GridSample <mode: string = "nearest"> (input_0, input_1)
// GRID20: checker: ok
// GRID20: GridSample (input_0, input_1)
// GRID20: GridSample <mode: string = "cubic"> (input_0, input_1)
// GRID20: GridSample <mode: string = "nearest"> (input_0, input_1)

//--- softmax.mlir
module attributes {amp.opset_import = {ai.onnx = 13 : i64}} {
  func.func @main(%x: tensor<2x3x4xf32>, %img: tensor<1x1x4x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<1x1x8x8xf32>) {
    %none = amp.none
    %last = amp.softmax %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %mid = amp.softmax %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %log = amp.log_softmax %x {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %hard = amp.hardmax %x {axis = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %sizes = amp.constant dense<[1, 1, 8, 8]> : tensor<4xi64>
    %up = amp.resize %img, %none, %none, %sizes : (tensor<1x1x4x4xf32>, none, none, tensor<4xi64>) -> tensor<1x1x8x8xf32>
    return %last, %mid, %log, %hard, %up : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<1x1x8x8xf32>
  }
}

//--- grid.mlir
module attributes {amp.opset_import = {ai.onnx = 20 : i64}} {
  func.func @main(%img: tensor<1x1x4x4xf32>, %grid: tensor<1x2x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
    %linear = amp.grid_sample %img, %grid : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
    %cubic = amp.grid_sample %img, %grid {mode = "cubic"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
    %nearest = amp.grid_sample %img, %grid {mode = "nearest"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
    return %linear, %cubic, %nearest : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
  }
}
