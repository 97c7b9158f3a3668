"""ReverseSequence on amp's CPU backend against onnxruntime: time-major and
batch-major layouts, lengths from 0 to the full sequence, float and
integer data; a length beyond the sequence is a run-time error naming the
node, never a read outside the input."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip
RNG = np.random.default_rng(5)


def model(shape, batch_axis, time_axis, elem=TensorProto.FLOAT):
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], name="rev",
                            batch_axis=batch_axis, time_axis=time_axis)
    graph = helper.make_graph(
        [node], "rs", [helper.make_tensor_value_info("x", elem, shape),
                       helper.make_tensor_value_info("lens", TensorProto.INT64,
                                                     [shape[batch_axis]])],
        [helper.make_tensor_value_info("y", elem, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("batch_axis,time_axis", [(1, 0), (0, 1)])
@pytest.mark.parametrize("dtype,elem", [(np.float32, TensorProto.FLOAT),
                                        (np.int64, TensorProto.INT64)])
def test_matches_onnxruntime(amp_run, tmp_path, batch_axis, time_axis, dtype, elem):
    shape = [5, 4, 3] if time_axis == 0 else [4, 5, 3]
    m = model(shape, batch_axis, time_axis, elem)
    x = RNG.integers(-50, 50, shape).astype(dtype)
    lens = np.array([5, 0, 1, 3], np.int64)
    proc, outputs = run_amp_on(amp_run, tmp_path, m, {"x": x, "lens": lens})
    assert proc.returncode == 0, describe(proc)
    np.testing.assert_array_equal(outputs[0], ort_run(m, {"x": x, "lens": lens})[0])


def test_length_beyond_the_sequence_is_an_error(amp_run, tmp_path):
    m = model([5, 4, 3], 1, 0)
    x = RNG.normal(size=(5, 4, 3)).astype(np.float32)
    proc, _ = run_amp_on(amp_run, tmp_path, m, {"x": x, "lens": np.array([5, 6, 1, 3], np.int64)})
    assert proc.returncode == 1, describe(proc)
    assert "node 'rev'" in proc.stderr and "sequence length 6 is outside [0, 6)" in proc.stderr, \
        proc.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
