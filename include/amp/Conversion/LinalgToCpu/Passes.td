//===- Passes.td - linalg -> CPU backend passes ------------*- tablegen -*-===//

#ifndef AMP_CONVERSION_LINALGTOCPU_PASSES_TD
#define AMP_CONVERSION_LINALGTOCPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpLinalgToRuntimeCalls : Pass<"amp-linalg-to-runtime-calls",
                                   "::mlir::ModuleOp"> {
  let summary = "Call the CPU runtime (oneDNN) for fp32 GEMMs and convolutions";
  let description = [{
    Runs after bufferization. Replaces fp32 `linalg.matmul`,
    `linalg.batch_matmul` and the fp32 convolutions with 1-3 spatial
    dimensions marked by convert-amp-to-linalg (`amp_linalg.kind = "conv"`)
    with calls to the C functions of `lib/Runtime/CpuRuntime.cpp`
    (`amp_cpu_matmul_f32`, `amp_cpu_batch_matmul_f32`, `amp_cpu_conv_f32`),
    which accumulate into their output buffer. Operands are passed as
    unranked memrefs, so strided views work. Other marked convolutions stay
    loops.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def AmpFuseElementwise : Pass<"amp-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse elementwise linalg.generic producers into consumers";
  let description = [{
    Upstream elementwise fusion (`populateElementwiseOpsFusionPatterns`) of
    single-use producers, except into the convolutions that
    `amp-linalg-to-runtime-calls` will call the runtime for (marked
    `amp_linalg.kind = "conv"`, fp32, 1-3 spatial dimensions): their
    operands must stay the fp32 buffers the runtime library reads.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect"];
}

#endif // AMP_CONVERSION_LINALGTOCPU_PASSES_TD
