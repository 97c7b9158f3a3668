// amp-autocast on linalg (lib/Transforms/PrecisionModels/Linalg.cpp): the
// ops are classified by the ONNX operator they compute, inputs go low
// through arith.truncf, accumulators (the outputs of ops with a reduction
// loop) stay fp32, named ops are rebuilt with their generated payload, and a
// linalg.generic keeps computing in fp32 between an extf of its low inputs
// and a truncf of its low outputs. No amp op appears.
//
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{annotate=true})' | FileCheck %s
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{type=bf16})' | FileCheck %s --check-prefix=BF16
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{allow=Add deny=MatMul})' | FileCheck %s --check-prefix=LISTS
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{summary=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// Node rules match the ops' location names, as for amp ops:
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast{node-rules=head/.*=deny annotate=true})' | FileCheck %s --check-prefix=RULES
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast)' | FileCheck %s --check-prefix=NOAMP
// The payloads generated for rebuilt named ops, made visible by upstream
// mlir-opt's generalization (which also shows the output parses there):
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-autocast)' | mlir-opt --linalg-generalize-named-ops | FileCheck %s --check-prefix=PAYLOAD

// NOAMP-NOT: amp.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @mlp(
// The weight is converted at compile time; the input by arith.truncf.
// CHECK-DAG: %[[W:.+]] = arith.constant dense<5.000000e-01> : tensor<16x8xf16>
// CHECK-DAG: %[[X:.+]] = arith.truncf %arg0 : tensor<4x16xf32> to tensor<4x16xf16>
// The matmul reads f16 and accumulates into its fp32 init; its payload is
// generated for the new types (the inputs extended to f32).
// CHECK: %[[MM:.+]] = linalg.matmul {amp.reason = "allow list{{.*}}} ins(%[[X]], %[[W]] : tensor<4x16xf16>, tensor<16x8xf16>) outs(%{{.+}} : tensor<4x8xf32>)
// PAYLOAD-LABEL: func.func @mlp(
// PAYLOAD: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<4x16xf16>, tensor<16x8xf16>) outs(%{{.+}} : tensor<4x8xf32>)
// PAYLOAD-NEXT: ^bb0(%[[A:.+]]: f16, %[[B:.+]]: f16, %[[C:.+]]: f32):
// PAYLOAD-NEXT: %[[A32:.+]] = arith.extf %[[A]] : f16 to f32
// PAYLOAD-NEXT: %[[B32:.+]] = arith.extf %[[B]] : f16 to f32
// PAYLOAD-NEXT: %[[P:.+]] = arith.mulf %[[A32]], %[[B32]] : f32
// PAYLOAD-NEXT: arith.addf %[[C]], %[[P]] : f32
// The bias + ReLU generic follows the low-precision matmul: the fp32
// accumulator is truncated for it, its init is a fresh f16 tensor (the
// payload never reads it) and the payload still computes in f32.
// CHECK: %[[MM16:.+]] = arith.truncf %[[MM]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x8xf16>
// CHECK: %[[ACT:.+]] = linalg.generic {{.*}} ins(%[[MM16]], %{{.+}} : tensor<4x8xf16>, tensor<8xf16>) outs(%[[INIT]] : tensor<4x8xf16>) attrs = {amp.reason = "follows low-precision input from 'MatMul#0'"}
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f16, %[[BIAS:.+]]: f16, %{{.+}}: f16):
// CHECK-DAG: %[[IN32:.+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-DAG: %[[BIAS32:.+]] = arith.extf %[[BIAS]] : f16 to f32
// CHECK: %[[SUM:.+]] = arith.addf %[[IN32]], %[[BIAS32]] : f32
// CHECK: %[[RELU:.+]] = arith.maximumf %[[SUM]], %{{.+}} : f32
// CHECK: %[[OUT:.+]] = arith.truncf %[[RELU]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[OUT]] : f16
// The sum reduction is on the deny list: fp32 input (extended), fp32 result.
// CHECK: %[[ACT32:.+]] = arith.extf %[[ACT]] : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[ACT32]] : tensor<4x8xf32>) outs(%{{.+}} : tensor<4xf32>) attrs = {amp.reason = "deny list
// The max reduction (infer) follows its low-precision input and keeps its
// fp32 accumulator.
// CHECK: linalg.generic {{.*}} ins(%[[ACT]] : tensor<4x8xf16>) outs(%{{.+}} : tensor<4xf32>) attrs = {amp.reason = "follows low-precision input from 'Add#1'"}
// CHECK: return %{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xf32>
func.func @mlp(%x: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w = arith.constant dense<0.5> : tensor<16x8xf32>
  %b = arith.constant dense<0.25> : tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %act = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %r0 = tensor.empty() : tensor<4xf32>
  %sum0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]} ins(%act : tensor<4x8xf32>) outs(%sum0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %max0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]} ins(%act : tensor<4x8xf32>) outs(%max0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %sum, %max : tensor<4xf32>, tensor<4xf32>
}

// BF16-LABEL: func.func @mlp(
// BF16: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%{{.+}} : tensor<4x8xf32>)

// deny=MatMul: nothing is low (the generic has no low input to follow);
// allow=Add: the bias add goes low on its own, with casts around it.
// LISTS-LABEL: func.func @mlp(
// LISTS: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x16xf32>, tensor<16x8xf32>)
// LISTS: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<4x8xf16>, tensor<8xf16>) outs(%{{.+}} : tensor<4x8xf16>)

// SUMMARY: amp-autocast: {{[0-9]+}} ops: {{.*}} casts, {{[0-9]+}} constants converted; {{[0-9.]+}}% of FLOPs in f16

// A convolution and a max pooling: the pooling's window operand is never
// read by the payload, so it is not data and stays as it is; both keep
// their fp32 accumulators. Dynamic sizes reach the fresh init.
// CHECK-LABEL: func.func @cnn(
// CHECK: %[[IMG:.+]] = arith.truncf %arg0 : tensor<?x8x8x3xf32> to tensor<?x8x8x3xf16>
// CHECK: %[[CONV:.+]] = linalg.conv_2d_nhwc_hwcf {{.*}}ins(%[[IMG]], %{{.+}} : tensor<?x8x8x3xf16>, tensor<3x3x3x4xf16>) outs(%{{.+}} : tensor<?x6x6x4xf32>)
// CHECK: %[[CONV16:.+]] = arith.truncf %[[CONV]] : tensor<?x6x6x4xf32> to tensor<?x6x6x4xf16>
// CHECK: linalg.pooling_nhwc_max {{.*}}ins(%[[CONV16]], %{{.+}} : tensor<?x6x6x4xf16>, tensor<2x2xf32>) outs(%{{.+}} : tensor<?x3x3x4xf32>)
func.func @cnn(%x: tensor<?x8x8x3xf32>) -> tensor<?x3x3x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x8x3xf32>
  %w = arith.constant dense<0.1> : tensor<3x3x3x4xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty(%n) : tensor<?x6x6x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x6x6x4xf32>) -> tensor<?x6x6x4xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x8x8x3xf32>, tensor<3x3x3x4xf32>) outs(%acc : tensor<?x6x6x4xf32>) -> tensor<?x6x6x4xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %p = tensor.empty(%n) : tensor<?x3x3x4xf32>
  %pacc = linalg.fill ins(%ninf : f32) outs(%p : tensor<?x3x3x4xf32>) -> tensor<?x3x3x4xf32>
  %pool = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%conv, %window : tensor<?x6x6x4xf32>, tensor<2x2xf32>) outs(%pacc : tensor<?x3x3x4xf32>) -> tensor<?x3x3x4xf32>
  return %pool : tensor<?x3x3x4xf32>
}

// Named elementwise ops are rebuilt in the new type with a fresh init
// (dynamic sizes from tensor.dim); exp is denied and stays fp32.
// CHECK-LABEL: func.func @named_elementwise(
// CHECK: %[[MM:.+]] = linalg.matmul
// CHECK: %[[MM16:.+]] = arith.truncf %[[MM]] : tensor<?x8xf32> to tensor<?x8xf16>
// CHECK: %[[DIM:.+]] = tensor.dim %{{.+}}, %{{.+}} : tensor<?x8xf32>
// CHECK: %[[INIT:.+]] = tensor.empty(%[[DIM]]) : tensor<?x8xf16>
// CHECK: %[[ADD:.+]] = linalg.add {{.*}}ins(%[[MM16]], %[[MM16]] : tensor<?x8xf16>, tensor<?x8xf16>) outs(%[[INIT]] : tensor<?x8xf16>)
// PAYLOAD-LABEL: func.func @named_elementwise(
// PAYLOAD: ins(%{{.+}}, %{{.+}} : tensor<?x8xf16>, tensor<?x8xf16>) outs(%{{.+}} : tensor<?x8xf16>)
// PAYLOAD-NEXT: ^bb0(%[[X:.+]]: f16, %[[Y:.+]]: f16, %{{.+}}: f16):
// PAYLOAD-NEXT: arith.addf %[[X]], %[[Y]] : f16
// CHECK: %[[ADD32:.+]] = arith.extf %[[ADD]] : tensor<?x8xf16> to tensor<?x8xf32>
// CHECK: linalg.exp {{.*}}ins(%[[ADD32]] : tensor<?x8xf32>)
func.func @named_elementwise(%x: tensor<?x16xf32>, %w: tensor<16x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<?x8xf32>) -> tensor<?x8xf32>
  %add = linalg.add ins(%mm, %mm : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %exp = linalg.exp ins(%add : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %exp : tensor<?x8xf32>
}

// A weight that overflows f16 keeps its matmul in fp32.
// CHECK-LABEL: func.func @big_weight(
// CHECK: linalg.matmul {amp.reason = "constant '{{.*}}' does not fit f16: 128 of 128 values overflow{{.*}}} ins(%arg0, %{{.+}} : tensor<4x16xf32>, tensor<16x8xf32>)
func.func @big_weight(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<1.0e6> : tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %mm : tensor<4x8xf32>
}

// RULES-LABEL: func.func @named(
// RULES: linalg.matmul {amp.reason = "node rule 'head/.*' (node-rules option)"} ins(%arg0, %{{.+}} : tensor<4x16xf32>, tensor<16x8xf32>)
// RULES: linalg.matmul {amp.reason = "allow list{{.*}} ins(%{{.+}}, %{{.+}} : tensor<4x16xf16>, tensor<16x8xf16>)
func.func @named(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %head = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32> loc("head/matmul")
  %body = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32> loc("body/matmul")
  return %head, %body : tensor<4x8xf32>, tensor<4x8xf32>
}
