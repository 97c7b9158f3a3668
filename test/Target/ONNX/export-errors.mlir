// Programs that cannot be written as ONNX get an error on the op; no file
// is written.
// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/layernorm.mlir -o %t/layernorm.onnx -verify-diagnostics
// RUN: not test -e %t/layernorm.onnx
// RUN: amp-opt %t/axes.mlir -o %t/axes.onnx -verify-diagnostics
// RUN: amp-opt %t/softmax.mlir -o %t/softmax.onnx -verify-diagnostics
// RUN: amp-opt %t/noop.mlir -o %t/noop.onnx -verify-diagnostics
// RUN: amp-opt %t/two-funcs.mlir -o %t/two-funcs.onnx -verify-diagnostics
// RUN: amp-opt %t/stdout.mlir --emit=onnx -verify-diagnostics
// RUN: amp-opt %t/bf16.mlir -o %t/bf16.onnx -verify-diagnostics
// RUN: amp-opt %t/bf16.mlir -o %t/bf16.onnx --amp-export-opset=22
// RUN: not amp-opt %t/stdout.mlir -o %t/x.out --emit=text 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not test -e %t/x.out

// FORMAT: error: unknown --emit format 'text' (expected mlir or onnx)

//--- layernorm.mlir
module attributes {amp.opset_import = {ai.onnx = 13 : i64}} {
  func.func @main(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
    %none = amp.none
    // expected-error@+1 {{cannot export: ONNX LayerNormalization does not exist at opset 13 (choose a newer opset with --amp-export-opset)}}
    %y, %m, %v = amp.layer_normalization %x, %g, %none : (tensor<2x4xf32>, tensor<4xf32>, none) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
    return %y : tensor<2x4xf32>
  }
}

//--- axes.mlir
module attributes {amp.opset_import = {ai.onnx = 11 : i64}} {
  func.func @main(%x: tensor<2x4xf32>, %axes: tensor<1xi64>) -> tensor<1x4xf32> {
    // expected-error@+1 {{cannot export: input 'axes' must be a constant at this opset (it was an attribute before)}}
    %r = amp.reduce_max %x, %axes : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x4xf32>
    return %r : tensor<1x4xf32>
  }
}

//--- softmax.mlir
module attributes {amp.opset_import = {ai.onnx = 11 : i64}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    // expected-error@+1 {{cannot export: Softmax over a non-last axis has different semantics before opset 13}}
    %r = amp.softmax %x {axis = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    return %r : tensor<2x4xf32>
  }
}

//--- noop.mlir
module attributes {amp.opset_import = {ai.onnx = 17 : i64}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %none = amp.none
    // expected-error@+1 {{cannot export: noop_with_empty_axes needs opset 18}}
    %r = amp.reduce_max %x, %none {noop_with_empty_axes = 1 : i64} : (tensor<2x4xf32>, none) -> tensor<2x4xf32>
    return %r : tensor<2x4xf32>
  }
}

//--- two-funcs.mlir
// expected-error@+1 {{cannot export: expected one function (the graph), found 2}}
module {
  func.func @a() { return }
  func.func @b() { return }
}

//--- stdout.mlir
// expected-error@+1 {{ONNX output needs a file (-o model.onnx)}}
module {
  func.func @main() { return }
}

//--- bf16.mlir
module attributes {amp.opset_import = {ai.onnx = 17 : i64}} {
  func.func @main(%x: tensor<1x1x4x4xbf16>, %w: tensor<1x1x1x1xbf16>) -> tensor<1x1x4x4xbf16> {
    %none = amp.none
    // expected-error@+1 {{cannot export: ONNX Conv at opset 17 does not accept bfloat16 (it does from opset 22: use --amp-export-opset=22 or newer, or keep Conv in fp32 with --amp-deny=Conv)}}
    %y = amp.conv %x, %w, %none : (tensor<1x1x4x4xbf16>, tensor<1x1x1x1xbf16>, none) -> tensor<1x1x4x4xbf16>
    return %y : tensor<1x1x4x4xbf16>
  }
}
