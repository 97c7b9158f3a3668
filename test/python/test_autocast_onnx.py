"""amp-opt's mixed-precision ONNX output (amp-autocast + the ONNX exporter),
checked with onnx.checker, onnxruntime and onnx.reference on real data.

Every model is exported with ``amp-opt model.onnx -o out.onnx`` (fp16 and
default options unless a test says otherwise) and run on the same seeded
inputs as the fp32 original, which onnxruntime (CPU) runs for reference.

Small hand-built models (onnx.helper, opset 17, seeded random weights):
mlp, convnet, transformer (attention block with an erf GELU), resize,
special_ops (TopK, Pow, ReduceSum, Exp, Equal/Where with a -1e9 fill,
Range), indexing (Concat/Slice/Gather with int64 indices), if_branches (an
If whose branches use outer values; both branches run) and loop (a Loop
carrying a float through a MatMul). For each: the checker (full_check)
passes; graph input/output names, element types and shapes, node names
(except nodes folded away), opset imports, producer, graph name and
metadata_props are kept; GEMM weights are FLOAT16 initializers holding the
exact fp16 rounding of the fp32 weight, with no fp32 copy, no unused
initializer and no run-time Cast of an initializer; no Cast reads a Cast
and no two Casts convert one value to the same type; the fixed-type inputs
(Resize roi and scales, Range inputs, TopK K, Pow exponent) keep their
dtype; the report agrees with the model (cast count, per-op precision).

Tolerances. ``err`` = max |out - ref| over one output, ``ref`` = the fp32
model's output in onnxruntime; integer and bool outputs must be equal.

==================================  =================================  ==========
export / runtime                    bound                              measured
==================================  =================================  ==========
small, fp16 / onnxruntime           err <= 3e-3 * max(1, max|ref|)     <= 4.6e-4
small, fp16 / onnx.reference        err <= 3e-3 * max(1, max|ref|)     <= 7.1e-4
small, fp16 I/O (keep-io-types      same, with the fp32 model fed the  <= 5.5e-4
=false) / onnxruntime               fp16-rounded inputs
small, --amp-opt-level=0            err <= 1e-6 * max(1, max|ref|)     0
real models, fp16 / onnxruntime     err / max|ref| <= per-model bound  see below
==================================  =================================  ==========

onnxruntime's CPU provider has fp16 kernels for only some operators and
runs the others in fp32 (it removes the casts between such operators), so
onnx.reference, which computes fp16 operators in numpy fp16, is the check
of fp16 arithmetic for the small models (too slow for the real ones).

Real architectures (torch 1.13 exports, opset 17, batch 1, seeded random
weights; marked ``slow``; skipped without Debian's python3-torch), two
random inputs each, onnxruntime 1.32 CPU. The bounds are 2.5-3.5x the
error measured; the cast bound is 4 + 2 * (graph inputs + outputs) for
the CNNs and about 10 % over the count measured for the transformers:

===============  ========  ========  =======  =======  =====  =====  =======
model            max abs   max|ref|  rel err  bound    casts  bound  fp16
                                                                     FLOPs
===============  ========  ========  =======  =======  =====  =====  =======
resnet18         2.0e-3    5.9       3.4e-4   1e-3     2      8      100 %
mobilenet_v2     2.5e-12   3.3e-9    7.5e-4   2.5e-3   2      8      100 %
efficientnet_b0  3.8e-17   4.4e-14   8.6e-4   3e-3     2      8      100 %
vit_b_16 [1]     3.2e-3    3.1       1.0e-3   3e-3     2      4      100 %
bert_encoder     4.3e-3    4.0       1.1e-3   4e-3     2      4      100 %
gpt2_decoder     7.9e-4    2.3       3.5e-4   1e-3     1      5      100 %
===============  ========  ========  =======  =======  =====  =====  =======

[1] torchvision zero-initialises the ViT head, so its logits are all 0:
the test adds the head's input (the class-token features) as a second
graph output and compares that. torchvision also initialises the ViT MLP
biases with std 1e-6; a few percent of them flush to zero in fp16, which
amp accepts for a weight (it keeps an op in fp32 only when most of a
weight's non-zero values flush; an earlier 1 % rule cost 48 casts here).

With random weights the last activations of mobilenet_v2 (~1e-8) and
efficientnet_b0 are below the fp16 range; the comparison still holds
because onnxruntime's CPU provider computes those operators in fp32 (see
above), so for these two it checks the graph and the fp16 weights, not
fp16 range.
"""

import json
import math
import os
import subprocess

import numpy as np
import onnx
import pytest

from amp_test_utils import has_debian_torch, plain_export, require_module
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ort = require_module("onnxruntime")  # missing: a failure, not a skip

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FLOAT, FLOAT16, BFLOAT16 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16
INT64, BOOL = TensorProto.INT64, TensorProto.BOOL
OPSET = 17

FP16_TOLERANCE = 3e-3  # times max(1, max|ref|)
EXACT_TOLERANCE = 1e-6
GEMM_OPS = ("MatMul", "Gemm", "Conv")
ELEMENT_BYTES = {FLOAT16: 2, BFLOAT16: 2, FLOAT: 4, INT64: 8, BOOL: 1}
# Inputs that are never cast: (op type, input index).
FIXED_TYPE_INPUTS = {"Resize": (1, 2), "Range": (0, 1, 2), "TopK": (1,), "Pow": (1,)}


# ----------------------------------------------------------------------------
# Model builders
# ----------------------------------------------------------------------------


class GraphBuilder:
    """Nodes and seeded random initializers of one graph."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []

    def weight(self, name, shape, scale=None):
        """A random-normal weight; the default scale keeps activations O(1)."""
        if scale is None:
            scale = 1.0 / math.sqrt(max(int(np.prod(shape[1:])), 1))
        data = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.initializers.append(numpy_helper.from_array(data, name))
        return name

    def const(self, name, values, dtype=np.float32):
        self.initializers.append(numpy_helper.from_array(np.asarray(values, dtype=dtype), name))
        return name

    def node(self, op_type, inputs, outputs, name, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=name, **attrs))

    def model(self, name, inputs, outputs):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="amp-autocast-test", producer_version="1.0")
        model.doc_string = f"{name}: built by test_autocast_onnx.py"
        helper.set_model_props(model, {"origin": "test_autocast_onnx", "model": name})
        onnx.checker.check_model(model, full_check=True)
        return model


def vi(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def build_mlp():
    """MatMul + Add, Relu, Gemm(transB), Softmax."""
    b = GraphBuilder(1)
    b.node("MatMul", ["x", b.weight("fc1.weight", [32, 64], 0.2)], ["fc1_mm"], "fc1/MatMul")
    b.node("Add", ["fc1_mm", b.weight("fc1.bias", [64], 0.1)], ["fc1_out"], "fc1/Add")
    b.node("Relu", ["fc1_out"], ["act"], "relu")
    b.node("Gemm", ["act", b.weight("fc2.weight", [10, 64]), b.weight("fc2.bias", [10], 0.1)],
           ["logits"], "fc2/Gemm", transB=1)
    b.node("Softmax", ["logits"], ["probs"], "softmax", axis=-1)
    return b.model("mlp", [vi("x", FLOAT, [4, 32])], [vi("probs", FLOAT, [4, 10])])


def build_convnet():
    """Conv, BatchNormalization, Relu, MaxPool, Conv, GlobalAveragePool, Flatten, Gemm."""
    b = GraphBuilder(2)
    b.node("Conv", ["image", b.weight("conv1.weight", [8, 3, 3, 3]),
                    b.weight("conv1.bias", [8], 0.1)], ["c1"], "conv1/Conv", pads=[1, 1, 1, 1])
    b.node("BatchNormalization",
           ["c1", b.const("bn1.scale", b.rng.uniform(0.5, 1.5, 8)), b.weight("bn1.bias", [8], 0.1),
            b.weight("bn1.mean", [8], 0.1), b.const("bn1.var", b.rng.uniform(0.5, 2.0, 8))],
           ["bn"], "bn1/BatchNormalization", epsilon=1e-5)
    b.node("Relu", ["bn"], ["r1"], "relu1")
    b.node("MaxPool", ["r1"], ["p1"], "pool1/MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    b.node("Conv", ["p1", b.weight("conv2.weight", [16, 8, 3, 3]),
                    b.weight("conv2.bias", [16], 0.1)], ["c2"], "conv2/Conv", pads=[1, 1, 1, 1])
    b.node("Relu", ["c2"], ["r2"], "relu2")
    b.node("GlobalAveragePool", ["r2"], ["gap"], "gap")
    b.node("Flatten", ["gap"], ["flat"], "flatten", axis=1)
    b.node("Gemm", ["flat", b.weight("fc.weight", [10, 16]), b.weight("fc.bias", [10], 0.1)],
           ["logits"], "fc/Gemm", transB=1)
    return b.model("convnet", [vi("image", FLOAT, [2, 3, 16, 16])], [vi("logits", FLOAT, [2, 10])])


def build_transformer():
    """Pre-norm encoder block (d=32, 4 heads, seq 8): attention, then an erf-GELU MLP."""
    b = GraphBuilder(3)
    d, heads, seq = 32, 4, 8
    head_dim = d // heads
    b.const("ln1.gamma", 1 + 0.1 * b.rng.standard_normal(d))
    b.const("ln1.beta", 0.1 * b.rng.standard_normal(d))
    b.node("LayerNormalization", ["x", "ln1.gamma", "ln1.beta"], ["ln1"],
           "ln1/LayerNormalization", axis=-1, epsilon=1e-5)
    b.const("heads_shape", [1, seq, heads, head_dim], np.int64)
    b.const("merge_shape", [1, seq, d], np.int64)
    for proj in "qkv":
        b.node("MatMul", ["ln1", b.weight(f"attn.{proj}.weight", [d, d])], [f"{proj}_mm"],
               f"attn/{proj}/MatMul")
        b.node("Add", [f"{proj}_mm", b.weight(f"attn.{proj}.bias", [d], 0.1)], [f"{proj}_lin"],
               f"attn/{proj}/Add")
        b.node("Reshape", [f"{proj}_lin", "heads_shape"], [f"{proj}_heads"],
               f"attn/{proj}/Reshape")
        perm = [0, 2, 3, 1] if proj == "k" else [0, 2, 1, 3]  # K comes out transposed
        b.node("Transpose", [f"{proj}_heads"], [f"{proj}_t"], f"attn/{proj}/Transpose", perm=perm)
    b.node("MatMul", ["q_t", "k_t"], ["scores"], "attn/scores/MatMul")
    b.const("sqrt_head_dim", np.float32(math.sqrt(head_dim)))
    b.node("Div", ["scores", "sqrt_head_dim"], ["scaled"], "attn/scale/Div")
    b.node("Softmax", ["scaled"], ["probs"], "attn/Softmax", axis=-1)
    b.node("MatMul", ["probs", "v_t"], ["context"], "attn/context/MatMul")
    b.node("Transpose", ["context"], ["context_t"], "attn/merge/Transpose", perm=[0, 2, 1, 3])
    b.node("Reshape", ["context_t", "merge_shape"], ["merged"], "attn/merge/Reshape")
    b.node("MatMul", ["merged", b.weight("attn.out.weight", [d, d])], ["o_mm"], "attn/out/MatMul")
    b.node("Add", ["o_mm", b.weight("attn.out.bias", [d], 0.1)], ["o"], "attn/out/Add")
    b.node("Add", ["x", "o"], ["res1"], "residual1/Add")
    b.const("ln2.gamma", 1 + 0.1 * b.rng.standard_normal(d))
    b.const("ln2.beta", 0.1 * b.rng.standard_normal(d))
    b.node("LayerNormalization", ["res1", "ln2.gamma", "ln2.beta"], ["ln2"],
           "ln2/LayerNormalization", axis=-1, epsilon=1e-5)
    b.node("MatMul", ["ln2", b.weight("mlp.fc1.weight", [d, 4 * d])], ["f1"], "mlp/fc1/MatMul")
    b.node("Add", ["f1", b.weight("mlp.fc1.bias", [4 * d], 0.1)], ["f1b"], "mlp/fc1/Add")
    # GELU(x) = x * (1 + erf(x / sqrt(2))) * 0.5, as torch exports it.
    b.const("sqrt2", np.float32(math.sqrt(2.0)))
    b.const("one", np.float32(1.0))
    b.const("half", np.float32(0.5))
    b.node("Div", ["f1b", "sqrt2"], ["g_div"], "mlp/gelu/Div")
    b.node("Erf", ["g_div"], ["g_erf"], "mlp/gelu/Erf")
    b.node("Add", ["g_erf", "one"], ["g_add"], "mlp/gelu/Add")
    b.node("Mul", ["f1b", "g_add"], ["g_mul"], "mlp/gelu/Mul")
    b.node("Mul", ["g_mul", "half"], ["gelu"], "mlp/gelu/Mul_1")
    b.node("MatMul", ["gelu", b.weight("mlp.fc2.weight", [4 * d, d])], ["f2"], "mlp/fc2/MatMul")
    b.node("Add", ["f2", b.weight("mlp.fc2.bias", [d], 0.1)], ["f2b"], "mlp/fc2/Add")
    b.node("Add", ["res1", "f2b"], ["y"], "residual2/Add")
    return b.model("transformer_block", [vi("x", FLOAT, [1, seq, d])],
                   [vi("y", FLOAT, [1, seq, d])])


def build_resize():
    """Conv, Resize (linear, fp32 roi and scales), Conv."""
    b = GraphBuilder(4)
    b.node("Conv", ["image", b.weight("conv1.weight", [4, 3, 3, 3]),
                    b.weight("conv1.bias", [4], 0.1)], ["c1"], "conv1/Conv", pads=[1, 1, 1, 1])
    b.const("resize.roi", [], np.float32)
    b.const("resize.scales", [1.0, 1.0, 2.0, 2.0])
    b.node("Resize", ["c1", "resize.roi", "resize.scales"], ["up"], "upsample/Resize",
           mode="linear")
    b.node("Conv", ["up", b.weight("conv2.weight", [2, 4, 3, 3]),
                    b.weight("conv2.bias", [2], 0.1)], ["y"], "conv2/Conv", pads=[1, 1, 1, 1])
    return b.model("resize", [vi("image", FLOAT, [1, 3, 8, 8])], [vi("y", FLOAT, [1, 2, 16, 16])])


def build_special_ops():
    """TopK, Pow, ReduceSum, Exp, Equal/Where (a -1e9 fill) and Range around MatMuls."""
    b = GraphBuilder(5)
    b.node("MatMul", ["x", b.weight("proj.weight", [16, 16])], ["h"], "proj/MatMul")
    b.const("topk.k", [4], np.int64)
    b.node("TopK", ["h", "topk.k"], ["top_values", "top_indices"], "topk/TopK", axis=-1)
    b.const("pow.exponent", np.float32(2.0))
    b.node("Pow", ["top_values", "pow.exponent"], ["squares"], "square/Pow")
    b.const("sum.axes", [1], np.int64)
    b.node("ReduceSum", ["squares", "sum.axes"], ["sum_squares"], "sum_squares/ReduceSum",
           keepdims=1)
    b.node("Exp", ["h"], ["exp_h"], "exp/Exp")
    # masked_fill(x == 0, -1e9): the fill value does not fit fp16.
    b.const("zero", np.float32(0.0))
    b.const("neg_big", np.float32(-1e9))
    b.node("Equal", ["x", "zero"], ["is_zero"], "mask/Equal")
    b.node("Where", ["is_zero", "neg_big", "h"], ["masked"], "mask/Where")
    b.node("ReduceMax", ["masked"], ["masked_max"], "mask/ReduceMax", axes=[1], keepdims=1)
    # Range(start, limit, delta) with a limit computed at run time.
    b.const("range.start", np.float32(0.0))
    b.const("range.delta", np.float32(0.5))
    b.node("ReduceMax", ["limit_in"], ["limit"], "limit/ReduceMax", keepdims=0)
    b.node("Range", ["range.start", "limit", "range.delta"], ["ramp"], "ramp/Range")
    b.node("MatMul", ["ramp", "ramp"], ["ramp_dot"], "ramp/MatMul")
    return b.model(
        "special_ops", [vi("x", FLOAT, [4, 16]), vi("limit_in", FLOAT, [3])],
        [vi("sum_squares", FLOAT, [4, 1]), vi("top_indices", INT64, [4, 4]),
         vi("exp_h", FLOAT, [4, 16]), vi("masked_max", FLOAT, [4, 1]),
         vi("ramp_dot", FLOAT, [])])


def build_indexing():
    """Concat, Slice and Gather (int64 indices, an embedding lookup) around MatMuls."""
    b = GraphBuilder(6)
    b.node("MatMul", ["x", b.weight("a.weight", [8, 12])], ["ha"], "a/MatMul")
    b.node("MatMul", ["x", b.weight("b.weight", [8, 12])], ["hb"], "b/MatMul")
    b.node("Concat", ["ha", "hb"], ["cat"], "cat/Concat", axis=1)
    b.const("slice.starts", [2], np.int64)
    b.const("slice.ends", [20], np.int64)
    b.const("slice.axes", [1], np.int64)
    b.const("slice.steps", [2], np.int64)
    b.node("Slice", ["cat", "slice.starts", "slice.ends", "slice.axes", "slice.steps"], ["sl"],
           "slice/Slice")
    b.const("gather.indices", [[0, 3], [5, 8]], np.int64)
    b.node("Gather", ["sl", "gather.indices"], ["g"], "gather/Gather", axis=1)
    b.node("Gather", [b.weight("embed.weight", [10, 6]), "ids"], ["emb"], "embed/Gather", axis=0)
    b.const("flat_shape", [6, 4], np.int64)
    b.node("Reshape", ["g", "flat_shape"], ["g2"], "g/Reshape")
    b.node("MatMul", ["emb", "g2"], ["y"], "out/MatMul")
    return b.model("indexing", [vi("x", FLOAT, [6, 8]), vi("ids", INT64, [5])],
                   [vi("y", FLOAT, [5, 4])])


def build_if_branches():
    """An If whose branches use outer values: a MatMul output and weights."""
    b = GraphBuilder(7)
    b.node("MatMul", ["x", b.weight("pre.weight", [8, 8])], ["h"], "pre/MatMul")
    then_weight = b.weight("then.weight", [8, 8])
    b.const("else.scale", np.float32(0.5))
    then_graph = helper.make_graph(
        [helper.make_node("MatMul", ["h", then_weight], ["t_mm"], name="then/MatMul"),
         helper.make_node("Relu", ["t_mm"], ["t_out"], name="then/Relu")],
        "then_branch", [], [vi("t_out", FLOAT, [4, 8])])
    else_graph = helper.make_graph(
        [helper.make_node("Mul", ["h", "else.scale"], ["e_mul"], name="else/Mul"),
         helper.make_node("Exp", ["e_mul"], ["e_out"], name="else/Exp")],
        "else_branch", [], [vi("e_out", FLOAT, [4, 8])])
    b.node("If", ["cond"], ["branch"], "branch/If", then_branch=then_graph,
           else_branch=else_graph)
    b.node("MatMul", ["branch", b.weight("post.weight", [8, 4])], ["y"], "post/MatMul")
    return b.model("if_branches", [vi("x", FLOAT, [4, 8]), vi("cond", BOOL, [])],
                   [vi("y", FLOAT, [4, 4])])


def build_loop():
    """A Loop carrying a float state through MatMul + Add + Tanh (outer weights)."""
    b = GraphBuilder(8)
    weight = b.weight("cell.weight", [8, 8])
    bias = b.weight("cell.bias", [8], 0.1)
    b.const("trip_count", 3, np.int64)
    b.const("keep_going", True, np.bool_)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["state_in", weight], ["b_mm"], name="cell/MatMul"),
         helper.make_node("Add", ["b_mm", bias], ["b_add"], name="cell/Add"),
         helper.make_node("Tanh", ["b_add"], ["state_out"], name="cell/Tanh"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="cell/cond")],
        "loop_body",
        [vi("iteration", INT64, []), vi("cond_in", BOOL, []), vi("state_in", FLOAT, [2, 8])],
        [vi("cond_out", BOOL, []), vi("state_out", FLOAT, [2, 8])])
    b.node("Loop", ["trip_count", "keep_going", "x"], ["final"], "rnn/Loop", body=body)
    b.node("MatMul", ["final", b.weight("head.weight", [8, 3])], ["y"], "head/MatMul")
    return b.model("loop", [vi("x", FLOAT, [2, 8])], [vi("y", FLOAT, [2, 3])])


SMALL_MODELS = {
    "mlp": build_mlp,
    "convnet": build_convnet,
    "transformer": build_transformer,
    "resize": build_resize,
    "special_ops": build_special_ops,
    "indexing": build_indexing,
    "if_branches": build_if_branches,
    "loop": build_loop,
}
# Original nodes that may disappear (folded away by the canonicalizer).
FOLDED_NODES = {"loop": {"cell/cond"}}  # Identity of the loop condition


def make_feeds(model, seed=0):
    """Seeded inputs for ``model``'s graph inputs (a list of feed dicts)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        shape = [dim.dim_value or 1 for dim in tensor_type.shape.dim]
        if tensor_type.elem_type == FLOAT:
            data = rng.standard_normal(shape).astype(np.float32)
            if value.name == "limit_in":  # Range limit: 0.5 .. 3.5
                data = rng.uniform(0.5, 3.5, shape).astype(np.float32)
            if model.graph.name == "special_ops" and value.name == "x":
                data[::2, ::3] = 0.0  # exercises the Equal/Where mask
            feeds[value.name] = data
        elif tensor_type.elem_type == INT64:
            feeds[value.name] = rng.integers(0, 10, shape).astype(np.int64)
        elif tensor_type.elem_type == BOOL:
            feeds[value.name] = np.array(True)
        else:
            raise AssertionError(f"no feed for {value.name}")
    runs = [feeds]
    for name, value in feeds.items():  # both branches of an If
        if value.dtype == np.bool_:
            runs.append({**feeds, name: np.array(not value)})
    return runs


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


class Export:
    """One amp-opt run: the original model, the exported model, its report."""

    def __init__(self, original, path, model, report, stderr):
        self.original = original
        self.path = path
        self.model = model
        self.report = report
        self.stderr = stderr


def export(amp_opt, model, folder, name, *flags):
    """Save ``model`` under ``folder`` and export it with amp-opt; return an :class:`Export`."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"{name}.onnx"
    if isinstance(model, onnx.ModelProto):
        onnx.save_model(model, source)
    else:
        source = model
        model = onnx.load(str(source), load_external_data=False)
    out = folder / f"{name}.amp.onnx"
    report = folder / f"{name}.report.json"
    proc = amp_opt.run(source, "-o", out, f"--amp-report={report}", *flags, timeout=300)
    assert proc.returncode == 0, f"amp-opt {name} {flags}: exit {proc.returncode}\n{proc.stderr}"
    assert out.exists()
    with open(report, encoding="utf-8") as f:
        report_data = json.load(f)
    exported = onnx.load(str(out), load_external_data=False)
    return Export(model, out, exported, report_data, proc.stderr)


def graphs(graph):
    """``graph`` and every subgraph in it, outermost first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from graphs(sub)


def all_nodes(model):
    return [node for graph in graphs(model.graph) for node in graph.node]


def all_initializers(model):
    return {t.name: t for graph in graphs(model.graph) for t in graph.initializer}


def node_by_name(model):
    nodes = {}
    for node in all_nodes(model):
        assert node.name not in nodes, f"two nodes named {node.name!r}"
        nodes[node.name] = node
    return nodes


def consumers(model):
    """Value name -> nodes that read it (a subgraph's use counts for its node too)."""
    result = {}
    for node in all_nodes(model):
        for name in node.input:
            if name:
                result.setdefault(name, []).append(node)
    return result


def value_types(model):
    """Value name -> ONNX element type, through onnx shape inference (subgraphs too)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    types = {}
    for graph in graphs(inferred.graph):
        for value in list(graph.input) + list(graph.output) + list(graph.value_info):
            if value.type.HasField("tensor_type"):
                types[value.name] = value.type.tensor_type.elem_type
        for tensor in graph.initializer:
            types[tensor.name] = tensor.data_type
    return types


def tensor_bits(tensor):
    """The stored bits of a 16-bit float initializer, as uint16."""
    assert tensor.data_type in (FLOAT16, BFLOAT16), tensor.name
    if tensor.raw_data:
        return np.frombuffer(tensor.raw_data, dtype=np.uint16).reshape(tuple(tensor.dims))
    return np.asarray(tensor.int32_data, dtype=np.uint16).reshape(tuple(tensor.dims))


def to_bf16_bits(values):
    """fp32 -> bf16 bits, round to nearest even (NaN-free input)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def low_bits(values, elem_type):
    if elem_type == FLOAT16:
        return values.astype(np.float16).view(np.uint16)
    return to_bf16_bits(values)


def session(path):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run(path, feeds):
    sess = session(path)
    names = [o.name for o in sess.get_outputs()]
    return [dict(zip(names, sess.run(None, feed))) for feed in feeds]


def errors(reference, result):
    """Output name -> (max abs error, max |ref|) for float outputs; ints must be equal."""
    measured = {}
    for name, ref in reference.items():
        got = result[name]
        assert got.shape == ref.shape, f"{name}: shape {got.shape} != {ref.shape}"
        if not np.issubdtype(ref.dtype, np.floating):
            np.testing.assert_array_equal(got, ref, err_msg=name)
            continue
        assert np.isfinite(got).all() == np.isfinite(ref).all(), f"{name}: inf/nan differ"
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        measured[name] = (float(diff.max(initial=0.0)), float(np.abs(ref).max(initial=0.0)))
    return measured


def assert_close(reference_runs, result_runs, tolerance, context):
    for reference, result in zip(reference_runs, result_runs, strict=True):
        for name, (err, scale) in errors(reference, result).items():
            bound = tolerance * max(1.0, scale)
            assert err <= bound, f"{context}: {name}: max abs error {err:.3g} > {bound:.3g}"


def io_signature(values):
    return [(v.name, v.type.tensor_type.elem_type,
             [d.dim_value for d in v.type.tensor_type.shape.dim]) for v in values]


def report_ops(report):
    """Node name -> report record."""
    records = {}
    for record in report["ops"]:
        assert record["node"] not in records, f"two report records for {record['node']!r}"
        records[record["node"]] = record
    return records


def count_amp_casts(model):
    return sum(1 for node in all_nodes(model) if node.op_type == "Cast" and "amp_cast" in node.name)


# ----------------------------------------------------------------------------
# Small models, default options (fp16)
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small(amp_opt, tmp_path_factory):
    """``small(name, *flags)``: the cached :class:`Export` of a small model."""
    root = tmp_path_factory.mktemp("autocast-small")
    cache = {}

    def get(name, *flags):
        key = (name, flags)
        if key not in cache:
            folder = root / f"{name}-{len(cache)}"
            cache[key] = export(amp_opt, SMALL_MODELS[name](), folder, name, *flags)
        return cache[key]

    return get


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """``references(name)``: (feeds, fp32 onnxruntime outputs) of a small model."""
    root = tmp_path_factory.mktemp("autocast-ref")
    cache = {}

    def get(name):
        if name not in cache:
            model = SMALL_MODELS[name]()
            path = root / f"{name}.onnx"
            onnx.save_model(model, path)
            feeds = make_feeds(model)
            cache[name] = (feeds, run(path, feeds))
        return cache[name]

    return get


MODEL_NAMES = list(SMALL_MODELS)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_checker_accepts_export(small, name):
    result = small(name)
    onnx.checker.check_model(str(result.path), full_check=True)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_io_names_and_types_kept(small, name):
    result = small(name)
    assert io_signature(result.model.graph.input) == io_signature(result.original.graph.input)
    assert io_signature(result.model.graph.output) == io_signature(result.original.graph.output)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_node_names_kept(small, name):
    result = small(name)
    exported = node_by_name(result.model)
    original = node_by_name(result.original)
    folded = FOLDED_NODES.get(name, set())
    missing = sorted(set(original) - set(exported) - folded)
    assert not missing, f"original nodes missing from the export: {missing}"
    for node_name, node in original.items():
        if node_name in exported:
            assert exported[node_name].op_type == node.op_type, node_name
    gemms = [n for n, node in original.items() if node.op_type in GEMM_OPS]
    assert gemms and all(n in exported for n in gemms)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_node_outputs_kept(small, name):
    """Exported nodes have the outputs the original nodes had, no unused extra ones."""
    result = small(name)
    exported = node_by_name(result.model)
    for node_name, node in node_by_name(result.original).items():
        if node_name in exported:
            assert len(exported[node_name].output) == len(node.output), \
                f"{node_name}: {list(exported[node_name].output)}"


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_model_metadata_kept(small, name):
    result = small(name)
    model, original = result.model, result.original
    opsets = lambda m: sorted((o.domain, o.version) for o in m.opset_import)  # noqa: E731
    assert opsets(model) == opsets(original)
    assert model.producer_name == original.producer_name
    assert model.producer_version == original.producer_version
    assert model.graph.name == original.graph.name
    props = lambda m: {p.key: p.value for p in m.metadata_props}  # noqa: E731
    assert props(model) == props(original)
    assert model.ir_version >= original.ir_version


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_onnxruntime_matches_fp32(small, references, name):
    result = small(name)
    feeds, reference = references(name)
    assert_close(reference, run(result.path, feeds), FP16_TOLERANCE, name)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_reference_evaluator_matches_fp32(small, references, name):
    """onnx.reference computes fp16 ops in numpy fp16 (no fp32 fallback as in ORT's CPU
    provider), so this checks the error of real fp16 arithmetic."""
    result = small(name)
    feeds, reference = references(name)
    evaluator = ReferenceEvaluator(str(result.path))
    outputs = [dict(zip(evaluator.output_names, evaluator.run(None, feed))) for feed in feeds]
    assert_close(reference, outputs, FP16_TOLERANCE, name)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_gemm_ops_run_in_fp16(small, name):
    """Every MatMul/Gemm/Conv reads fp16 values, as the report says."""
    result = small(name)
    types = value_types(result.model)
    records = report_ops(result.report)
    for node in all_nodes(result.model):
        if node.op_type not in GEMM_OPS:
            continue
        assert records[node.name]["precision"] == "f16", records[node.name]
        for value in node.input:
            if value:
                assert types[value] == FLOAT16, f"{node.name}: input {value} is not FLOAT16"


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_weights_stored_in_fp16(small, name):
    """GEMM weights are FLOAT16 initializers holding the fp16 rounding of the
    original; no fp32 copy of a weight used only in fp16 is left, no
    initializer is unused, and no Cast converts an initializer at run time."""
    result = small(name)
    exported_inits = all_initializers(result.model)
    original_inits = all_initializers(result.original)
    exported_nodes = node_by_name(result.model)
    for node in all_nodes(result.original):
        if node.op_type not in GEMM_OPS:
            continue
        for index, value in enumerate(node.input):
            if value not in original_inits:
                continue
            stored_name = exported_nodes[node.name].input[index]
            assert stored_name in exported_inits, f"{node.name}: {value} is not an initializer"
            stored = exported_inits[stored_name]
            assert stored.data_type == FLOAT16, f"{node.name}: {stored_name} is not FLOAT16"
            expected = low_bits(numpy_helper.to_array(original_inits[value]), FLOAT16)
            np.testing.assert_array_equal(tensor_bits(stored), expected, err_msg=stored_name)

    uses = consumers(result.model)
    for tensor_name, tensor in exported_inits.items():
        assert uses.get(tensor_name), f"initializer {tensor_name} is not used"
        for node in uses[tensor_name]:
            assert node.op_type != "Cast", f"{node.name} casts initializer {tensor_name}"

    # A large fp32 weight whose consumers all run in fp16 must not survive in fp32.
    records = report_ops(result.report)
    original_uses = consumers(result.original)
    exported_fp32 = {(tuple(t.dims), numpy_helper.to_array(t).tobytes())
                     for t in exported_inits.values() if t.data_type == FLOAT}
    for tensor_name, tensor in original_inits.items():
        array = numpy_helper.to_array(tensor)
        if tensor.data_type != FLOAT or array.size <= 16:
            continue
        if all(records.get(n.name, {}).get("precision") == "f16"
               for n in original_uses.get(tensor_name, [])):
            assert (tuple(tensor.dims), array.tobytes()) not in exported_fp32, \
                f"fp32 copy of {tensor_name} left although only fp16 ops use it"


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_casts_are_minimal(small, name):
    """No cast chains, no duplicate casts; fixed-type inputs keep their dtype."""
    result = small(name)
    nodes = all_nodes(result.model)
    cast_outputs = {node.output[0] for node in nodes if node.op_type == "Cast"}
    seen = {}
    for node in nodes:
        if node.op_type != "Cast":
            continue
        assert node.input[0] not in cast_outputs, f"{node.name} casts a Cast's output"
        key = (node.input[0], helper.get_attribute_value(node.attribute[0]))
        assert key not in seen, f"{node.name} and {seen[key]} cast {key[0]} to the same type"
        seen[key] = node.name
    assert count_amp_casts(result.model) == len(seen) - sum(
        1 for n in all_nodes(result.original) if n.op_type == "Cast")

    original_types = value_types(result.original)
    exported_types = value_types(result.model)
    exported = node_by_name(result.model)
    checked = 0
    for node in all_nodes(result.original):
        for index in FIXED_TYPE_INPUTS.get(node.op_type, ()):
            if index >= len(node.input) or not node.input[index]:
                continue
            new_input = exported[node.name].input[index]
            assert exported_types[new_input] == original_types[node.input[index]], \
                f"{node.name}: input {index} changed type"
            assert new_input not in cast_outputs, f"{node.name}: input {index} is cast"
            checked += 1
    expected = {"resize": 2, "special_ops": 5}.get(name, 0)
    assert checked == expected


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_report_matches_export(small, name):
    """The report has one record per op, and what it says matches the model."""
    result = small(name)
    report = result.report
    assert report["type"] == "f16" and report["opt_level"] == 1
    summary = report["summary"]
    assert summary["casts"] == count_amp_casts(result.model)
    records = report_ops(report)
    assert sum(summary["ops"].values()) == len(records)
    for record in records.values():
        assert record["precision"] in {"f16", "f32", "unchanged"}, record
    original = node_by_name(result.original)
    expected = set(original) - FOLDED_NODES.get(name, set())
    assert set(records) == expected
    assert summary["ops"]["f16"] == sum(r["precision"] == "f16" for r in records.values())

    exported = node_by_name(result.model)
    original_types = value_types(result.original)
    exported_types = value_types(result.model)
    for node_name, record in records.items():
        output = original[node_name].output[0]
        if original_types.get(output) != FLOAT:
            continue
        got = exported_types[exported[node_name].output[0]]
        want = {"f16": FLOAT16, "f32": FLOAT, "unchanged": FLOAT}[record["precision"]]
        assert got == want, f"{node_name}: report says {record['precision']}, output type {got}"
    assert 0.9 <= summary["flops_low_precision_share"] <= 1.0


def test_constant_that_does_not_fit_keeps_its_op_in_fp32(small, references):
    """Where(mask, -1e9, x) stays fp32 (-1e9 overflows fp16); the output has no -inf."""
    result = small("special_ops")
    records = report_ops(result.report)
    assert records["mask/Where"]["precision"] == "f32"
    assert "does not fit" in records["mask/Where"]["reason"]
    assert records["square/Pow"]["precision"] == "f32"  # deny list
    assert records["exp/Exp"]["precision"] == "f32"
    assert records["sum_squares/ReduceSum"]["precision"] == "f32"
    feeds, reference = references("special_ops")
    for outputs in run(result.path, feeds):
        assert np.isfinite(outputs["masked_max"]).all()


# ----------------------------------------------------------------------------
# Options
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in MODEL_NAMES if n != "special_ops"])
def test_bf16_at_opset_22(small, name):
    result = small(name, "--amp-type=bf16", "--amp-export-opset=22")
    assert result.report["type"] == "bf16"
    assert [(o.domain, o.version) for o in result.model.opset_import] == [("", 22)]
    onnx.checker.check_model(str(result.path), full_check=True)
    original_inits = all_initializers(result.original)
    exported_inits = all_initializers(result.model)
    assert not [t.name for t in exported_inits.values() if t.data_type == FLOAT16]
    exported = node_by_name(result.model)
    weights = 0
    for node in all_nodes(result.original):
        if node.op_type not in GEMM_OPS:
            continue
        for index, value in enumerate(node.input):
            if value in original_inits:
                stored = exported_inits[exported[node.name].input[index]]
                assert stored.data_type == BFLOAT16, stored.name
                expected = low_bits(numpy_helper.to_array(original_inits[value]), BFLOAT16)
                np.testing.assert_array_equal(tensor_bits(stored), expected)
                weights += 1
    assert weights > 0
    assert io_signature(result.model.graph.input) == io_signature(result.original.graph.input)


def test_bf16_at_opset_17_is_refused(amp_opt, tmp_path):
    """ONNX allows bfloat16 Conv only from opset 22: the export says so and
    writes nothing."""
    source = tmp_path / "convnet.onnx"
    onnx.save_model(build_convnet(), source)
    out = tmp_path / "convnet.bf16.onnx"
    proc = amp_opt.run(source, "-o", out, "--amp-type=bf16")
    assert proc.returncode != 0
    assert ("ONNX Conv at opset 17 does not accept bfloat16 (it does from opset 22: "
            "use --amp-export-opset=22 or newer") in proc.stderr, proc.stderr
    assert not out.exists()


def test_bf16_topk_needs_opset_24(amp_opt, tmp_path):
    """TopK accepts bfloat16 from opset 24: at 22 the export is refused, at 24
    the model passes the checker."""
    source = tmp_path / "special.onnx"
    onnx.save_model(build_special_ops(), source)
    out = tmp_path / "special.bf16.onnx"
    proc = amp_opt.run(source, "-o", out, "--amp-type=bf16", "--amp-export-opset=22")
    assert proc.returncode != 0 and "ONNX TopK at opset 22 does not accept bfloat16" in proc.stderr
    assert not out.exists()
    proc = amp_opt.run(source, "-o", out, "--amp-type=bf16", "--amp-export-opset=24")
    assert proc.returncode == 0, proc.stderr
    onnx.checker.check_model(str(out), full_check=True)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fp16_io_types(small, name):
    """--amp-keep-io-types=false: float inputs become FLOAT16; each float output
    takes the precision of the op that makes it (docs/Autocast.md), as the
    report gives it."""
    result = small(name, "--amp-keep-io-types=false")
    records = report_ops(result.report)
    producers = {out: node.name for node in result.original.graph.node for out in node.output}

    def output_type(value):
        precision = records[producers[value.name]]["precision"]
        return FLOAT16 if precision == "f16" else FLOAT

    inputs = [(n, FLOAT16 if t == FLOAT else t, s)
              for n, t, s in io_signature(result.original.graph.input)]
    outputs = [(n, output_type(v) if t == FLOAT else t, s)
               for (n, t, s), v in zip(io_signature(result.original.graph.output),
                                       result.original.graph.output)]
    assert io_signature(result.model.graph.input) == inputs
    assert io_signature(result.model.graph.output) == outputs
    if name != "special_ops":  # its outputs but one come from fp32 ops
        assert all(t != FLOAT for _, t, _ in outputs)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fp16_io_runs(small, name):
    """--amp-keep-io-types=false: the model is valid and ORT runs it on fp16 feeds."""
    result = small(name, "--amp-keep-io-types=false")
    onnx.checker.check_model(str(result.path), full_check=True)
    input_types = {v.name: v.type.tensor_type.elem_type for v in result.model.graph.input}
    feeds = make_feeds(result.original)
    rounded = [{k: v.astype(np.float16).astype(np.float32) if v.dtype == np.float32 else v
                for k, v in feed.items()} for feed in feeds]
    half = [{k: v.astype(np.float16) if input_types[k] == FLOAT16 else v
             for k, v in feed.items()} for feed in feeds]
    assert any(t == FLOAT16 for t in input_types.values())
    reference = run(result.path.parent / f"{name}.onnx", rounded)
    outputs = run(result.path, half)
    output_types = {v.name: v.type.tensor_type.elem_type for v in result.model.graph.output}
    for values in outputs:
        for output, elem_type in output_types.items():
            want = {FLOAT16: np.float16, FLOAT: np.float32}.get(elem_type)
            if want:
                assert values[output].dtype == want
    upcast = [{k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in o.items()}
              for o in outputs]
    assert_close(reference, upcast, FP16_TOLERANCE, name)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_opt_level_0_changes_nothing(small, references, name):
    result = small(name, "--amp-opt-level=0")
    onnx.checker.check_model(str(result.path), full_check=True)
    assert not [n.name for n in all_nodes(result.model) if n.op_type == "Cast"]
    types = {t.data_type for t in all_initializers(result.model).values()}
    assert FLOAT16 not in types and BFLOAT16 not in types
    assert FLOAT in types
    assert all(r["precision"] != "f16" for r in result.report["ops"])
    assert result.report["summary"]["casts"] == 0
    assert io_signature(result.model.graph.input) == io_signature(result.original.graph.input)
    feeds, reference = references(name)
    assert_close(reference, run(result.path, feeds), EXACT_TOLERANCE, name)


@pytest.mark.parametrize("name", ["mlp", "convnet", "transformer"])
def test_external_data(small, references, name):
    result = small(name, "--amp-external-data")
    data = result.path.parent / (result.path.name + ".data")
    assert data.exists() and data.stat().st_size > 0
    external = [t.name for t in all_initializers(result.model).values()
                if t.data_location == TensorProto.EXTERNAL]
    assert external, "no initializer stored externally"
    inline = small(name)  # the same export with every weight in the model file
    assert inline.path.stat().st_size - result.path.stat().st_size >= 1024
    for tensor in all_initializers(result.model).values():  # 1 KiB and up go out
        size = int(np.prod(tensor.dims)) * ELEMENT_BYTES[tensor.data_type]
        assert (tensor.name in external) == (size >= 1024), tensor.name
    onnx.checker.check_model(str(result.path), full_check=True)
    inline = onnx.load(str(result.path))  # reads the data file
    for tensor in all_initializers(inline).values():
        if tensor.name in external:
            assert tensor.data_type in (FLOAT16, FLOAT, INT64, BOOL)
    feeds, reference = references(name)
    assert_close(reference, run(result.path, feeds), FP16_TOLERANCE, name)
    # The weights are the same as in the single-file export.
    single = all_initializers(onnx.load(str(small(name).path)))
    for tensor in all_initializers(inline).values():
        np.testing.assert_array_equal(numpy_helper.to_array(tensor),
                                      numpy_helper.to_array(single[tensor.name]))


@pytest.mark.parametrize("name", ["mlp", "transformer", "if_branches", "loop", "indexing"])
def test_policy_file_denies_matmul(small, references, tmp_path, name):
    policy = tmp_path / "policy.yaml"
    policy.write_text("# MatMul stays fp32\ndeny:\n  - MatMul\n")
    result = small(name, f"--amp-policy={policy}")
    onnx.checker.check_model(str(result.path), full_check=True)
    types = value_types(result.model)
    records = report_ops(result.report)
    matmuls = [n for n in all_nodes(result.model) if n.op_type == "MatMul"]
    assert matmuls
    for node in matmuls:
        assert records[node.name]["precision"] == "f32"
        for value in node.input:
            assert types[value] == FLOAT, f"{node.name}: input {value} is not FLOAT"
    for node in all_nodes(result.model):
        if node.op_type == "Gemm":  # still allowed
            assert records[node.name]["precision"] == "f16"
            assert all(types[v] == FLOAT16 for v in node.input)
    feeds, reference = references(name)
    assert_close(reference, run(result.path, feeds), FP16_TOLERANCE, name)


# ----------------------------------------------------------------------------
# Errors: non-zero exit, a clear message, no output file
# ----------------------------------------------------------------------------


def expect_error(amp_opt, folder, flags, *fragments, output="out.onnx"):
    source = folder / "mlp.onnx"
    onnx.save_model(build_mlp(), source)
    before = set(os.listdir(folder))
    proc = subprocess.run([amp_opt.path, str(source), "-o", output, *flags], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode > 0, f"exit status {proc.returncode}\n{proc.stderr}"
    first_error = next(line for line in proc.stderr.splitlines() if "error" in line)
    for fragment in fragments:
        assert fragment in first_error, f"{fragment!r} not in {first_error!r}"
    assert set(os.listdir(folder)) == before, "amp-opt left an output file"
    assert proc.stdout == ""
    return proc.stderr


def test_error_unknown_op_suggests_spelling(amp_opt, tmp_path):
    expect_error(amp_opt, tmp_path, ["--amp-allow=Matmul"], "'Matmul'", "did you mean 'MatMul'")


def test_error_unknown_op_without_close_name(amp_opt, tmp_path):
    expect_error(amp_opt, tmp_path, ["--amp-deny=Exp,SumTanh"], "'SumTanh'",
                 "not an ONNX operator type")


def test_error_policy_unknown_key(amp_opt, tmp_path):
    (tmp_path / "bad.yaml").write_text("deny: [Exp]\nalow:\n  - MatMul\n")
    expect_error(amp_opt, tmp_path, ["--amp-policy=bad.yaml"], "bad.yaml", "line 2",
                 "unknown key 'alow'")


def test_error_policy_file_missing(amp_opt, tmp_path):
    expect_error(amp_opt, tmp_path, ["--amp-policy=missing.yaml"], "missing.yaml",
                 "No such file or directory")


def test_error_unknown_type(amp_opt, tmp_path):
    expect_error(amp_opt, tmp_path, ["--amp-type=f8"], "unknown type 'f8'", "f16 or bf16")


def test_error_onnx_to_stdout(amp_opt, tmp_path):
    expect_error(amp_opt, tmp_path, ["--emit=onnx"], "ONNX output needs a file", output="-")


def test_error_message_is_short(amp_opt, tmp_path):
    stderr = expect_error(amp_opt, tmp_path, ["--amp-type=f8"], "unknown type 'f8'")
    assert len(stderr.splitlines()) <= 5, stderr


def test_failed_export_leaves_no_report(amp_opt, tmp_path):
    expect_error(amp_opt, tmp_path, ["--emit=onnx", "--amp-report=r.json", "--amp-dot=g.dot"],
                 "ONNX output needs a file", output="-")


# ----------------------------------------------------------------------------
# Real architectures (torch exports)
# ----------------------------------------------------------------------------

EXPORT_SCRIPT = os.path.join(REPO, "test", "models", "amp_testmodels", "export_torch.py")
DEBIAN_PYTHON = "/usr/bin/python3"
SHARED_EXPORTS = "/tmp/amp-models/opset17"  # reused when its manifest lists a model

CNNS = ("resnet18", "mobilenet_v2", "efficientnet_b0")
TRANSFORMERS = ("vit_b_16", "bert_encoder", "gpt2_decoder")
# Inserted casts, measured 2, 2 and 1 (the CNNs: 4 + 2 * graph inputs and outputs).
CAST_BOUNDS = {"vit_b_16": 4, "bert_encoder": 4, "gpt2_decoder": 5}
# Bound on max |out - ref| / max |ref| (about 3x the measured error, see the docstring).
REAL_BOUNDS = {"resnet18": 1e-3, "mobilenet_v2": 2.5e-3, "efficientnet_b0": 3e-3,
               "vit_b_16": 3e-3, "bert_encoder": 4e-3, "gpt2_decoder": 1e-3}
# The ViT head is zero-initialised: also compare its input.
EXPOSE_HEAD_INPUT = {"vit_b_16"}




real_model = pytest.mark.skipif(not has_debian_torch(),
                                reason="Debian python3-torch/torchvision not installed")


def _listed(folder, name):
    return plain_export(folder, name) is not None


@pytest.fixture(scope="module")
def torch_models(tmp_path_factory):
    """Name -> path of the opset-17 torch export (shared cache or exported here)."""
    names = CNNS + TRANSFORMERS
    paths = {n: os.path.join(SHARED_EXPORTS, f"{n}.onnx") for n in names
             if _listed(SHARED_EXPORTS, n)}
    missing = [n for n in names if n not in paths]
    if missing:
        out = tmp_path_factory.mktemp("torch-opset17")
        subprocess.run([DEBIAN_PYTHON, EXPORT_SCRIPT, "--out", str(out), "--opset", "17",
                        "--models", ",".join(missing)],
                       check=True, capture_output=True, timeout=1800)
        paths.update({n: str(out / f"{n}.onnx") for n in missing})
    return paths


def expose_head_input(model):
    """Add the input of the last Gemm/MatMul as a second graph output."""
    head = [n for n in model.graph.node if n.op_type in ("Gemm", "MatMul")][-1]
    inferred = onnx.shape_inference.infer_shapes(model)
    info = next(v for v in inferred.graph.value_info if v.name == head.input[0])
    model.graph.output.append(info)
    return model


def real_feeds(model, seed):
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        shape = [d.dim_value for d in tensor_type.shape.dim]
        assert all(shape), f"{value.name}: dynamic shape"
        if tensor_type.elem_type == INT64:  # token ids (vocabulary 1000)
            feeds[value.name] = rng.integers(0, 1000, shape).astype(np.int64)
        else:
            assert tensor_type.elem_type == FLOAT
            feeds[value.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


@pytest.mark.slow
@real_model
@pytest.mark.parametrize("name", CNNS + TRANSFORMERS)
def test_real_model_fp16(amp_opt, torch_models, tmp_path, name, record_property):
    source = torch_models[name]
    if name in EXPOSE_HEAD_INPUT:
        model = expose_head_input(onnx.load(source))
        source = tmp_path / f"{name}.features.onnx"
        onnx.save_model(model, source)
        del model
    result = export(amp_opt, source, tmp_path, name)
    onnx.checker.check_model(str(result.path), full_check=True)
    assert io_signature(result.model.graph.input) == io_signature(result.original.graph.input)
    assert io_signature(result.model.graph.output) == io_signature(result.original.graph.output)

    feeds = [real_feeds(result.original, seed) for seed in (0, 1)]
    reference = run(source, feeds)
    outputs = run(result.path, feeds)
    worst = 0.0
    for ref_values, values in zip(reference, outputs):
        for output, (err, scale) in errors(ref_values, values).items():
            if scale == 0.0:  # the ViT logits: compare the features instead
                assert name in EXPOSE_HEAD_INPUT and err == 0.0
                continue
            relative = err / scale
            record_property(f"{output}_max_abs_error", err)
            record_property(f"{output}_relative_error", relative)
            worst = max(worst, relative)
            print(f"{name} {output}: max abs {err:.3g}, max|ref| {scale:.3g}, rel {relative:.3g}")
    assert 0.0 < worst <= REAL_BOUNDS[name], f"{name}: relative error {worst:.3g}"

    summary = result.report["summary"]
    casts = summary["casts"]
    assert casts == count_amp_casts(result.model)
    share = summary["flops_low_precision_share"]
    print(f"{name}: {casts} casts, {100 * share:.2f} % of FLOPs in fp16")
    assert share >= 0.9
    io_count = len(result.model.graph.input) + len(result.model.graph.output)
    assert casts <= CAST_BOUNDS.get(name, 4 + 2 * io_count)
