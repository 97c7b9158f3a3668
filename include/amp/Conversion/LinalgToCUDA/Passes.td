//===- Passes.td - linalg -> CUDA backend passes -----------*- tablegen -*-===//

#ifndef AMP_CONVERSION_LINALGTOCUDA_PASSES_TD
#define AMP_CONVERSION_LINALGTOCUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpPrepareCudaGemms : Pass<"amp-prepare-cuda-gemms", "::mlir::ModuleOp"> {
  let summary = "Shape GEMMs on tensors the way cuBLASLt runs them";
  let description = [{
    Runs on tensors, after convert-amp-to-linalg and before elementwise
    fusion, on `linalg.matmul`, `matmul_transpose_b`, `batch_matmul` and
    `batch_matmul_transpose_b`:
    - fp16/bf16 operands. convert-amp-to-linalg lowers a low-precision GEMM
      with fp32 accumulation as an fp32 GEMM on operands widened by an
      elementwise `arith.extf` (maybe reshaped after). The named ops widen
      their operands themselves, so the GEMM reads the fp16/bf16 tensors
      directly (reshaped the same way): the results are identical, and
      cuBLASLt runs fp16/bf16 inputs with fp32 compute and output on tensor
      cores instead of an fp32 GEMM on a widened copy. Both operands must
      narrow to one type.
    - Zero-initialised outputs. A GEMM whose init is a zero `linalg.fill`
      (maybe reshaped) reads the fill's destination instead and is marked
      `amp_cuda.beta = 0`: cuBLASLt then ignores the output's old contents
      and no fill kernel runs.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AmpLinalgToGpu : Pass<"amp-linalg-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Map bufferized linalg programs onto GPU launches and "
                "library GEMMs";
  let description = [{
    Runs after bufferization, on programs with static shapes. In every
    function:
    - GEMMs that cuBLASLt runs (`linalg.matmul`, `matmul_transpose_b`,
      `batch_matmul`, `batch_matmul_transpose_b` on f16, bf16, f32 or f64
      with a unit stride in each operand's last or second-to-last
      dimension) stay as they are; the CUDA artifact writer turns them into
      cuBLASLt calls, with transposed views read through the transpose
      flags. A zero fill of the output just before the GEMM is folded into
      the GEMM (`amp_cuda.beta = 0`).
    - Contiguous `memref.copy` ops stay (device-to-device copies); others
      become `linalg.copy`.
    - Every other linalg op is generalised, its parallel loops moved in
      front of its reduction loops, and lowered to an `scf.parallel` nest.
      Each one becomes one `gpu.launch`: the parallel iteration space is
      linearised (the innermost dimension fastest, so neighbouring threads
      touch neighbouring elements), `block-size` threads per block, one
      thread per point; reduction loops run inside each thread.
    - Remaining device work (loop nests without parallel dimensions,
      scalar loads and stores) runs in single-thread launches.
    - `memref.dealloc` ops are dropped: the artifact's memory plan places
      buffers by liveness.
    Dynamic shapes are an error.
  }];
  let options = [
    Option<"blockSize", "block-size", "unsigned", /*default=*/"256",
           "Threads per block of the elementwise and reduction kernels">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def AmpCollectKernels : Pass<"amp-collect-kernels", "::mlir::ModuleOp"> {
  let summary = "Name outlined kernels after the model ops and gather them "
                "in one module";
  let description = [{
    Runs after gpu-kernel-outlining, which makes one `gpu.module` per kernel
    and names every kernel after its function (`main_kernel`). Each kernel
    is renamed after the ONNX node of its launch (`Conv_1_5`: the node
    name made a C identifier, and a counter; `kernel_N` without a node
    name), so profiles (Nsight Systems), PTX listings and runtime errors
    point at the model; and all kernels move into one module,
    `@amp_kernels`, so the artifact holds one PTX and one cubin (one ptxas
    run at compile time, one library to load).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AmpGpuLaunchesToLoops : Pass<"amp-gpu-launches-to-loops",
                                 "::mlir::ModuleOp"> {
  let summary = "Emulate the CUDA lowering on the CPU: launches become loops";
  let description = [{
    Runs after amp-linalg-to-gpu, instead of kernel outlining. Every
    `gpu.launch` becomes `scf.for` loops over its blocks and threads with
    its body inlined, and the zero fill folded into a GEMM (`amp_cuda.beta
    = 0`) is put back. The CPU back end then runs exactly the loops the GPU
    kernels would run, so the CUDA mapping is tested against the CPU path
    on machines without a GPU (`amp-run --amp-cuda-emulate`).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

#endif // AMP_CONVERSION_LINALGTOCUDA_PASSES_TD
