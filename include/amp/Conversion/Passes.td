//===- Passes.td - amp lowering passes ---------------------*- tablegen -*-===//

#ifndef AMP_CONVERSION_PASSES_TD
#define AMP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAmpToLinalg : Pass<"convert-amp-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower amp ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every amp op of the module into the upstream tensor-level
    dialects (linalg, tensor, arith, math, scf). Unsigned integer tensors
    become signless ones; the op's original type decides signed or unsigned
    arithmetic.

    Numerics (the semantics the CUDA backend is checked against):

    * an op whose result is fp16 or bf16 computes in fp32 and rounds its
      result once to the storage type (round to nearest even, Inf and NaN
      kept);
    * MatMul, Gemm, Conv and the reductions accumulate in fp32 when marked
      `amp.accumulate = f32` and round once at the end; unmarked, they
      accumulate in the storage type, rounding after every step;
    * amp.cast is an exact IEEE conversion.

    An op that has no lowering yet, or an attribute combination that is not
    lowered yet (e.g. a non-constant Slice start), is reported with the op's
    ONNX name and node, and the pass fails.

    fp32 GEMM-shaped work is marked for the runtime library:
    `linalg.matmul`/`linalg.batch_matmul` stay named ops and convolutions
    carry an `amp_cpu.runtime_call` attribute, so that
    `amp-linalg-to-runtime-calls` can call oneDNN after bufferization.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect"
  ];
}

def AmpLinalgToRuntimeCalls : Pass<"amp-linalg-to-runtime-calls",
                                   "::mlir::ModuleOp"> {
  let summary = "Call the CPU runtime (oneDNN) for fp32 GEMMs and convolutions";
  let description = [{
    Runs after bufferization. Replaces fp32 `linalg.matmul`,
    `linalg.batch_matmul` and convolutions marked by convert-amp-to-linalg
    (`amp_cpu.runtime_call = "conv"`) with calls to the C functions of
    `lib/Runtime/CpuRuntime.cpp` (`amp_cpu_matmul_f32`,
    `amp_cpu_batch_matmul_f32`, `amp_cpu_conv_f32`), which accumulate into
    their output buffer. Operands are passed as unranked memrefs, so strided
    views work.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def AmpFuseElementwise : Pass<"amp-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse elementwise linalg.generic producers into consumers";
  let description = [{
    Upstream elementwise fusion (`populateElementwiseOpsFusionPatterns`),
    except into generics marked `amp_cpu.runtime_call`: their operands must stay
    the fp32 buffers the runtime library reads.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect"];
}

#endif // AMP_CONVERSION_PASSES_TD
