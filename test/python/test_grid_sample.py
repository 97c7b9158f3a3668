"""GridSample on amp's CPU backend: every mode (nearest, linear, cubic) with
every padding mode (zeros, border, reflection) and both align_corners, on
grids reaching well outside [-1, 1] (several reflections), against
onnxruntime (2-D) and onnx's reference (3-D); fp16 data; an empty image."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip
RNG = np.random.default_rng(20)


def model(x_shape, grid_shape, elem=TensorProto.FLOAT, **attrs):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", **attrs)
    y_shape = x_shape[:2] + grid_shape[1:-1]
    graph = helper.make_graph(
        [node], "gs", [helper.make_tensor_value_info("x", elem, x_shape),
                       helper.make_tensor_value_info("grid", elem, grid_shape)],
        [helper.make_tensor_value_info("y", elem, y_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)],
                             ir_version=9)


def grid_points(shape):
    """Points inside, on the borders and up to 3.5x outside [-1, 1], plus
    the exact corners and centres."""
    g = RNG.uniform(-3.5, 3.5, shape).astype(np.float32)
    flat = g.reshape(-1)
    special = np.array([-1, 1, 0, -1, 1, 1, -1, -1, 0.5, -0.5], np.float32)
    flat[:special.size] = special
    return g


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_grid_sample_2d_matches_onnxruntime(amp_run, tmp_path, mode, padding, align):
    x = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
    grid = grid_points((2, 6, 7, 2))
    m = model(list(x.shape), list(grid.shape), mode=mode, padding_mode=padding,
              align_corners=align)
    proc, outputs = run_amp_on(amp_run, tmp_path, m, {"x": x, "grid": grid})
    assert proc.returncode == 0, describe(proc)
    want = ort_run(m, {"x": x, "grid": grid})[0]
    np.testing.assert_allclose(outputs[0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_grid_sample_3d_matches_reference(amp_run, tmp_path, mode, padding, align):
    x = RNG.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = grid_points((1, 2, 3, 4, 3))
    m = model(list(x.shape), list(grid.shape), mode=mode, padding_mode=padding,
              align_corners=align)
    proc, outputs = run_amp_on(amp_run, tmp_path, m, {"x": x, "grid": grid})
    assert proc.returncode == 0, describe(proc)
    want = ReferenceEvaluator(m).run(None, {"x": x, "grid": grid})[0]
    np.testing.assert_allclose(outputs[0], want, rtol=1e-5, atol=1e-5)


def test_grid_sample_fp16(amp_run, tmp_path):
    x = RNG.standard_normal((1, 2, 6, 6)).astype(np.float16)
    grid = grid_points((1, 4, 4, 2)).astype(np.float16)
    m = model(list(x.shape), list(grid.shape), TensorProto.FLOAT16, mode="cubic",
              padding_mode="reflection")
    proc, outputs = run_amp_on(amp_run, tmp_path, m, {"x": x, "grid": grid})
    assert proc.returncode == 0, describe(proc)
    want = ort_run(m, {"x": x, "grid": grid})[0]
    np.testing.assert_allclose(outputs[0].astype(np.float32), want.astype(np.float32),
                               rtol=5e-3, atol=5e-3)


def test_grid_sample_of_an_empty_image_is_zeros(amp_run, tmp_path):
    """No pixel to read: zeros, never a read outside X."""
    x = np.zeros((1, 2, 0, 4), np.float32)
    grid = grid_points((1, 3, 3, 2))
    m = model([1, 2, 0, 4], list(grid.shape))
    proc, outputs = run_amp_on(amp_run, tmp_path, m, {"x": x, "grid": grid})
    assert proc.returncode == 0, describe(proc)
    np.testing.assert_array_equal(outputs[0], np.zeros((1, 2, 3, 3), np.float32))
