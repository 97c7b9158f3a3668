"""amp's fp32 train steps against PyTorch on the same weights and batches.

- gradients: ``@compute_gradients`` (run with ``amp-run --entry``) against
  torch autograd, for the MLP and the small CNN (training-mode
  BatchNormalization) and for ResNet-18, the BERT-style encoder and the
  GPT-2-style decoder: within 1e-4 relative L2 per parameter;
- loss trajectories and final parameters of 20 SGD / momentum / AdamW steps
  through ``amp-run --train``: within 1e-4 relative;
- gradient accumulation equals the large batch; a restored run continues
  bit-identically; bad data gets a clear error.

The references come from test/models/amp_testmodels/train_reference.py and
grad_reference.py under Debian's python3 (torch 1.13).
"""

import re
import subprocess

import numpy as np
import pytest

from amp_test_utils import DEBIAN_PYTHON, require_debian_torch

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
MODELS = os.path.join(REPO, "test", "models", "amp_testmodels")

@pytest.fixture(autouse=True)
def _needs_debian_torch():
    """The references come from Debian's torch (missing: the test fails)."""
    require_debian_torch()


def _run(cmd, ok=True):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=900)
    if ok:
        assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _reference(tmp_path_factory, script, *args):
    out = tmp_path_factory.mktemp("ref")
    _run([DEBIAN_PYTHON, os.path.join(MODELS, script), "--out", out, *args])
    if (out / "weights.npz").exists():
        attention_decoder_onnx(out / "weights.npz", out / "model.onnx")
    return out


def attention_decoder_onnx(weights, path):
    """grad_reference.py's GQADecoderLayer as ONNX (opset 23): the
    projections as MatMul(x, Transpose(W)) + b, one Attention node (3-d,
    4 query heads over 2 key/value heads, causal), the residual and a
    LayerNormalization. Initializers carry the torch parameter names."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.load(weights)
    nodes, inits = [], [numpy_helper.from_array(w[n], n) for n in w.files]
    for name in ("q", "k", "v", "o"):
        source = "attended" if name == "o" else "x"
        nodes += [helper.make_node("Transpose", [f"{name}.weight"], [f"{name}.wt"]),
                  helper.make_node("MatMul", [source, f"{name}.wt"], [f"{name}.mm"]),
                  helper.make_node("Add", [f"{name}.mm", f"{name}.bias"], [f"{name}.out"],
                                   name=f"{name}_proj")]
        if name == "v":
            nodes.append(helper.make_node(
                "Attention", ["q.out", "k.out", "v.out"], ["attended"], name="attn",
                is_causal=1, q_num_heads=4, kv_num_heads=2))
    nodes += [helper.make_node("Add", ["x", "o.out"], ["residual"]),
              helper.make_node("LayerNormalization", ["residual", "ln.weight", "ln.bias"],
                               ["y"], axis=-1, epsilon=1e-5)]
    graph = helper.make_graph(
        nodes, "gqa_decoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def _rel(a, b):
    """Relative L2 error; gradients that are zero in exact arithmetic (a
    bias followed by BatchNormalization: ~1e-8 of rounding) count as equal
    when both are below 1e-6."""
    a = np.asarray(a, np.float64)
    if np.linalg.norm(b) < 1e-6 and np.linalg.norm(a) < 1e-6:
        return 0.0
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def _compute_gradients(amp_opt, amp_run, folder, loss, batch):
    """d(loss)/d(params) from amp's @compute_gradients, by parameter name."""
    train = folder / "train.mlir"
    _run([amp_opt.path, folder / "model.onnx", "--train", f"--loss={loss}",
          f"--static-batch={batch}", "--split-step", "--amp-opt-level=0", "-o", train])
    _run([amp_run, train, "--entry", "initial_state", "--output-dir", folder / "init"])
    text = train.read_text()
    signature = text[text.index("func.func @compute_gradients("):]
    signature = signature[:signature.index(") ->")]
    args = []
    for name, role in re.findall(r'\{amp\.name = "([^"]+)", amp\.role = "(\w+)"\}',
                                 signature):
        if role in ("param", "buffer"):
            args.append(folder / "init" / f"{name}.npy")
        elif role == "grad":
            zero = folder / f"zero.{name}.npy"
            np.save(zero, np.zeros_like(np.load(folder / "init" / f"{name[:-5]}.npy")))
            args.append(zero)
        elif role == "grad_scale":
            np.save(folder / "one.npy", np.array(1.0, np.float32))
            args.append(folder / "one.npy")
        elif role == "input":
            args.append(folder / "x.npy")
        elif role == "labels":
            args.append(folder / "y.npy")
    _run([amp_run, train, "--entry", "compute_gradients", "--output-dir",
          folder / "grads"] + [a for path in args for a in ("-i", path)])
    return {p.name[:-len(".grad.npy")]: np.load(p)
            for p in (folder / "grads").glob("*.grad.npy")}


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_small_model_gradients(model, amp_opt, amp_run, tmp_path_factory):
    folder = _reference(tmp_path_factory, "train_reference.py", "--model", model,
                        "--steps", "1", "--batch", "16")
    grads = _compute_gradients(amp_opt, amp_run, folder, "cross-entropy", 16)
    ref = np.load(folder / "reference.npz")
    names = [k[5:] for k in ref.files if k.startswith("grad.")]
    assert sorted(grads) == sorted(names)
    for name in names:
        assert _rel(grads[name], ref[f"grad.{name}"]) < 1e-4, name


@pytest.mark.slow
@pytest.mark.parametrize("model", ["resnet18", "bert_encoder", "gpt2_decoder", "unet_small",
                                   "einsum_encoder", "gqa_decoder"])
def test_real_model_gradients(model, amp_opt, amp_run, tmp_path_factory):
    """ResNet-18 with training-mode BatchNormalization, the BERT-style
    encoder and the GPT-2-style decoder (embeddings as Gather, LayerNorm,
    attention, GELU), a UNet-style block (GroupNorm as
    InstanceNormalization, ConvTranspose, bilinear and nearest Resize,
    skip connections), an encoder whose attention is two Einsums and a
    decoder layer with ONNX's Attention op (grouped-query, causal: through
    amp-decompose's graph); MSE against random targets on a batch of 2.

    ResNet-18 runs in float64 on both sides (measured: 2e-11). In fp32 its
    gradient is not a well-conditioned quantity: some pre-activations of
    its ReLUs lie within fp32 rounding of zero, so two correct fp32
    implementations that sum in different orders route some gradients
    differently (PyTorch in float64 moves its gradients by 2e-2 when the
    weights move by 1e-6 relative). amp with oneDNN's AVX2 kernels differs
    from PyTorch by 1.5e-2 there, amp with its reference loops
    (AMP_CPU_NAIVE_CONV=1) by 4e-5, and every oneDNN convolution matches
    the reference loops (AMP_CPU_CHECK_CONV=1)."""
    extra = ["--float64"] if model == "resnet18" else []
    folder = _reference(tmp_path_factory, "grad_reference.py", "--model", model, *extra)
    grads = _compute_gradients(amp_opt, amp_run, folder, "mse", 2)
    ref = np.load(folder / "reference.npz")
    names = [k[5:] for k in ref.files if k.startswith("grad.")]
    assert sorted(grads) == sorted(names)
    worst = max((_rel(grads[n], ref[f"grad.{n}"]), n) for n in names)
    assert worst[0] < (1e-9 if extra else 1e-4), worst


@pytest.mark.slow
@pytest.mark.parametrize("model", ["unet_small", "einsum_encoder", "gqa_decoder"])
def test_fp16_dynamic_scaling_tracks_fp32(model, amp_run, tmp_path_factory):
    """30 AdamW steps in fp16 with dynamic loss scaling (GradScaler's
    defaults: the first step overflows at 2^16 and is skipped) follow the
    fp32 run shifted by the skipped steps (measured: within 7e-4)."""
    folder = _reference(tmp_path_factory, "grad_reference.py", "--model", model)
    flags = ["--loss", "mse", "--optimizer", "adamw", "--lr", "0.01"]
    fp32, _ = _train(amp_run, folder, *flags, batch=2, steps=30)
    fp16, state = _train(amp_run, folder, *flags, "--amp-type", "f16", batch=2, steps=30)
    log = np.loadtxt(folder / "log.csv", delimiter=",", skiprows=1, ndmin=2)
    skipped = int(log[-1, 5])
    assert 1 <= skipped <= 3, log[:, 5]
    assert np.all(np.isfinite(fp16)) and fp16[-1] < fp16[0] / 4, fp16
    shifted = np.abs(fp16[skipped:] - fp32[:len(fp32) - skipped]) / fp32[:len(fp32) - skipped]
    assert shifted.max() < 5e-3, shifted
    assert all(np.all(np.isfinite(v)) for v in state.values())


@pytest.fixture(scope="module")
def resnet18_fp32(tmp_path_factory):
    """ResNet-18 (training-mode BatchNorm, 128x128, batch 2) in fp32, with
    PyTorch's fp32 gradients, its float64 gradients of the same weights and
    data (exact.<name>) and its spread under a 1e-6 weight perturbation."""
    return _reference(tmp_path_factory, "grad_reference.py", "--model", "resnet18",
                      "--conditioning")


@pytest.mark.slow
def test_resnet18_fp32_gradients(resnet18_fp32, amp_opt, amp_run):
    """amp's fp32 ResNet-18 gradients against the exact (float64) ones,
    within a bound set by a conditioning experiment on PyTorch itself:
    moving every weight by 1e-6 relative (about 10 ulp) moves PyTorch's
    fp32 gradients by up to 4.6e-3 (median 4e-5), because some ReLU
    pre-activations lie within rounding of zero and any change of rounding
    flips them. PyTorch's own fp32 gradients happen to be 2e-5 from float64;
    amp's, with a different summation order, are measured at 1.3e-2 with
    oneDNN's default blocked layouts (a flip at layer3.1's output: layer4 is
    within 2e-5, everything below moves together) and 4.6e-3 with plain
    layouts (AMP_CPU_PLAIN_CONV=1; the same flip as PyTorch's perturbed run).
    The bound is 5x the largest spread; amp's math in float64 is checked to
    2e-11 by test_real_model_gradients."""
    folder = resnet18_fp32
    grads = _compute_gradients(amp_opt, amp_run, folder, "mse", 2)
    ref = np.load(folder / "reference.npz")
    names = [k[5:] for k in ref.files if k.startswith("grad.")]
    assert sorted(grads) == sorted(names)
    spread = max(float(ref[f"spread.{n}"]) for n in names)
    torch_error = max(_rel(ref[f"grad.{n}"], ref[f"exact.{n}"]) for n in names)
    # The experiment itself: a sensitive problem, a correct fp32 reference.
    assert 1e-4 < spread < 5e-2 and torch_error < 1e-4, (spread, torch_error)
    worst = max((_rel(grads[n], ref[f"exact.{n}"]), n) for n in names)
    assert worst[0] < 5 * spread, (worst, spread)
    # The layers above the flip agree to PyTorch's fp32 accuracy.
    for name in names:
        if name.startswith(("layer4.", "fc.")):
            assert _rel(grads[name], ref[f"exact.{name}"]) < 1e-4, name


def _train(amp_run, folder, *flags, data="x.npy", labels="y.npy", batch=16, steps=None):
    log = folder / "log.csv"
    state = folder / "state.npz"
    cmd = [amp_run, folder / "model.onnx", "--train", "--data", folder / data,
           "--labels", folder / labels, "--batch-size", batch, "--no-shuffle",
           "--log-csv", log, "--save-state", state, *flags]
    if steps is not None:
        cmd += ["--steps", steps]
    _run(cmd)
    losses = np.loadtxt(log, delimiter=",", skiprows=1, usecols=1, ndmin=1)
    return losses, dict(np.load(state))


TRAJECTORIES = [
    ("mlp", ["--optimizer", "sgd", "--lr", "0.1"]),
    ("mlp", ["--optimizer", "momentum", "--lr", "0.05", "--nesterov",
             "--weight-decay", "0.01"]),
    ("mlp", ["--optimizer", "adamw", "--lr", "0.01"]),
    ("mlp", ["--optimizer", "sgd", "--lr", "0.5", "--clip-grad-norm", "0.1"]),
    ("cnn", ["--optimizer", "sgd", "--lr", "0.1"]),
    ("cnn", ["--optimizer", "adamw", "--lr", "0.01", "--weight-decay", "0.05"]),
    ("regressor", ["--optimizer", "momentum", "--lr", "0.05", "--momentum", "0.8"]),
    ("mlp", ["--optimizer", "adamw", "--lr", "0.01", "--beta1", "0.8", "--beta2", "0.95",
             "--eps", "1e-4"]),
    ("mlp", ["--optimizer", "sgd", "--lr", "0.2", "--lr-schedule", "cosine",
             "--warmup-steps", "3", "--total-steps", "16"]),
    ("mlp", ["--optimizer", "adamw", "--lr", "0.02", "--lr-schedule", "linear",
             "--warmup-steps", "4", "--total-steps", "20"]),
    ("cnn", ["--optimizer", "momentum", "--lr", "0.1", "--lr-schedule", "step",
             "--lr-step-size", "6", "--lr-gamma", "0.3"]),
]


@pytest.mark.parametrize("model,flags", TRAJECTORIES,
                         ids=[f"{m}-{'-'.join(f[1::2][:3])}" for m, f in TRAJECTORIES])
def test_loss_trajectory_matches_torch(model, flags, amp_run, tmp_path_factory):
    """20 steps: the loss of every step, the learning rate of every step
    (schedules: PyTorch's StepLR, Hugging Face's warm-up/linear/cosine) and
    the final parameters; non-default AdamW betas and eps."""
    ref_flags = [f for f in flags if f != "--clip-grad-norm"]
    ref_args = []
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag in ("--nesterov",):
            ref_args.append(flag)
            i += 1
            continue
        ref_args += [flag, flags[i + 1]]
        i += 2
    del ref_flags
    folder = _reference(tmp_path_factory, "train_reference.py", "--model", model,
                        "--steps", "20", "--batch", "16", *ref_args)
    loss = "mse" if model == "regressor" else "cross-entropy"
    losses, state = _train(amp_run, folder, "--loss", loss, *flags, steps=20)
    ref = np.load(folder / "reference.npz")
    assert len(losses) == 20
    np.testing.assert_allclose(losses, ref["losses"], rtol=1e-4)
    lrs = np.loadtxt(folder / "log.csv", delimiter=",", skiprows=1, usecols=3, ndmin=1)
    np.testing.assert_allclose(lrs, ref["lrs"], rtol=1e-6, atol=1e-9)
    for key in ref.files:
        # AdamW normalises the ~1e-8 rounding noise that is the gradient of
        # a bias followed by BatchNormalization into full-size steps: that
        # parameter follows noise in PyTorch too.
        if key.startswith("param.") and not (
                model == "cnn" and "adamw" in flags and key == "param.conv1.bias"):
            assert _rel(state[key[6:]], ref[key]) < 1e-4, key
    # BatchNorm's running statistics, updated every step (momentum 0.1).
    # The running variance follows ONNX, which averages the population
    # variance; PyTorch averages the unbiased one, n/(n-1) larger, so they
    # differ by less than 1/(n-1) (n values per channel: bn1 sees 16 x 8 x 8,
    # bn2 16 x 2 x 2; measured 6.7e-4 and 1.0e-2). After AdamW the means
    # follow conv1.bias's noise (see above).
    count = {"bn1": 16 * 8 * 8, "bn2": 16 * 2 * 2}
    buffers = [k for k in ref.files if k.startswith("buffer.")]
    assert bool(buffers) == (model == "cnn"), buffers
    for key in buffers:
        if "adamw" in flags and key == "buffer.bn1.running_mean":
            continue
        layer = key.split(".")[1]
        bound = 1 / (count[layer] - 1) if key.endswith("running_var") else 1e-5
        assert _rel(state[key[7:]], ref[key]) < bound, key


@pytest.fixture(scope="module")
def mlp_data(tmp_path_factory):
    return _reference(tmp_path_factory, "train_reference.py", "--model", "mlp",
                      "--steps", "12", "--batch", "16")


@pytest.mark.parametrize("precision", ["fp32", "fp16-dynamic"])
def test_accumulation_equals_large_batch(mlp_data, amp_run, tmp_path, precision):
    """K micro-batches of B through @compute_gradients/@apply_gradients =
    one step on K*B, for AdamW: within fp32 rounding, and in fp16 with
    dynamic loss scaling (one scale for the K micro-batches, one skip
    decision per optimizer step: both runs skip the same steps and end
    with the same scale) within fp16 rounding."""
    flags = ["--optimizer", "adamw", "--lr", "0.01"]
    if precision == "fp16-dynamic":
        flags += ["--amp-type", "f16", "--loss-scale-init", "1e9"]
    tolerance = 1e-5 if precision == "fp32" else 2e-3
    big_losses, big = _train(amp_run, mlp_data, *flags, batch=16, steps=6)
    big_log = np.loadtxt(mlp_data / "log.csv", delimiter=",", skiprows=1, ndmin=2)
    small_losses, small = _train(amp_run, mlp_data, *flags, "--accumulate", "4",
                                 batch=4, steps=6)
    small_log = np.loadtxt(mlp_data / "log.csv", delimiter=",", skiprows=1, ndmin=2)
    np.testing.assert_allclose(small_losses, big_losses, rtol=tolerance)
    for name in ("fc1.weight", "fc2.bias", "fc1.weight.exp_avg_sq"):
        assert _rel(small[name], big[name]) < tolerance, name
    # The same steps skipped (an overflowing scale of 1e9 backs off first).
    np.testing.assert_array_equal(small_log[:, 4], big_log[:, 4])
    np.testing.assert_array_equal(small_log[:, 2], big_log[:, 2])
    if precision == "fp16-dynamic":
        assert big_log[:, 4].sum() >= 1, big_log
    skipped = int(big_log[:, 4].sum())
    assert small["step"] == big["step"] == 6 - skipped


def test_restore_continues_bit_identically(mlp_data, amp_run, tmp_path):
    """10 steps in one go = 6 steps, save, load, 4 more (shuffled epochs)."""
    common = [mlp_data / "model.onnx", "--train", "--data", mlp_data / "x.npy",
              "--labels", mlp_data / "y.npy", "--batch-size", "16",
              "--shuffle-seed", "3", "--optimizer", "momentum", "--lr", "0.05",
              "--amp-type", "f16"]
    _run([amp_run, *common, "--steps", "10", "--save-state", tmp_path / "full.npz"])
    _run([amp_run, *common, "--steps", "10", "--save-state", tmp_path / "again.npz"])
    assert (tmp_path / "full.npz").read_bytes() == (tmp_path / "again.npz").read_bytes()
    _run([amp_run, *common, "--steps", "6", "--save-state", tmp_path / "half.npz"])
    _run([amp_run, *common, "--steps", "4", "--load-state", tmp_path / "half.npz",
          "--save-state", tmp_path / "resumed.npz"])
    full, resumed = np.load(tmp_path / "full.npz"), np.load(tmp_path / "resumed.npz")
    assert sorted(full.files) == sorted(resumed.files)
    for name in full.files:
        assert np.array_equal(full[name], resumed[name]), name


def _error(amp_run, folder, *flags):
    proc = _run([amp_run, folder / "model.onnx", "--train", *flags], ok=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stderr


def test_bad_data_errors(mlp_data, amp_run, tmp_path):
    x = np.load(mlp_data / "x.npy")
    y = np.load(mlp_data / "y.npy")
    base = ["--steps", "1", "--batch-size", "16"]
    np.save(tmp_path / "x_wide.npy", np.zeros((len(x), 65), np.float32))
    assert "input 'x' (" in _error(amp_run, mlp_data, "--data", tmp_path / "x_wide.npy",
                                   "--labels", mlp_data / "y.npy", *base)
    np.save(tmp_path / "x64.npy", x.astype(np.float64))
    assert "has element type f64 but the model expects f32" in _error(
        amp_run, mlp_data, "--data", tmp_path / "x64.npy", "--labels",
        mlp_data / "y.npy", *base)
    bad = y.copy()
    bad[5] = 10
    np.save(tmp_path / "y_bad.npy", bad)
    assert "label 10 at index 5 is out of range [0, 10)" in _error(
        amp_run, mlp_data, "--data", mlp_data / "x.npy", "--labels",
        tmp_path / "y_bad.npy", *base)
    np.save(tmp_path / "y_short.npy", y[:-1])
    assert "samples but" in _error(amp_run, mlp_data, "--data", mlp_data / "x.npy",
                                   "--labels", tmp_path / "y_short.npy", *base)
    assert "is larger than the data set" in _error(
        amp_run, mlp_data, "--data", mlp_data / "x.npy", "--labels",
        mlp_data / "y.npy", "--steps", "1", "--batch-size", str(len(x) + 1))
    np.savez(tmp_path / "wrong.npz", **{"fc1.weight": np.zeros((3, 3), np.float32)})
    assert "'fc1.weight' is f32 [3, 3] but the program expects f32 [32, 64]" in _error(
        amp_run, mlp_data, "--data", mlp_data / "x.npy", "--labels",
        mlp_data / "y.npy", *base, "--load-state", tmp_path / "wrong.npz")
    np.savez(tmp_path / "partial.npz", other=np.zeros(2, np.float32))
    assert "does not match the program: it has no 'fc1.weight'" in _error(
        amp_run, mlp_data, "--data", mlp_data / "x.npy", "--labels",
        mlp_data / "y.npy", *base, "--load-state", tmp_path / "partial.npz")
    assert "give exactly one of --epochs N and --steps N" in _error(
        amp_run, mlp_data, "--data", mlp_data / "x.npy", "--labels",
        mlp_data / "y.npy")
    assert not list(tmp_path.glob("*.partial"))
