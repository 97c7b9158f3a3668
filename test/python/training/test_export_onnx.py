"""amp-run --train --export-onnx: the trained model for onnxruntime.

The exported file is the input model with the trained parameters and
running statistics and BatchNormalization in inference mode; onnxruntime
evaluates it to the same outputs as amp's own fp32 program.
"""

import os
import subprocess

import numpy as np
import pytest

import onnx
import onnxruntime as ort
from onnx import numpy_helper

from amp_test_utils import DEBIAN_PYTHON, require_debian_torch

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))), "test", "models",
    "amp_testmodels")

@pytest.fixture(autouse=True)
def _needs_debian_torch():
    require_debian_torch()


def _run(cmd, ok=True):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=600)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_export_trained_cnn(amp_run, tmp_path):
    _run([DEBIAN_PYTHON, os.path.join(MODELS, "train_reference.py"), "--model", "cnn",
          "--out", tmp_path, "--steps", "6", "--batch", "16"])
    trained = tmp_path / "trained.onnx"
    _run([amp_run, tmp_path / "model.onnx", "--train", "--data", tmp_path / "x.npy",
          "--labels", tmp_path / "y.npy", "--batch-size", "16", "--steps", "6",
          "--lr", "0.1", "--amp-type", "f16", "--save-state", tmp_path / "s.npz",
          "--export-onnx", trained])
    model = onnx.load(trained)
    state = np.load(tmp_path / "s.npz")
    exported = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for name in ("conv1.weight", "bn1.running_mean", "bn2.running_var", "fc.bias"):
        assert np.array_equal(exported[name], state[name]), name
    original = {t.name: numpy_helper.to_array(t)
                for t in onnx.load(tmp_path / "model.onnx").graph.initializer}
    assert not np.array_equal(original["conv1.weight"], exported["conv1.weight"])
    for node in model.graph.node:
        if node.op_type == "BatchNormalization":
            assert len(node.output) == 1
            assert all(a.name != "training_mode" for a in node.attribute)
    x = np.load(tmp_path / "x.npy")[:8]
    np.save(tmp_path / "x8.npy", x)
    (want,) = ort.InferenceSession(str(trained)).run(None, {"x": x})
    _run([amp_run, trained, "-i", tmp_path / "x8.npy", "--output-dir", tmp_path / "out"])
    (got,) = [np.load(p) for p in (tmp_path / "out").iterdir()]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_export_needs_the_onnx_model(amp_run, amp_opt, tmp_path):
    _run([DEBIAN_PYTHON, os.path.join(MODELS, "train_reference.py"), "--model", "mlp",
          "--out", tmp_path, "--steps", "1", "--batch", "8"])
    program = tmp_path / "train.mlir"
    _run([amp_opt.path, tmp_path / "model.onnx", "--train", "-o", program])
    proc = _run([amp_run, program, "--train", "--data", tmp_path / "x.npy", "--labels",
                 tmp_path / "y.npy", "--batch-size", "8", "--steps", "1",
                 "--export-onnx", tmp_path / "t.onnx"], ok=False)
    assert proc.returncode == 1
    assert "--export-onnx writes the input ONNX model" in proc.stderr
    assert not (tmp_path / "t.onnx").exists()
