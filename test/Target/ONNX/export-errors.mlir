// Programs that cannot be written as ONNX get an error on the op; no file
// is written.
// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/layernorm.mlir -o %t/layernorm.onnx -verify-diagnostics
// RUN: not test -e %t/layernorm.onnx
// RUN: amp-opt %t/axes.mlir -o %t/axes.onnx -verify-diagnostics
// RUN: not test -e %t/axes.onnx
// RUN: amp-opt %t/noop.mlir -o %t/noop.onnx -verify-diagnostics
// RUN: not test -e %t/noop.onnx
// RUN: amp-opt %t/two-funcs.mlir -o %t/two-funcs.onnx -verify-diagnostics
// RUN: not test -e %t/two-funcs.onnx
// RUN: amp-opt %t/stdout.mlir --emit=onnx -verify-diagnostics
// RUN: amp-opt %t/bf16.mlir -o %t/bf16.onnx -verify-diagnostics
// RUN: not test -e %t/bf16.onnx
// RUN: amp-opt %t/bf16.mlir -o %t/bf16.onnx --amp-export-opset=22
// RUN: test -s %t/bf16.onnx
// RUN: amp-opt %t/new-attribute.mlir -o %t/new-attribute.onnx -verify-diagnostics
// RUN: not test -e %t/new-attribute.onnx
// RUN: amp-opt %t/group-norm.mlir -o %t/group-norm.onnx -verify-diagnostics
// RUN: not test -e %t/group-norm.onnx
// RUN: amp-opt %t/group-norm.mlir -o %t/group-norm.onnx --amp-export-opset=21
// RUN: test -s %t/group-norm.onnx
// RUN: amp-opt %t/pad-wrap.mlir -o %t/pad-wrap.onnx -verify-diagnostics
// RUN: not test -e %t/pad-wrap.onnx
// RUN: amp-opt %t/pad-axes.mlir -o %t/pad-axes.onnx -verify-diagnostics
// RUN: not test -e %t/pad-axes.onnx
// RUN: amp-opt %t/scatter-max.mlir -o %t/scatter-max.onnx -verify-diagnostics
// RUN: not test -e %t/scatter-max.onnx
// RUN: not amp-opt %t/group-norm.mlir -o %t/new.onnx --amp-export-opset=29 2>&1 | FileCheck %s --check-prefix=NEWEST
// RUN: not test -e %t/new.onnx
// NEWEST: error: cannot export at opset 29 (amp supports 11 to 28)
// RUN: not amp-opt %t/group-norm.mlir -o %t/old.onnx --amp-export-opset=10 2>&1 | FileCheck %s --check-prefix=OLDEST
// OLDEST: error: cannot export at opset 10 (amp supports 11 to 28)
// The exit status of a failed export is non-zero:
// RUN: not amp-opt %t/group-norm.mlir -o %t/group-norm.onnx 2>&1 | FileCheck %s --check-prefix=STATUS
// STATUS: error: cannot export: GroupNormalization before opset 21
// RUN: not amp-opt %t/stdout.mlir -o %t/x.out --emit=text 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not test -e %t/x.out

// FORMAT: error: unknown --emit format 'text' (expected mlir or onnx)

//--- layernorm.mlir
module attributes {amp.opset_import = {ai.onnx = 13 : i64}} {
  func.func @main(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
    %none = amp.none
    // expected-error@+1 {{cannot export: ONNX LayerNormalization does not exist at opset 13 (it does from opset 17: use --amp-export-opset=17 or newer)}}
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

//--- new-attribute.mlir
// An attribute the target operator version does not have, with a value
// other than the one older versions implied.
module attributes {amp.opset_import = {ai.onnx = 11 : i64}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<1x4xi64> {
    // expected-error@+1 {{cannot export: attribute 'select_last_index' of ONNX ArgMax does not exist at opset 11 (it does from opset 12: use --amp-export-opset=12 or newer)}}
    %r = amp.arg_max %x {select_last_index = 1 : i64} : (tensor<2x4xf32>) -> tensor<1x4xi64>
    return %r : tensor<1x4xi64>
  }
}

//--- group-norm.mlir
module attributes {amp.opset_import = {ai.onnx = 18 : i64}} {
  func.func @main(%x: tensor<1x4x2x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
    // expected-error@+1 {{cannot export: GroupNormalization before opset 21 takes one scale and bias per group, amp's form one per channel (use --amp-export-opset=21 or newer)}}
    %y = amp.group_normalization %x, %s, %b {num_groups = 2 : i64} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
    return %y : tensor<1x4x2x2xf32>
  }
}

//--- pad-wrap.mlir
module attributes {amp.opset_import = {ai.onnx = 18 : i64}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x6xf32> {
    %none = amp.none
    %pads = amp.constant dense<[0, 1, 0, 1]> : tensor<4xi64>
    // expected-error@+1 {{cannot export: Pad mode 'wrap' needs opset 19 (use --amp-export-opset=19 or newer)}}
    %y = amp.pad %x, %pads, %none, %none {mode = "wrap"} : (tensor<2x4xf32>, tensor<4xi64>, none, none) -> tensor<2x6xf32>
    return %y : tensor<2x6xf32>
  }
}

//--- pad-axes.mlir
module attributes {amp.opset_import = {ai.onnx = 17 : i64}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x6xf32> {
    %none = amp.none
    %pads = amp.constant dense<[1, 1]> : tensor<2xi64>
    %axes = amp.constant dense<[1]> : tensor<1xi64>
    // expected-error@+1 {{cannot export: Pad's axes input needs opset 18 (use --amp-export-opset=18 or newer)}}
    %y = amp.pad %x, %pads, %none, %axes : (tensor<2x4xf32>, tensor<2xi64>, none, tensor<1xi64>) -> tensor<2x6xf32>
    return %y : tensor<2x6xf32>
  }
}

//--- scatter-max.mlir
module attributes {amp.opset_import = {ai.onnx = 16 : i64}} {
  func.func @main(%x: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{cannot export: ScatterElements reduction 'max' needs opset 18 (use --amp-export-opset=18 or newer)}}
    %y = amp.scatter_elements %x, %i, %u {reduction = "max"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
