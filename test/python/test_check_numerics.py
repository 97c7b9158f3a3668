"""amp-run --check-numerics on models built to overflow or underflow at a
known node.

--check-numerics runs the low-precision program and, beside it, the fp32
reference on the same inputs, and compares every op output. The models
here are small onnx.helper graphs whose fp16 failure point is known by
construction:

* ``overflow``: ``square = (300 * relu(x @ W))**2`` exceeds 65504 (the
  fp16 maximum) for about half the elements; the ops before it stay finite,
  so ``square`` must be reported as the first non-finite op, and a deny node
  rule for it must make the report clean. In bf16 (fp32's exponent range)
  nothing overflows.
* ``underflow``: ``tiny_mm = x @ W`` with x ~ 1e-3 and W ~ 1e-3 gives
  values around 1e-5, below fp16's smallest normal (6.1e-5): most of them
  become subnormal or zero. ``tiny_mm`` must be the first op listed for
  underflow, and ``rescale = tiny_mm * 1000`` inherits the loss.

The JSON report is checked field by field; the relative errors of the ops
before the failure point are checked against a bound (fp16 rounding of a
few ops: below 1e-2).
"""

import json
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

TIMEOUT = 120


def run(amp_run, *args):
    command = [amp_run, *map(str, args)]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{' '.join(command)}: no result within {TIMEOUT} s") from None


def save(model, path):
    onnx.checker.check_model(model, full_check=True)
    onnx.save_model(model, str(path))
    return path


@pytest.fixture(scope="module")
def overflow_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("overflow")
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["a"], name="mm"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "big"], ["b"], name="scale_up"),
        helper.make_node("Mul", ["b", "b"], ["c"], name="square"),
        helper.make_node("Add", ["c", "x"], ["y"], name="out"),
    ]
    graph = helper.make_graph(
        nodes, "overflow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [numpy_helper.from_array(w, "W"),
         numpy_helper.from_array(np.full((1,), 300.0, np.float32), "big")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = (rng.standard_normal((4, 16)) * 3).astype(np.float32)
    np.save(folder / "x.npy", x)
    # The fp32 values of `square` stay finite; a good part exceeds fp16's range.
    c = (np.maximum(x @ w, 0) * 300) ** 2
    assert np.isfinite(c).all() and (c > 65504).mean() > 0.2
    return save(model, folder / "overflow.onnx"), folder / "x.npy"


@pytest.fixture(scope="module")
def underflow_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("underflow")
    rng = np.random.default_rng(1)
    w = (rng.uniform(0.5, 1.5, (16, 8)) * 1e-3).astype(np.float32)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "W"], ["t"], name="tiny_mm"),
        helper.make_node("Mul", ["t", "k"], ["y"], name="rescale"),
    ]
    graph = helper.make_graph(
        nodes, "underflow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [numpy_helper.from_array(w, "W"),
         numpy_helper.from_array(np.full((1,), 1000.0, np.float32), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = rng.uniform(0.2e-3, 1e-3, (4, 16)).astype(np.float32)
    np.save(folder / "x.npy", x)
    t = np.maximum(x, 0) @ w
    assert (np.abs(t) < 6.103515625e-05).mean() > 0.9  # below fp16's smallest normal
    return save(model, folder / "underflow.onnx"), folder / "x.npy"


def check(amp_run, model, x, tmp_path, *extra):
    report = tmp_path / "numerics.json"
    proc = run(amp_run, model, "-i", x, f"--check-numerics={report}", *extra)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc.stdout, json.loads(report.read_text())


def test_first_non_finite_is_the_overflowing_op(amp_run, overflow_model, tmp_path):
    model, x = overflow_model
    stdout, report = check(amp_run, model, x, tmp_path, "--amp-type", "f16")
    first = report["first_non_finite"]
    assert first["node"] == "square" and first["op"] == "Mul"
    assert first["precision"] == "f16"
    assert first["reason"], "the autocast reason is reported"
    assert 0.2 * first["elements"] < first["non_finite"] <= first["elements"]
    assert "first non-finite: #3 'square' (Mul, f16" in stdout
    assert "--amp-node-rule='square=deny'" in stdout
    # Program order, every non-constant op once.
    assert [op["node"] for op in report["ops"]] == ["mm", "relu", "scale_up", "square", "out"]
    before = {op["node"]: op for op in report["ops"]}
    for name in ("mm", "relu", "scale_up"):
        assert before[name]["non_finite"] == 0
        assert 0 < before[name]["relative_error"] < 1e-2, before[name]


def test_deny_rule_clears_the_overflow(amp_run, overflow_model, tmp_path):
    model, x = overflow_model
    stdout, report = check(amp_run, model, x, tmp_path, "--amp-type", "f16",
                           "--amp-node-rule=square=deny")
    assert report["first_non_finite"] is None
    assert "first non-finite: none" in stdout
    ops = {op["node"]: op for op in report["ops"]}
    assert ops["square"]["precision"] == "f32"
    assert "node rule" in ops["square"]["reason"]
    assert ops["out"]["relative_error"] < 1e-2


def test_bf16_has_fp32_range(amp_run, overflow_model, tmp_path):
    model, x = overflow_model
    _, report = check(amp_run, model, x, tmp_path, "--amp-type", "bf16")
    assert report["type"] == "bf16"
    assert report["first_non_finite"] is None
    ops = {op["node"]: op for op in report["ops"]}
    assert ops["square"]["precision"] == "bf16"
    # bf16 keeps 8 bits of mantissa: a few ops stay within a few percent.
    assert all(op["relative_error"] < 5e-2 for op in report["ops"])


def test_underflow_is_reported_at_its_op(amp_run, underflow_model, tmp_path):
    model, x = underflow_model
    stdout, report = check(amp_run, model, x, tmp_path, "--amp-type", "f16",
                           "--check-numerics-underflow=0.5")
    assert report["underflow_threshold"] == 0.5
    assert report["first_non_finite"] is None
    listed = [op["node"] for op in report["underflow"]]
    assert listed[0] == "tiny_mm", listed
    tiny = report["underflow"][0]
    assert tiny["precision"] == "f16" and tiny["underflow_fraction"] > 0.9
    assert tiny["nonzero"] == tiny["elements"] == 32
    assert "tiny_mm" in stdout.split("worst relative error")[0]
    # relu's outputs (~1e-3) are normal fp16 numbers.
    ops = {op["node"]: op for op in report["ops"]}
    assert ops["relu"]["underflow"] == 0
    # Subnormals keep few bits: the rescaled result is visibly worse.
    assert ops["rescale"]["relative_error"] > 1e-3


def test_underflow_threshold_filters(amp_run, underflow_model, tmp_path):
    model, x = underflow_model
    _, report = check(amp_run, model, x, tmp_path, "--amp-type", "f16",
                      "--check-numerics-underflow=1.0")
    assert report["underflow"] == []


def test_outputs_still_compared(amp_run, overflow_model, tmp_path):
    """--compare-to and --output-dir see the model's own outputs only."""
    model, x = overflow_model
    ref = tmp_path / "ref.npy"
    np.save(ref, np.zeros((4, 16), np.float32))
    out = tmp_path / "out"
    proc = run(amp_run, model, "-i", x, "--amp-type", "f16", "--check-numerics",
               "--amp-node-rule=square=deny", "--output-dir", out, "--compare-to", ref)
    assert proc.returncode == 1  # the zero reference does not match
    assert "y: FAIL" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["y.npy"]
    assert np.load(out / "y.npy").shape == (4, 16)


@pytest.mark.parametrize("args, message", [
    ([], "--check-numerics compares a low-precision program with fp32: give --amp-type"),
    (["--amp-type", "f16", "--benchmark", "3"], "cannot be combined with --benchmark"),
    (["--amp-type", "f16", "--amp-keep-io-types=false"], "it needs --amp-keep-io-types"),
])
def test_errors(amp_run, overflow_model, tmp_path, args, message):
    model, x = overflow_model
    report = tmp_path / "r.json"
    proc = run(amp_run, model, "-i", x, f"--check-numerics={report}", *args)
    assert proc.returncode == 1
    assert message in proc.stderr
    assert not report.exists()
