"""RoiAlign on amp's CPU backend against onnxruntime and the ONNX reference
implementation (onnx.reference).

Cases: avg and max modes, half_pixel and output_half_pixel (opset 16) and
opset 10's form (no shift, ROIs at least 1 x 1), a fixed sampling_ratio
and the adaptive grid (ceil(roi size / output size) per ROI), a
spatial_scale of 1/16 (a stride-16 feature map), ROIs reaching outside the
image and degenerate ones, several images with batch indices in any
order, a symbolic number of ROIs, fp64 and fp16 inputs; and the run-time
error for a batch index outside the batch.

avg agrees within 1e-5 (relative to the largest output) with both; max
follows onnxruntime's definition (per sample the largest weighted corner),
which the reference shares."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip

ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.float16: TensorProto.FLOAT16}


def roi_align_model(opset=16, dtype=np.float32, rois=None, **attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], name="roi_align",
                            **attrs)
    t = ONNX_TYPE[dtype]
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", t, ["n", "c", "h", "w"]),
         helper.make_tensor_value_info("rois", t, [rois or "r", 4]),
         helper.make_tensor_value_info("batch", TensorProto.INT64, [rois or "r"])],
        [helper.make_tensor_value_info("y", t, [rois or "r", "c", None, None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=5 if opset == 10 else 8)


def make_rois(rng, count, height, width, scale=1.0, outside=False):
    """(x1, y1, x2, y2) boxes in input coordinates (feature map / scale)."""
    h, w = height / scale, width / scale
    x1 = rng.uniform(-0.2 * w if outside else 0, 0.8 * w, count)
    y1 = rng.uniform(-0.2 * h if outside else 0, 0.8 * h, count)
    x2 = x1 + rng.uniform(0.5, 0.6 * w, count)
    y2 = y1 + rng.uniform(0.5, 0.6 * h, count)
    return np.stack([x1, y1, x2, y2], axis=1)


def run_amp(amp_run, tmp_path, model, feeds):
    proc, outputs = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode == 0, describe(proc)
    return outputs[0]


def assert_close(got, want, tol):
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(1.0, float(np.max(np.abs(want.astype(np.float64)))))
    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    assert err <= tol * scale, f"max error {err:.3g} (scale {scale:.3g})"


CASES = [
    # mode, coordinate_transformation_mode, sampling_ratio, spatial_scale, out size
    ("avg", "half_pixel", 0, 1.0, (3, 3)),
    ("avg", "half_pixel", 2, 1.0, (4, 2)),
    ("avg", "output_half_pixel", 0, 1.0, (3, 3)),
    ("avg", "half_pixel", 0, 1 / 16, (7, 7)),
    ("max", "half_pixel", 2, 1.0, (3, 3)),
    ("max", "output_half_pixel", 0, 0.5, (2, 5)),
]


@pytest.mark.parametrize("mode,ctm,ratio,scale,out", CASES)
@pytest.mark.parametrize("outside", [False, True])
def test_against_onnxruntime(amp_run, tmp_path, mode, ctm, ratio, scale, out, outside):
    rng = np.random.default_rng(len(mode) + ratio + int(1 / scale) + out[1] + outside)
    x = rng.normal(0, 1, (2, 3, 12, 10)).astype(np.float32)
    rois = make_rois(rng, 6, 12, 10, scale, outside).astype(np.float32)
    batch = rng.integers(0, 2, 6).astype(np.int64)
    model = roi_align_model(mode=mode, coordinate_transformation_mode=ctm, sampling_ratio=ratio,
                            spatial_scale=scale, output_height=out[0], output_width=out[1])
    feeds = {"x": x, "rois": rois, "batch": batch}
    got = run_amp(amp_run, tmp_path, model, feeds)
    assert got.shape == (6, 3, *out)
    assert_close(got, ort_run(model, feeds)[0], 1e-5)
    assert_close(got, ReferenceEvaluator(model).run(None, feeds)[0], 1e-5)


def test_opset10_form(amp_run, tmp_path):
    """Opset 10: no coordinate_transformation_mode, no half-pixel shift,
    ROIs smaller than 1 x 1 grown to it (onnxruntime's opset-10 kernel)."""
    rng = np.random.default_rng(10)
    x = rng.normal(0, 1, (1, 2, 8, 8)).astype(np.float32)
    rois = np.array([[1, 1, 5, 6], [2.2, 3.1, 2.4, 3.3], [0, 0, 7.5, 7.5]], np.float32)
    batch = np.zeros(3, np.int64)
    model = roi_align_model(opset=10, output_height=2, output_width=2, sampling_ratio=2)
    feeds = {"x": x, "rois": rois, "batch": batch}
    got = run_amp(amp_run, tmp_path, model, feeds)
    assert_close(got, ort_run(model, feeds)[0], 1e-5)


def test_degenerate_rois(amp_run, tmp_path):
    """Zero-size and inverted ROIs under half_pixel: an empty grid gives 0."""
    x = np.arange(2 * 6 * 6, dtype=np.float32).reshape(1, 2, 6, 6)
    rois = np.array([[2, 2, 2, 2], [4, 4, 1, 1], [0, 0, 6, 6]], np.float32)
    batch = np.zeros(3, np.int64)
    for mode in ("avg", "max"):
        model = roi_align_model(mode=mode, output_height=2, output_width=2)
        feeds = {"x": x, "rois": rois, "batch": batch}
        got = run_amp(amp_run, tmp_path / mode, model, feeds)
        assert_close(got, ReferenceEvaluator(model).run(None, feeds)[0], 1e-5)
        assert_close(got, ort_run(model, feeds)[0], 1e-5)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float16, 2e-3)])
def test_other_float_types(amp_run, tmp_path, dtype, tol):
    """f64 computes in f64; f16 in f32, rounded once (against the reference
    on the same f16 data computed in f64)."""
    rng = np.random.default_rng(7)
    x = rng.normal(0, 1, (1, 2, 9, 9)).astype(dtype)
    rois = make_rois(rng, 4, 9, 9).astype(dtype)
    batch = np.zeros(4, np.int64)
    model = roi_align_model(dtype=dtype, output_height=3, output_width=3, sampling_ratio=2)
    feeds = {"x": x, "rois": rois, "batch": batch}
    got = run_amp(amp_run, tmp_path, model, feeds)
    ref_model = roi_align_model(dtype=np.float64, output_height=3, output_width=3,
                                sampling_ratio=2)
    want = ReferenceEvaluator(ref_model).run(None, {"x": x.astype(np.float64),
                                                    "rois": rois.astype(np.float64),
                                                    "batch": batch})[0]
    assert got.dtype == dtype
    assert_close(got.astype(np.float64), want, tol)


def test_batch_index_out_of_range(amp_run, tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (2, 1, 4, 4)).astype(np.float32)
    rois = np.array([[0, 0, 2, 2], [1, 1, 3, 3]], np.float32)
    model = roi_align_model()
    proc, _ = run_amp_on(amp_run, tmp_path, model,
                         {"x": x, "rois": rois, "batch": np.array([0, 2], np.int64)})
    assert proc.returncode != 0, describe(proc)
    assert "node 'roi_align' (RoiAlign)" in proc.stderr and "batch index" in proc.stderr, \
        describe(proc)


@pytest.mark.parametrize("attrs,message", [
    (dict(mode="mean"), "RoiAlign mode must be avg or max, not 'mean'"),
    (dict(coordinate_transformation_mode="align_corners"),
     "RoiAlign coordinate_transformation_mode must be half_pixel or output_half_pixel"),
    (dict(output_height=0), "RoiAlign output_height and output_width must be positive"),
    (dict(sampling_ratio=-1), "RoiAlign sampling_ratio must not be negative, not -1"),
])
def test_invalid_attributes(amp_run, tmp_path, attrs, message):
    model = roi_align_model(**attrs)
    feeds = {"x": np.zeros((1, 1, 4, 4), np.float32), "rois": np.zeros((1, 4), np.float32),
             "batch": np.zeros(1, np.int64)}
    proc, _ = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode != 0, describe(proc)
    assert message in proc.stderr, describe(proc)


def test_export_across_the_opset_16_change(amp_opt, tmp_path):
    """An opset-10 RoiAlign (no shift) written at opset 16 carries
    coordinate_transformation_mode = output_half_pixel, and at opset 11
    (amp's oldest export opset; RoiAlign-10) drops it again; onnxruntime
    computes the same on all three. An opset-16 half_pixel RoiAlign cannot
    be written before opset 16."""
    rng = np.random.default_rng(4)
    feeds = {"x": rng.normal(0, 1, (1, 2, 8, 8)).astype(np.float32),
             "rois": np.array([[1, 1, 5, 6], [0.5, 2, 7, 7.5]], np.float32),
             "batch": np.zeros(2, np.int64)}
    source = tmp_path / "roi10.onnx"
    onnx.save(roi_align_model(opset=10, output_height=2, output_width=3), source)
    want = ort_run(onnx.load(source), feeds)[0]
    for opset in (16, 11):
        out = tmp_path / f"roi_{opset}.onnx"
        proc = amp_opt.run(source, f"--amp-export-opset={opset}", "-o", out)
        assert proc.returncode == 0, proc.stderr
        written = onnx.load(out)
        modes = [a.s.decode() for a in written.graph.node[0].attribute
                 if a.name == "coordinate_transformation_mode"]
        assert modes == (["output_half_pixel"] if opset == 16 else [])
        np.testing.assert_allclose(ort_run(written, feeds)[0], want, rtol=1e-6, atol=1e-6)
    source16 = tmp_path / "roi16.onnx"
    onnx.save(roi_align_model(opset=16, output_height=2, output_width=2), source16)
    out = tmp_path / "roi16_as_11.onnx"
    proc = amp_opt.run(source16, "--amp-export-opset=11", "-o", out)
    assert proc.returncode != 0
    assert "RoiAlign before opset 16 has no half_pixel coordinate_transformation_mode" \
        in proc.stderr
    assert not out.exists()


def test_rois_and_batch_indices_disagree_at_run_time(amp_run, tmp_path):
    """Symbolic ROI counts that differ at run time: an error naming the
    node, not a read past either tensor."""
    model = roi_align_model()
    model.graph.input[2].type.tensor_type.shape.dim[0].dim_param = "r2"
    feeds = {"x": np.zeros((1, 1, 4, 4), np.float32),
             "rois": np.zeros((3, 4), np.float32), "batch": np.zeros(5, np.int64)}
    proc, _ = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode != 0, describe(proc)
    assert "node 'roi_align' (RoiAlign): rois has 3 rows but batch_indices 5" in proc.stderr, \
        describe(proc)
