"""The same input and options give byte-identical output files.

Each model is compiled twice: once with MLIR's multi-threading and once with
``--mlir-disable-threading``, from two different working directories (the
input given by absolute path, the outputs by relative path). Every file
amp-opt writes must be byte-identical across the two runs: MLIR text,
MLIR bytecode, mixed-precision ONNX, the JSON report, the DOT graph, and a
training program. amp-run's outputs and saved training state are compared
the same way (the .npz writer has fixed time stamps), also across thread
counts: the CPU backend's parallel loops give each output element to one
thread, with the same reduction order as one thread.
"""

import os

import subprocess

import numpy as np
import onnx
import pytest

from amp_testmodels import build_onnx

MODELS = {
    "mlp": build_onnx.mlp,
    "conv_block": build_onnx.conv_block,
    "if_model": build_onnx.if_model,
    "loop_model": build_onnx.loop_model,
}

# (output file, extra flags) per amp-opt run.
OUTPUTS = [
    ("model.mlir", ["--amp-report", "report.json", "--amp-dot", "graph.dot"]),
    ("model.mlirbc", ["--emit-bytecode"]),
    ("model.mp.onnx", []),
    ("model.bf16.mlir", ["--amp-type=bf16"]),
]


def _compile_twice(amp_opt, tmp_path, model_path, outputs, extra=()):
    """Run every (output, flags) in dirs a/ (threads) and b/ (no threads);
    returns the two dicts name -> bytes."""
    results = []
    for run, threading in (("a", []), ("b", ["--mlir-disable-threading"])):
        cwd = tmp_path / run
        cwd.mkdir()
        files = {}
        for output, flags in outputs:
            command = [amp_opt.path, str(model_path), *extra, *flags, *threading,
                       "-o", output]
            proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                                  timeout=300)
            assert proc.returncode == 0, f"{command}\n{proc.stderr}"
            written = [output] + [f for f in flags if "." in f and not f.startswith("-")]
            for name in written:
                files[name] = (cwd / name).read_bytes()
        results.append(files)
    return results


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compile_outputs_are_byte_identical(amp_opt, tmp_path, name):
    model_path = tmp_path / f"{name}.onnx"
    onnx.save(MODELS[name](17), model_path)
    a, b = _compile_twice(amp_opt, tmp_path, model_path, OUTPUTS)
    assert sorted(a) == sorted(b)
    for file in a:
        assert a[file], f"{file} is empty"
        assert a[file] == b[file], f"{name}: {file} differs between runs"


def test_training_program_is_byte_identical(amp_opt, tmp_path):
    model_path = tmp_path / "mlp.onnx"
    onnx.save(build_onnx.mlp(17), model_path)
    outputs = [("train.mlir", [])]
    a, b = _compile_twice(amp_opt, tmp_path, model_path, outputs,
                          extra=["--train", "--loss=mse", "--amp-type=f16",
                                 "--optimizer=adamw", "--split-step"])
    assert a["train.mlir"] == b["train.mlir"]


def test_amp_run_outputs_and_state_are_byte_identical(amp_run, tmp_path):
    model_path = tmp_path / "mlp.onnx"
    model = build_onnx.mlp(17)
    onnx.save(model, model_path)
    shape = [d.dim_value or 4 for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.standard_normal(shape).astype(np.float32))
    out_shape = [d.dim_value or 4 for d in model.graph.output[0].type.tensor_type.shape.dim]
    runs = []
    for run in ("a", "b"):
        cwd = tmp_path / run
        cwd.mkdir()
        data = rng.standard_normal([16] + shape[1:]).astype(np.float32) if not runs else None
        if data is not None:
            np.save(tmp_path / "data.npy", data)
            np.save(tmp_path / "labels.npy",
                    rng.standard_normal([16] + out_shape[1:]).astype(np.float32))
        for command in (
                [amp_run, model_path, "-i", tmp_path / "x.npy", "--amp-type", "f16",
                 "--output-dir", "out"],
                [amp_run, model_path, "--train", "--loss=mse", "--amp-type", "f16",
                 "--data", tmp_path / "data.npy", "--labels", tmp_path / "labels.npy",
                 "--batch-size", "4", "--steps", "6", "--save-state", "state.npz"]):
            proc = subprocess.run([str(c) for c in command], cwd=cwd,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr
        files = {p.relative_to(cwd).as_posix(): p.read_bytes()
                 for p in sorted(cwd.rglob("*")) if p.is_file()}
        runs.append(files)
    assert sorted(runs[0]) == sorted(runs[1])
    for name in runs[0]:
        assert runs[0][name] == runs[1][name], f"{name} differs between runs"


def test_amp_run_is_byte_identical_across_thread_counts(amp_run, tmp_path):
    """Inference outputs and training state with 1, 2 and 3 threads (more
    than the machine's 2 cores: uneven shares) are byte-identical; the
    model's ops are large enough to run in parallel, and its output matches
    onnxruntime."""
    model_path = tmp_path / "wide.onnx"
    model = build_onnx.wide_conv_net(17)
    onnx.save(model, model_path)
    rng = np.random.default_rng(1)
    x = rng.standard_normal([4, 16, 48, 48]).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "data.npy", rng.standard_normal([8, 16, 48, 48]).astype(np.float32))
    np.save(tmp_path / "labels.npy", rng.integers(0, 10, [8]).astype(np.int64))
    runs = {}
    for threads in (1, 2, 3):
        cwd = tmp_path / f"threads{threads}"
        cwd.mkdir()
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        for command in (
                [amp_run, model_path, "-i", tmp_path / "x.npy", "--output-dir", "out"],
                [amp_run, model_path, "-i", tmp_path / "x.npy", "--amp-type", "bf16",
                 "--output-dir", "out_bf16"],
                [amp_run, model_path, "--train", "--loss=cross-entropy",
                 "--optimizer=adamw", "--data", tmp_path / "data.npy",
                 "--labels", tmp_path / "labels.npy", "--batch-size", "4",
                 "--steps", "3", "--save-state", "state.npz"]):
            proc = subprocess.run([str(c) for c in command], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr
        runs[threads] = {p.relative_to(cwd).as_posix(): p.read_bytes()
                         for p in sorted(cwd.rglob("*")) if p.is_file()}
    assert "state.npz" in runs[1] and len(runs[1]) >= 3
    for threads in (2, 3):
        assert sorted(runs[threads]) == sorted(runs[1])
        for name in runs[1]:
            assert runs[threads][name] == runs[1][name], \
                f"{name} differs between 1 and {threads} threads"

    ort = pytest.importorskip("onnxruntime")
    want = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]) \
        .run(None, {"x": x})[0]
    got = np.load(tmp_path / "threads2" / "out" / "y.npy")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
