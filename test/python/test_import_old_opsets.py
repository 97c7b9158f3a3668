"""Models of opsets 1-10: upgraded by ONNX's version converter, then imported.

Each model below uses the operator forms that opsets 7-10 had and later
opsets changed (BatchNormalization's ``spatial``, Upsample, Slice/Pad/TopK/
Clip attributes that became inputs, Dropout, Resize-10). amp-run's results
are compared with onnxruntime running the *original* old-opset model, so a
wrong upgrade shows as a wrong number. The refusals (Scan before opset 9,
external data, models ONNX's checker rejects, forms with no converter) are
clean errors, and mutated old-opset models never crash amp-opt.
"""

import random

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_amp_run import expect_error, run_and_check
from test_import_fuzz import check_mutations


def _model(nodes, inputs, outputs, opset, initializers=()):
    graph = helper.make_graph(nodes, f"opset{opset}", inputs, outputs,
                              initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 4 if opset <= 9 else 5
    onnx.checker.check_model(model)
    return model


def _info(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _bn_params(prefix, channels, rng):
    values = [rng.uniform(0.5, 1.5, channels), rng.normal(size=channels),
              rng.normal(size=channels), rng.uniform(0.5, 2.0, channels)]
    names = [f"{prefix}_{n}" for n in ("scale", "bias", "mean", "var")]
    return names, [numpy_helper.from_array(v.astype(np.float32), n)
                   for n, v in zip(names, values)]


def opset7_model():
    """BatchNormalization-7 (spatial), Upsample-7 (scales attribute),
    Clip-6 and Pad-2 (attributes), Dropout-7, Gemm-7."""
    rng = np.random.default_rng(7)
    bn, bn_init = _bn_params("bn", 3, rng)
    w = numpy_helper.from_array(rng.normal(size=(4, 3 * 10 * 10)).astype(np.float32), "w")
    bias = numpy_helper.from_array(rng.normal(size=(4,)).astype(np.float32), "bias")
    shape = numpy_helper.from_array(np.array([2, 300], np.int64), "shape")
    nodes = [
        helper.make_node("BatchNormalization", ["x", *bn], ["b"], spatial=1, epsilon=1e-3),
        helper.make_node("Upsample", ["b"], ["u"], mode="nearest", scales=[1.0, 1.0, 2.0, 2.0]),
        helper.make_node("Clip", ["u"], ["c"], min=-1.0, max=1.5),
        helper.make_node("Pad", ["c"], ["p"], pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.25),
        helper.make_node("Dropout", ["p"], ["d"], ratio=0.3),
        helper.make_node("Reshape", ["d", "shape"], ["r"]),
        helper.make_node("Gemm", ["r", "w", "bias"], ["y"], transB=1, alpha=0.5),
    ]
    return _model(nodes, [_info("x", [2, 3, 4, 4])], [_info("y", [2, 4])], 7,
                  [*bn_init, w, bias, shape])


def opset9_model():
    """Upsample-9 (scales input), Slice-1 and TopK-1 (attributes),
    MaxPool, Flatten, BatchNormalization-9."""
    rng = np.random.default_rng(9)
    bn, bn_init = _bn_params("bn", 2, rng)
    scales = numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "scales")
    nodes = [
        helper.make_node("BatchNormalization", ["x", *bn], ["b"]),
        helper.make_node("Upsample", ["b", "scales"], ["u"], mode="nearest"),
        helper.make_node("Slice", ["u"], ["s"], starts=[1, 2], ends=[7, 100], axes=[2, 3]),
        helper.make_node("MaxPool", ["s"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["m"], ["f"], axis=1),
        helper.make_node("TopK", ["f"], ["values", "indices"], k=5, axis=1),
    ]
    return _model(nodes, [_info("x", [2, 2, 4, 5])],
                  [_info("values", [2, 5]), _info("indices", [2, 5], TensorProto.INT64)],
                  9, [*bn_init, scales])


def opset10_model():
    """Resize-10, Slice-10 and TopK-10 (inputs), Clip-6 and Pad-2
    (attributes) in an opset-10 model."""
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    starts = numpy_helper.from_array(np.array([1, 0], np.int64), "starts")
    ends = numpy_helper.from_array(np.array([7, 5], np.int64), "ends")
    axes = numpy_helper.from_array(np.array([2, 3], np.int64), "axes")
    steps = numpy_helper.from_array(np.array([2, 1], np.int64), "steps")
    k = numpy_helper.from_array(np.array([3], np.int64), "k")
    nodes = [
        helper.make_node("Resize", ["x", "scales"], ["u"], mode="nearest"),
        helper.make_node("Slice", ["u", "starts", "ends", "axes", "steps"], ["s"]),
        helper.make_node("Clip", ["s"], ["c"], min=-0.5, max=0.75),
        helper.make_node("Pad", ["c"], ["p"], mode="reflect", pads=[0, 0, 1, 2, 0, 0, 1, 2]),
        helper.make_node("TopK", ["p", "k"], ["values", "indices"], axis=3),
    ]
    return _model(nodes, [_info("x", [1, 2, 4, 3])],
                  [_info("values", [1, 2, 5, 3]),
                   _info("indices", [1, 2, 5, 3], TensorProto.INT64)],
                  10, [scales, starts, ends, axes, steps, k])


def resize_model(opset, mode, scales, shape=(1, 2, 5, 4)):
    """Upsample (opset 7-9) or Resize-10 alone, on constant scales: the
    old coordinate mapping (x / scale) and nearest rounding (down when
    upsampling, up when downsampling) must survive the upgrade."""
    out = [int(d * s) for d, s in zip(shape, scales)]
    if opset == 7:
        node = helper.make_node("Upsample", ["x"], ["y"], mode=mode,
                                scales=[float(v) for v in scales])
        init = []
    else:
        op = "Upsample" if opset < 10 else "Resize"
        node = helper.make_node(op, ["x", "scales"], ["y"], mode=mode)
        init = [numpy_helper.from_array(np.array(scales, np.float32), "scales")]
    return _model([node], [_info("x", list(shape))], [_info("y", out)], opset, init)


BUILDERS = {
    "opset7": opset7_model, "opset9": opset9_model, "opset10": opset10_model,
    "upsample7_linear": lambda: resize_model(7, "linear", [1, 1, 2, 3]),
    "upsample9_nearest_x3": lambda: resize_model(9, "nearest", [1, 1, 3, 2.5]),
    "upsample9_linear": lambda: resize_model(9, "linear", [1, 1, 2.5, 2]),
    "resize10_nearest_down": lambda: resize_model(10, "nearest", [1, 1, 0.6, 0.5],
                                                  shape=(1, 2, 10, 8)),
    "resize10_linear_down": lambda: resize_model(10, "linear", [1, 1, 0.6, 0.75],
                                                 shape=(1, 2, 10, 8)),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_old_opset_model_matches_onnxruntime(amp_run, tmp_path, name):
    model = BUILDERS[name]()
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    run_and_check(amp_run, tmp_path, model, {"x": x})


def test_old_opset_module_records_the_upgrade(amp_opt, tmp_path):
    text = amp_opt.import_model(opset9_model(), tmp_path / "m.mlir")
    assert "ai.onnx = 11" in text, text[:2000]
    assert "amp.resize" in text and "amp.top_k" in text, text[:4000]


def test_scan_before_opset9_is_refused(amp_opt, tmp_path):
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_in"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_out"])],
        "body", [_info("s_in", [2]), _info("x_in", [2])],
        [_info("s_out", [2]), _info("y_out", [2])])
    node = helper.make_node("Scan", ["", "s0", "xs"], ["s", "ys"], name="scan_node",
                            num_scan_inputs=1, body=body)
    model = _model([node], [_info("s0", [1, 2]), _info("xs", [1, 3, 2])],
                   [_info("s", [1, 2]), _info("ys", [1, 3, 2])], 8)
    path = tmp_path / "scan8.onnx"
    onnx.save_model(model, str(path))
    amp_opt.expect_import_error(path, "node 'scan_node' (op Scan, opset 8)",
                                "batch axis", "opset 9 or newer")


def test_nearest_resize_needs_constant_scales(amp_opt, tmp_path):
    node = helper.make_node("Resize", ["x", "scales"], ["y"], name="rs", mode="nearest")
    model = _model([node], [_info("x", [1, 1, 2, 2]), _info("scales", [4])],
                   [_info("y", [1, 1, 4, 4])], 10)
    path = tmp_path / "dynamic_scales.onnx"
    onnx.save_model(model, str(path))
    amp_opt.expect_import_error(path, "node 'rs'", "scales are not a constant")


def test_nearest_resize_up_and_down_is_refused(amp_opt, tmp_path):
    path = tmp_path / "mixed.onnx"
    onnx.save_model(resize_model(10, "nearest", [1, 1, 2, 0.5]), str(path))
    amp_opt.expect_import_error(path, "scales both above and below 1")


def test_old_opset_with_external_data_is_refused(amp_opt, tmp_path):
    model = opset7_model()
    path = tmp_path / "ext.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="ext.bin", size_threshold=0)
    amp_opt.expect_import_error(path, "opset 7 with external data is not supported")


def test_old_opset_rejected_by_the_checker(amp_opt, tmp_path):
    model = opset9_model()
    model.graph.node[2].attribute.append(helper.make_attribute("bogus", 3))
    path = tmp_path / "bad.onnx"
    onnx.save_model(model, str(path))
    amp_opt.expect_import_error(path, str(path), "invalid according to ONNX's checker")


def test_form_without_a_converter_is_refused(amp_opt, tmp_path):
    """Pad-1 (``paddings``): ONNX's converter has no adapter from it."""
    node = helper.make_node("Pad", ["x"], ["y"], paddings=[0, 0, 1, 1])
    graph = helper.make_graph([node], "g", [_info("x", [2, 2])], [_info("y", [2, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])
    model.ir_version = 3
    path = tmp_path / "pad1.onnx"
    onnx.save_model(model, str(path))
    amp_opt.expect_import_error(path, str(path), "cannot upgrade opset 1 to 11",
                                "No Adapter From Version $1 for Pad")


def test_opset1_forms_are_upgraded(amp_opt, tmp_path):
    """Reshape-1 (``shape`` attribute) and Upsample-1 (height/width scales):
    the converter's Reshape adapter writes a rank-0 shape, which amp repairs."""
    nodes = [helper.make_node("Upsample", ["x"], ["u"], height_scale=2.0, width_scale=3.0),
             helper.make_node("Reshape", ["u"], ["y"], shape=[2, 12])]
    graph = helper.make_graph(nodes, "g", [_info("x", [1, 1, 2, 2])], [_info("y", [2, 12])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])
    model.ir_version = 3
    text = amp_opt.import_model(model, tmp_path / "m.mlir")
    assert "tensor<2x12xf32>" in text and "amp.resize" in text, text


def test_opset_0_is_refused(amp_opt, tmp_path):
    model = opset7_model()
    model.opset_import[0].version = 0
    path = tmp_path / "opset0.onnx"
    onnx.save_model(model, str(path))
    amp_opt.expect_import_error(path, "default-domain opset 0 is not supported",
                                "amp supports 1 to")


def test_amp_run_reports_upgrade_errors(amp_run, tmp_path):
    model = opset9_model()
    model.graph.node[2].attribute.append(helper.make_attribute("bogus", 3))
    path = tmp_path / "bad.onnx"
    onnx.save_model(model, str(path))
    expect_error(amp_run, tmp_path, path, fragments=["invalid according to ONNX's checker"])


@pytest.mark.parametrize("seed", range(2))
def test_mutated_old_opset_models_fail_cleanly(amp_opt, tmp_path, seed):
    """The checker and the converter see mutated models first: no crash."""
    check_mutations(amp_opt, tmp_path, random.Random(seed),
                    lambda rng: BUILDERS[rng.choice(sorted(BUILDERS))](), 30,
                    f"seed {seed}")
