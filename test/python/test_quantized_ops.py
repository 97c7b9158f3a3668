"""MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv on amp's CPU
backend.

Every case is checked against an exact numpy reference (int64 products,
the requantization in float64 from the float32 multiplier
(scale_a * scale_b) / scale_y, rounded half to even, plus the zero point,
saturated) and, where onnxruntime's CPU provider implements the case,
against onnxruntime. The int32 results (MatMulInteger, ConvInteger) must
be equal; the requantized 8-bit results may differ from the float64
reference by one step where amp (like onnxruntime) rounds the product
acc * multiplier in float32 (measured: none in these cases), and must equal
onnxruntime's. Cases: int8 and uint8 on each side, no zero point, per-tensor,
per-row (A) / per-column (B) / per-output-channel (W) zero points and scales,
batched and 1-D matmuls, padding, strides, dilations, groups, 1-D and 3-D
convolutions, an int32 bias, saturation at both ends, float16 scales, and
dynamic batch sizes; plus the diagnostics for zero points and scales of the
wrong shape or type."""

import zlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip

ONNX_TYPE = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
             np.int32: TensorProto.INT32, np.float32: TensorProto.FLOAT,
             np.float16: TensorProto.FLOAT16}
RNG = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def seeded(request):
    """Data depend on the test alone, not on what ran before it in the
    worker."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(request.node.name.encode()))


def qrandom(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def make_model(op_type, inputs, initializers, out_type, out_shape, opset, **attrs):
    """One node of ``op_type``; ``inputs`` are (name, array or None) in
    operand order: graph inputs are those named ``x*``/``a``, the rest
    initializers; None is an absent optional input."""
    names, graph_inputs, inits = [], [], []
    for name, value in inputs:
        if value is None:
            names.append("")
            continue
        names.append(name)
        if name in initializers:
            inits.append(numpy_helper.from_array(value, name))
        else:
            shape = list(value.shape)
            graph_inputs.append(helper.make_tensor_value_info(
                name, ONNX_TYPE[value.dtype.type], shape))
    node = helper.make_node(op_type, names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", graph_inputs,
                              [helper.make_tensor_value_info("y", out_type, out_shape)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10 if opset >= 21 else 8)


def feeds_of(model, inputs):
    names = {i.name for i in model.graph.input}
    return {name: value for name, value in inputs if value is not None and name in names}


def run_amp(amp_run, tmp_path, model, feeds):
    proc, outputs = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode == 0, describe(proc)
    return outputs[0]


# ----------------------------------------------------------------------------
# References
# ----------------------------------------------------------------------------


def shifted(v, zp, axis_shape):
    wide = v.astype(np.int64)
    if zp is None:
        return wide
    z = zp.astype(np.int64)
    if z.size > 1:
        z = z.reshape(axis_shape)
    else:
        z = z.reshape(())
    return wide - z


def matmul_integer_ref(a, b, azp, bzp):
    rows = (-1, 1)
    return np.matmul(shifted(a, azp, rows), shifted(b, bzp, (-1,)))


def conv_integer_ref(x, w, xzp, wzp, pads, strides, dilations, group):
    """Direct convolution of the shifted integers (int64, exact)."""
    spatial = x.ndim - 2
    xs = shifted(x, xzp, None)
    ws = shifted(w, wzp, (-1,) + (1,) * (w.ndim - 1))
    pad_width = [(0, 0), (0, 0)] + [(pads[i], pads[i + spatial]) for i in range(spatial)]
    xp = np.pad(xs, pad_width)
    kernel = w.shape[2:]
    out_sizes = [(xp.shape[2 + i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1
                 for i in range(spatial)]
    n, c = x.shape[:2]
    m = w.shape[0]
    cg, mg = c // group, m // group
    out = np.zeros((n, m, *out_sizes), dtype=np.int64)
    for offset in np.ndindex(*kernel):
        window = tuple(slice(offset[i] * dilations[i],
                             offset[i] * dilations[i] + strides[i] * (out_sizes[i] - 1) + 1,
                             strides[i]) for i in range(spatial))
        patch = xp[(slice(None), slice(None)) + window]
        for g in range(group):
            taps = ws[g * mg:(g + 1) * mg, :, *offset]  # [mg, cg]
            out[:, g * mg:(g + 1) * mg] += np.einsum(
                "nc...,mc->nm...", patch[:, g * cg:(g + 1) * cg], taps)
    return out


def requantize_ref(acc, multiplier, yzp):
    info = np.iinfo(yzp.dtype)
    y = np.rint(acc.astype(np.float64) * multiplier.astype(np.float64))
    y += float(yzp.reshape(()))
    return np.clip(y, info.min, info.max).astype(yzp.dtype)


def multiplier_of(a_scale, b_scale, y_scale, a_shape, b_shape):
    f32 = np.float32
    return (a_scale.astype(f32).reshape(a_shape) * b_scale.astype(f32).reshape(b_shape)) \
        / y_scale.astype(f32).reshape(())


def assert_close_steps(got, ref):
    """Equal, or one quantization step apart where float32 rounding of the
    requantization product differs from float64's (none expected)."""
    assert got.dtype == ref.dtype and got.shape == ref.shape
    diff = np.abs(got.astype(np.int64) - ref.astype(np.int64))
    assert diff.max(initial=0) <= 1, f"max difference {diff.max()} steps"
    assert np.count_nonzero(diff) <= max(1, diff.size // 1000), \
        f"{np.count_nonzero(diff)} of {diff.size} differ by one step"


# ----------------------------------------------------------------------------
# MatMulInteger
# ----------------------------------------------------------------------------

MATMUL_SHAPES = [([4, 5], [5, 3]), ([2, 4, 5], [5, 3]), ([3, 1, 4, 5], [2, 5, 6]),
                 ([5], [5, 3]), ([4, 5], [5])]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES)
@pytest.mark.parametrize("a_type,b_type", [(np.uint8, np.int8), (np.int8, np.int8),
                                           (np.uint8, np.uint8), (np.int8, np.uint8)])
@pytest.mark.parametrize("zero_points", ["none", "tensor", "axis"])
def test_matmul_integer(amp_run, tmp_path, a_shape, b_shape, a_type, b_type, zero_points):
    a, b = qrandom(a_shape, a_type), qrandom(b_shape, b_type)
    azp = bzp = None
    if zero_points == "tensor":
        azp, bzp = qrandom([], a_type), qrandom([1], b_type)
    elif zero_points == "axis":
        rows = a_shape[-2] if len(a_shape) >= 2 else 1
        cols = b_shape[-1] if len(b_shape) >= 2 else 1
        azp, bzp = qrandom([rows], a_type), qrandom([cols], b_type)
    inputs = [("a", a), ("b", b), ("azp", azp), ("bzp", bzp)]
    ref = matmul_integer_ref(a, b, azp, bzp)
    model = make_model("MatMulInteger", inputs, {"b", "azp", "bzp"}, TensorProto.INT32,
                       list(ref.shape), 10)
    feeds = feeds_of(model, inputs)
    got = run_amp(amp_run, tmp_path, model, feeds)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref.astype(np.int32))
    if zero_points != "axis":  # onnxruntime: a_zero_point per tensor only
        np.testing.assert_array_equal(got, ort_run(model, feeds)[0])


def test_matmul_integer_dynamic_batch(amp_run, tmp_path):
    """A graph input of symbolic batch size, run at batch 3."""
    a, b = qrandom([3, 4, 7], np.uint8), qrandom([7, 2], np.int8)
    azp, bzp = np.array(131, np.uint8), np.array([-3, 9], np.int8)
    node = helper.make_node("MatMulInteger", ["a", "b", "azp", "bzp"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, ["n", 4, 7])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, ["n", 4, 2])],
        [numpy_helper.from_array(b, "b"), numpy_helper.from_array(azp, "azp"),
         numpy_helper.from_array(bzp, "bzp")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    got = run_amp(amp_run, tmp_path, model, {"a": a})
    np.testing.assert_array_equal(got, matmul_integer_ref(a, b, azp, bzp))
    np.testing.assert_array_equal(got, ort_run(model, {"a": a})[0])


# ----------------------------------------------------------------------------
# ConvInteger
# ----------------------------------------------------------------------------

CONV_CASES = [
    # x shape, w shape, pads, strides, dilations, group
    ([1, 3, 7, 7], [4, 3, 3, 3], [0, 0, 0, 0], [1, 1], [1, 1], 1),
    ([2, 4, 8, 6], [6, 2, 3, 2], [1, 0, 2, 1], [2, 1], [1, 2], 2),
    ([1, 4, 9], [4, 1, 3], [1, 1], [2], [1], 4),
    ([1, 2, 4, 5, 5], [3, 2, 2, 3, 2], [0, 1, 0, 1, 0, 1], [1, 2, 1], [1, 1, 2], 1),
]


def conv_attrs(pads, strides, dilations, group):
    return dict(pads=pads, strides=strides, dilations=dilations, group=group)


@pytest.mark.parametrize("x_shape,w_shape,pads,strides,dilations,group", CONV_CASES)
@pytest.mark.parametrize("x_type,w_type", [(np.uint8, np.int8), (np.uint8, np.uint8),
                                           (np.int8, np.int8)])
@pytest.mark.parametrize("zero_points", ["none", "tensor", "channel"])
def test_conv_integer(amp_run, tmp_path, x_shape, w_shape, pads, strides, dilations, group,
                      x_type, w_type, zero_points):
    x, w = qrandom(x_shape, x_type), qrandom(w_shape, w_type)
    xzp = wzp = None
    if zero_points == "tensor":
        xzp, wzp = qrandom([], x_type), qrandom([], w_type)
    elif zero_points == "channel":
        xzp, wzp = qrandom([1], x_type), qrandom([w_shape[0]], w_type)
    inputs = [("x", x), ("w", w), ("xzp", xzp), ("wzp", wzp)]
    ref = conv_integer_ref(x, w, xzp, wzp, pads, strides, dilations, group)
    model = make_model("ConvInteger", inputs, {"w", "xzp", "wzp"}, TensorProto.INT32,
                       list(ref.shape), 10, **conv_attrs(pads, strides, dilations, group))
    feeds = feeds_of(model, inputs)
    got = run_amp(amp_run, tmp_path, model, feeds)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref.astype(np.int32))
    if zero_points != "channel":  # onnxruntime: w_zero_point per tensor only
        np.testing.assert_array_equal(got, ort_run(model, feeds)[0])


def test_conv_integer_pads_with_the_zero_point(amp_run, tmp_path):
    """Padding reads as the zero point (0 after the shift), as onnxruntime
    does: a constant input equal to its zero point gives all zeros."""
    x = np.full([1, 1, 3, 3], 77, np.uint8)
    w = qrandom([2, 1, 3, 3], np.uint8)
    inputs = [("x", x), ("w", w), ("xzp", np.array(77, np.uint8)), ("wzp", None)]
    model = make_model("ConvInteger", inputs, {"w", "xzp"}, TensorProto.INT32, [1, 2, 3, 3],
                       10, pads=[1, 1, 1, 1])
    got = run_amp(amp_run, tmp_path, model, feeds_of(model, inputs))
    np.testing.assert_array_equal(got, np.zeros([1, 2, 3, 3], np.int32))
    np.testing.assert_array_equal(got, ort_run(model, feeds_of(model, inputs))[0])


# ----------------------------------------------------------------------------
# QLinearMatMul
# ----------------------------------------------------------------------------


def scales(shape, dtype, low=0.002, high=0.05):
    return RNG.uniform(low, high, size=shape).astype(dtype)


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES[:4])
@pytest.mark.parametrize("a_type,b_type,y_type", [(np.uint8, np.int8, np.uint8),
                                                  (np.int8, np.int8, np.int8),
                                                  (np.uint8, np.uint8, np.uint8),
                                                  (np.int8, np.uint8, np.int8)])
@pytest.mark.parametrize("granularity", ["tensor", "column", "column_ort"])
@pytest.mark.parametrize("scale_type", [np.float32, np.float16])
def test_qlinear_matmul(amp_run, tmp_path, a_shape, b_shape, a_type, b_type, y_type,
                        granularity, scale_type):
    """Per column: ONNX's [N] and onnxruntime's [..., 1, N]."""
    a, b = qrandom(a_shape, a_type), qrandom(b_shape, b_type)
    cols = b_shape[-1]
    b_param_shape = {"tensor": [], "column": [cols],
                     "column_ort": list(b_shape[:-2]) + [1, cols]}[granularity]
    a_scale, a_zp = scales([], scale_type), qrandom([], a_type)
    b_scale, b_zp = scales(b_param_shape, scale_type), qrandom(b_param_shape, b_type)
    # y's scale puts the results around the middle of its range, with some
    # saturating at both ends.
    acc = np.matmul(a.astype(np.int64) - a_zp, b.astype(np.int64) - b_zp)
    # y's scale spreads the results over about 1.3 standard deviations of
    # y's range, so that some saturate.
    y_scale = np.array(np.std(acc * float(a_scale) * b_scale.astype(np.float64)) / 100 + 1e-3,
                       scale_type)
    y_zp = qrandom([], y_type)
    inputs = [("a", a), ("a_scale", a_scale), ("a_zp", a_zp), ("b", b), ("b_scale", b_scale),
              ("b_zp", b_zp), ("y_scale", y_scale), ("y_zp", y_zp)]
    # A 1-D a has no row dimension in y: [..., 1, N] applies as [..., N].
    b_shape_in_y = b_scale.shape if len(a_shape) > 1 else (-1,)
    ref = requantize_ref(acc, multiplier_of(a_scale, b_scale, y_scale, (), b_shape_in_y),
                         y_zp)
    info = np.iinfo(y_type)
    assert (ref == info.min).any() or (ref == info.max).any() or ref.size < 16
    model = make_model("QLinearMatMul", inputs,
                       {"b", "a_scale", "a_zp", "b_scale", "b_zp", "y_scale", "y_zp"},
                       ONNX_TYPE[y_type], list(ref.shape), 21)
    feeds = feeds_of(model, inputs)
    got = run_amp(amp_run, tmp_path, model, feeds)
    assert_close_steps(got, ref)
    # onnxruntime: float scales; per column only as [..., 1, N]; not int8 a
    # with uint8 b.
    if scale_type == np.float32 and granularity != "column" and \
            (a_type, b_type) != (np.int8, np.uint8):
        np.testing.assert_array_equal(got, ort_run(model, feeds)[0])


def test_qlinear_matmul_per_row_a(amp_run, tmp_path):
    """ONNX's per-row quantization of a (opset 10 wording): a_scale and
    a_zero_point with one element per row."""
    a, b = qrandom([2, 3, 6], np.uint8), qrandom([6, 4], np.int8)
    a_scale, a_zp = scales([3], np.float32), qrandom([3], np.uint8)
    b_scale, b_zp = scales([], np.float32), np.array(0, np.int8)
    y_scale, y_zp = np.array(0.05, np.float32), np.array(128, np.uint8)
    inputs = [("a", a), ("a_scale", a_scale), ("a_zp", a_zp), ("b", b), ("b_scale", b_scale),
              ("b_zp", b_zp), ("y_scale", y_scale), ("y_zp", y_zp)]
    acc = matmul_integer_ref(a, b, a_zp, b_zp)
    ref = requantize_ref(acc, multiplier_of(a_scale, b_scale, y_scale, (-1, 1), ()), y_zp)
    model = make_model("QLinearMatMul", inputs,
                       {"b", "a_scale", "a_zp", "b_scale", "b_zp", "y_scale", "y_zp"},
                       TensorProto.UINT8, list(ref.shape), 10)
    got = run_amp(amp_run, tmp_path, model, feeds_of(model, inputs))
    assert_close_steps(got, ref)


# ----------------------------------------------------------------------------
# QLinearConv
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("x_shape,w_shape,pads,strides,dilations,group", CONV_CASES)
@pytest.mark.parametrize("x_type,w_type,y_type", [(np.uint8, np.int8, np.uint8),
                                                  (np.int8, np.int8, np.int8),
                                                  (np.uint8, np.uint8, np.uint8)])
@pytest.mark.parametrize("granularity", ["tensor", "channel"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_qlinear_conv(amp_run, tmp_path, x_shape, w_shape, pads, strides, dilations, group,
                      x_type, w_type, y_type, granularity, with_bias):
    x, w = qrandom(x_shape, x_type), qrandom(w_shape, w_type)
    m = w_shape[0]
    w_param_shape = [m] if granularity == "channel" else []
    x_scale, x_zp = scales([], np.float32), qrandom([], x_type)
    w_scale = scales(w_param_shape, np.float32)
    # onnxruntime takes int8 weights with zero points 0 only.
    w_zp = (np.zeros(w_param_shape, w_type) if w_type == np.int8
            else qrandom(w_param_shape, w_type))
    bias = RNG.integers(-5000, 5000, size=[m]).astype(np.int32) if with_bias else None
    acc = conv_integer_ref(x, w, x_zp, w_zp, pads, strides, dilations, group)
    if bias is not None:
        acc = acc + bias.reshape((-1,) + (1,) * (len(x_shape) - 2))
    channel_shape = (-1,) + (1,) * (len(x_shape) - 2)
    multiplier = multiplier_of(x_scale, w_scale, np.array(1, np.float32), (), channel_shape)
    y_scale = np.array(np.std(acc * multiplier.astype(np.float64)) / 100 + 1e-3, np.float32)
    y_zp = qrandom([], y_type)
    inputs = [("x", x), ("x_scale", x_scale), ("x_zp", x_zp), ("w", w), ("w_scale", w_scale),
              ("w_zp", w_zp), ("y_scale", y_scale), ("y_zp", y_zp), ("bias", bias)]
    ref = requantize_ref(acc, multiplier_of(x_scale, w_scale, y_scale, (), channel_shape),
                         y_zp)
    model = make_model("QLinearConv", inputs,
                       {"w", "x_scale", "x_zp", "w_scale", "w_zp", "y_scale", "y_zp", "bias"},
                       ONNX_TYPE[y_type], list(ref.shape), 10,
                       **conv_attrs(pads, strides, dilations, group))
    feeds = feeds_of(model, inputs)
    got = run_amp(amp_run, tmp_path, model, feeds)
    assert_close_steps(got, ref)
    np.testing.assert_array_equal(got, ort_run(model, feeds)[0])


# ----------------------------------------------------------------------------
# Diagnostics
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("case,message", [
    ("azp_rows", "MatMulInteger a_zero_point has 5 elements but the rows of A "
                 "(its dimension -2) number 4"),
    ("bzp_2d", "MatMulInteger b_zero_point of shape [3, 3] does not fit B of shape "
               "[5, 3] (per column: [N] or [..., 1, N])"),
    ("azp_2d", "MatMulInteger a_zero_point must be a scalar or a 1-D tensor with one "
               "element per the rows of A (its dimension -2), not of shape [4, 1]"),
    ("bzp_type", "MatMulInteger b_zero_point is ui8 but B is i8"),
])
def test_matmul_integer_errors(amp_run, tmp_path, case, message):
    a, b = qrandom([4, 5], np.uint8), qrandom([5, 3], np.int8)
    azp = {"azp_rows": qrandom([5], np.uint8),
           "azp_2d": qrandom([4, 1], np.uint8)}.get(case)
    bzp = {"bzp_2d": qrandom([3, 3], np.int8),
           "bzp_type": qrandom([], np.uint8)}.get(case)
    inputs = [("a", a), ("b", b), ("azp", azp), ("bzp", bzp)]
    model = make_model("MatMulInteger", inputs, {"b", "azp", "bzp"}, TensorProto.INT32,
                       [4, 3], 10)
    proc, _ = run_amp_on(amp_run, tmp_path, model, feeds_of(model, inputs))
    assert proc.returncode != 0, describe(proc)
    assert message in proc.stderr, describe(proc)
    assert "MatMulInteger" in proc.stderr


def test_qlinear_conv_errors(amp_run, tmp_path):
    """A per-channel x scale (ONNX: a scalar) and a bias of the wrong size."""
    x, w = qrandom([1, 2, 4, 4], np.uint8), qrandom([3, 2, 1, 1], np.int8)
    base = dict(x_scale=np.array(0.1, np.float32), x_zp=np.array(3, np.uint8),
                w_scale=np.array(0.1, np.float32), w_zp=np.array(0, np.int8),
                y_scale=np.array(0.2, np.float32), y_zp=np.array(9, np.uint8), bias=None)
    for change, message in [
            (dict(x_scale=scales([2], np.float32)),
             "QLinearConv x_scale must be a scalar (per-tensor quantization), not of shape [2]"),
            (dict(bias=np.zeros([2], np.int32)),
             "QLinearConv B must be 1-D with one element per output channel (3)")]:
        values = dict(base, **change)
        inputs = [("x", x), ("x_scale", values["x_scale"]), ("x_zp", values["x_zp"]),
                  ("w", w), ("w_scale", values["w_scale"]), ("w_zp", values["w_zp"]),
                  ("y_scale", values["y_scale"]), ("y_zp", values["y_zp"]),
                  ("bias", values["bias"])]
        model = make_model("QLinearConv", inputs,
                           {"w", "x_scale", "x_zp", "w_scale", "w_zp", "y_scale", "y_zp",
                            "bias"}, TensorProto.UINT8, [1, 3, 4, 4], 10)
        proc, _ = run_amp_on(amp_run, tmp_path, model, feeds_of(model, inputs))
        assert proc.returncode != 0, describe(proc)
        assert message in proc.stderr, describe(proc)
