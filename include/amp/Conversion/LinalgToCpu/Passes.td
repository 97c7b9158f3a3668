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
    dimensions marked by convert-amp-to-linalg (`amp_linalg.kind = "conv"`
    and `"conv_weight_grad"`) with calls to the C functions of
    `lib/Runtime/CpuRuntime.cpp` (`amp_cpu_matmul_f32`, `amp_cpu_conv_f32`,
    `amp_cpu_conv_weight_grad_f32`), which accumulate into their output
    buffer unless the zero fill or bias broadcast right before them is
    folded into the call. Zero padding of the input is folded too. Operands are passed as
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
    single-use producers, and of producers with up to three users whose
    body is at most four cheap arithmetic ops (adds, multiplies, compares,
    selects, casts: recomputing them costs less than a round trip through
    memory, e.g. `x - mean` feeding a variance and a normalization), except into the convolutions and weight gradients
    that `amp-linalg-to-runtime-calls` will call the runtime for (marked
    `amp_linalg.kind = "conv"` or `"conv_weight_grad"`, fp32, 1-3 spatial
    dimensions): their
    operands must stay the fp32 buffers the runtime library reads.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect"];
}

def AmpReuseArgumentBuffers : Pass<"amp-reuse-argument-buffers",
                                   "::mlir::func::FuncOp"> {
  let summary = "Let returned state updates write into their arguments";
  let description = [{
    Runs on tensors, before one-shot bufferization. An all-parallel
    `linalg.generic` whose results only the function's return uses (an
    update of returned state: new parameters, optimizer moments, running
    statistics, the loss scale) and whose destination is a `tensor.empty`
    its body does not read gets, as its destination, an input that is a
    function argument of the same static type read at the same index, when
    nothing reads that argument (or a view of it) after the update.
    Bufferization then writes the update into the argument's buffer instead
    of a new one, and the runtime hands that buffer back without a copy
    (`amp_runtime::callPackedConsuming`).

    Such updates are first moved before the return, keeping their order; an
    update whose old value a later update still reads (SGD with momentum
    recomputes the new velocity inside the parameter's update) is moved
    after that reader, unless it would pass an update that writes into a
    buffer it reads. Users the pass does not know (calls, the return itself,
    ops with regions, destinations) keep the argument untouched. The rewrite
    never changes results: one-shot bufferization's conflict analysis would
    copy an argument that is read after being written.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AmpReturnArgumentsUncloned : Pass<"amp-return-arguments-uncloned",
                                      "::mlir::ModuleOp"> {
  let summary = "Return argument buffers without the deallocation's clones";
  let description = [{
    Runs after the buffer deallocation pipeline, before
    `convert-bufferization-to-memref`. Ownership-based deallocation clones
    every argument buffer a public function returns (the function must own
    its results): an allocation and a copy per call for each state value
    that `amp-reuse-argument-buffers` let an update write in place. In a
    public function that nothing in the module calls, a
    `bufferization.clone` of an argument whose only user is the return is
    replaced by the argument. The CPU runtime (`amp_runtime::callPacked`)
    recognises results that are its own input buffers: it never frees
    them, and a consuming call takes the updated buffer over. Only the CPU
    pipeline runs this pass.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def AmpLinalgToCpuLoops : Pass<"amp-linalg-to-cpu-loops",
                               "::mlir::func::FuncOp"> {
  let summary = "Lower buffer linalg ops to loops, parallel where it pays";
  let description = [{
    Replaces `convert-linalg-to-loops` in the CPU pipeline. Every linalg op
    on buffers becomes a loop nest. An op whose iteration space is large
    enough (at least `min-parallel-work` points, or not known at compile
    time) gets an `scf.parallel` over its parallel dimensions, which
    `amp-outline-parallel-loops` then hands to the runtime's thread pool;
    smaller ops get plain `scf.for` nests. Before lowering, the parallel
    dimensions of a `linalg.generic` are moved outside its reduction
    dimensions, except the innermost dimension, which stays innermost so
    that the inner loop keeps its contiguous accesses for the vectorizer.
    When the reduction dimensions then are the inner ones, the output
    element is read once, carried through the reduction loops as an
    `scf.for` loop value (a register) and written once: the upstream
    lowering loads and stores it at every step, which LLVM cannot keep in a
    register without proving that the output does not alias an input.
    Every output element is still computed by one loop iteration, in the
    same order of its reduction, so results do not depend on the thread
    count. A `memref.copy` into or out of a strided view (a convolution's
    padded input) becomes a `linalg.copy` lowered the same way; contiguous
    copies stay `memref.copy` (one `memcpy`).
  }];
  let options = [
    Option<"minParallelWork", "min-parallel-work", "int64_t",
           /*default=*/"16384",
           "Ops with fewer iteration points (known at compile time) stay "
           "sequential">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AmpOutlineParallelLoops : Pass<"amp-outline-parallel-loops",
                                   "::mlir::ModuleOp"> {
  let summary = "Run outermost scf.parallel loops on the CPU runtime's threads";
  let description = [{
    Each outermost `scf.parallel` without results becomes a function
    `void @<func>_parallel_<N>(i64 begin, i64 end, !llvm.ptr context)` that
    runs the iterations `[begin, end)` of the loop's linearised outer
    dimensions (the fewest outer ones that give at least 64 shares, never
    the innermost, which stays a whole `scf.for` so that it vectorizes; the
    others loop inside each share), and a call
    `amp_cpu_parallel_for(function, context, count, work, minWork)` in its
    place. The context is a stack struct with the captured values (memref
    descriptors, scalars); constants and globals are rematerialised in the
    outlined function. The runtime (`lib/Runtime/Cpu`) splits `[0, count)`
    into one contiguous range per thread of the OpenMP pool that oneDNN
    also uses, or calls the function once when `count * work` is below
    `minWork` (the `min-parallel-work` option) or only one thread is
    available. Loops whose captured values have no LLVM form stay
    sequential.
  }];
  let options = [
    Option<"minParallelWork", "min-parallel-work", "int64_t",
           /*default=*/"16384",
           "Below this many iteration points (count x work per iteration), "
           "the runtime runs the loop on the calling thread">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // AMP_CONVERSION_LINALGTOCPU_PASSES_TD
