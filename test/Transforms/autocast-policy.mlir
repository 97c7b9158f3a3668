// Policy files (YAML and JSON) and their errors; bad options. Each bad input
// is an expected-error test on its own file.
// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/model.mlir -amp-autocast="policy=%t/policy.yaml" | FileCheck %s --check-prefix=YAML
// RUN: amp-opt %t/model.mlir -amp-autocast="policy=%t/policy.json" | FileCheck %s --check-prefix=JSON
// RUN: amp-opt %t/model.mlir -amp-autocast="policy=%t/empty-base.yaml" | FileCheck %s --check-prefix=EMPTY
// RUN: amp-opt %t/unknown-op.mlir -amp-autocast="policy=%t/unknown-op.yaml" -verify-diagnostics
// RUN: amp-opt %t/unknown-key.mlir -amp-autocast="policy=%t/unknown-key.yaml" -verify-diagnostics
// RUN: amp-opt %t/bad-class.mlir -amp-autocast="policy=%t/bad-class.yaml" -verify-diagnostics
// RUN: amp-opt %t/bad-regex.mlir -amp-autocast="policy=%t/bad-regex.yaml" -verify-diagnostics
// RUN: amp-opt %t/not-a-list.mlir -amp-autocast="policy=%t/not-a-list.yaml" -verify-diagnostics
// RUN: amp-opt %t/syntax.mlir -amp-autocast="policy=%t/syntax.yaml" -verify-diagnostics
// RUN: amp-opt %t/missing.mlir -amp-autocast="policy=%t/does-not-exist.yaml" -verify-diagnostics
// RUN: amp-opt %t/option-op.mlir -amp-autocast="allow=SumTanh" -verify-diagnostics
// RUN: amp-opt %t/option-rule.mlir -amp-autocast="node-rules=proj" -verify-diagnostics
// RUN: amp-opt %t/option-type.mlir -amp-autocast="type=f8" -verify-diagnostics
// RUN: amp-opt %t/option-level.mlir -amp-autocast="opt-level=4" -verify-diagnostics

// The YAML policy denies MatMul and allows Exp; a node rule keeps 'proj2'
// low.
// YAML-LABEL: func.func @model
// YAML: amp.matmul {{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// YAML: amp.exp {{.*}} : (tensor<2x2xf16>) -> tensor<2x2xf16>
// YAML: amp.matmul {{.*}} -> tensor<2x2xf16>

// The same policy as JSON.
// JSON-LABEL: func.func @model
// JSON: amp.matmul {{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// JSON: amp.exp {{.*}} : (tensor<2x2xf16>) -> tensor<2x2xf16>
// JSON: amp.matmul {{.*}} -> tensor<2x2xf16>

// base: empty leaves only the file's lists: Exp alone is allowed.
// EMPTY-LABEL: func.func @model
// EMPTY: amp.matmul {{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// EMPTY: amp.exp {{.*}} : (tensor<2x2xf16>) -> tensor<2x2xf16>
// EMPTY: amp.matmul {{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>

//--- model.mlir
func.func @model(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %m = amp.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("proj")
  %e = amp.exp %m : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("exp")
  %m2 = amp.matmul %e, %e : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("proj2")
  return %m2 : tensor<2x2xf32>
}

//--- policy.yaml
# Comments are allowed.
deny: [MatMul]
allow:
  - Exp
nodes:
  - name: proj2
    class: allow

//--- policy.json
{"deny": ["MatMul"], "allow": ["Exp"],
 "nodes": [{"regex": "proj[0-9]+", "class": "allow"}]}

//--- empty-base.yaml
base: empty
allow: [Exp]

//--- unknown-op.mlir
// expected-error@+1 {{unknown-op.yaml': line 3: unknown op 'Matmul' (did you mean 'MatMul'?)}}
module {}

//--- unknown-op.yaml
allow:
  - Conv
  - Matmul

//--- unknown-key.mlir
// expected-error@+1 {{line 2: unknown key 'alow' (expected base, allow, deny, infer, clear, promote, unlist, others or nodes)}}
module {}

//--- unknown-key.yaml
deny: [Exp]
alow: [MatMul]

//--- bad-class.mlir
// expected-error@+1 {{line 2: unknown class 'fp16' (expected allow, deny, infer, clear or promote)}}
module {}

//--- bad-class.yaml
nodes:
  - {name: proj, class: fp16}

//--- bad-regex.mlir
// expected-error@+1 {{line 2: invalid regex 'proj[': }}
module {}

//--- bad-regex.yaml
nodes:
  - {regex: "proj[", class: deny}

//--- not-a-list.mlir
// expected-error@+1 {{line 1: expected a list of ONNX op types}}
module {}

//--- not-a-list.yaml
allow: MatMul

//--- syntax.mlir
// expected-error@+1 {{syntax.yaml': line 2: Could not find closing ]!}}
module {}

//--- syntax.yaml
allow: [MatMul

//--- missing.mlir
// expected-error@+1 {{does-not-exist.yaml': No such file or directory}}
module {}

//--- option-op.mlir
// A missing comma that merges two names is caught.
// expected-error@+1 {{amp-autocast: option 'allow': unknown op 'SumTanh' (not an ONNX operator type that amp supports)}}
module {}

//--- option-rule.mlir
// expected-error@+1 {{amp-autocast: option 'node-rules': node rule 'proj' is not of the form pattern=allow|deny|infer|clear|promote}}
module {}

//--- option-type.mlir
// expected-error@+1 {{amp-autocast: unknown type 'f8' (expected f16 or bf16)}}
module {}

//--- option-level.mlir
// expected-error@+1 {{amp-autocast: opt-level 4 does not exist (expected 0 to 3)}}
module {}
