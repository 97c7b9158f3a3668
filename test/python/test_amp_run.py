"""amp-run, the CPU JIT runner, checked on real data.

Every test builds a small ONNX model with onnx.helper (opset 17, or 18
where an operator takes its axes as an input; ir_version 8; seeded random
weights), writes its inputs as .npy (or ONNX TensorProto .pb) files and
runs ``amp-run MODEL -i ... --output-dir DIR --compare-to REF ...``.

References. fp32 results come from onnxruntime (CPU provider), the
independent implementation; integer arithmetic that onnxruntime has no
kernel for (uint8 Add/Mul) and the conversions between float formats come
from numpy (``astype(float16)`` rounds to nearest even, the bf16 rounding is
a numpy re-implementation of round-to-nearest-even on the upper 16 bits).
Each fp32 model is checked twice: amp-run's own ``--compare-to`` has to
print ``<output>: ok`` for every output, and the ``--output-dir`` files,
loaded with numpy, must have the reference's dtype and shape and match it
within the tolerance below (integer and bool outputs exactly).

==========================================  ====================================
run                                         bound (numpy.allclose rule)
==========================================  ====================================
fp32 models vs onnxruntime                  rtol 1e-4, atol 1e-5
--amp-type f16 (MLP) vs onnxruntime fp32    rtol 1e-2, atol 1e-2
--amp-type bf16 (MLP) vs onnxruntime fp32   rtol 2e-2, atol 2e-2
float format conversions vs numpy           bit-exact (any NaN matches any NaN)
==========================================  ====================================

Error cases check the exit status (1, not a signal), the ``error:`` message
on stderr and that nothing was written to ``--output-dir``.

Two outputs that the compiled program returns in one buffer
(test_outputs_sharing_a_buffer) are both copied before the buffer is freed
(once).
"""

import math
import os
import re
import subprocess

import numpy as np
import onnx
import pytest

from amp_test_utils import require_module
from onnx import TensorProto, helper, numpy_helper

ort = require_module("onnxruntime")  # missing: a failure, not a skip

FLOAT, FLOAT16, BFLOAT16, DOUBLE = (TensorProto.FLOAT, TensorProto.FLOAT16,
                                    TensorProto.BFLOAT16, TensorProto.DOUBLE)
INT64, INT32, UINT8, BOOL = (TensorProto.INT64, TensorProto.INT32, TensorProto.UINT8,
                              TensorProto.BOOL)

FP32_RTOL, FP32_ATOL = 1e-4, 1e-5
TIMEOUT = 120  # seconds per amp-run call; one call takes well under 2 s


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


def vi(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def make_model(nodes, inputs, outputs, initializers=(), opset=17, name="g"):
    """An ONNX model (ir_version 8) that passes the checker."""
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=8, producer_name="test_amp_run")
    onnx.checker.check_model(model, full_check=True)
    return model


def init(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def describe(proc):
    return (f"command: {' '.join(map(str, proc.args))}\nexit status {proc.returncode}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")


def run_amp(amp_run, *args, timeout=TIMEOUT):
    """``amp-run ARGS`` -> CompletedProcess (text); a hang is a test failure."""
    command = [amp_run, *map(str, args)]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{' '.join(command)}: no result within {timeout} s") from None


def save_model(model, folder, name="model"):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.onnx"
    onnx.save_model(model, str(path))
    return path


def save_arrays(folder, prefix, arrays):
    """Save arrays as ``folder/prefix<i>.npy``; return the paths."""
    paths = []
    for i, array in enumerate(arrays):
        path = folder / f"{prefix}{i}.npy"
        np.save(path, array)
        paths.append(path)
    return paths


def run_amp_on(amp_run, folder, model, feeds, *flags):
    """Saves ``model`` and ``feeds`` (name -> array, in input order) under
    ``folder`` and runs amp-run on them with ``--output-dir folder/out``.
    Returns (CompletedProcess, the outputs in graph order or None when it
    failed)."""
    path = save_model(model, folder)
    args = []
    for input_path in save_arrays(folder, "in", list(feeds.values())):
        args += ["-i", input_path]
    proc = run_amp(amp_run, path, *args, "--output-dir", folder / "out", *flags)
    if proc.returncode != 0:
        return proc, None
    return proc, [np.load(folder / "out" / f"{o.name}.npy") for o in model.graph.output]


def ort_run(model, feeds):
    """onnxruntime's outputs (CPU provider) as a list, in graph order."""
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def input_names(model):
    return [i.name for i in model.graph.input]


def output_names(model):
    return [o.name for o in model.graph.output]


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "output"


def load_outputs(out_dir, names):
    return [np.load(out_dir / f"{sanitize(n)}.npy") for n in names]


def assert_matches(got, want, rtol, atol, what):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, reference {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, reference {want.shape}"
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def run_and_check(amp_run, folder, model, feeds, references=None, flags=(),
                  rtol=FP32_RTOL, atol=FP32_ATOL):
    """Run ``model`` on ``feeds`` (dict, graph input order) with amp-run.

    The references default to onnxruntime's outputs. Asserts amp-run's
    ``--compare-to`` says ok for every output and that the ``--output-dir``
    files match the references. Returns amp-run's outputs.
    """
    model_path = save_model(model, folder)
    names = input_names(model)
    inputs = save_arrays(folder, "input_", [feeds[n] for n in names])
    if references is None:
        references = ort_run(model, feeds)
    refs = save_arrays(folder, "ref_", references)
    out_dir = folder / "out"
    args = [model_path]
    for path in inputs:
        args += ["-i", path]
    args += ["--output-dir", out_dir, "--rtol", rtol, "--atol", atol]
    for path in refs:
        args += ["--compare-to", path]
    proc = run_amp(amp_run, *args, *flags)
    assert proc.returncode == 0, describe(proc)
    for name in output_names(model):
        assert re.search(rf"^{re.escape(name)}: ok max abs err \S+, max rel err \S+$",
                         proc.stdout, re.M), describe(proc)
    outputs = load_outputs(out_dir, output_names(model))
    for name, got, want in zip(output_names(model), outputs, references):
        assert_matches(got, np.asarray(want), rtol, atol, name)
    return outputs


def expect_error(amp_run, tmp_path, *args, fragments):
    """Run amp-run with ``--output-dir``; assert a clean failure.

    Exit status 1, every fragment on stderr, an ``error:`` line, and no
    output file written. Returns stderr.
    """
    out_dir = tmp_path / "error_out"
    proc = run_amp(amp_run, *args, "--output-dir", out_dir)
    assert proc.returncode == 1, describe(proc)
    assert "error:" in proc.stderr, describe(proc)
    for fragment in fragments:
        assert fragment in proc.stderr, f"{fragment!r} not in stderr\n{describe(proc)}"
    assert not out_dir.exists() or not any(out_dir.iterdir()), \
        f"amp-run wrote {list(out_dir.iterdir())} after failing"
    return proc.stderr


# ----------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------


def build_mlp(batch="N"):
    """x[batch, 8] -> MatMul+Add -> Relu -> MatMul+Add -> y[batch, 4]."""
    rng = np.random.default_rng(1)
    weights = [
        init("w1", rng.standard_normal((8, 16)) / math.sqrt(8)),
        init("b1", 0.1 * rng.standard_normal(16)),
        init("w2", rng.standard_normal((16, 4)) / 4),
        init("b2", 0.1 * rng.standard_normal(4)),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h_mm"]),
        helper.make_node("Add", ["h_mm", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["h_relu"]),
        helper.make_node("MatMul", ["h_relu", "w2"], ["y_mm"]),
        helper.make_node("Add", ["y_mm", "b2"], ["y"]),
    ]
    return make_model(nodes, [vi("x", FLOAT, [batch, 8])], [vi("y", FLOAT, [batch, 4])],
                      weights, name="mlp")


def build_convnet():
    """Conv(pads, strides, group=2, bias) + BatchNormalization + MaxPool (padded,
    before the Relu so the pad value matters) + Relu + GlobalAveragePool +
    Flatten + Gemm(transB=1)."""
    rng = np.random.default_rng(2)
    weights = [
        init("conv.w", rng.standard_normal((6, 2, 3, 3)) / 3),
        init("conv.b", 0.1 * rng.standard_normal(6)),
        init("bn.scale", rng.uniform(0.5, 1.5, 6)),
        init("bn.bias", 0.1 * rng.standard_normal(6)),
        init("bn.mean", 0.1 * rng.standard_normal(6)),
        init("bn.var", rng.uniform(0.5, 2.0, 6)),
        init("fc.w", rng.standard_normal((5, 6)) / math.sqrt(6)),
        init("fc.b", 0.1 * rng.standard_normal(5)),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv.w", "conv.b"], ["c"], pads=[1, 1, 1, 1],
                         strides=[2, 2], group=2, kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                         ["bn"], epsilon=1e-5),
        helper.make_node("MaxPool", ["bn"], ["pool"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["pool"], ["act"]),
        helper.make_node("GlobalAveragePool", ["act"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], transB=1),
    ]
    return make_model(nodes, [vi("image", FLOAT, [2, 4, 9, 9])],
                      [vi("logits", FLOAT, [2, 5])], weights, name="convnet")


def build_transformer(batch=2):
    """LayerNormalization, Q/K/V MatMuls, Reshape (with 0 and -1) and
    Transpose into 2 heads, scaled scores, Softmax(axis=-1), an erf GELU MLP
    and residual Adds. Outputs: the block output and the attention probs."""
    rng = np.random.default_rng(3)
    d, heads, seq = 16, 2, 5
    head_dim = d // heads

    def w(name, shape, scale=None):
        scale = 1 / math.sqrt(shape[0]) if scale is None else scale
        return init(name, scale * rng.standard_normal(shape))

    weights = [
        init("ln.gamma", 1 + 0.1 * rng.standard_normal(d)),
        init("ln.beta", 0.1 * rng.standard_normal(d)),
        w("wq", (d, d)), w("wk", (d, d)), w("wv", (d, d)), w("wo", (d, d)),
        w("w1", (d, 2 * d)), w("b1", (2 * d,), 0.1), w("w2", (2 * d, d)), w("b2", (d,), 0.1),
        init("heads_shape", [0, 0, heads, head_dim], np.int64),
        init("merge_shape", [0, 0, -1], np.int64),
        init("inv_sqrt_hd", 1 / math.sqrt(head_dim)),
        init("sqrt2", math.sqrt(2.0)), init("one", 1.0), init("half", 0.5),
    ]
    nodes = [helper.make_node("LayerNormalization", ["x", "ln.gamma", "ln.beta"], ["ln"],
                              axis=-1, epsilon=1e-5)]
    for p in "qkv":
        nodes += [
            helper.make_node("MatMul", ["ln", f"w{p}"], [f"{p}_lin"]),
            helper.make_node("Reshape", [f"{p}_lin", "heads_shape"], [f"{p}_heads"]),
            helper.make_node("Transpose", [f"{p}_heads"], [f"{p}_t"],
                             perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3]),
        ]
    nodes += [
        helper.make_node("MatMul", ["q_t", "k_t"], ["scores"]),
        helper.make_node("Mul", ["scores", "inv_sqrt_hd"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "v_t"], ["ctx"]),
        helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx_t", "merge_shape"], ["merged"]),
        helper.make_node("MatMul", ["merged", "wo"], ["attn"]),
        helper.make_node("Add", ["x", "attn"], ["res"]),
        helper.make_node("MatMul", ["res", "w1"], ["f1"]),
        helper.make_node("Add", ["f1", "b1"], ["f1b"]),
        helper.make_node("Div", ["f1b", "sqrt2"], ["g_div"]),
        helper.make_node("Erf", ["g_div"], ["g_erf"]),
        helper.make_node("Add", ["g_erf", "one"], ["g_add"]),
        helper.make_node("Mul", ["f1b", "g_add"], ["g_mul"]),
        helper.make_node("Mul", ["g_mul", "half"], ["gelu"]),
        helper.make_node("MatMul", ["gelu", "w2"], ["f2"]),
        helper.make_node("Add", ["f2", "b2"], ["f2b"]),
        helper.make_node("Add", ["res", "f2b"], ["y"]),
    ]
    return make_model(nodes, [vi("x", FLOAT, [batch, seq, d])],
                      [vi("y", FLOAT, [batch, seq, d]),
                       vi("probs", FLOAT, [batch, heads, seq, seq])],
                      weights, name="transformer")


def build_gather():
    """Gather with negative indices: a runtime int64 index vector (axis 0),
    constant 2-D int64 indices (axis 1) and a scalar int32 index (axis -1)."""
    weights = [init("idx2", [[-1, 1], [0, -4]], np.int64), init("idx0", -2, np.int32)]
    nodes = [
        helper.make_node("Gather", ["data", "idx"], ["rows"], axis=0),
        helper.make_node("Gather", ["data", "idx2"], ["cols"], axis=1),
        helper.make_node("Gather", ["data", "idx0"], ["col"], axis=-1),
    ]
    return make_model(nodes, [vi("data", FLOAT, [5, 4]), vi("idx", INT64, [3])],
                      [vi("rows", FLOAT, [3, 4]), vi("cols", FLOAT, [5, 2, 2]),
                       vi("col", FLOAT, [5])], weights, name="gather")


def build_concat_slice_split():
    """Concat(axis 1), Slice (step 2; negative step and clamped ends; default
    axes), Split with explicit sizes and into equal parts."""
    weights = [
        init("s1.starts", [1], np.int64), init("s1.ends", [8], np.int64),
        init("s1.axes", [1], np.int64), init("s1.steps", [2], np.int64),
        init("s2.starts", [-1], np.int64), init("s2.ends", [-100], np.int64),
        init("s2.axes", [-1], np.int64), init("s2.steps", [-3], np.int64),
        init("s3.starts", [0, 2], np.int64), init("s3.ends", [1, 1000], np.int64),
        init("split", [4, 5], np.int64),
    ]
    nodes = [
        helper.make_node("Concat", ["a", "b"], ["cat"], axis=1),
        helper.make_node("Slice", ["cat", "s1.starts", "s1.ends", "s1.axes", "s1.steps"], ["s1"]),
        helper.make_node("Slice", ["cat", "s2.starts", "s2.ends", "s2.axes", "s2.steps"], ["s2"]),
        helper.make_node("Slice", ["cat", "s3.starts", "s3.ends"], ["s3"]),
        helper.make_node("Split", ["cat", "split"], ["p0", "p1"], axis=1),
        helper.make_node("Split", ["cat"], ["e0", "e1", "e2"], axis=1),
    ]
    return make_model(
        nodes, [vi("a", FLOAT, [2, 6]), vi("b", FLOAT, [2, 3])],
        [vi("cat", FLOAT, [2, 9]), vi("s1", FLOAT, [2, 4]), vi("s2", FLOAT, [2, 3]),
         vi("s3", FLOAT, [1, 7]), vi("p0", FLOAT, [2, 4]), vi("p1", FLOAT, [2, 5]),
         vi("e0", FLOAT, [2, 3]), vi("e1", FLOAT, [2, 3]), vi("e2", FLOAT, [2, 3])],
        weights, name="concat_slice_split")


def build_reductions():
    """ReduceMean / ReduceSum (opset 18: axes are an input), keepdims 0 and 1,
    negative axes and a full reduction to a scalar."""
    # No two outputs reduce the same axes: such a pair shares one buffer
    # (see test_outputs_sharing_a_buffer).
    weights = [init("ax1", [1], np.int64), init("ax02", [0, 2], np.int64),
               init("ax01", [0, 1], np.int64), init("axm1", [-1], np.int64)]
    nodes = [
        helper.make_node("ReduceMean", ["x", "ax1"], ["mean_k0"], keepdims=0),
        helper.make_node("ReduceMean", ["x", "axm1"], ["mean_k1"], keepdims=1),
        helper.make_node("ReduceSum", ["x", "ax01"], ["sum_k1"], keepdims=1),
        helper.make_node("ReduceSum", ["x", "ax02"], ["sum_k0"], keepdims=0),
        helper.make_node("ReduceSum", ["x"], ["sum_all"], keepdims=0),
    ]
    return make_model(
        nodes, [vi("x", FLOAT, [3, 4, 5])],
        [vi("mean_k0", FLOAT, [3, 5]), vi("mean_k1", FLOAT, [3, 4, 1]),
         vi("sum_k1", FLOAT, [1, 1, 5]), vi("sum_k0", FLOAT, [4]), vi("sum_all", FLOAT, [])],
        weights, opset=18, name="reductions")


def build_integer_ops():
    """int64 Add/Mul (one operand broadcast) and uint8 Add/Mul (wrapping)."""
    nodes = [
        helper.make_node("Add", ["a", "b"], ["i64_add"]),
        helper.make_node("Mul", ["a", "c"], ["i64_mul"]),
        helper.make_node("Add", ["u", "v"], ["u8_add"]),
        helper.make_node("Mul", ["u", "v"], ["u8_mul"]),
    ]
    return make_model(
        nodes, [vi("a", INT64, [3, 4]), vi("b", INT64, [3, 4]), vi("c", INT64, [4]),
                vi("u", UINT8, [3, 4]), vi("v", UINT8, [3, 4])],
        [vi("i64_add", INT64, [3, 4]), vi("i64_mul", INT64, [3, 4]),
         vi("u8_add", UINT8, [3, 4]), vi("u8_mul", UINT8, [3, 4])], name="integer_ops")


def build_where_equal_cast():
    """Cast float -> int32 (truncation), Equal, Where, Cast bool -> float and
    float -> double; a bool output."""
    nodes = [
        helper.make_node("Cast", ["a"], ["ai"], to=INT32),
        helper.make_node("Cast", ["b"], ["bi"], to=INT32),
        helper.make_node("Equal", ["ai", "bi"], ["eq"]),
        helper.make_node("Where", ["eq", "a", "b"], ["sel"]),
        helper.make_node("Cast", ["eq"], ["eq_f"], to=FLOAT),
        helper.make_node("Cast", ["a"], ["a_f64"], to=DOUBLE),
    ]
    return make_model(
        nodes, [vi("a", FLOAT, [4, 5]), vi("b", FLOAT, [4, 5])],
        [vi("eq", BOOL, [4, 5]), vi("sel", FLOAT, [4, 5]), vi("eq_f", FLOAT, [4, 5]),
         vi("ai", INT32, [4, 5]), vi("a_f64", DOUBLE, [4, 5])], name="where_equal_cast")


def build_cast_chain(in_type, types, n="N", keep_intermediate=True):
    """x[n] of in_type -> Cast(types[0]) -> Cast(types[1]) ...; outputs every step
    (or only the last one)."""
    nodes, outputs, prev = [], [], "x"
    for i, to in enumerate(types):
        name = f"c{i}"
        nodes.append(helper.make_node("Cast", [prev], [name], to=to))
        outputs.append(vi(name, to, [n]))
        prev = name
    if not keep_intermediate:
        outputs = outputs[-1:]
    return make_model(nodes, [vi("x", in_type, [n])], outputs, name="casts")


def float_feeds(model, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def mlp_feeds(batch, seed=0):
    return {"x": np.random.default_rng(seed).standard_normal((batch, 8)).astype(np.float32)}


# ----------------------------------------------------------------------------
# 1. fp32 correctness against onnxruntime
# ----------------------------------------------------------------------------


def test_mlp_matches_onnxruntime(amp_run, tmp_path):
    """MatMul + Add + Relu MLP (batch 3) matches onnxruntime."""
    run_and_check(amp_run, tmp_path, build_mlp(), mlp_feeds(3))


def test_convnet_matches_onnxruntime(amp_run, tmp_path):
    """Grouped strided padded Conv + BatchNormalization + padded MaxPool + Relu +
    GlobalAveragePool + Flatten + Gemm(transB) matches onnxruntime."""
    model = build_convnet()
    run_and_check(amp_run, tmp_path, model, float_feeds(model))


def conv_transpose_reference(x, w, b, strides, dilations, pads, output_padding, group):
    """ONNX ConvTranspose in float64 by its definition: every input element
    scatters x * W over its window of the full output, which is then cropped
    by the pads (begin, end) and extended by output_padding."""
    n, c = x.shape[:2]
    spatial = x.ndim - 2
    kernel = w.shape[2:]
    cg, fg = c // group, w.shape[1]
    full = [(x.shape[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
            + output_padding[i] for i in range(spatial)]
    y = np.zeros((n, fg * group) + tuple(full))
    for o in np.ndindex(*x.shape[2:]):
        for k in np.ndindex(*kernel):
            at = tuple(o[i] * strides[i] + k[i] * dilations[i] for i in range(spatial))
            for g in range(group):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + o]       # (N, Cg)
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + k]       # (Cg, Fg)
                y[(slice(None), slice(g * fg, (g + 1) * fg)) + at] += xs @ ws
    crop = tuple(slice(pads[i], full[i] - pads[spatial + i]) for i in range(spatial))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y += b.reshape((1, -1) + (1,) * spatial)
    return y


# (name, X shape, W shape, strides, dilations, pads, output_padding, group, bias)
CONV_TRANSPOSE_CASES = [
    ("stride2_pad1_outpad1", (2, 3, 5, 5), (3, 4, 3, 3), [2, 2], [1, 1], [1, 1, 1, 1], [1, 1], 1, True),
    ("stride3_kernel2", (1, 2, 4, 3), (2, 3, 2, 2), [3, 3], [1, 1], [0, 0, 0, 0], [0, 0], 1, True),
    ("stride2_dilation2", (2, 2, 4, 4), (2, 2, 3, 3), [2, 2], [2, 2], [1, 0, 2, 1], [1, 0], 1, False),
    ("stride3_dilation2", (1, 2, 5, 4), (2, 3, 3, 2), [3, 2], [2, 3], [2, 1, 0, 2], [2, 1], 1, True),
    ("large_pads", (1, 2, 6, 6), (2, 2, 3, 3), [2, 2], [1, 1], [3, 4, 4, 3], [0, 1], 1, False),
    ("grouped_strided", (2, 4, 3, 4), (4, 3, 3, 3), [2, 3], [1, 1], [1, 0, 0, 1], [1, 2], 2, True),
    ("depthwise_1x1_stride2", (2, 3, 4, 4), (3, 1, 1, 1), [2, 2], [1, 1], [0, 0, 0, 0], [1, 1], 3, False),
    ("conv1d_stride4", (2, 3, 5), (3, 2, 3), [4], [1], [1, 2], [3], 1, True),
    ("conv3d_stride2", (1, 2, 3, 3, 2), (2, 2, 2, 3, 2), [2, 2, 1], [1, 1, 2], [0, 1, 1, 1, 0, 0], [1, 0, 0], 1, True),
    # 72 phases, above the 64 that get a convolution each: the zero-stuffed
    # formulation.
    ("zero_stuffed_strides_9x8", (1, 2, 3, 2), (2, 3, 4, 3), [9, 8], [1, 1], [1, 0, 2, 1], [2, 3], 1, True),
]


@pytest.mark.parametrize("case", CONV_TRANSPOSE_CASES, ids=[c[0] for c in CONV_TRANSPOSE_CASES])
def test_conv_transpose_matches_definition(case, amp_run, tmp_path):
    """ConvTranspose (strides with and without gaps between the taps, kernels
    smaller than the stride, dilations, asymmetric and large pads,
    output_padding, groups, 1-3 spatial dimensions) matches a float64
    scatter by the operator's definition: the output phases amp computes
    separately cover every output exactly once."""
    name, x_shape, w_shape, strides, dilations, pads, output_padding, group, bias = case
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    b = rng.uniform(-1, 1, (w_shape[1] * group,)).astype(np.float32) if bias else None
    want = conv_transpose_reference(x.astype(np.float64), w.astype(np.float64),
                                    None if b is None else b.astype(np.float64), strides,
                                    dilations, pads, output_padding, group)
    inits = [init("w", w)] + ([init("b", b)] if bias else [])
    node = helper.make_node("ConvTranspose", ["x", "w"] + (["b"] if bias else []), ["y"],
                            strides=strides, dilations=dilations, pads=pads,
                            output_padding=output_padding, group=group)
    model = make_model([node], [vi("x", FLOAT, list(x_shape))],
                       [vi("y", FLOAT, list(want.shape))], inits)
    run_and_check(amp_run, tmp_path, model, {"x": x}, references=[want.astype(np.float32)])


def test_transformer_block_matches_onnxruntime(amp_run, tmp_path):
    """Attention block (LayerNormalization, Reshape/Transpose heads, Softmax,
    erf GELU) matches onnxruntime, both outputs; the probs rows sum to 1."""
    model = build_transformer()
    y, probs = run_and_check(amp_run, tmp_path, model, float_feeds(model))
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)


def test_gather_negative_indices(amp_run, tmp_path):
    """Gather with negative runtime, constant and scalar indices matches onnxruntime."""
    model = build_gather()
    feeds = {"data": np.arange(20, dtype=np.float32).reshape(5, 4) * 1.5 - 7,
             "idx": np.array([-1, 0, -5], dtype=np.int64)}
    rows, cols, col = run_and_check(amp_run, tmp_path, model, feeds)
    np.testing.assert_array_equal(rows, feeds["data"][[4, 0, 0]])
    np.testing.assert_array_equal(col, feeds["data"][:, 2])


def test_concat_slice_split(amp_run, tmp_path):
    """Concat, three Slices (step 2; step -3 with a clamped end; default axes)
    and two Splits (explicit sizes; equal parts) match onnxruntime exactly."""
    model = build_concat_slice_split()
    feeds = {"a": np.arange(12, dtype=np.float32).reshape(2, 6),
             "b": -np.arange(1, 7, dtype=np.float32).reshape(2, 3)}
    outputs = run_and_check(amp_run, tmp_path, model, feeds, atol=0, rtol=0)
    cat = np.concatenate([feeds["a"], feeds["b"]], axis=1)
    np.testing.assert_array_equal(outputs[2], cat[:, [8, 5, 2]])


def test_reductions_keepdims(amp_run, tmp_path):
    """ReduceMean / ReduceSum with keepdims 0 and 1, negative axes and a
    reduction to a rank-0 tensor match onnxruntime (shapes included)."""
    model = build_reductions()
    outputs = run_and_check(amp_run, tmp_path, model, float_feeds(model))
    assert [o.shape for o in outputs] == [(3, 5), (3, 4, 1), (1, 1, 5), (4,), ()]


def test_integer_add_mul(amp_run, tmp_path):
    """int64 Add/Mul (values beyond 32 bits, a broadcast operand) and uint8
    Add/Mul (wrapping modulo 256) are exact."""
    rng = np.random.default_rng(5)
    model = build_integer_ops()
    feeds = {
        "a": rng.integers(-2**40, 2**40, (3, 4), dtype=np.int64),
        "b": rng.integers(-2**40, 2**40, (3, 4), dtype=np.int64),
        "c": np.array([-3, 0, 7, 1000], dtype=np.int64),
        "u": rng.integers(0, 256, (3, 4), dtype=np.uint8),
        "v": rng.integers(0, 256, (3, 4), dtype=np.uint8),
    }
    # numpy's uint8 arithmetic wraps like ONNX's; onnxruntime may lack uint8 kernels.
    references = [feeds["a"] + feeds["b"], feeds["a"] * feeds["c"],
                  feeds["u"] + feeds["v"], feeds["u"] * feeds["v"]]
    i64 = make_model(model.graph.node[:2], list(model.graph.input)[:3],
                     list(model.graph.output)[:2])
    ort_i64 = ort_run(i64, {k: feeds[k] for k in "abc"})
    for got, want in zip(ort_i64, references):
        np.testing.assert_array_equal(got, want)
    run_and_check(amp_run, tmp_path, model, feeds, references=references)


def test_where_equal_cast(amp_run, tmp_path):
    """Cast float -> int32 truncates toward zero; Equal, Where, Cast bool ->
    float and float -> double match onnxruntime; bool and f64 outputs are
    written as numpy bool / float64."""
    rng = np.random.default_rng(6)
    a = rng.uniform(-4, 4, (4, 5)).astype(np.float32)
    b = (a + rng.choice([0.0, 0.25, 1.0, -1.0, 3.0], (4, 5))).astype(np.float32)
    model = build_where_equal_cast()
    eq, sel, eq_f, ai, a_f64 = run_and_check(amp_run, tmp_path, model, {"a": a, "b": b})
    assert eq.dtype == np.bool_ and a_f64.dtype == np.float64
    np.testing.assert_array_equal(ai, np.trunc(a).astype(np.int32))
    assert 0 < eq.sum() < eq.size


def test_mlir_model_matches_onnx(amp_run, amp_opt, tmp_path):
    """The amp-dialect .mlir that amp-opt imports (--amp-opt-level=0) runs
    and gives the same outputs as the .onnx model."""
    model = build_transformer()
    feeds = float_feeds(model)
    onnx_outputs = run_and_check(amp_run, tmp_path / "onnx", model, feeds)
    mlir_path = tmp_path / "model.mlir"
    amp_opt.import_model(model, mlir_path)
    x_path = save_arrays(tmp_path, "x", [feeds["x"]])[0]
    out_dir = tmp_path / "mlir_out"
    proc = run_amp(amp_run, mlir_path, "-i", x_path, "--output-dir", out_dir)
    assert proc.returncode == 0, describe(proc)
    for got, want in zip(load_outputs(out_dir, ["y", "probs"]), onnx_outputs):
        np.testing.assert_array_equal(got, want)


def test_output_names_sanitised(amp_run, tmp_path):
    """An output named 'blk/out:0' is written as blk_out_0.npy."""
    model = make_model([helper.make_node("Neg", ["x"], ["blk/out:0"])],
                       [vi("x", FLOAT, [3])], [vi("blk/out:0", FLOAT, [3])])
    x = np.array([1.5, -2.0, 0.0], dtype=np.float32)
    run_and_check(amp_run, tmp_path, model, {"x": x})
    assert os.listdir(tmp_path / "out") == ["blk_out_0.npy"]
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "blk_out_0.npy"), -x)


def test_outputs_from_inputs_and_constants(amp_run, tmp_path):
    """Outputs that are a graph input (Identity, twice), a constant (an
    initializer, a folded Shape) and a computed value are all written."""
    nodes = [helper.make_node("Identity", ["x"], ["x1"]),
             helper.make_node("Identity", ["x"], ["x2"]),
             helper.make_node("Identity", ["c"], ["k"]), helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Neg", ["x"], ["y"])]
    model = make_model(nodes, [vi("x", FLOAT, [3, 4])],
                       [vi("x1", FLOAT, [3, 4]), vi("x2", FLOAT, [3, 4]), vi("k", FLOAT, [6]),
                        vi("s", INT64, [2]), vi("y", FLOAT, [3, 4])],
                       [init("c", np.arange(6) - 2.5)])
    x = np.random.default_rng(18).standard_normal((3, 4)).astype(np.float32)
    run_and_check(amp_run, tmp_path, model, {"x": x}, atol=0, rtol=0)




def build_shared_buffer_model(kind, n=65536):
    """Two outputs that the compiled program returns in one buffer."""
    if kind == "two_identities":
        nodes = [helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Identity", ["n"], ["y1"]),
                 helper.make_node("Identity", ["n"], ["y2"])]
        return make_model(nodes, [vi("x", FLOAT, [2, n])],
                          [vi("y1", FLOAT, [2, n]), vi("y2", FLOAT, [2, n])]), (2, n)
    if kind == "reduce_keepdims_pair":
        nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["k1"], keepdims=1),
                 helper.make_node("ReduceSum", ["x", "axes"], ["k0"], keepdims=0)]
        return make_model(nodes, [vi("x", FLOAT, [2, n, 2])],
                          [vi("k1", FLOAT, [1, n, 1]), vi("k0", FLOAT, [n])],
                          [init("axes", [0, 2], np.int64)]), (2, n, 2)
    nodes = [helper.make_node("Neg", ["x"], ["y"]),
             helper.make_node("Reshape", ["y", "shape"], ["z"])]
    return make_model(nodes, [vi("x", FLOAT, [2, n])],
                      [vi("y", FLOAT, [2, n]), vi("z", FLOAT, [n, 2])],
                      [init("shape", [n, 2], np.int64)]), (2, n)


@pytest.mark.parametrize("kind", ["two_identities", "reduce_keepdims_pair", "reshape_view"])
def test_outputs_sharing_a_buffer(amp_run, tmp_path, kind):
    """Two outputs backed by one buffer (2 x 65,536 floats, so a freed
    buffer is unmapped and a read after free fails every time) are both
    written correctly."""
    model, shape = build_shared_buffer_model(kind)
    x = np.random.default_rng(19).standard_normal(shape).astype(np.float32)
    run_and_check(amp_run, tmp_path, model, {"x": x})


# ----------------------------------------------------------------------------
# 2. Dynamic dimensions
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [1, 5])
def test_dynamic_batch_mlp(amp_run, tmp_path, batch):
    """The MLP with input ['N', 8] runs on batch 1 and batch 5 files."""
    outputs = run_and_check(amp_run, tmp_path, build_mlp("N"), mlp_feeds(batch, seed=batch))
    assert outputs[0].shape == (batch, 4)


@pytest.mark.parametrize("batch", [1, 3])
def test_dynamic_batch_transformer(amp_run, tmp_path, batch):
    """The attention block with input ['B', 5, 16] (Reshape with 0 and -1
    entries) runs on batch 1 and 3."""
    model = build_transformer(batch="B")
    feeds = {"x": np.random.default_rng(batch).standard_normal((batch, 5, 16)).astype(np.float32)}
    run_and_check(amp_run, tmp_path, model, feeds)


def build_dynamic_reshape(in_shape, target, out_shape, perm=None):
    """x (first dim 'B') -> [Transpose] -> Reshape(target) -> y."""
    nodes, source = [], "x"
    if perm is not None:
        nodes.append(helper.make_node("Transpose", ["x"], ["t"], perm=perm))
        source = "t"
    nodes.append(helper.make_node("Reshape", [source, "target"], ["y"]))
    return make_model(nodes, [vi("x", FLOAT, ["B", *in_shape])],
                      [vi("y", FLOAT, ["B", *out_shape])],
                      [init("target", target, np.int64)], name="dynamic_reshape")


@pytest.mark.parametrize("target, out_shape", [([0, 0, 2, 8], [5, 2, 8]),
                                               ([-1, 5, 2, 8], [5, 2, 8])])
def test_dynamic_reshape_splitting_dims(amp_run, tmp_path, target, out_shape):
    """Reshape x['B', 5, 16] to ['B', 5, 2, 8] (0 copies a dim, -1 infers it) on batch 3."""
    model = build_dynamic_reshape([5, 16], target, out_shape)
    x = np.random.default_rng(16).standard_normal((3, 5, 16)).astype(np.float32)
    (y,) = run_and_check(amp_run, tmp_path, model, {"x": x}, atol=0, rtol=0)
    np.testing.assert_array_equal(y, x.reshape(3, 5, 2, 8))


@pytest.mark.parametrize("target, out_shape, perm", [([0, -1], [80], None),
                                                     ([0, 0, -1], [5, 16], None),
                                                     ([0, 0, -1], [5, 16], [0, 2, 1, 3])])
def test_dynamic_reshape_merging_dims(amp_run, tmp_path, target, out_shape, perm):
    """Reshape x['B', 5, 16] (or a Transpose of x['B', 2, 5, 8]) to merged
    dims with 0 / -1 entries, on batch 3 (this crashed amp-run while
    bufferizing a dynamic tensor.expand_shape before 845019b)."""
    in_shape = [5, 16] if perm is None else [2, 5, 8]
    model = build_dynamic_reshape(in_shape, target, out_shape, perm)
    x = np.random.default_rng(17).standard_normal((3, *in_shape)).astype(np.float32)
    run_and_check(amp_run, tmp_path, model, {"x": x}, atol=0, rtol=0)


# ----------------------------------------------------------------------------
# 3. .pb inputs and random inputs
# ----------------------------------------------------------------------------


def test_pb_inputs_and_references(amp_run, tmp_path):
    """Inputs and --compare-to references given as ONNX TensorProto .pb files
    (numpy_helper.from_array + SerializeToString) work like .npy files."""
    model = build_gather()
    feeds = {"data": np.random.default_rng(7).standard_normal((5, 4)).astype(np.float32),
             "idx": np.array([2, -2, -3], dtype=np.int64)}
    refs = ort_run(model, feeds)
    model_path = save_model(model, tmp_path)
    args = [model_path]
    for name in input_names(model):
        path = tmp_path / f"{name}.pb"
        path.write_bytes(numpy_helper.from_array(feeds[name], name).SerializeToString())
        args += ["-i", path]
    for i, ref in enumerate(refs):
        path = tmp_path / f"ref{i}.pb"
        path.write_bytes(numpy_helper.from_array(ref).SerializeToString())
        args += ["--compare-to", path]
    out_dir = tmp_path / "out"
    proc = run_amp(amp_run, *args, "--output-dir", out_dir)
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.count(": ok ") == 3, describe(proc)
    for got, want in zip(load_outputs(out_dir, output_names(model)), refs):
        assert_matches(got, want, 0, 0, "pb")


def test_random_inputs_are_seeded(amp_run, tmp_path):
    """--random-inputs --seed 3 twice gives identical outputs; seed 4 differs."""
    model_path = save_model(build_mlp(), tmp_path)

    def run(seed, tag):
        out_dir = tmp_path / tag
        proc = run_amp(amp_run, model_path, "--random-inputs", "--seed", seed,
                       "--output-dir", out_dir)
        assert proc.returncode == 0, describe(proc)
        return np.load(out_dir / "y.npy")

    first, second, other = run(3, "a"), run(3, "b"), run(4, "c")
    assert first.shape == (1, 4)  # dynamic dimensions are 1
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)


def test_random_input_ranges(amp_run, tmp_path):
    """--random-inputs gives floats in [-1, 1) (f32, f16), integers in [0, 10)
    and bools; Identity outputs show them, with dynamic dimensions as 1."""
    types = [("f", FLOAT, np.float32), ("h", FLOAT16, np.float16),
             ("i", INT64, np.int64), ("u", UINT8, np.uint8), ("b", BOOL, np.bool_)]
    nodes = [helper.make_node("Identity", [n], [f"{n}_out"]) for n, _, _ in types]
    model = make_model(nodes, [vi(n, t, ["D", 500]) for n, t, _ in types],
                       [vi(f"{n}_out", t, ["D", 500]) for n, t, _ in types])
    model_path = save_model(model, tmp_path)
    proc = run_amp(amp_run, model_path, "--random-inputs", "--seed", 11,
                   "--output-dir", tmp_path / "out")
    assert proc.returncode == 0, describe(proc)
    values = {n: np.load(tmp_path / "out" / f"{n}_out.npy") for n, _, _ in types}
    for n, _, dtype in types:
        assert values[n].dtype == dtype and values[n].shape == (1, 500), n
    for n in "fh":
        assert values[n].min() >= -1 and values[n].max() < 1, n
        assert len(np.unique(values[n])) > 400, n
    for n in "iu":
        assert set(np.unique(values[n])) == set(range(10)), n
    assert 100 < values["b"].sum() < 400


# ----------------------------------------------------------------------------
# 4. Mixed precision
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("amp_type, tolerance", [("f16", 1e-2), ("bf16", 2e-2)])
def test_amp_type_mlp(amp_run, tmp_path, amp_type, tolerance):
    """--amp-type f16 / bf16 on the MLP stays within the low-precision bound
    of onnxruntime's fp32 result, keeps the float32 output type (keep-io-types
    is the default) and does change the numbers (the autocast ran)."""
    model = build_mlp()
    feeds = mlp_feeds(16, seed=8)
    fp32 = run_and_check(amp_run, tmp_path / "fp32", model, feeds)[0]
    low = run_and_check(amp_run, tmp_path / amp_type, model, feeds,
                        flags=["--amp-type", amp_type], rtol=tolerance, atol=tolerance)[0]
    assert low.dtype == np.float32
    assert not np.array_equal(low, fp32), "--amp-type changed nothing"
    # The fp32 run is far more accurate than the bound used here.
    np.testing.assert_allclose(fp32, ort_run(model, feeds)[0], rtol=1e-5, atol=1e-6)


def test_amp_bf16_low_precision_io(amp_run, tmp_path):
    """--amp-type bf16 --amp-keep-io-types=false: the bf16 input is read from a
    float32 .npy and the bf16 output is written as float32 holding bf16
    values (low 16 bits zero), close to onnxruntime's fp32 result."""
    model = build_mlp()
    feeds = mlp_feeds(6, seed=9)
    refs = ort_run(model, feeds)
    (y,) = run_and_check(amp_run, tmp_path, model, feeds, references=refs,
                         flags=["--amp-type", "bf16", "--amp-keep-io-types=false"],
                         rtol=3e-2, atol=3e-2)
    assert y.dtype == np.float32
    assert not np.any(y.view(np.uint32) & 0xFFFF), "output is not bf16-valued"


def test_amp_f16_low_precision_io_wants_f16_input(amp_run, tmp_path):
    """--amp-type f16 --amp-keep-io-types=false makes the input f16: a float32
    file is refused, a float16 file runs and gives a float16 output."""
    model = build_mlp()
    feeds = mlp_feeds(4, seed=10)
    model_path = save_model(model, tmp_path)
    x32, x16 = save_arrays(tmp_path, "x", [feeds["x"], feeds["x"].astype(np.float16)])
    flags = ["--amp-type", "f16", "--amp-keep-io-types=false"]
    expect_error(amp_run, tmp_path, model_path, "-i", x32, *flags,
                 fragments=["has element type f32 but the model expects f16"])
    proc = run_amp(amp_run, model_path, "-i", x16, *flags, "--output-dir", tmp_path / "out")
    assert proc.returncode == 0, describe(proc)
    y = np.load(tmp_path / "out" / "y.npy")
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), ort_run(model, feeds)[0],
                               rtol=1e-2, atol=1e-2)


def build_accumulation_model(k=4096):
    """x[1, k] -> MatMul(ones[k, 1]), ReduceSum(axis 1), Conv(ones 1x1, k channels)."""
    weights = [init("w", np.ones((k, 1))), init("axes", [1], np.int64),
               init("shape4", [1, k, 1, 1], np.int64), init("cw", np.ones((1, k, 1, 1)))]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]),
             helper.make_node("ReduceSum", ["x", "axes"], ["sum"], keepdims=1),
             helper.make_node("Reshape", ["x", "shape4"], ["x4"]),
             helper.make_node("Conv", ["x4", "cw"], ["conv"])]
    return make_model(nodes, [vi("x", FLOAT, [1, k])],
                      [vi("mm", FLOAT, [1, 1]), vi("sum", FLOAT, [1, 1]),
                       vi("conv", FLOAT, [1, 1, 1, 1])], weights, name="accumulation")


@pytest.mark.parametrize("amp_type, level", [("f16", 1), ("f16", 2), ("bf16", 1), ("bf16", 2)])
def test_amp_fp32_accumulation(amp_run, tmp_path, amp_type, level):
    """With fp32 accumulation (the default) a low-precision sum of 4,096
    multiples of 1/256 (exact in fp16, bf16 and an fp32 accumulator) is the
    exact sum rounded once to fp16 / bf16; a low-precision accumulator would
    stall near 2048 (fp16) or 256 (bf16). MatMul and Conv always run in low
    precision; ReduceSum does at opt level 2 and may stay fp32 at level 1."""
    k = 4096
    x = (np.random.default_rng(20).integers(0, 256, (1, k)) / 256).astype(np.float32)
    exact = np.float32(x.astype(np.float64).sum())
    rounded = np.float32(np.float16(exact)) if amp_type == "f16" else bf16_round(exact)
    assert rounded != exact
    model = build_accumulation_model(k)
    model_path = save_model(model, tmp_path)
    (x_path,) = save_arrays(tmp_path, "x", [x])
    proc = run_amp(amp_run, model_path, "-i", x_path, "--amp-type", amp_type,
                   "--amp-opt-level", level, "--output-dir", tmp_path / "out")
    assert proc.returncode == 0, describe(proc)
    mm, total, conv = (v.item() for v in load_outputs(tmp_path / "out", output_names(model)))
    assert mm == rounded and conv == rounded, (mm, conv, rounded, exact)
    assert total == rounded or (level == 1 and total == exact), (total, rounded, exact)


# ----------------------------------------------------------------------------
# 5. Rounding semantics
# ----------------------------------------------------------------------------


def bf16_round(values):
    """float32 -> bf16 (round to nearest even on the upper 16 bits) -> float32."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(values), np.float32(np.nan), out)


def assert_same_floats(got, want, what):
    """Bit-identical, except that any NaN matches any NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    got_nan, want_nan = np.isnan(got), np.isnan(want)
    bad = (got_nan != want_nan) | (~want_nan & (got.view(uint) != want.view(uint)))
    if bad.any():
        idx = np.flatnonzero(bad)[:10]
        detail = ", ".join(f"{want[i]!r} (0x{int(want.view(uint)[i]):x}) -> {got[i]!r} "
                           f"(0x{int(got.view(uint)[i]):x})" for i in idx)
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ, e.g. {detail}")


def run_casts(amp_run, folder, model, x):
    """Run a Cast-chain model on x; return its outputs read from --output-dir."""
    folder.mkdir(parents=True, exist_ok=True)
    model_path = save_model(model, folder)
    (x_path,) = save_arrays(folder, "x", [x])
    out_dir = folder / "out"
    proc = run_amp(amp_run, model_path, "-i", x_path, "--output-dir", out_dir)
    assert proc.returncode == 0, describe(proc)
    return load_outputs(out_dir, output_names(model))


def test_fp16_all_bit_patterns_round_trip(amp_run, tmp_path):
    """All 65,536 fp16 bit patterns: Cast(FLOAT) is exact (subnormals, +-0,
    +-inf) and Cast(FLOAT) -> Cast(FLOAT16) gives every pattern back (NaN
    stays NaN)."""
    x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    model = build_cast_chain(FLOAT16, [FLOAT, FLOAT16], n=65536)
    wide, back = run_casts(amp_run, tmp_path, model, x)
    with np.errstate(invalid="ignore"):
        assert_same_floats(wide, x.astype(np.float32), "fp16 -> fp32")
    assert_same_floats(back, x, "fp16 -> fp32 -> fp16")


def test_bf16_all_bit_patterns_round_trip(amp_run, tmp_path):
    """All 65,536 bf16 bit patterns (as float32): Cast(BFLOAT16) ->
    Cast(FLOAT) gives every value back (NaN stays NaN)."""
    x = (np.arange(65536, dtype=np.uint32) << 16).view(np.float32)
    model = build_cast_chain(FLOAT, [BFLOAT16, FLOAT], n=65536)
    narrow, back = run_casts(amp_run, tmp_path, model, x)
    assert_same_floats(narrow, x, "fp32 -> bf16 (written as float32)")
    assert_same_floats(back, x, "fp32 -> bf16 -> fp32")


FP16_SPECIAL_CASES = [
    (65520.0, np.inf),                      # half-way past the largest finite: inf
    (np.nextafter(np.float32(65520.0), np.float32(0)), 65504.0),
    (65504.0, 65504.0),
    (-1e6, -np.inf),
    (1e6, np.inf),
    (np.inf, np.inf),
    (-np.inf, -np.inf),
    (np.nan, np.nan),
    (1 + 2**-11, 1.0),                      # tie, to even
    (1 + 3 * 2**-11, 1 + 2**-9),            # tie, to even (up)
    (1 + 2**-11 + 2**-20, 1 + 2**-10),      # just above the tie
    (2**-24, 2**-24),                       # smallest subnormal
    (2**-25, 0.0),                          # tie between 0 and it: to even (0)
    (np.nextafter(np.float32(2**-25), np.float32(1)), 2**-24),
    (3 * 2**-25, 2**-23),                   # subnormal tie, to even (up)
    (-2**-26, -0.0),
    (-0.0, -0.0),
    (2**-14 - 2**-25, 2**-14),              # largest subnormal + half: rounds to normal
]


def test_fp32_to_fp16_specific_values(amp_run, tmp_path):
    """Cast(FLOAT -> FLOAT16) on overflow, ties, subnormal and special values
    gives the round-to-nearest-even results (and agrees with numpy)."""
    x = np.array([v for v, _ in FP16_SPECIAL_CASES], dtype=np.float32)
    want = np.array([w for _, w in FP16_SPECIAL_CASES], dtype=np.float16)
    with np.errstate(over="ignore"):
        assert_same_floats(x.astype(np.float16), want, "numpy (test self-check)")
    (got,) = run_casts(amp_run, tmp_path, build_cast_chain(FLOAT, [FLOAT16]), x)
    assert_same_floats(got, want, "fp32 -> fp16")


def random_float32_sample(rng, count):
    """float32 values: random bit patterns (every class: NaN, inf, subnormal),
    values with exponents around the fp16 range, and exact fp16 / bf16 ties."""
    quarter = count // 4
    raw = rng.integers(0, 2**32, quarter, dtype=np.uint64).astype(np.uint32)
    sign = rng.integers(0, 2, quarter, dtype=np.uint32) << 31
    exponent = rng.integers(127 - 28, 127 + 18, quarter, dtype=np.uint32) << 23
    mantissa = rng.integers(0, 2**23, quarter, dtype=np.uint32)
    ranged = sign | exponent | mantissa
    # Exact ties: the dropped bits are 100...0 (13 bits for fp16, 16 for bf16).
    fp16_ties = (ranged & ~np.uint32(0x1FFF)) | np.uint32(0x1000)
    bf16_ties = (raw & ~np.uint32(0xFFFF)) | np.uint32(0x8000)
    bits = np.concatenate([raw, ranged, fp16_ties, bf16_ties])
    return bits.view(np.float32)


def test_fp32_to_fp16_random_sample(amp_run, tmp_path):
    """Cast(FLOAT -> FLOAT16) on 10^6 float32 values is bit-identical to
    numpy's astype(float16) (round to nearest even)."""
    x = random_float32_sample(np.random.default_rng(12), 1_000_000)
    (got,) = run_casts(amp_run, tmp_path, build_cast_chain(FLOAT, [FLOAT16]), x)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16)
    assert_same_floats(got, want, "fp32 -> fp16")


def test_fp32_to_bf16_random_sample(amp_run, tmp_path):
    """Cast(FLOAT -> BFLOAT16 -> FLOAT) on 10^6 float32 values equals
    round-to-nearest-even on the upper 16 bits (overflow to inf, NaN kept)."""
    x = random_float32_sample(np.random.default_rng(13), 1_000_000)
    want = bf16_round(x)
    # Self-check of the reference on known values.
    checks = np.array([1 + 2**-8, 1 + 3 * 2**-8, 3.4e38, -np.inf, np.nan], dtype=np.float32)
    assert_same_floats(bf16_round(checks), np.array(
        [1.0, 1 + 2**-6, np.inf, -np.inf, np.nan], dtype=np.float32), "bf16_round")
    narrow, back = run_casts(amp_run, tmp_path, build_cast_chain(FLOAT, [BFLOAT16, FLOAT]), x)
    assert_same_floats(narrow, want, "fp32 -> bf16 (written as float32)")
    assert_same_floats(back, want, "fp32 -> bf16 -> fp32")


def test_bf16_input_rounding(amp_run, tmp_path):
    """A bf16 graph input read from a float32 .npy is rounded to nearest even
    (Cast(BFLOAT16 -> FLOAT) shows the value that was read)."""
    x = random_float32_sample(np.random.default_rng(14), 40_000)
    (got,) = run_casts(amp_run, tmp_path, build_cast_chain(BFLOAT16, [FLOAT]), x)
    assert_same_floats(got, bf16_round(x), "bf16 input")


# ----------------------------------------------------------------------------
# 6. Errors
# ----------------------------------------------------------------------------


@pytest.fixture
def mlp_path(tmp_path):
    return save_model(build_mlp(), tmp_path, "mlp")


def test_error_wrong_dtype(amp_run, tmp_path, mlp_path):
    """A float64 file for a float32 input is refused, naming both types."""
    (x,) = save_arrays(tmp_path, "x", [np.zeros((2, 8), np.float64)])
    expect_error(amp_run, tmp_path, mlp_path, "-i", x,
                 fragments=["input 'x'", "has element type f64 but the model expects f32"])


@pytest.mark.parametrize("shape, shown", [((2, 7), "[2, 7]"), ((8,), "[8]"),
                                          ((1, 2, 8), "[1, 2, 8]")])
def test_error_wrong_shape(amp_run, tmp_path, mlp_path, shape, shown):
    """A file of the wrong shape or rank is refused ('?' marks the dynamic dim)."""
    (x,) = save_arrays(tmp_path, "x", [np.zeros(shape, np.float32)])
    expect_error(amp_run, tmp_path, mlp_path, "-i", x,
                 fragments=[f"has shape {shown} but the model expects [?, 8]"])


def test_error_wrong_number_of_inputs(amp_run, tmp_path, mlp_path):
    """Two -i files for a one-input model, or none, are refused."""
    x, x2 = save_arrays(tmp_path, "x", [np.zeros((2, 8), np.float32)] * 2)
    expect_error(amp_run, tmp_path, mlp_path, "-i", x, "-i", x2,
                 fragments=["the model has 1 input(s) but 2 file(s) were given with -i"])
    expect_error(amp_run, tmp_path, mlp_path,
                 fragments=["the model has 1 input(s) but 0 file(s) were given with -i"])


def test_error_inputs_and_random_inputs(amp_run, tmp_path, mlp_path):
    """-i together with --random-inputs is refused."""
    (x,) = save_arrays(tmp_path, "x", [np.zeros((2, 8), np.float32)])
    expect_error(amp_run, tmp_path, mlp_path, "-i", x, "--random-inputs",
                 fragments=["give either -i files or --random-inputs"])


def test_error_missing_file(amp_run, tmp_path, mlp_path):
    """A missing input file is reported with its name."""
    missing = tmp_path / "missing.npy"
    expect_error(amp_run, tmp_path, mlp_path, "-i", missing,
                 fragments=[f"'{missing}': cannot read"])


@pytest.mark.parametrize("kind, fragment", [
    ("garbage", "not a .npy file"),
    ("truncated", "holds 60 bytes of data but [2, 8] <f4 needs 64"),
    ("big_endian", "unsupported dtype '>f4'"),
    ("fortran", "Fortran-ordered arrays are not supported"),
    ("complex", "unsupported dtype '<c8'"),
])
def test_error_bad_npy(amp_run, tmp_path, mlp_path, kind, fragment):
    """Corrupt or unsupported .npy files are refused with a reason."""
    path = tmp_path / f"{kind}.npy"
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    if kind == "garbage":
        path.write_bytes(b"this is not numpy data at all\n")
    elif kind == "truncated":
        np.save(path, x)
        path.write_bytes(path.read_bytes()[:-4])
    elif kind == "big_endian":
        np.save(path, x.astype(">f4"))
    elif kind == "fortran":
        np.save(path, np.asfortranarray(x))
    else:
        np.save(path, x.astype(np.complex64))
    expect_error(amp_run, tmp_path, mlp_path, "-i", path, fragments=[f"'{path}'", fragment])


def test_error_corrupt_pb(amp_run, tmp_path, mlp_path):
    """A .pb file that is not a TensorProto is refused."""
    path = tmp_path / "x.pb"
    path.write_bytes(b"\xff\xff\xff\xff garbage")
    stderr = expect_error(amp_run, tmp_path, mlp_path, "-i", path, fragments=[])
    assert "x.pb" in stderr


def test_error_unknown_extension(amp_run, tmp_path, mlp_path):
    """An input file that is neither .npy nor .pb is refused."""
    path = tmp_path / "x.txt"
    path.write_text("1 2 3\n")
    expect_error(amp_run, tmp_path, mlp_path, "-i", path,
                 fragments=["unknown tensor file type (use .npy or an ONNX TensorProto .pb)"])


def test_error_compare_to_count(amp_run, tmp_path, mlp_path):
    """Two --compare-to files for a one-output model are refused."""
    (x,) = save_arrays(tmp_path, "x", [np.zeros((2, 8), np.float32)])
    r0, r1 = save_arrays(tmp_path, "ref", [np.zeros((2, 4), np.float32)] * 2)
    expect_error(amp_run, tmp_path, mlp_path, "-i", x, "--compare-to", r0, "--compare-to", r1,
                 fragments=["the model has 1 output(s) but 2 --compare-to file(s) were given"])


def test_error_bad_amp_type(amp_run, tmp_path, mlp_path):
    """An unknown --amp-type is refused."""
    (x,) = save_arrays(tmp_path, "x", [np.zeros((2, 8), np.float32)])
    expect_error(amp_run, tmp_path, mlp_path, "-i", x, "--amp-type", "f8",
                 fragments=["amp-autocast: unknown type 'f8'"])


def test_error_op_without_cpu_lowering(amp_run, tmp_path):
    """A model using Bernoulli (no CPU lowering) fails to compile, naming the
    op."""
    model = make_model([helper.make_node("Bernoulli", ["x"], ["y"])],
                       [vi("x", FLOAT, [2, 3])], [vi("y", FLOAT, [2, 3])])
    path = save_model(model, tmp_path)
    (x,) = save_arrays(tmp_path, "x", [np.full((2, 3), 0.5, np.float32)])
    expect_error(amp_run, tmp_path, path, "-i", x,
                 fragments=["ONNX Bernoulli is not lowerable to the CPU backend yet"])


# ----------------------------------------------------------------------------
# 7. --compare-to results and --benchmark
# ----------------------------------------------------------------------------


def compare_setup(tmp_path):
    model = build_mlp()
    feeds = mlp_feeds(4, seed=15)
    model_path = save_model(model, tmp_path)
    (x,) = save_arrays(tmp_path, "x", [feeds["x"]])
    return model_path, x, ort_run(model, feeds)[0]


def test_compare_to_mismatch_fails(amp_run, tmp_path):
    """A wrong reference gives exit 1 and a FAIL line counting the elements;
    the outputs are still written."""
    model_path, x, ref = compare_setup(tmp_path)
    wrong = ref.copy()
    wrong[1, 2] += 0.5
    (ref_path,) = save_arrays(tmp_path, "wrong", [wrong])
    proc = run_amp(amp_run, model_path, "-i", x, "--compare-to", ref_path,
                   "--output-dir", tmp_path / "out")
    assert proc.returncode == 1, describe(proc)
    assert re.search(r"^y: FAIL max abs err 0\.5\d*, max rel err \S+, 1 of 16 elements beyond",
                     proc.stdout, re.M), describe(proc)
    np.testing.assert_allclose(np.load(tmp_path / "out" / "y.npy"), ref, rtol=1e-5, atol=1e-6)


def test_compare_to_tolerance_rule(amp_run, tmp_path):
    """|a - b| <= atol + rtol * |b|: a relative error of 5e-4 passes the default
    rtol 1e-3, 5e-3 fails it and passes --rtol 1e-2."""
    _, x, ref = compare_setup(tmp_path)
    ref = ref + 1.0  # no zeros, so the relative error is the same everywhere
    model = build_mlp()
    shifted = make_model(list(model.graph.node) + [helper.make_node("Add", ["y", "one"], ["z"])],
                         list(model.graph.input), [vi("z", FLOAT, ["N", 4])],
                         list(model.graph.initializer) + [init("one", 1.0)])
    model_path = save_model(shifted, tmp_path, "shifted")
    near, far = save_arrays(tmp_path, "ref", [ref * np.float32(1 + 5e-4),
                                              ref * np.float32(1 + 5e-3)])
    proc = run_amp(amp_run, model_path, "-i", x, "--compare-to", near)
    assert proc.returncode == 0 and "z: ok" in proc.stdout, describe(proc)
    proc = run_amp(amp_run, model_path, "-i", x, "--compare-to", far)
    assert proc.returncode == 1 and "z: FAIL" in proc.stdout, describe(proc)
    proc = run_amp(amp_run, model_path, "-i", x, "--compare-to", far, "--rtol", "1e-2")
    assert proc.returncode == 0 and "z: ok" in proc.stdout, describe(proc)


def test_compare_to_type_and_shape_mismatch(amp_run, tmp_path):
    """A float64 or wrongly shaped reference is a FAIL, not a crash."""
    model_path, x, ref = compare_setup(tmp_path)
    f64, reshaped = save_arrays(tmp_path, "ref", [ref.astype(np.float64), ref.reshape(2, 8)])
    proc = run_amp(amp_run, model_path, "-i", x, "--compare-to", f64)
    assert proc.returncode == 1, describe(proc)
    assert "y: FAIL element type f32 but the reference is f64" in proc.stdout, describe(proc)
    proc = run_amp(amp_run, model_path, "-i", x, "--compare-to", reshaped)
    assert proc.returncode == 1, describe(proc)
    assert "y: FAIL shape [4, 4] but the reference is [2, 8]" in proc.stdout, describe(proc)


def test_compare_to_nan_and_inf_match(amp_run, tmp_path):
    """NaN equals NaN and equal infinities match in --compare-to; a NaN
    against a number fails."""
    model = build_cast_chain(FLOAT, [FLOAT16])
    model_path = save_model(model, tmp_path)
    x = np.array([np.nan, np.inf, -np.inf, 1e6, 0.5], dtype=np.float32)
    (x_path,) = save_arrays(tmp_path, "x", [x])
    with np.errstate(over="ignore"):
        good = x.astype(np.float16)
    bad = good.copy()
    bad[0] = 0
    good_path, bad_path = save_arrays(tmp_path, "ref", [good, bad])
    proc = run_amp(amp_run, model_path, "-i", x_path, "--compare-to", good_path)
    assert proc.returncode == 0 and "c0: ok" in proc.stdout, describe(proc)
    proc = run_amp(amp_run, model_path, "-i", x_path, "--compare-to", bad_path)
    assert proc.returncode == 1 and "c0: FAIL" in proc.stdout, describe(proc)


def test_benchmark_line(amp_run, tmp_path):
    """--benchmark 3 prints the latency summary after a correct comparison."""
    model_path, x, ref = compare_setup(tmp_path)
    (ref_path,) = save_arrays(tmp_path, "ref", [ref])
    proc = run_amp(amp_run, model_path, "-i", x, "--compare-to", ref_path,
                   "--rtol", "1e-4", "--atol", "1e-5", "--benchmark", "3")
    assert proc.returncode == 0, describe(proc)
    assert "y: ok" in proc.stdout, describe(proc)
    match = re.search(r"^benchmark: 3 runs after 1 warm-up, median (\d+\.\d+) ms, "
                      r"min (\d+\.\d+) ms; compile (\d+\.\d+) s$", proc.stdout, re.M)
    assert match, describe(proc)
    median, minimum, _ = map(float, match.groups())
    assert 0 <= minimum <= median
