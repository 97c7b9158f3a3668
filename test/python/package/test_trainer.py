"""amp_mlir.build_train_step against amp-run --train: the same batches give
the same losses, skips, loss scales, state and exported ONNX bit for bit
(one TrainSession under both), on scikit-learn's digits."""

import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits

import amp_mlir

BATCH = 32


def digits_mlp(path):
    """64 -> 32 (ReLU) -> 10 logits, random weights; dynamic batch."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal((64, 32)) * 0.1).astype(np.float32), "fc1.weight"),
             numpy_helper.from_array(np.zeros(32, np.float32), "fc1.bias"),
             numpy_helper.from_array((rng.standard_normal((32, 10)) * 0.1).astype(np.float32), "fc2.weight"),
             numpy_helper.from_array(np.zeros(10, np.float32), "fc2.bias")]
    nodes = [helper.make_node("MatMul", ["x", "fc1.weight"], ["a"], name="fc1/MatMul"),
             helper.make_node("Add", ["a", "fc1.bias"], ["b"], name="fc1/Add"),
             helper.make_node("Relu", ["b"], ["c"], name="relu"),
             helper.make_node("MatMul", ["c", "fc2.weight"], ["d"], name="fc2/MatMul"),
             helper.make_node("Add", ["d", "fc2.bias"], ["logits"], name="fc2/Add")]
    graph = helper.make_graph(
        nodes, "digits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    folder = tmp_path_factory.mktemp("digits")
    data = load_digits()
    x = (data.data / 16.0).astype(np.float32)[:320]
    y = data.target.astype(np.int64)[:320]
    np.save(folder / "x.npy", x)
    np.save(folder / "y.npy", y)
    digits_mlp(folder / "mlp.onnx")
    return folder, x, y


def amp_run_train(amp_run, folder, steps, *flags):
    out = folder / "run"
    out.mkdir(exist_ok=True)
    proc = subprocess.run(
        [amp_run, str(folder / "mlp.onnx"), "--train", "--data", str(folder / "x.npy"),
         "--labels", str(folder / "y.npy"), "--batch-size", str(BATCH), "--steps", str(steps),
         "--no-shuffle", f"--save-state={out / 'state.npz'}", f"--log-csv={out / 'log.csv'}",
         f"--export-onnx={out / 'trained.onnx'}", *flags], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    log = np.loadtxt(out / "log.csv", delimiter=",", skiprows=1, ndmin=2)
    return log, dict(np.load(out / "state.npz")), out


def batches(x, y, steps):
    """amp-run's batches with --no-shuffle: consecutive, epoch after epoch."""
    per_epoch = len(x) // BATCH
    for n in range(steps):
        offset = n % per_epoch
        yield x[offset * BATCH:(offset + 1) * BATCH], y[offset * BATCH:(offset + 1) * BATCH]


CASES = [
    ("fp32-sgd", {"lr": 0.5}, ["--lr", "0.5"]),
    ("fp16-adamw", {"dtype": "fp16", "optimizer": "adamw", "lr": 1e-2},
     ["--amp-type", "f16", "--optimizer", "adamw", "--lr", "1e-2"]),
    # A scale of 1e9 overflows fp16 at first: skipped steps and back-offs.
    ("fp16-skips", {"dtype": "fp16", "optimizer": "momentum", "lr": 0.05,
                    "loss_scale_init": 1e9, "loss_scale_interval": 3},
     ["--amp-type", "f16", "--optimizer", "momentum", "--lr", "0.05",
      "--loss-scale-init", "1e9", "--loss-scale-interval", "3"]),
    ("bf16-cosine", {"dtype": "bf16", "optimizer": "adamw", "lr": 1e-2, "lr_schedule": "cosine",
                     "total_steps": 20, "weight_decay": 0.05, "deny": ["Relu"]},
     ["--amp-type", "bf16", "--optimizer", "adamw", "--lr", "1e-2", "--lr-schedule", "cosine",
      "--total-steps", "20", "--weight-decay", "0.05", "--amp-deny=Relu"]),
]


@pytest.mark.parametrize("name,kwargs,flags", CASES, ids=[c[0] for c in CASES])
def test_trainer_equals_amp_run_train(amp_run, digits, name, kwargs, flags):
    folder, x, y = digits
    steps = 20
    log, state, out = amp_run_train(amp_run, folder, steps, *flags)
    trainer = amp_mlir.build_train_step(amp_mlir.import_onnx(folder / "mlp.onnx"),
                                        batch_size=BATCH, **kwargs)
    assert [n for n, _, _ in trainer.batch_inputs] == ["x", "labels"]
    results = [trainer.step(xb, yb) for xb, yb in batches(x, y, steps)]
    assert trainer.steps == steps
    # log.csv: step, loss, loss_scale, lr, found_inf, skipped-so-far.
    np.testing.assert_array_equal([np.float32(r.loss) for r in results],
                                  log[:, 1].astype(np.float32))
    np.testing.assert_array_equal([r.scale for r in results], log[:, 2])
    np.testing.assert_array_equal([np.float32(r.lr) for r in results], log[:, 3].astype(np.float32))
    np.testing.assert_array_equal([int(r.skipped) for r in results], log[:, 4])
    if name == "fp16-skips":
        assert sum(r.skipped for r in results) >= 2
    mine = trainer.state_dict()
    assert set(mine) == set(state) - {"amp_run.batches_done"}
    for key, value in mine.items():
        assert value.dtype == state[key].dtype, key
        np.testing.assert_array_equal(value, state[key], err_msg=key)
    trainer.export_onnx(out / "py.onnx")
    assert (out / "py.onnx").read_bytes() == (out / "trained.onnx").read_bytes()
    # Training did something: accuracy on the training data well above chance.
    if name != "fp16-skips":
        logits = trainer.predict(x)[0]
        assert (logits.argmax(1) == y).mean() > 0.5


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_accumulation_equals_amp_run(amp_run, digits, precision):
    """accumulate=4 micro-batches of 8 = amp-run --batch-size 8 --accumulate 4,
    bit for bit (one skip decision and one loss scale per optimizer step)."""
    folder, x, y = digits
    flags = ["--optimizer", "adamw", "--lr", "1e-2", "--batch-size", "8", "--accumulate", "4"]
    kwargs = {"optimizer": "adamw", "lr": 1e-2}
    if precision == "fp16":
        flags += ["--amp-type", "f16", "--loss-scale-init", "1e9"]
        kwargs.update(dtype="fp16", loss_scale_init=1e9)
    steps = 12
    out = folder / "acc"
    out.mkdir(exist_ok=True)
    proc = subprocess.run(
        [amp_run, str(folder / "mlp.onnx"), "--train", "--data", str(folder / "x.npy"),
         "--labels", str(folder / "y.npy"), "--steps", str(steps), "--no-shuffle",
         f"--save-state={out / 'state.npz'}", f"--log-csv={out / 'log.csv'}", *flags],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    log = np.loadtxt(out / "log.csv", delimiter=",", skiprows=1, ndmin=2)
    state = dict(np.load(out / "state.npz"))
    trainer = amp_mlir.build_train_step(amp_mlir.import_onnx(folder / "mlp.onnx"),
                                        batch_size=8, accumulate=4, **kwargs)
    results = [trainer.step(x[(n % 10) * 32:(n % 10 + 1) * 32], y[(n % 10) * 32:(n % 10 + 1) * 32])
               for n in range(steps)]
    np.testing.assert_array_equal([np.float32(r.loss) for r in results],
                                  log[:, 1].astype(np.float32))
    np.testing.assert_array_equal([r.scale for r in results], log[:, 2])
    np.testing.assert_array_equal([int(r.skipped) for r in results], log[:, 4])
    if precision == "fp16":
        assert sum(r.skipped for r in results) >= 1
    for key, value in trainer.state_dict().items():
        np.testing.assert_array_equal(value, state[key], err_msg=key)
    with pytest.raises(amp_mlir.AmpError, match="splits into 4 equal micro-batches"):
        trainer.step(x[:30], y[:30])


def test_state_round_trip_continues_identically(amp_run, digits):
    folder, x, y = digits
    module = amp_mlir.import_onnx(folder / "mlp.onnx")
    options = dict(dtype="fp16", optimizer="adamw", lr=1e-2, batch_size=BATCH)
    a = amp_mlir.build_train_step(module, **options)
    for xb, yb in batches(x, y, 5):
        a.step(xb, yb)
    b = amp_mlir.build_train_step(module, **options)
    b.load_state_dict(a.state_dict())
    for xb, yb in list(batches(x, y, 8))[5:]:
        ra, rb = a.step(xb, yb), b.step(xb, yb)
        assert ra == rb
    for key, value in a.state_dict().items():
        np.testing.assert_array_equal(value, b.state_dict()[key], err_msg=key)
    # amp-run's state file loads too (its loop counter is ignored).
    _, state, _ = amp_run_train(amp_run, folder, 3, "--amp-type", "f16", "--optimizer", "adamw",
                                "--lr", "1e-2")
    b.load_state_dict(state)
    np.testing.assert_array_equal(b.state_dict()["fc1.weight"], state["fc1.weight"])


def test_a_built_program_trains_like_its_onnx_model(amp_opt, digits, tmp_path):
    folder, x, y = digits
    program = tmp_path / "train.mlir"
    # amp-opt --train autocasts to fp16 unless told otherwise.
    proc = amp_opt.run(str(folder / "mlp.onnx"), "--train", "--static-batch", str(BATCH),
                       "--optimizer", "adamw", "--lr", "1e-2", "-o", str(program))
    assert proc.returncode == 0, proc.stderr
    a = amp_mlir.build_train_step(amp_mlir.load_mlir(program))
    b = amp_mlir.build_train_step(amp_mlir.import_onnx(folder / "mlp.onnx"), optimizer="adamw",
                                  lr=1e-2, dtype="fp16", batch_size=BATCH)
    for xb, yb in batches(x, y, 4):
        assert a.step(xb, yb) == b.step(xb, yb)
    a.export_onnx(tmp_path / "a.onnx")
    b.export_onnx(tmp_path / "b.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()
    with pytest.raises(amp_mlir.AmpError, match="options are fixed"):
        amp_mlir.build_train_step(amp_mlir.load_mlir(program), dtype="fp16")
    with pytest.raises(amp_mlir.AmpError, match="--split-step"):
        amp_mlir.build_train_step(amp_mlir.load_mlir(program), accumulate=2)


def test_trainer_errors(digits):
    folder, x, y = digits
    module = amp_mlir.import_onnx(folder / "mlp.onnx")
    with pytest.raises(amp_mlir.AmpError, match="unknown option 'bogus'"):
        amp_mlir.build_train_step(module, bogus=3)
    with pytest.raises(amp_mlir.AmpError, match="option 'optimizer' expects one of 'sgd', 'momentum', 'adamw'"):
        amp_mlir.build_train_step(module, optimizer="lamb")
    with pytest.raises(amp_mlir.AmpError, match="loss-scale"):
        amp_mlir.build_train_step(module, loss_scale="sometimes")
    trainer = amp_mlir.build_train_step(module, batch_size=BATCH)
    with pytest.raises(amp_mlir.AmpError, match="labels"):
        trainer.step(x[:BATCH], y[:BATCH].astype(np.int32))
    with pytest.raises(amp_mlir.AmpError, match="out of range"):
        trainer.step(x[:BATCH], np.full(BATCH, 10, np.int64))
    with pytest.raises(amp_mlir.AmpError, match="input"):
        trainer.step(x[:BATCH - 1], y[:BATCH - 1])
    assert trainer.steps == 0
    with pytest.raises(amp_mlir.AmpError, match="has no 'fc1.weight'"):
        trainer.load_state_dict({"x": np.zeros(1, np.float32)})
    state = trainer.state_dict()
    state["fc1.weight"] = state["fc1.weight"][:2]
    with pytest.raises(amp_mlir.AmpError, match="'fc1.weight' is f32"):
        trainer.load_state_dict(state)
    # Without loss scaling an fp16 overflow stops training, as in amp-run.
    blowup = amp_mlir.build_train_step(module, dtype="fp16", loss_scale="none", lr=1e30,
                                       batch_size=BATCH)
    with pytest.raises(amp_mlir.AmpError, match="non-finite gradients"):
        for xb, yb in batches(x, y, 5):
            blowup.step(xb * 1e4, yb)


def test_train_step_options_describe_the_struct():
    options = {o["name"]: o for o in amp_mlir.train_step_options()}
    assert options["optimizer"]["choices"] == ["sgd", "momentum", "adamw"]
    assert options["optimizer"]["default"] == "sgd"
    assert options["lr"]["default"] == "0.001"
    assert "type" in options and "loss-scale-init" in options
