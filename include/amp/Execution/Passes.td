//===- Passes.td - passes backed by the CPU backend --------*- tablegen -*-===//

#ifndef AMP_EXECUTION_PASSES_TD
#define AMP_EXECUTION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpFoldConstants : Pass<"amp-fold-constants", "::mlir::ModuleOp"> {
  let summary = "Evaluate ops whose operands are all constants, with the "
                "CPU backend";
  let description = [{
    Every amp op whose operands are constants (or results of such ops) and
    whose results are static tensors of at most `max-elements` elements is
    computed at compile time and replaced by a constant. The values come
    from the CPU backend itself: the ops are cloned into a function that is
    lowered and JIT-compiled like any amp program, so folding has exactly
    the backend's numerics (fp16/bf16 ops compute in fp32 and round once)
    and needs no second evaluator. Integer shape arithmetic is already
    folded by the ops' folders; this pass adds float math (Pow, Sqrt,
    Reciprocal, Div, Exp, Erf, Cast, ...) and everything else the backend
    lowers.

    Not folded: ops with no operands, random ops and Dropout, ops with
    regions, dynamic or larger results. If the backend cannot lower a
    folded group, the group is left as it is (no error).

    What folding materialises is bounded by `max-bytes` (default 64 MiB,
    `ModelLimits::maxFoldBytes`): every constant operand that the group
    reads (the backend holds it as a global, splats included), every
    intermediate value and every result counts, over the whole run of the
    pass. An op that would pass the budget is not folded, nor is anything
    computed from it: it runs at run time. So a small file whose
    `ConstantOfShape` makes a splat of 2^34 elements feeding a `ReduceSum`
    cannot make the compiler materialise 64 GiB.

    The `amp-front-end` pipeline runs it after the import cleanup and again
    after autocast when the tool registers the CPU backend
    (`amp-opt`, `amp-run`); `--amp-no-constant-folding` turns it off.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"65536",
           "Largest result (in elements) that is folded">,
    Option<"maxBytes", "max-bytes", "int64_t",
           /*default=*/"::mlir::amp::ModelLimits().maxFoldBytes",
           "Bytes folding may materialise in one run: constant operands, "
           "intermediate values and results">,
  ];
}

#endif // AMP_EXECUTION_PASSES_TD
