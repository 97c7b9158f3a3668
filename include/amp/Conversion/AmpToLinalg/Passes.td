//===- Passes.td - the amp -> linalg lowering pass ---------*- tablegen -*-===//

#ifndef AMP_CONVERSION_AMPTOLINALG_PASSES_TD
#define AMP_CONVERSION_AMPTOLINALG_PASSES_TD

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

    GEMM-shaped work stays recognisable to a backend that calls a library:
    `linalg.matmul`/`linalg.batch_matmul` stay named ops, and every
    convolution, whatever its element type, is a `linalg.generic` carrying
    backend-neutral markers (`amp_linalg.kind = "conv"`,
    `amp_linalg.conv_strides`, `amp_linalg.conv_dilations`; the op that
    initialises its output carries `amp_linalg.conv_init`). The CPU
    backend's `amp-linalg-to-runtime-calls` calls oneDNN for the fp32 ones.
  }];
  let options = [
    Option<"parallelUnscale", "parallel-unscale", "bool", /*default=*/"false",
           "Lower amp.multi_tensor_unscale_check as two linalg ops per "
           "gradient (an elementwise unscale, then a max-reduction of the "
           "non-finite flags) that a GPU runs in parallel, instead of one "
           "loop per gradient that reads it once (the CPU's choice)">,
    Option<"runtimeChecks", "runtime-checks", "bool", /*default=*/"true",
           "Check values known only at run time (Gather/Scatter indices, "
           "run-time Reduce axes, loss targets): a failed check calls "
           "amp_cpu_check_failed with an id into the module's "
           "amp_linalg.runtime_checks messages (the CPU runtime reports it). "
           "Indices are clamped either way">,
    Option<"hostLoops", "host-loops", "bool", /*default=*/"true",
           "Lower the ops that run as sequential loops around their kernels "
           "(If, Loop, Scan, RNN, GRU, LSTM, NonMaxSuppression). The CUDA target, whose "
           "schedule has no host-side loops yet, turns it off: those ops are "
           "then reported as not lowerable">,
    Option<"targetName", "target-name", "std::string", /*default=*/"\"the CPU backend\"",
           "How the messages about ops without a lowering name the target">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect"
  ];
}

#endif // AMP_CONVERSION_AMPTOLINALG_PASSES_TD
