// REQUIRES: amp-run-gpu
// RUN: not amp-opt %s --amp-target=cuda -o %t.ampgpu 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: test ! -e %t.ampgpu
// RUN: not amp-opt %s --amp-target=cuda 2>&1 | FileCheck %s --check-prefix=STDOUT
// RUN: not amp-opt %s --amp-target=tpu -o %t.x 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not amp-opt %s --amp-target=cuda -o %t.onnx 2>&1 | FileCheck %s --check-prefix=ONNX
// RUN: not amp-opt %s --amp-target=cuda --amp-cuda-entry=nope -o %t.x 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not amp-run-gpu %s --describe 2>&1 | FileCheck %s --check-prefix=MAGIC
// RUN: amp-opt %S/artifact.mlir --amp-target=cuda --amp-cuda-no-cubin -o %t.good
// RUN: head -c 100 %t.good > %t.short
// RUN: not amp-run-gpu %t.short --describe 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not amp-run-gpu %t.good 2>&1 | FileCheck %s --check-prefix=INPUTS
// RUN: not amp-run-gpu 2>&1 | FileCheck %s --check-prefix=USAGE
// Bad input to the CUDA target and the runtime: clear errors, no output.

// DYNAMIC: error: the CUDA target needs static shapes; argument 'memref<?x4xf32>' has dynamic dimensions
// STDOUT: error: --amp-target=cuda needs a file (-o model.ampgpu)
// TARGET: error: unknown --amp-target 'tpu' (expected cpu or cuda)
// ONNX: error: --amp-target=cuda writes an artifact (not --amp-import-only or ONNX output)
// ENTRY: error: no function @nope to compile for CUDA
// MAGIC: amp-run-gpu: error: '{{.*}}errors.mlir': not an amp GPU artifact (bad magic)
// TRUNCATED: amp-run-gpu: error: '{{.*}}.short': the file is 100 bytes but its header says {{[0-9]+}} (truncated)
// INPUTS: amp-run-gpu: error: the model has 1 input(s) but 0 -i file(s) were given (or use --random-inputs)
// USAGE: amp-run-gpu: error: no model given

func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = amp.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
