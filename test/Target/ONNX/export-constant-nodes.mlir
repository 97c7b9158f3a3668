// RUN: rm -rf %t && mkdir -p %t
// RUN: amp-opt %s -o %t/m13.onnx --amp-export-opset=13
// RUN: %onnx-print %t/m13.onnx --check | FileCheck %s --check-prefix=OPSET13
// RUN: amp-opt %t/m13.onnx --amp-opt-level=0 | FileCheck %s --check-prefix=REIMPORT
// RUN: amp-opt %s -o %t/m11.onnx --amp-export-opset=11
// RUN: %onnx-print %t/m11.onnx --check | FileCheck %s --check-prefix=OPSET11

// How the writer stores constants, so that a re-import gives the same IR:
// blobs (dense_resource) and inline constants of at most 16 elements
// become initializers, which the importer reads back as they were; an
// inline constant of more than 16 elements cannot have come from an
// initializer (the importer would have made it a blob) and becomes a
// Constant node, whose value the importer keeps inline. Constant takes
// every element type from opset 13; before that, initializers.

// OPSET13: checker: ok
// OPSET13-DAG: initializer: small TensorProto.FLOAT [4]
// OPSET13-DAG: initializer: blob TensorProto.FLOAT [17]
// OPSET13-DAG: [mask] mask = Constant <value: tensor = float[4,6] {0,1,2,3,4,5,0,
// OPSET13-DAG: [zeros] zeros = Constant <value: tensor = float[2,16] {0,0,
// OPSET13-NOT: initializer: mask
// OPSET13-NOT: initializer: zeros

// REIMPORT-DAG: amp.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// REIMPORT-DAG: amp.constant dense_resource<blob> : tensor<17xf32>
// REIMPORT-DAG: amp.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00{{.*}}> : tensor<4x6xf32>
// REIMPORT-DAG: amp.constant dense<0.000000e+00> : tensor<2x16xf32>

// OPSET11: checker: ok
// OPSET11-DAG: initializer: mask TensorProto.FLOAT [4, 6]
// OPSET11-DAG: initializer: zeros TensorProto.FLOAT [2, 16]
// OPSET11-NOT: Constant

module attributes {amp.opset_import = {ai.onnx = 13 : i64}} {
  func.func @main(%x: tensor<4xf32> {amp.name = "x"}, %y: tensor<17xf32> {amp.name = "y"},
                  %z: tensor<4x6xf32> {amp.name = "z"}, %w: tensor<2x16xf32> {amp.name = "w"})
      -> (tensor<4xf32>, tensor<17xf32>, tensor<4x6xf32>, tensor<2x16xf32>) {
    %small = amp.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> loc("small")
    %blob = amp.constant dense_resource<blob> : tensor<17xf32> loc("blob")
    %mask = amp.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
                                [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]>
        : tensor<4x6xf32> loc("mask")
    %zeros = amp.constant dense<0.0> : tensor<2x16xf32> loc("zeros")
    %a = amp.add %x, %small : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = amp.add %y, %blob : (tensor<17xf32>, tensor<17xf32>) -> tensor<17xf32>
    %c = amp.add %z, %mask : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %d = amp.add %w, %zeros : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
    return %a, %b, %c, %d : tensor<4xf32>, tensor<17xf32>, tensor<4x6xf32>, tensor<2x16xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}
