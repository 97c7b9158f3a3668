"""Ops whose result size depends on the data, on amp's CPU backend, against
onnxruntime: NonZero (every rank, NaN counts as nonzero, all zeros) and
Compress (each axis, no axis, conditions shorter than the axis, nothing
kept); a condition longer than the axis is a run-time error naming the
node."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip
RNG = np.random.default_rng(9)


def make(node, inputs, out_elem):
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", out_elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             ir_version=8)


def check(amp_run, folder, model, feeds):
    proc, outputs = run_amp_on(amp_run, folder, model, feeds)
    assert proc.returncode == 0, describe(proc)
    want = ort_run(model, feeds)[0]
    assert outputs[0].shape == want.shape
    np.testing.assert_array_equal(outputs[0], want)


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (2, 1, 3, 2)])
@pytest.mark.parametrize("dtype,elem", [(np.float32, TensorProto.FLOAT),
                                        (np.int64, TensorProto.INT64),
                                        (np.bool_, TensorProto.BOOL)])
def test_nonzero(amp_run, tmp_path, shape, dtype, elem):
    x = (RNG.integers(0, 3, shape) * RNG.integers(0, 2, shape)).astype(dtype)
    node = helper.make_node("NonZero", ["x"], ["y"], name="nz")
    model = make(node, [helper.make_tensor_value_info("x", elem, list(shape))],
                 TensorProto.INT64)
    check(amp_run, tmp_path, model, {"x": x})


def test_nonzero_nan_and_all_zero(amp_run, tmp_path):
    node = helper.make_node("NonZero", ["x"], ["y"], name="nz")
    model = make(node, [helper.make_tensor_value_info("x", 1, [2, 3])], TensorProto.INT64)
    check(amp_run, tmp_path / "nan", model,
          {"x": np.array([[0, np.nan, 0], [-0.0, 2, 0]], np.float32)})
    check(amp_run, tmp_path / "zeros", model, {"x": np.zeros((2, 3), np.float32)})


CONDITIONS = [[1, 0, 1], [0, 1], [0, 0, 0], [1, 1, 1], [1, 0, 0, 1]]
COMPRESS_CASES = [(axis, c) for axis in [None, 0, 1, -1] for c in CONDITIONS
                  if axis != -1 or len(c) <= 3]  # the last axis has 3


@pytest.mark.parametrize("axis,condition", COMPRESS_CASES)
def test_compress(amp_run, tmp_path, axis, condition):
    x = RNG.standard_normal((4, 4, 3)).astype(np.float32)
    cond = np.array(condition, np.bool_)
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("Compress", ["x", "c"], ["y"], name="compress", **attrs)
    model = make(node, [helper.make_tensor_value_info("x", 1, [4, 4, 3]),
                        helper.make_tensor_value_info("c", TensorProto.BOOL, [len(cond)])],
                 TensorProto.FLOAT)
    check(amp_run, tmp_path, model, {"x": x, "c": cond})


def test_compress_condition_longer_than_axis(amp_run, tmp_path):
    node = helper.make_node("Compress", ["x", "c"], ["y"], name="compress", axis=1)
    model = make(node, [helper.make_tensor_value_info("x", 1, [2, 3]),
                        helper.make_tensor_value_info("c", TensorProto.BOOL, [5])],
                 TensorProto.FLOAT)
    proc, _ = run_amp_on(amp_run, tmp_path, model,
                         {"x": np.zeros((2, 3), np.float32), "c": np.ones(5, np.bool_)})
    assert proc.returncode != 0, describe(proc)
    assert ("node 'compress' (Compress): the condition has 5 entries but the axis "
            "only 3") in proc.stderr, describe(proc)
