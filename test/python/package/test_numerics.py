"""amp_mlir.check_numerics against amp-run --check-numerics: the same JSON
byte for byte, the same outputs, and the report as data."""

import subprocess

import numpy as np
import pytest

import amp_mlir
from test_api import mlp_model


@pytest.mark.parametrize("dtype,scale,kwargs,flags", [
    ("fp16", 1.0, {}, []),
    # Large inputs overflow fp16: a first non-finite op.
    ("fp16", 3e3, {}, []),
    ("bf16", 1.0, {"deny": ["Relu"]}, ["--amp-deny=Relu"]),
    # Tiny inputs underflow fp16: ops lose nonzero values.
    ("fp16", 1e-6, {"underflow": 0.05}, ["--check-numerics-underflow=0.05"]),
])
def test_check_numerics_equals_amp_run(amp_run, tmp_path, dtype, scale, kwargs, flags):
    path = tmp_path / "mlp.onnx"
    mlp_model(path)
    x = (np.random.default_rng(5).standard_normal((4, 16)) * scale).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    report_path = tmp_path / "numerics.json"
    out = tmp_path / "out"
    low = "f16" if dtype == "fp16" else "bf16"
    proc = subprocess.run([amp_run, str(path), "-i", str(tmp_path / "x.npy"), "--amp-type", low,
                           f"--check-numerics={report_path}", f"--output-dir={out}", *flags],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    module = amp_mlir.import_onnx(path)
    fp32_text = module.to_mlir()
    report = amp_mlir.check_numerics(module, dtype, x, **kwargs)
    assert report.to_json() == report_path.read_text()
    assert module.to_mlir() == fp32_text and module.autocast_type == ""
    np.testing.assert_array_equal(report.outputs[0], np.load(out / "y.npy"))
    assert report.type == low
    assert {op["node"] for op in report.ops} >= {"fc1/matmul", "softmax"}
    if scale > 1:
        first = report.first_non_finite
        assert first is not None and first["non_finite"] > 0
    if scale < 1e-3:
        assert report.underflow and all(op["underflow_fraction"] > 0.05 for op in report.underflow)
    worst = report.worst(3)
    assert len(worst) == 3 and worst[0]["relative_error"] >= worst[-1]["relative_error"]


def test_check_numerics_errors(tmp_path):
    path = tmp_path / "mlp.onnx"
    mlp_model(path)
    module = amp_mlir.import_onnx(path)
    x = np.zeros((4, 16), np.float32)
    with pytest.raises(amp_mlir.AmpError, match="needs keep-io-types"):
        amp_mlir.check_numerics(module, "fp16", x, keep_io_types=False)
    with pytest.raises(amp_mlir.AmpError, match="option 'annotate' cannot be given here"):
        amp_mlir.check_numerics(module, "fp16", x, annotate=True)
    with pytest.raises(amp_mlir.AmpError, match="takes 1 inputs, got 2"):
        amp_mlir.check_numerics(module, "fp16", [x, x])
    amp_mlir.autocast(module, "fp16")
    with pytest.raises(amp_mlir.AmpError, match="before autocast"):
        amp_mlir.check_numerics(module, "fp16", x)
