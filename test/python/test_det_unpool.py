"""Det, MaxUnpool and MaxPool's column-major Indices on amp's CPU backend.

- Det against numpy's float64 determinant: batches of every rank, 1x1 and
  empty matrices, singular matrices (a zero pivot), matrices that need row
  swaps, f16/f64 inputs (computed in f64, rounded once).
- MaxUnpool against onnx's reference (onnxruntime differs from it when an
  output_shape is given: it numbers the larger shape): with and without
  output_shape, 1-D to 3-D, strides and pads, repeated indices (the last
  value wins), MaxPool -> MaxUnpool round trips; an index outside the
  unpooled tensor is a run-time error naming the node.
- MaxPool with storage_order = 1 against onnxruntime (the same elements,
  numbered column-major over the spatial dimensions).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip
RNG = np.random.default_rng(31)
ELEM = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
        np.float64: TensorProto.DOUBLE}


def make(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def det_model(shape, dtype):
    elem = ELEM[dtype]
    return make([helper.make_node("Det", ["x"], ["y"], name="det")],
                [helper.make_tensor_value_info("x", elem, list(shape))],
                [helper.make_tensor_value_info("y", elem, list(shape[:-2]))])


def check_det(amp_run, folder, x, rtol):
    proc, outputs = run_amp_on(amp_run, folder, det_model(x.shape, x.dtype.type), {"x": x})
    assert proc.returncode == 0, describe(proc)
    want = np.linalg.det(x.astype(np.float64)) if x.shape[-1] else np.ones(x.shape[:-2])
    got = outputs[0].astype(np.float64)
    assert got.shape == want.shape
    scale = np.maximum(np.abs(want), 1e-6 * np.abs(x.astype(np.float64)).max(initial=1) ** x.shape[-1])
    assert np.all(np.abs(got - want) <= rtol * scale), (got, want)


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (5, 5), (8, 8), (4, 3, 3),
                                   (2, 3, 4, 4), (2, 0, 0), (0, 3, 3)])
def test_det(amp_run, tmp_path, shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    check_det(amp_run, tmp_path, x, 1e-5)


def test_det_singular_and_pivoting(amp_run, tmp_path):
    x = RNG.standard_normal((6, 4, 4)).astype(np.float32)
    x[0, 2] = x[0, 0] * 2            # dependent rows: 0
    x[1, :, 1] = 0                    # a zero column: a zero pivot
    x[2] = np.eye(4, dtype=np.float32)[[1, 0, 3, 2]]   # two swaps: +1
    x[3] = np.eye(4, dtype=np.float32)[[1, 2, 3, 0]]   # a 4-cycle: -1
    x[4, 0, 0] = 0                    # the first pivot needs a swap
    x[5] = 0                          # all zeros
    proc, outputs = run_amp_on(amp_run, tmp_path, det_model(x.shape, np.float32), {"x": x})
    assert proc.returncode == 0, describe(proc)
    got = outputs[0]
    assert abs(got[0]) < 1e-5 and got[1] == 0 and got[5] == 0
    assert got[2] == 1 and got[3] == -1
    np.testing.assert_allclose(got[4], np.linalg.det(x[4].astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("dtype,rtol", [(np.float16, 2e-3), (np.float64, 1e-12)])
def test_det_other_types(amp_run, tmp_path, dtype, rtol):
    x = RNG.standard_normal((3, 3, 3)).astype(dtype)
    check_det(amp_run, tmp_path, x, rtol)


def unpool_model(x_shape, kernel, strides=None, pads=None, output_shape=None):
    attrs = {"kernel_shape": kernel}
    if strides:
        attrs["strides"] = strides
    if pads:
        attrs["pads"] = pads
    inputs = ["x", "i"] + (["s"] if output_shape else [])
    inits = [numpy_helper.from_array(np.array(output_shape, np.int64), "s")] \
        if output_shape else []
    return make([helper.make_node("MaxUnpool", inputs, ["y"], name="unpool", **attrs)],
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape)),
                 helper.make_tensor_value_info("i", TensorProto.INT64, list(x_shape))],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)


def check_unpool(amp_run, folder, model, x, i):
    proc, outputs = run_amp_on(amp_run, folder, model, {"x": x, "i": i})
    assert proc.returncode == 0, describe(proc)
    want = ReferenceEvaluator(model).run(None, {"x": x, "i": i})[0]
    assert outputs[0].shape == want.shape
    np.testing.assert_array_equal(outputs[0], want)


UNPOOL_CASES = [
    ((1, 1, 2, 2), [2, 2], [2, 2], None, None),
    ((1, 1, 2, 2), [2, 2], [2, 2], None, [1, 1, 5, 5]),
    ((2, 3, 3, 3), [2, 2], [2, 2], None, None),
    ((2, 3, 3, 3), [3, 3], [2, 2], [1, 1, 1, 1], None),
    ((1, 2, 4), [2], [2], None, [1, 2, 9]),
    ((1, 1, 2, 2, 2), [2, 2, 2], [2, 2, 2], None, None),
]


@pytest.mark.parametrize("x_shape,kernel,strides,pads,output_shape", UNPOOL_CASES)
def test_max_unpool(amp_run, tmp_path, x_shape, kernel, strides, pads, output_shape):
    model = unpool_model(x_shape, kernel, strides, pads, output_shape)
    # Indices into the unpooled tensor (what the reference numbers), some
    # repeated: the last value written wins.
    unpooled = [x_shape[0], x_shape[1]] + [
        (n - 1) * s + k - (pads[d] + pads[d + len(kernel)] if pads else 0)
        for d, (n, s, k) in enumerate(zip(x_shape[2:], strides, kernel))]
    total = int(np.prod(unpooled))
    x = RNG.standard_normal(x_shape).astype(np.float32)
    i = RNG.integers(0, total, x_shape).astype(np.int64)
    check_unpool(amp_run, tmp_path, model, x, i)


def test_max_pool_then_unpool(amp_run, tmp_path):
    """MaxPool's values and Indices, unpooled: the maxima back in place."""
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    model = make([helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2],
                                   strides=[2, 2]),
                  helper.make_node("MaxUnpool", ["p", "i"], ["y"], kernel_shape=[2, 2],
                                   strides=[2, 2])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6, 6])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    proc, outputs = run_amp_on(amp_run, tmp_path, model, {"x": x})
    assert proc.returncode == 0, describe(proc)
    np.testing.assert_array_equal(outputs[0], ort_run(model, {"x": x})[0])


def test_max_unpool_index_out_of_range(amp_run, tmp_path):
    model = unpool_model((1, 1, 2, 2), [2, 2], [2, 2])
    x = np.ones((1, 1, 2, 2), np.float32)
    i = np.array([[[[5, 7], [13, 16]]]], np.int64)
    proc, _ = run_amp_on(amp_run, tmp_path, model, {"x": x, "i": i})
    assert proc.returncode != 0
    assert "node 'unpool' (MaxUnpool): index 16 is outside [0, 16)" in proc.stderr, \
        describe(proc)


@pytest.mark.parametrize("shape,kernel,strides,pads", [
    ((1, 2, 5, 5), [2, 2], [2, 2], None),
    ((2, 3, 7, 6), [3, 2], [2, 1], [1, 0, 1, 1]),
    ((1, 1, 4, 5, 3), [2, 2, 2], [1, 2, 1], None),
])
def test_max_pool_column_major_indices(amp_run, tmp_path, shape, kernel, strides, pads):
    attrs = {"kernel_shape": kernel, "strides": strides, "storage_order": 1}
    if pads:
        attrs["pads"] = pads
    model = make([helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                  helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    x = RNG.standard_normal(shape).astype(np.float32)
    proc, outputs = run_amp_on(amp_run, tmp_path, model, {"x": x})
    assert proc.returncode == 0, describe(proc)
    want = ort_run(model, {"x": x})
    np.testing.assert_array_equal(outputs[0], want[0])
    np.testing.assert_array_equal(outputs[1], want[1])


def test_max_unpool_run_time_output_shape(amp_run, tmp_path):
    """output_shape as a graph input (onnx's node test): read at run time;
    one smaller than the unpooled shape is a run-time error."""
    model = make([helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], name="unpool",
                                   kernel_shape=[2, 2], strides=[2, 2])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
                  helper.make_tensor_value_info("i", TensorProto.INT64, [1, 1, 2, 2]),
                  helper.make_tensor_value_info("s", TensorProto.INT64, [4])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    x = RNG.standard_normal((1, 1, 2, 2)).astype(np.float32)
    i = np.array([[[[5, 7], [13, 15]]]], np.int64)
    for shape in ([1, 1, 5, 5], [1, 1, 4, 6], [1, 1, 4, 4]):
        feeds = {"x": x, "i": i, "s": np.array(shape, np.int64)}
        proc, outputs = run_amp_on(amp_run, tmp_path / str(shape[-1] * 10 + shape[-2]), model,
                                   feeds)
        assert proc.returncode == 0, describe(proc)
        np.testing.assert_array_equal(outputs[0], ReferenceEvaluator(model).run(None, feeds)[0])
    feeds = {"x": x, "i": i, "s": np.array([1, 1, 3, 5], np.int64)}
    proc, _ = run_amp_on(amp_run, tmp_path / "small", model, feeds)
    assert proc.returncode != 0
    assert ("node 'unpool' (MaxUnpool): output_shape[2] is 3 but the unpooled size is 4"
            in proc.stderr), describe(proc)
