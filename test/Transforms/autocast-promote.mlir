// The promote class (the widest float input decides, as PyTorch's type
// promotion does) and the built-in presets that reproduce torch.autocast's
// lists (lib/Transforms/Policies/*.yaml).
// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/block.mlir -amp-autocast="type=bf16 policy=torch-cpu-bf16 annotate=true" | FileCheck %s --check-prefix=CPU
// RUN: amp-opt %t/block.mlir -amp-autocast="policy=torch-cuda-fp16 annotate=true" | FileCheck %s --check-prefix=CUDA
// RUN: amp-opt %t/block.mlir -amp-autocast="promote=Add,Gelu,Softmax,Exp,Mul annotate=true" | FileCheck %s --check-prefix=OPTION
// RUN: amp-opt %t/block.mlir -amp-autocast="policy=%t/others.yaml annotate=true" | FileCheck %s --check-prefix=OTHERS
// RUN: amp-opt %t/block.mlir -amp-autocast="node-rules=residual=promote,act=deny" | FileCheck %s --check-prefix=RULES
// RUN: amp-opt %t/block.mlir -amp-autocast="policy=torch-cpu-bf16 report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: amp-opt %t/misspelt.mlir -amp-autocast="policy=torch-cuda-f16" -verify-diagnostics
// RUN: amp-opt %t/bad-others.mlir -amp-autocast="policy=%t/bad-others.yaml" -verify-diagnostics

// torch.autocast("cpu", torch.bfloat16): the GEMM goes low; the residual
// Add reads the fp32 input and the bias Add an fp32 weight, so both promote
// to fp32; the activation, the scale by a 0-d constant (a Python number in
// torch) and exp/softmax (on no CPU list) follow the bf16 GEMM; LayerNorm
// runs in its data input's type whatever its weights' (infer).
// CPU-LABEL: func.func @block
// CPU: amp.matmul {{.*}}amp.reason = "allow list (preset torch-cpu-bf16)"} : {{.*}} -> tensor<4x8xbf16>
// CPU: amp.add %arg0, {{.*}}amp.reason = "promote: fp32 input 'argument 0'"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CPU: amp.add {{.*}}amp.reason = "promote: fp32 input 'bias'"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CPU: amp.gelu {{.*}}amp.reason = "promote: every float input is low precision (from 'fc1')"} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
// CPU: amp.mul {{.*}} : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
// CPU: amp.exp {{.*}} -> tensor<4x8xbf16>
// CPU: amp.softmax {{.*}}amp.accumulate = f32{{.*}} -> tensor<4x8xbf16>
// CPU: amp.layer_normalization {{.*}}amp.reason = "follows low-precision input from 'fc1'"} : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<4x8xbf16>,
// CPU: amp.add {{.*}} : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
// CPU: amp.add {{.*}} : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>

// torch.autocast("cuda", torch.float16): exp, softmax and layer_norm are
// on its fp32 lists; the last Add promotes to fp32 through them.
// CUDA-LABEL: func.func @block
// CUDA: amp.matmul {{.*}} -> tensor<4x8xf16>
// CUDA: amp.add {{.*}} -> tensor<4x8xf32>
// CUDA: amp.add {{.*}} -> tensor<4x8xf32>
// CUDA: amp.gelu {{.*}} -> tensor<4x8xf16>
// CUDA: amp.mul {{.*}} -> tensor<4x8xf16>
// CUDA: amp.exp {{.*}}amp.reason = "deny list (preset torch-cuda-fp16)"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CUDA: amp.softmax {{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CUDA: amp.layer_normalization {{.*}} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>,
// CUDA: amp.add {{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>

// The promote option on top of the default policy: the residual Add now
// stays fp32 (as infer it would follow the GEMM into fp16); Exp, a deny op
// by default, follows its input.
// OPTION-LABEL: func.func @block
// OPTION: amp.matmul {{.*}} -> tensor<4x8xf16>
// OPTION: amp.add %arg0, {{.*}}amp.reason = "promote: fp32 input 'argument 0'"} : {{.*}} -> tensor<4x8xf32>
// OPTION: amp.exp {{.*}} -> tensor<4x8xf16>

// others: every op the file does not list gets that class.
// OTHERS-LABEL: func.func @block
// OTHERS: amp.matmul {{.*}}amp.reason = "deny list (policy file {{.*}}others.yaml)"} : {{.*}} -> tensor<4x8xf32>
// OTHERS: amp.gelu {{.*}}amp.reason = "promote: fp32 input 'fc1'"} : {{.*}} -> tensor<4x8xf32>
// OTHERS: amp.layer_normalization {{.*}}amp.reason = "promote: fp32 input 'fc1'"

// A node rule can name promote.
// RULES-LABEL: func.func @block
// RULES: amp.add %arg0, {{.*}} -> tensor<4x8xf32>
// RULES: amp.gelu {{.*}} -> tensor<4x8xf32>

// REPORT: "node": "residual",
// REPORT-NEXT: "op": "Add",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "class": "promote",
// REPORT-NEXT: "reason": "promote: fp32 input 'argument 0'",

//--- block.mlir
func.func @block(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = amp.constant dense<0.25> : tensor<8x8xf32> loc("w")
  %bias = amp.constant dense<0.5> : tensor<8xf32> loc("bias")
  %half = amp.constant dense<0.5> : tensor<f32> loc("half")
  %g = amp.constant dense<1.0> : tensor<8xf32> loc("gamma")
  %b = amp.constant dense<0.0> : tensor<8xf32> loc("beta")
  %m = amp.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc1")
  %r = amp.add %x, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("residual")
  %mb = amp.add %m, %bias : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> loc("bias_add")
  %a = amp.gelu %m : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("act")
  %s = amp.mul %a, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc("scale")
  %e = amp.exp %s : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("exp")
  %sm = amp.softmax %s : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("softmax")
  %n, %mean, %inv = amp.layer_normalization %m, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) loc("norm")
  %t = amp.add %e, %sm : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("tail")
  %u = amp.add %t, %n : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("out")
  return %r, %mb, %u : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

//--- others.yaml
base: empty
deny: [MatMul]
others: promote

//--- misspelt.mlir
// expected-error @below {{amp-autocast: 'torch-cuda-f16' is neither a policy file nor a preset (presets: torch-cuda-fp16, torch-cpu-bf16)}}
module {}

//--- bad-others.yaml
others: widest

//--- bad-others.mlir
// expected-error @below {{bad-others.yaml': line 1: unknown class 'widest' for 'others' (expected allow, deny, infer, clear, promote or unlisted)}}
module {}
