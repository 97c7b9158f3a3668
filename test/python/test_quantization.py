"""QuantizeLinear and DequantizeLinear on amp's CPU backend against
onnxruntime: per tensor, per axis and blocked (opset 21), int8, uint8,
int16 and uint16, float32 and float16 scales, with and without a zero
point, ties rounded half to even and values beyond the type saturated.
Results must be equal (integers) or within one float ulp of the result
type (dequantized values)."""

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on, save_model

ort = require_module("onnxruntime")  # missing: a failure, not a skip

NP_TO_ONNX = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
              np.int16: TensorProto.INT16, np.uint16: TensorProto.UINT16,
              np.int32: TensorProto.INT32, np.float32: TensorProto.FLOAT,
              np.float16: TensorProto.FLOAT16}
RNG = np.random.default_rng(11)


def model21(node, inputs, outputs, initializers):
    graph = helper.make_graph([node], "q", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def run_amp_outputs(amp_run, tmp_path, model, feeds):
    proc, outputs = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode == 0, describe(proc)
    return outputs


def scale_shape(x_shape, granularity, axis, block):
    if granularity == "tensor":
        return []
    if granularity == "axis":
        return [x_shape[axis]]
    shape = list(x_shape)
    shape[axis] = -(-shape[axis] // block)
    return shape


CASES = [("tensor", 1, 0), ("axis", 1, 0), ("axis", 0, 0), ("blocked", 1, 2),
         ("blocked", 0, 3)]


@pytest.mark.parametrize("granularity,axis,block", CASES)
@pytest.mark.parametrize("qtype", [np.int8, np.uint8, np.int16, np.uint16])
@pytest.mark.parametrize("ftype", [np.float32, np.float16])
@pytest.mark.parametrize("with_zero_point", [True, False])
def test_quantize_linear(amp_run, tmp_path, granularity, axis, block, qtype, ftype,
                         with_zero_point):
    x_shape = [5, 6]
    info = np.iinfo(qtype)
    s_shape = scale_shape(x_shape, granularity, axis, block)
    scale = RNG.uniform(0.02, 0.2, s_shape).astype(ftype)
    # Values that land on .5 after division (ties), far beyond the range
    # (saturation) and ordinary ones.
    x = (RNG.uniform(-1.5, 1.5, x_shape) * float(info.max - info.min) * 0.1).astype(ftype)
    x.flat[0] = ftype(2.5) * scale.flat[0]
    x.flat[1] = ftype(1e4) if ftype == np.float16 else ftype(1e9)
    x.flat[2] = -x.flat[1]
    inits = [numpy_helper.from_array(scale, "scale")]
    inputs = ["x", "scale"]
    if with_zero_point:
        zp = RNG.integers(info.min // 4, info.max // 4 + 1, s_shape).astype(qtype)
        inits.append(numpy_helper.from_array(zp, "zp"))
        inputs.append("zp")
        out_type = NP_TO_ONNX[qtype]
        attrs = {}
    else:
        out_type = NP_TO_ONNX[qtype]
        attrs = {"output_dtype": out_type}
    attrs.update(axis=axis)
    if block:
        attrs["block_size"] = block
    node = helper.make_node("QuantizeLinear", inputs, ["y"], **attrs)
    model = model21(node, [helper.make_tensor_value_info("x", NP_TO_ONNX[ftype], x_shape)],
                    [helper.make_tensor_value_info("y", out_type, x_shape)], inits)
    (got,) = run_amp_outputs(amp_run, tmp_path, model, {"x": x})
    (want,) = ort_run(model, {"x": x})
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("granularity,axis,block", CASES)
@pytest.mark.parametrize("qtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32])
@pytest.mark.parametrize("ftype", [np.float32, np.float16])
def test_dequantize_linear(amp_run, tmp_path, granularity, axis, block, qtype, ftype):
    x_shape = [5, 6]
    info = np.iinfo(qtype)
    s_shape = scale_shape(x_shape, granularity, axis, block)
    scale = RNG.uniform(0.01, 0.5, s_shape).astype(ftype)
    lo, hi = max(info.min, -(2 ** 20)), min(info.max, 2 ** 20)
    x = RNG.integers(lo, hi + 1, x_shape).astype(qtype)
    x.flat[0], x.flat[1] = lo, hi
    zp = RNG.integers(lo // 4, hi // 4 + 1, s_shape).astype(qtype)
    if qtype == np.int32:
        zp[...] = 0  # onnxruntime: int32 only with a zero point of 0
    inits = [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(zp, "zp")]
    attrs = {"axis": axis}
    if block:
        attrs["block_size"] = block
    node = helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["y"], **attrs)
    model = model21(node, [helper.make_tensor_value_info("x", NP_TO_ONNX[qtype], x_shape)],
                    [helper.make_tensor_value_info("y", NP_TO_ONNX[ftype], x_shape)], inits)
    (got,) = run_amp_outputs(amp_run, tmp_path, model, {"x": x})
    (want,) = ort_run(model, {"x": x})
    assert got.dtype == want.dtype == ftype
    # amp rounds (x - zp) * scale once from f32; onnxruntime's float16
    # kernels may round the product in float16 arithmetic: one ulp apart.
    np.testing.assert_array_max_ulp(got, want, maxulp=0 if ftype == np.float32 else 1)


def test_qdq_round_trip_runs_as_one_program(amp_run, tmp_path):
    """A QDQ pair around a MatMul, as onnxruntime's static quantizer writes
    them, runs end to end and matches onnxruntime."""
    w = RNG.normal(0, 0.5, (8, 4)).astype(np.float32)
    w_scale = np.float32(np.abs(w).max() / 127)
    wq = np.clip(np.round(w / w_scale), -127, 127).astype(np.int8)
    inits = [numpy_helper.from_array(wq, "wq"),
             numpy_helper.from_array(np.array(w_scale, np.float32), "w_scale"),
             numpy_helper.from_array(np.array(0, np.int8), "w_zp"),
             numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
             numpy_helper.from_array(np.array(128, np.uint8), "x_zp")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "w_scale", "w_zp"], ["wd"]),
             helper.make_node("MatMul", ["xd", "wd"], ["y"])]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", 1, [3, 8])],
                              [helper.make_tensor_value_info("y", 1, [3, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    x = RNG.normal(0, 1, (3, 8)).astype(np.float32)
    (got,) = run_amp_outputs(amp_run, tmp_path, model, {"x": x})
    (want,) = ort_run(model, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["mixed", "positive", "negative", "zeros", "ties"])
def test_dynamic_quantize_linear(amp_run, tmp_path, case):
    """uint8 per-tensor quantization with a scale and zero point computed
    from the data; an all-zero input gets onnxruntime's scale 1."""
    x = {"mixed": RNG.normal(0, 3, (4, 7)),
         "positive": RNG.uniform(0.5, 9, (4, 7)),
         "negative": RNG.uniform(-9, -0.5, (4, 7)),
         "zeros": np.zeros((4, 7)),
         "ties": np.tile([-2.55, 0.0, 0.5, 1.5, 2.5, 255.0, 12.75], (4, 1))}[case]
    x = x.astype(np.float32)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zp"])
    graph = helper.make_graph(
        [node], "dq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 7])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [4, 7]),
         helper.make_tensor_value_info("scale", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("zp", TensorProto.UINT8, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    got = run_amp_outputs(amp_run, tmp_path, model, {"x": x})
    want = ort_run(model, {"x": x})
    for name, g, w in zip(["y", "scale", "zp"], got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, name
        np.testing.assert_array_equal(g, w, err_msg=name)


def test_autocast_leaves_a_qdq_model_quantized(amp_opt, tmp_path):
    """--amp-type f16 on a QDQ model: the int8 weight stays an int8
    initializer (its DequantizeLinear is not folded into a float constant),
    no Cast enters the DequantizeLinear -> MatMul -> QuantizeLinear
    pattern, the report says why, and onnxruntime runs the written model
    to the source model's results."""
    w = RNG.integers(-127, 128, (8, 4)).astype(np.int8)
    inits = [numpy_helper.from_array(w, "wq"),
             numpy_helper.from_array(np.array(0.01, np.float32), "w_scale"),
             numpy_helper.from_array(np.array(0, np.int8), "w_zp"),
             numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
             numpy_helper.from_array(np.array(128, np.uint8), "x_zp"),
             numpy_helper.from_array(np.array(0.05, np.float32), "y_scale")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "w_scale", "w_zp"], ["wd"]),
             helper.make_node("MatMul", ["xd", "wd"], ["m"], name="qmatmul"),
             helper.make_node("QuantizeLinear", ["m", "y_scale", "x_zp"], ["mq"]),
             helper.make_node("DequantizeLinear", ["mq", "y_scale", "x_zp"], ["y"])]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", 1, [3, 8])],
                              [helper.make_tensor_value_info("y", 1, [3, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    source = save_model(model, tmp_path, "qdq")
    out, report = tmp_path / "qdq_f16.onnx", tmp_path / "report.json"
    proc = amp_opt.run(source, "--amp-type=f16", f"--amp-report={report}", "-o", out)
    assert proc.returncode == 0, proc.stderr
    written = onnx.load(out)
    assert [n.op_type for n in written.graph.node if n.op_type == "Cast"] == []
    weights = {i.name: i for i in written.graph.initializer}
    assert weights["wq"].data_type == TensorProto.INT8
    ops = {o["node"]: o for o in json.loads(report.read_text())["ops"]}
    assert ops["qmatmul"]["precision"] == "f32"
    assert ops["qmatmul"]["reason"].startswith("quantized region: input from DequantizeLinear")
    x = RNG.normal(0, 1, (3, 8)).astype(np.float32)
    session = ort.InferenceSession(written.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], ort_run(model, {"x": x})[0])
