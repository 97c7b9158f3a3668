//===- Passes.td - amp transformation passes ---------------*- tablegen -*-===//

#ifndef AMP_TRANSFORMS_PASSES_TD
#define AMP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpAutocast : Pass<"amp-autocast", "::mlir::ModuleOp"> {
  let summary = "Rewrite an fp32 graph (amp, linalg, TOSA, ...) to mixed precision (fp16 or bf16)";
  let description = [{
    Decides, op by op, whether to compute in fp32 or in a low-precision type
    (fp16 or bf16) and rewrites the graph accordingly.

    Each ONNX operator type is in one of five classes of a policy: allow
    (compute in low precision), deny (compute in fp32), infer (low precision
    when its inputs are), clear (precision-transparent data movement) and
    promote (the widest float input decides, as in PyTorch's type promotion;
    the torch-cuda-fp16 and torch-cpu-bf16 presets use it); ops in no class
    keep fp32 and do not spread it. The decision then follows
    these rules, in order:

    1. deny spreads forward through clear and infer ops: an infer op reached
       from a deny op is denied, and so is a clear op on such a path that
       leads on to a denied op;
    2. infer and clear ops on a path between two allow ops become allow;
    3. allow spreads through clear ops (both directions), and backwards
       into ops computed from weights only;
    4. an infer or clear op with a low-precision input and no input from a
       denied op follows its low-precision inputs; a promote op is low
       precision when all its float inputs are (rank-0 inputs aside).

    What each operand of an op is (follows the op's precision, fixed type,
    any type) comes from the op's PrecisionOpInterface. Integer, bool and
    fixed-type operands are never cast. Constants are converted at compile
    time; an op whose constant operand does not fit the low-precision type
    stays fp32 (or, with `clamp-constants`, the constant is clamped). One
    `amp.cast` is made per (value, type) and placed right after the value's
    definition, so casts of values defined outside a loop body stay outside.
    If/Loop/Scan keep fp32 at their boundaries (one precision per
    loop-carried value); their bodies are rewritten like the main graph.

    Ops of upstream dialects take part through external models of the
    interface (linalg, TOSA, tensor, arith and math; docs/Embedding.md): they
    are classified under the ONNX operator they compute, converted with their
    dialect's own casts (arith.truncf/extf, tosa.cast) and keep fp32
    accumulators for contractions, convolutions and reductions, so the pass
    also runs on programs with no amp op.

    Opt levels (as in Apex): 0 leaves the graph unchanged, 1 uses the
    policy's lists, 2 computes every op in low precision except where it
    needs fp32 accumulation and cannot get it, 3 is pure low precision
    without fp32 accumulation.
  }];
  let options = [
    Option<"type", "type", "std::string", /*default=*/"\"f16\"",
           "Low-precision type: f16 or bf16">,
    Option<"optLevel", "opt-level", "unsigned", /*default=*/"1",
           "0: no change, 1: policy lists, 2: all low except what needs "
           "fp32 accumulation and cannot get it, 3: pure low precision">,
    Option<"policyFile", "policy", "std::string", /*default=*/"",
           "Policy file (YAML or JSON) or preset (torch-cuda-fp16, "
           "torch-cpu-bf16) applied on top of the default">,
    ListOption<"allowOps", "allow", "std::string",
               "ONNX op types added to the allow class">,
    ListOption<"denyOps", "deny", "std::string",
               "ONNX op types added to the deny class">,
    ListOption<"inferOps", "infer", "std::string",
               "ONNX op types added to the infer class">,
    ListOption<"clearOps", "clear", "std::string",
               "ONNX op types added to the clear class">,
    ListOption<"promoteOps", "promote", "std::string",
               "ONNX op types added to the promote class (the widest "
               "float input decides, as in PyTorch's type promotion)">,
    ListOption<"unlistOps", "unlist", "std::string",
               "ONNX op types removed from every class (they keep fp32)">,
    ListOption<"nodeRules", "node-rules", "std::string",
               "Per-node rules `pattern=class`: the node name or a regex "
               "matching the whole name, and allow|deny|infer|clear|promote">,
    Option<"keepIOTypes", "keep-io-types", "bool", /*default=*/"true",
           "Keep the element types of the graph inputs and outputs">,
    Option<"fp32Accumulate", "fp32-accumulate", "bool", /*default=*/"true",
           "Low-precision GEMMs, convolutions, reductions, norms and "
           "softmax accumulate in fp32 (amp.accumulate = f32)">,
    Option<"clampConstants", "clamp-constants", "bool", /*default=*/"false",
           "Clamp constants outside the low-precision range instead of "
           "keeping their consumers in fp32 (warns)">,
    Option<"reportFile", "report", "std::string", /*default=*/"",
           "Write a JSON report (one record per op and a summary)">,
    Option<"reportHtmlFile", "report-html", "std::string", /*default=*/"",
           "Write the report as one self-contained HTML page (summary, "
           "graph by node-name hierarchy, op table)">,
    Option<"dotFile", "dot", "std::string", /*default=*/"",
           "Write the graph coloured by precision (Graphviz dot)">,
    Option<"printSummary", "summary", "bool", /*default=*/"false",
           "Print a one-line summary on stderr">,
    Option<"annotate", "annotate", "bool", /*default=*/"false",
           "Attach each op's reason (as in the report) as an `amp.reason` "
           "string attribute">,
  ];
  let dependentDialects = ["::mlir::amp::AmpDialect"];
}

def AmpCastCleanup : Pass<"amp-cast-cleanup", "::mlir::ModuleOp"> {
  let summary = "Fold cast chains and erase unused constants after autocast";
  let description = [{
    The clean-up after `amp-autocast`: folds every `amp.cast` that can fold
    (exact chains such as f16 -> f32 -> f16 become one cast or none; lossy
    chains stay), erases casts and constants left without users (the fp32
    originals of weights converted to fp16) and releases the data of those
    weights. It visits only casts and
    constants, so it costs far less than a full canonicalization on large
    graphs.
  }];
  let options = [
    Option<"releaseWeights", "release-weights", "bool", /*default=*/"true",
           "Free the data of erased weights. The data belongs to the whole "
           "MLIRContext: turn this off when another module in the context "
           "still uses the fp32 weights (e.g. a copy kept as a reference)">,
  ];
  let dependentDialects = ["::mlir::amp::AmpDialect"];
}

def AmpSortConstants : Pass<"amp-sort-constants", "::mlir::ModuleOp"> {
  let summary = "Put each block's constants first, in the order of their "
                "first use";
  let description = [{
    The last step of the import cleanup. The canonicalizer hoists constants
    to the start of their block in the order it happens to visit them, which
    depends on where they came from (graph initializers are imported first,
    Constant nodes and import-time folds later). This pass moves every
    constant-like op of a block to the block's start, ordered by its first
    use (the ops of the block and of their regions in pre-order, then the
    operand's number; unused ones last, in their order), so that the same
    graph prints the same IR
    however its constants were stored: an ONNX export re-imported gives the
    IR of the first import.
  }];
}

def AmpDecompose : Pass<"amp-decompose", "::mlir::ModuleOp"> {
  let summary = "Replace function ops (Attention, ...) by their graphs";
  let description = [{
    Replaces every op that implements `DecomposableOpInterface` (ONNX's
    function operators: Attention) by the graph of simpler amp ops that
    defines it, also inside If/Loop/Scan bodies and again for function ops
    a decomposition makes. Autocast and the ONNX writer see the op whole;
    the CPU and CUDA lowerings run this first, and the train-step builder
    runs it before the autodiff, so one definition gives the forward
    kernels and the gradients. The decompositions follow the op's
    `amp.accumulate` (see each one's documentation). A case a
    decomposition does not handle is an error at the op.
  }];
}

#endif // AMP_TRANSFORMS_PASSES_TD
