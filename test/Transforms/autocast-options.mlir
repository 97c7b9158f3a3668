// Options of amp-autocast: opt levels, fp32 accumulation, I/O types, op
// lists, node rules, constant clamping, report and dot output.
// RUN: amp-opt %s -amp-autocast="opt-level=0" | FileCheck %s --check-prefix=O0
// RUN: amp-opt %s -amp-autocast | FileCheck %s --check-prefix=O1
// RUN: amp-opt %s -amp-autocast="opt-level=2" | FileCheck %s --check-prefix=O2
// RUN: amp-opt %s -amp-autocast="opt-level=3" | FileCheck %s --check-prefix=O3
// RUN: amp-opt %s -amp-autocast="fp32-accumulate=false" | FileCheck %s --check-prefix=NOACC
// RUN: amp-opt %s -amp-autocast="keep-io-types=false" | FileCheck %s --check-prefix=IO
// RUN: amp-opt %s -amp-autocast="allow=Exp deny=Gelu unlist=Softmax" | FileCheck %s --check-prefix=LISTS
// RUN: amp-opt %s -amp-autocast="infer=Exp" | FileCheck %s --check-prefix=INFER
// RUN: amp-opt %s -amp-autocast="clear=MatMul" | FileCheck %s --check-prefix=CLEAR
// RUN: amp-opt %s -amp-autocast="node-rules=proj=deny,block/.*/exp=allow" | FileCheck %s --check-prefix=NODES
// RUN: amp-opt %s -amp-autocast="clamp-constants=true" 2>&1 | FileCheck %s --check-prefix=CLAMP
// RUN: amp-opt %s -amp-autocast="report=%t.json dot=%t.dot summary=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: FileCheck %s --check-prefix=DOT < %t.dot
// RUN: amp-opt %s -amp-autocast="report-html=%t.html" -o /dev/null
// RUN: FileCheck %s --check-prefix=HTML < %t.html
// RUN: amp-opt %s -amp-autocast="annotate=true" | FileCheck %s --check-prefix=ANNOTATE
// RUN: amp-opt %s -amp-autocast | FileCheck %s --check-prefix=PLAIN

// O0-LABEL: func.func @block
// O0-NOT: f16
// O0-NOT: amp.cast

// Default (opt level 1): Exp is denied, Softmax accumulates in f32.
// O1-LABEL: func.func @block
// O1: amp.matmul {{.*}} {amp.accumulate = f32} : {{.*}} -> tensor<2x8xf16>
// O1: amp.gelu {{.*}} -> tensor<2x8xf16>
// O1: amp.exp {{.*}} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// O1: amp.softmax {{.*}} {amp.accumulate = f32} : (tensor<2x8xf16>) -> tensor<2x8xf16>

// Opt level 2: every listed op is low precision; fp32 accumulation where
// supported; the Mul keeps f32 because its constant does not fit.
// O2-LABEL: func.func @block
// O2: amp.exp {{.*}} : (tensor<2x8xf16>) -> tensor<2x8xf16>
// O2: amp.softmax {{.*}} {amp.accumulate = f32} : (tensor<2x8xf16>) -> tensor<2x8xf16>
// O2: amp.mul {{.*}} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>

// Opt level 3: pure f16, no accumulation attributes.
// O3-LABEL: func.func @block
// O3-NOT: amp.accumulate
// O3: amp.softmax {{.*}} : (tensor<2x8xf16>) -> tensor<2x8xf16>

// Without fp32 accumulation Softmax cannot stay in f16.
// NOACC-LABEL: func.func @block
// NOACC: amp.matmul {{.*}} : (tensor<2x8xf16>, tensor<8x8xf16>) -> tensor<2x8xf16>
// NOACC: amp.softmax {{.*}} : (tensor<2x8xf32>) -> tensor<2x8xf32>

// keep-io-types=false: the signature becomes f16, no input cast.
// IO-LABEL: func.func @block
// IO-SAME: (%{{.*}}: tensor<2x8xf16>) -> (tensor<2x8xf32>, tensor<2x8xf16>)
// IO-NOT: amp.cast %arg0

// Op lists from options.
// LISTS-LABEL: func.func @block
// LISTS: amp.gelu {{.*}} -> tensor<2x8xf32>
// LISTS: amp.exp {{.*}} : (tensor<2x8xf16>) -> tensor<2x8xf16>
// LISTS: amp.softmax {{.*}} : (tensor<2x8xf32>) -> tensor<2x8xf32>

// Exp moved to infer follows the f16 Gelu.
// INFER-LABEL: func.func @block
// INFER: amp.exp {{.*}} : (tensor<2x8xf16>) -> tensor<2x8xf16>

// MatMul moved to clear has no allow op to follow: nothing goes low.
// CLEAR-LABEL: func.func @block
// CLEAR-NOT: f16

// Node rules by exact name (as a regex) and by pattern.
// NODES-LABEL: func.func @block
// NODES: amp.matmul {{.*}} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// NODES: amp.exp {{.*}} : (tensor<2x8xf16>) -> tensor<2x8xf16>

// CLAMP: warning: loc("huge"): amp-autocast: clamped 1 values of constant 'huge' to the largest finite 'f16' (max |x| = 1.000000e+05)
// CLAMP-LABEL: func.func @block
// CLAMP: amp.constant dense<{{.*}}6.550400e+04{{.*}}> : tensor<2x8xf16>

// SUMMARY: amp-autocast: 6 ops: 3 f16, 3 f32, 0 without fp32 data; 4 casts, 1 constants converted; {{.*}}% of FLOPs in f16; {{.*}} KiB of activations saved

// REPORT: "type": "f16"
// REPORT: "summary": {
// REPORT: "casts":
// REPORT: "flops_low_precision_share":
// Each record lists the records it reads (through inserted casts).
// REPORT: "node": "proj",
// REPORT-NEXT: "op": "MatMul",
// REPORT-NEXT: "precision": "f16",
// REPORT-NEXT: "class": "allow",
// REPORT-NEXT: "reason": "allow list (default: GEMM-shaped
// REPORT-NEXT: "accumulate": "f32",
// REPORT-NEXT: "flops":
// REPORT-NEXT: "inputs": []
// REPORT: "node": "block/0/gelu",
// REPORT: "inputs": [
// REPORT-NEXT: 0
// REPORT-NEXT: ]
// REPORT: "node": "block/1/exp",
// REPORT-NEXT: "op": "Exp",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "class": "deny",
// REPORT: "node": "scale",
// REPORT-NEXT: "op": "Mul",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "class": "infer",
// REPORT-NEXT: "reason": "constant 'huge' does not fit f16: 1 of 16 values overflow, 0 flush to zero (max |x| = 100000.00)",

// report-html: the page with the report's JSON inside, '<' escaped.
// HTML: <!DOCTYPE html>
// HTML: <title>amp autocast report</title>
// HTML: <script id="amp-report" type="application/json">{
// HTML-NEXT: "type": "f16",
// HTML: "node": "proj",
// HTML: "inputs": [
// HTML: </script>
// HTML-NOT: {{(src|href)="(https?:)?//}}
// HTML: </html>

// DOT: digraph amp {
// DOT: [label="MatMul\nproj", fillcolor="#8fd18f"];
// DOT: [label="Exp\nblock/1/exp", fillcolor="#f4a582"];
// DOT: -> n

// annotate=true: each op carries the report's reason.
// ANNOTATE-LABEL: func.func @block
// ANNOTATE: amp.matmul {{.*}}amp.reason = "allow list (default: GEMM-shaped
// ANNOTATE: amp.gelu {{.*}}{amp.reason = "follows low-precision input from 'proj'"}
// ANNOTATE: amp.exp {{.*}}{amp.reason = "deny list (default:
// ANNOTATE: amp.mul {{.*}}{amp.reason = "constant 'huge' does not fit f16: 1 of 16 values overflow
// ANNOTATE: amp.add {{.*}}{amp.reason = "fp32 spread from 'block/1/exp' (infer op)"}
// PLAIN-NOT: amp.reason

func.func @block(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %w = amp.constant dense<0.25> : tensor<8x8xf32> loc("w")
  %m = amp.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("proj")
  %g = amp.gelu %m : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("block/0/gelu")
  %e = amp.exp %g : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("block/1/exp")
  %s = amp.softmax %g : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("softmax")
  %huge = amp.constant dense<[[1.0e5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<2x8xf32> loc("huge")
  %scaled = amp.mul %s, %huge : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("scale")
  %sum = amp.add %scaled, %e : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("sum")
  return %sum, %m : tensor<2x8xf32>, tensor<2x8xf32>
}
