"""Operator forms of opsets 26-28 on amp's CPU backend, against ONNX's
reference evaluator (onnx.reference): SpaceToDepth's mode, Range's
stash_type for float16/bfloat16, BitShift on signed types and by amounts out
of range, Mod of floats with fmod = 0 (signed zeros and infinite divisors
included), QuantizeLinear's output_dtype 0 ("not given"). onnxruntime is
not the reference here: its releases lag behind opset 28.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from test_amp_run import describe, run_amp_on, save_model

FLOAT, FLOAT16, INT8, INT32 = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT8,
                               TensorProto.INT32)


def model28(nodes, inputs, outputs, opset=28):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=11)


def vi(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def run_and_compare(amp_run, tmp_path, model, feeds, exact_zero_sign=False):
    """amp-run's outputs equal the reference evaluator's bit for bit (NaN
    where it is NaN; with exact_zero_sign, zeros signed alike)."""
    proc, outputs = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode == 0, describe(proc)
    want = ReferenceEvaluator(model).run(None, feeds)
    for o, got, expected in zip(model.graph.output, outputs, want):
        assert got.dtype == expected.dtype and got.shape == expected.shape, o.name
        np.testing.assert_array_equal(got, expected, err_msg=o.name)
        if exact_zero_sign:
            assert np.array_equal(np.signbit(got), np.signbit(expected)), (o.name, got, expected)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_modes(amp_run, tmp_path, mode):
    """CRD orders the block's channels (c, by, bx), DCR (by, bx, c); the CRD
    result goes back through DepthToSpace CRD."""
    nodes = [helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode=mode),
             helper.make_node("DepthToSpace", ["y"], ["back"], blocksize=2, mode=mode)]
    model = model28(nodes, [vi("x", FLOAT, [2, 3, 4, 6])],
                    [vi("y", FLOAT, [2, 12, 2, 3]), vi("back", FLOAT, [2, 3, 4, 6])])
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    run_and_compare(amp_run, tmp_path, model, {"x": x})


def test_space_to_depth_bad_mode_is_refused(amp_opt, tmp_path):
    node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode="RDC", name="s2d")
    model = model28([node], [vi("x", FLOAT, [1, 2, 4, 4])], [vi("y", FLOAT, None)])
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    amp_opt.expect_import_error(path, "node 's2d'", "SpaceToDepth mode must be 'DCR' or 'CRD', "
                                "not 'RDC'")


@pytest.mark.parametrize("stash", [None, 1, 11])
def test_float16_range_stash_type(amp_run, tmp_path, stash):
    """From 2040 in steps of 0.75 (above 2048 float16 steps by 2): each
    element is start + i * delta in float (the default) or double, rounded
    once to float16."""
    attrs = {} if stash is None else {"stash_type": stash}
    node = helper.make_node("Range", ["s", "l", "d"], ["y"], **attrs)
    model = model28([node], [vi("s", FLOAT16, []), vi("l", FLOAT16, []), vi("d", FLOAT16, [])],
                    [vi("y", FLOAT16, None)])
    feeds = {"s": np.float16(2040.0), "l": np.float16(2064.0), "d": np.float16(0.75)}
    run_and_compare(amp_run, tmp_path, model, {k: np.array(v) for k, v in feeds.items()})


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype,onnx_type", [(np.int8, INT8), (np.int32, INT32)])
def test_signed_bit_shift(amp_run, tmp_path, direction, dtype, onnx_type):
    """Arithmetic right shifts; amounts below 0 or at least the width give
    the fill (0, or -1 for a negative value shifted right)."""
    bits = np.iinfo(dtype).bits
    x = np.array([-5, 5, -128, -1, 7, -7, 64, 1], dtype=dtype)
    y = np.array([1, 2, 0, bits, bits + 3, -1, bits - 1, -bits], dtype=dtype)
    node = helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)
    model = model28([node], [vi("x", onnx_type, [8]), vi("y", onnx_type, [8])],
                    [vi("z", onnx_type, [8])])
    run_and_compare(amp_run, tmp_path, model, {"x": x, "y": y})


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype,onnx_type", [(np.float32, FLOAT), (np.float16, FLOAT16)])
def test_float_mod(amp_run, tmp_path, fmod, dtype, onnx_type):
    """fmod = 0 is x - floor(x / y) * y with the divisor's sign (a zero
    result takes it too; an infinite divisor of the other sign is the
    result); fmod = 1 is C's fmod."""
    inf, nan = np.inf, np.nan
    x = np.array([-5, 5, 0, -0.0, -5, 5, 6, -6, 7.5, inf, 3, nan, 5.5, -4], dtype=dtype)
    y = np.array([3, -3, -3, 3, inf, -inf, 3, -3, 2, 2, 0, 1, 0.5, -inf], dtype=dtype)
    node = helper.make_node("Mod", ["x", "y"], ["z"], fmod=fmod)
    model = model28([node], [vi("x", onnx_type, [14]), vi("y", onnx_type, [14])],
                    [vi("z", onnx_type, [14])])
    run_and_compare(amp_run, tmp_path, model, {"x": x, "y": y}, exact_zero_sign=True)


def test_quantize_linear_output_dtype_zero_means_not_given(amp_opt, tmp_path):
    """output_dtype 0 is the default ("from the zero point"), not a type."""
    scale = helper.make_tensor("scale", FLOAT, [], [0.5])
    zero = helper.make_tensor("zero", TensorProto.UINT8, [], [3])
    node = helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["y"], output_dtype=0)
    graph = helper.make_graph([node], "g", [vi("x", FLOAT, [4])],
                              [vi("y", TensorProto.UINT8, [4])], [scale, zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 28)], ir_version=11)
    text = amp_opt.import_model(model, tmp_path / "model.mlir")
    assert "amp.quantize_linear" in text and "output_dtype" not in text


def test_space_to_depth_crd_export_needs_opset_28(amp_opt, tmp_path):
    """The writer keeps mode where the target opset has it and refuses CRD
    before opset 28 (DCR, the older opsets' only order, is written without
    it)."""
    for mode in ("DCR", "CRD"):
        node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode=mode)
        model = model28([node], [vi("x", FLOAT, [1, 2, 4, 4])], [vi("y", FLOAT, None)])
        source = save_model(model, tmp_path, mode)
        out = tmp_path / f"{mode}_21.onnx"
        proc = amp_opt.run(source, "--amp-opt-level=0", "--amp-export-opset=21", "-o", out)
        if mode == "DCR":
            assert proc.returncode == 0, proc.stderr
            assert "mode" not in str(onnx.load(out).graph.node[0].attribute)
        else:
            assert proc.returncode == 1 and not out.exists(), proc.stderr
            assert ("attribute 'mode' of ONNX SpaceToDepth does not exist at opset 21 (it "
                    "does from opset 28") in proc.stderr
