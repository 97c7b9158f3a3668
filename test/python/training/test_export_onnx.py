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


def _export_onnx_run(amp_run, amp_opt, folder, form, trained):
    """Trains the cnn 6 steps and exports: on the fly from model.onnx, or
    from a program built once by amp-opt --train (text or bytecode)."""
    data = ["--data", folder / "x.npy", "--labels", folder / "y.npy", "--batch-size", "16",
            "--steps", "6"]
    step_options = ["--lr", "0.1", "--amp-type", "f16"]
    state = folder / f"{form}.npz"
    if form == "onnx":
        _run([amp_run, folder / "model.onnx", "--train", *data, *step_options,
              "--save-state", state, "--export-onnx", trained])
    else:
        program = folder / ("train.mlir" if form == "built-mlir" else "train.mlirbc")
        bytecode = ["--emit-bytecode"] if form == "built-mlirbc" else []
        _run([amp_opt.path, folder / "model.onnx", "--train", "--static-batch=16",
              *step_options, *bytecode, "-o", program])
        assert program.read_bytes().startswith(b"ML\xefR") == bool(bytecode)
        _run([amp_run, program, "--train", *data, "--save-state", state,
              "--export-onnx", trained])
    return np.load(state)


@pytest.fixture(scope="module")
def cnn_reference(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cnn")
    _run([DEBIAN_PYTHON, os.path.join(MODELS, "train_reference.py"), "--model", "cnn",
          "--out", folder, "--steps", "6", "--batch", "16"])
    return folder


@pytest.mark.parametrize("form", ["onnx", "built-mlir", "built-mlirbc"])
def test_export_trained_cnn(amp_run, amp_opt, cnn_reference, tmp_path, form):
    """The original graph with the trained weights and running statistics,
    inference-mode BatchNormalization; onnxruntime on it matches amp-run's
    eval outputs. A program built once with amp-opt --train carries its
    ONNX model, so it exports the same file as the on-the-fly form."""
    folder = cnn_reference
    trained = tmp_path / "trained.onnx"
    state = _export_onnx_run(amp_run, amp_opt, folder, form, trained)
    model = onnx.load(trained)
    exported = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for name in ("conv1.weight", "bn1.running_mean", "bn2.running_var", "fc.bias"):
        assert np.array_equal(exported[name], state[name]), name
    original_model = onnx.load(folder / "model.onnx")
    original = {t.name: numpy_helper.to_array(t) for t in original_model.graph.initializer}
    assert sorted(original) == sorted(exported)
    assert not np.array_equal(original["conv1.weight"], exported["conv1.weight"])
    assert [n.op_type for n in model.graph.node] == [n.op_type for n in original_model.graph.node]
    for node in model.graph.node:
        if node.op_type == "BatchNormalization":
            assert len(node.output) == 1
            assert all(a.name != "training_mode" for a in node.attribute)
    x = np.load(folder / "x.npy")[:8]
    np.save(tmp_path / "x8.npy", x)
    (want,) = ort.InferenceSession(str(trained)).run(None, {"x": x})
    _run([amp_run, trained, "-i", tmp_path / "x8.npy", "--output-dir", tmp_path / "out"])
    (got,) = [np.load(p) for p in (tmp_path / "out").iterdir()]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if form != "onnx":
        # The same training as the on-the-fly form: the same file.
        fly = tmp_path / "fly.onnx"
        _export_onnx_run(amp_run, amp_opt, folder, "onnx", fly)
        assert fly.read_bytes() == trained.read_bytes()


def test_export_needs_the_onnx_model(amp_run, amp_opt, tmp_path):
    """A program built from MLIR carries no ONNX model: a clear error, no file."""
    program = tmp_path / "train.mlir"
    source = os.path.join(os.path.dirname(MODELS), "..", "Training", "Inputs", "mlp.mlir")
    _run([amp_opt.path, source, "--train", "--amp-opt-level=0", "-o", program])
    np.save(tmp_path / "x.npy", np.zeros((8, 4), np.float32))
    np.save(tmp_path / "y.npy", np.zeros(8, np.int64))
    proc = _run([amp_run, program, "--train", "--data", tmp_path / "x.npy", "--labels",
                 tmp_path / "y.npy", "--batch-size", "8", "--steps", "1",
                 "--export-onnx", tmp_path / "t.onnx"], ok=False)
    assert proc.returncode == 1
    assert "carries no ONNX model to write" in proc.stderr, proc.stderr
    assert not (tmp_path / "t.onnx").exists()
    assert not list(tmp_path.glob("*.partial"))
