"""Dynamic loss scaling in amp's training programs (``amp-run --train``).

These tests pin amp's loss scaler to the semantics of
``torch.amp.GradScaler`` (``_amp_update_scale_`` and
``_amp_foreach_non_finite_check_and_unscale_``), modelled on PyTorch's
``test_grad_scaling_*`` tests, plus the DeepSpeed-style hysteresis and the
min/max clamps amp adds:

    overflow: if hysteresis_left <= 1: scale = max(scale * backoff, min)
              hysteresis_left = max(hysteresis_left - 1, 1); growth_tracker = 0
    clean:    hysteresis_left = H; growth_tracker += 1; when it reaches the
              interval: growth_tracker = 0 and scale = min(scale * growth, max)
              if scale * growth is finite (else the scale is unchanged)

An overflowing step is skipped: parameters, optimizer state, the step count
and the learning-rate schedule stay exactly as they were.

Every test trains the mlp of ``test/models/amp_testmodels/train_reference.py``
(Linear(64,32)-ReLU-Linear(32,10), exported once per module under Debian's
torch) on its own fixed-seed data, with ``--no-shuffle`` so that step k
(0-based) uses rows [8k, 8k+8). Overflows are injected by putting NaN into
the input rows of chosen batches. The data is "gentle" (inputs of scale 0.1,
distinct labels within a batch) so that fp16 gradients never overflow by
themselves at the scales used here: each test asserts the CSV's found_inf
column equals the injected pattern, so a natural overflow would show.

The fused op itself (``amp.multi_tensor_unscale_check``) is tested directly
from a hand-written .mlir program (no torch needed).

CSV steps are 1-based (``step`` column = k + 1); this file counts steps from 0.
"""

import csv
import os
import re
import subprocess

import numpy as np
import pytest

from amp_test_utils import DEBIAN_PYTHON, require_debian_torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODELS_DIR = os.path.join(REPO, "test", "models")

FLT_MAX = float(np.finfo(np.float32).max)
BATCH = 8
F16 = ("--amp-type", "f16")
SGD = ("--optimizer", "sgd", "--lr", "0.1")
PARAMS = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")


# --------------------------------------------------------------------------
# The reference rule
# --------------------------------------------------------------------------


def scaler_trace(found_inf_flags, init, growth, backoff, interval, hysteresis=1,
                 min=0.0, max=FLT_MAX):  # noqa: A002  (the CLI's names)
    """Pure-Python port of amp's scaler (GradScaler's ``_amp_update_scale_``
    with hysteresis and clamps), in float32 arithmetic.

    Returns ``(scales, scale, tracker, hysteresis_left)``: the scale each step
    used (before its update), then the state after the last step.
    """
    f32 = np.float32
    scale, tracker, left = f32(init), 0, hysteresis
    scales = []
    with np.errstate(over="ignore"):
        for found in found_inf_flags:
            scales.append(scale)
            if found:
                if left <= 1:
                    scale = f32(np.maximum(f32(scale * f32(backoff)), f32(min)))
                left = builtins_max(left - 1, 1)
                tracker = 0
            else:
                left = hysteresis
                tracker += 1
                if tracker == interval:
                    tracker = 0
                    grown = f32(scale * f32(growth))
                    if np.isfinite(grown):
                        scale = f32(np.minimum(grown, f32(max)))
    return scales, scale, tracker, left


def builtins_max(a, b):
    """``max`` (shadowed by the CLI-named parameter of :func:`scaler_trace`)."""
    return a if a >= b else b


def expected_scales(found_inf_flags, init, growth, backoff, interval, hysteresis=1,
                    min=0.0, max=FLT_MAX):  # noqa: A002
    """The per-step scales and the final ``(scale, growth_tracker)`` of the rule."""
    scales, scale, tracker, _ = scaler_trace(found_inf_flags, init, growth, backoff,
                                             interval, hysteresis, min, max)
    return scales, (scale, tracker)


def test_reference_rule_matches_gradscaler_examples():
    """The port itself, on GradScaler's documented behaviour (no amp involved):
    growth after `interval` clean steps, backoff and tracker reset on inf,
    no growth when scale * growth overflows float32."""
    scales, (scale, tracker) = expected_scales([0, 0, 1, 0, 0, 0], 4.0, 2.0, 0.5, 2)
    assert [float(s) for s in scales] == [4, 4, 8, 4, 4, 8]
    assert (float(scale), tracker) == (8.0, 1)
    scales, (scale, tracker) = expected_scales([0, 0], 1e38, 16.0, 0.5, 1)
    assert scale == np.float32(1e38) and tracker == 0


# --------------------------------------------------------------------------
# Fixtures and helpers
# --------------------------------------------------------------------------

_EXPORT = """
import sys
sys.path.insert(0, sys.argv[1])
from amp_testmodels.train_reference import build, export
model, shape, _ = build("mlp")
export(model, shape, sys.argv[2])
"""


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    """The exported mlp (model.onnx path); fails without Debian's torch."""
    require_debian_torch()
    path = tmp_path_factory.mktemp("mlp") / "model.onnx"
    proc = subprocess.run([DEBIAN_PYTHON, "-c", _EXPORT, MODELS_DIR, str(path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(path)


def make_data(batches, nan_batches=(), seed=0):
    """Gentle fixed-seed data for ``batches`` batches of 8; NaN in every input
    row of the (0-based) batches in ``nan_batches``."""
    rng = np.random.default_rng(seed)
    x = (0.1 * rng.standard_normal((batches * BATCH, 64))).astype(np.float32)
    y = np.concatenate([rng.permutation(10)[:BATCH] for _ in range(batches)]).astype(np.int64)
    for k in nan_batches:
        x[k * BATCH:(k + 1) * BATCH] = np.nan
    return x, y


def flags_for(steps, overflow_steps):
    return [int(k in overflow_steps) for k in range(steps)]


class Run:
    """The result of one ``amp-run --train``: process, CSV columns, state."""

    def __init__(self, proc, log, state):
        self.proc, self.log, self.state = proc, log, state

    def scales(self):
        return [np.float32(float(v)) for v in self.log["loss_scale"]]


def train(amp_run, model, workdir, x, y, steps, *flags, name="run", expect_ok=True):
    """Run ``amp-run MODEL --train`` on (x, y) for ``steps`` steps with batch 8,
    --no-shuffle, a CSV log and a saved state; returns a :class:`Run`."""
    workdir = str(workdir)
    xp, yp = os.path.join(workdir, f"{name}.x.npy"), os.path.join(workdir, f"{name}.y.npy")
    logp, statep = os.path.join(workdir, f"{name}.csv"), os.path.join(workdir, f"{name}.npz")
    np.save(xp, x)
    np.save(yp, y)
    command = [amp_run, model, "--train", "--data", xp, "--labels", yp,
               "--batch-size", str(BATCH), "--steps", str(steps), "--no-shuffle",
               "--log-csv", logp, "--save-state", statep, *map(str, flags)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if not expect_ok:
        return Run(proc, None, None)
    assert proc.returncode == 0, f"{' '.join(command)}\nstderr:\n{proc.stderr[-3000:]}"
    with open(logp, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == list(range(1, steps + 1))
    log = {key: [r[key] for r in rows] for key in rows[0]}
    with np.load(statep) as npz:
        state = {k: npz[k].copy() for k in npz.files}
    return Run(proc, log, state)


def found_inf(run):
    return [int(v) for v in run.log["found_inf"]]


def assert_scales(run, expected):
    got = run.scales()
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g == e, f"step {k}: CSV loss_scale {g!r}, expected {e!r}\n{got}"


def assert_bit_identical(a, b, keys):
    for key in keys:
        assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
        assert a[key].tobytes() == b[key].tobytes(), f"{key} differs"


# --------------------------------------------------------------------------
# 1. The exact scale sequence
# --------------------------------------------------------------------------


@pytest.mark.parametrize("init,growth,backoff,interval,overflows,steps", [
    (65536.0, 2.0, 0.5, 3, (2, 3, 9), 14),
    (1024.0, 4.0, 0.25, 2, (1, 4, 5, 10), 13),
])
def test_scale_sequence_matches_rule(amp_run, mlp, tmp_path, init, growth, backoff, interval,
                                     overflows, steps):
    """Step by step, the scale each step used (CSV loss_scale), the found_inf
    and skipped columns, and the final saved loss_scale/growth_tracker equal
    the port of GradScaler's update rule, for a run whose injected overflows
    interleave with growth (cf. PyTorch's test_grad_scaling_update_scale)."""
    x, y = make_data(steps, overflows)
    run = train(amp_run, mlp, tmp_path, x, y, steps, *F16, *SGD,
                "--loss-scale-init", init, "--loss-scale-growth", growth,
                "--loss-scale-backoff", backoff, "--loss-scale-interval", interval)
    flags = flags_for(steps, overflows)
    assert found_inf(run) == flags
    assert [int(v) for v in run.log["skipped"]] == list(np.cumsum(flags))
    scales, (scale, tracker) = expected_scales(flags, init, growth, backoff, interval)
    assert len(set(float(s) for s in scales)) >= 3, "the case must both grow and back off"
    assert_scales(run, scales)
    assert run.state["loss_scale"].dtype == np.float32
    assert run.state["loss_scale"] == scale
    assert run.state["growth_tracker"].dtype == np.int64
    assert int(run.state["growth_tracker"]) == tracker
    assert int(run.state["step"]) == steps - len(overflows)
    assert int(run.state["amp_run.batches_done"]) == steps
    assert "hysteresis_left" not in run.state
    assert f"done: {steps} steps, {len(overflows)} skipped" in run.proc.stdout


# --------------------------------------------------------------------------
# 2. A skipped step did not happen
# --------------------------------------------------------------------------


OPTIMIZER_STATE = {
    "momentum": ("momentum_buffer",),
    "adamw": ("exp_avg", "exp_avg_sq"),
}


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZER_STATE))
def test_skipped_step_leaves_no_trace(amp_run, mlp, tmp_path, optimizer):
    """GradScaler.step skips optimizer.step() on inf: run A with NaN in batch k
    must end, after the same clean steps, with parameters, optimizer state
    (momentum buffers; AdamW's moments, whose bias correction reads `step`)
    and `step` bit-identical to run B whose data simply omits batch k; only
    the scaler differs (A's scale = B's * backoff, A's tracker restarted at
    the skip). The interval is large so B never grows."""
    k, steps = 3, 10
    x, y = make_data(steps, (k,), seed=7)
    keep = np.r_[0:k * BATCH, (k + 1) * BATCH:steps * BATCH]
    lr = "0.1" if optimizer == "momentum" else "0.01"
    common = (*F16, "--optimizer", optimizer, "--lr", lr, "--loss-scale-interval", 1000)
    a = train(amp_run, mlp, tmp_path, x, y, steps, *common, name="a")
    b = train(amp_run, mlp, tmp_path, x[keep], y[keep], steps - 1, *common, name="b")
    assert found_inf(a) == flags_for(steps, (k,))
    assert found_inf(b) == [0] * (steps - 1)
    state_keys = [*PARAMS, *(f"{p}.{s}" for p in PARAMS for s in OPTIMIZER_STATE[optimizer]),
                  "step"]
    assert sorted(a.state) == sorted(b.state)
    assert_bit_identical(a.state, b.state, state_keys)
    assert int(a.state["step"]) == steps - 1
    assert a.state["loss_scale"] == b.state["loss_scale"] * np.float32(0.5)
    assert b.state["loss_scale"] == np.float32(65536)
    assert int(a.state["growth_tracker"]) == steps - 1 - k
    assert int(b.state["growth_tracker"]) == steps - 1
    # The clean steps saw the same parameters, hence the same losses.
    a_losses = [v for i, v in enumerate(a.log["loss"]) if i != k]
    assert a_losses == b.log["loss"]
    # Sanity: the optimizer state is live (nonzero), so the comparison means something.
    for slot in OPTIMIZER_STATE[optimizer]:
        assert np.any(a.state[f"fc1.weight.{slot}"] != 0), slot


# --------------------------------------------------------------------------
# 3. The fused unscale-and-check op, at every element position
# --------------------------------------------------------------------------

SHAPES = [(3, 4), (5,), (2, 2, 2)]
_TYPES = ", ".join(f"tensor<{'x'.join(map(str, s))}xf32>" for s in SHAPES)
UNSCALE_PROGRAM = f"""\
func.func @main(%s: tensor<f32>, %a: tensor<3x4xf32>, %b: tensor<5xf32>, %c: tensor<2x2x2xf32>) -> ({_TYPES}, tensor<f32>, tensor<3xf32>) {{
  %u:3, %found, %flags = amp.multi_tensor_unscale_check %s, %a, %b, %c : (tensor<f32>, {_TYPES}) -> ({_TYPES}, tensor<f32>, tensor<3xf32>)
  return %u#0, %u#1, %u#2, %found, %flags : {_TYPES}, tensor<f32>, tensor<3xf32>
}}
"""


@pytest.fixture(scope="module")
def unscale_program(tmp_path_factory, amp_opt):
    path = tmp_path_factory.mktemp("unscale") / "unscale.mlir"
    path.write_text(UNSCALE_PROGRAM)
    proc = amp_opt.run(path)
    assert proc.returncode == 0, proc.stderr
    assert "amp.multi_tensor_unscale_check" in proc.stdout
    return str(path)


def run_unscale(amp_run, program, workdir, inv_scale, grads):
    """Run the program once; returns (unscaled list, found_inf, flags)."""
    workdir.mkdir(parents=True, exist_ok=True)
    inputs = [np.array(inv_scale, dtype=np.float32), *grads]
    args = []
    for i, value in enumerate(inputs):
        p = workdir / f"in{i}.npy"
        np.save(p, value)
        args += ["-i", str(p)]
    out = workdir / "out"
    proc = subprocess.run([amp_run, program, *args, "--output-dir", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outs = [np.load(out / f"output_{i}.npy") for i in range(5)]
    for o, shape in zip(outs, SHAPES + [(), (3,)]):
        assert o.dtype == np.float32 and o.shape == shape
    return outs[:3], outs[3], outs[4]


def base_grads(seed=3):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * 1000).astype(np.float32) for s in SHAPES]


def assert_same_floats(got, want, what):
    """Equal as float32 bit patterns, except that any NaN matches any NaN."""
    assert got.dtype == want.dtype == np.float32
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got.view(np.uint32) == want.view(np.uint32)) | both_nan
    assert same.all(), f"{what}: got {got}, want {want}"


def test_unscale_check_clean(amp_run, unscale_program, tmp_path):
    """No Inf/NaN: found_inf 0, all flags 0, every output x * inv_scale
    rounded once in float32 (PyTorch's _amp_foreach_non_finite_check_and_unscale_
    multiplies by inv_scale), for an exact and an inexact inv_scale."""
    grads = base_grads()
    for n, inv_scale in enumerate([np.float32(1 / 65536), np.float32(1 / 3)]):
        unscaled, found, flags = run_unscale(amp_run, unscale_program, tmp_path / str(n),
                                             inv_scale, grads)
        assert found == np.float32(0)
        assert flags.tolist() == [0.0, 0.0, 0.0]
        for i, (u, g) in enumerate(zip(unscaled, grads)):
            assert_same_floats(u, g * inv_scale, f"clean output {i}")


def test_unscale_check_every_position(amp_run, unscale_program, tmp_path):
    """For every element of every gradient and each of +inf, -inf and NaN:
    found_inf is 1, the flags are the one-hot of that gradient, and every
    output (the poisoned one included) is x * inv_scale in float32."""
    grads = base_grads()
    inv_scale = np.float32(2.0 ** -16)
    cases = 0
    for t, shape in enumerate(SHAPES):
        for pos in np.ndindex(*shape):
            for value in (np.inf, -np.inf, np.nan):
                poisoned = [g.copy() for g in grads]
                poisoned[t][pos] = value
                unscaled, found, flags = run_unscale(
                    amp_run, unscale_program, tmp_path / f"{t}_{'_'.join(map(str, pos))}_{value}",
                    inv_scale, poisoned)
                where = f"tensor {t} position {pos} value {value}"
                assert found == np.float32(1), where
                assert flags.tolist() == [float(i == t) for i in range(3)], where
                for i, (u, g) in enumerate(zip(unscaled, poisoned)):
                    assert_same_floats(u, g * inv_scale, f"{where}: output {i}")
                cases += 1
    assert cases == 3 * (12 + 5 + 8)


@pytest.mark.parametrize("value", [3e38, -3e38])
def test_unscale_check_product_overflow(amp_run, unscale_program, tmp_path, value):
    """A finite gradient whose unscaled value overflows (3e38 * 2 = inf) is
    detected: the check looks at the product, not at the input."""
    grads = base_grads()
    grads[2][1, 0, 1] = np.float32(value)
    unscaled, found, flags = run_unscale(amp_run, unscale_program, tmp_path, 2.0, grads)
    assert found == np.float32(1)
    assert flags.tolist() == [0.0, 0.0, 1.0]
    assert unscaled[2][1, 0, 1] == np.float32(np.copysign(np.inf, value))
    with np.errstate(over="ignore"):
        for i, (u, g) in enumerate(zip(unscaled, grads)):
            assert_same_floats(u, g * np.float32(2.0), f"output {i}")


# --------------------------------------------------------------------------
# 4. Hysteresis
# --------------------------------------------------------------------------


def test_hysteresis_two(amp_run, mlp, tmp_path):
    """--loss-scale-hysteresis 2 (DeepSpeed's `hysteresis`): isolated overflows
    never back off; in a run of consecutive overflows the scale backs off at
    the second and at every further one; a clean step restores the allowance.
    hysteresis_left is saved in the state (1 after an overflow, 2 after a
    clean step)."""
    steps, overflows = 16, (2, 5, 8, 9, 10, 13)
    x, y = make_data(steps, overflows, seed=11)
    run = train(amp_run, mlp, tmp_path, x, y, steps, *F16, *SGD,
                "--loss-scale-hysteresis", 2, name="full")
    flags = flags_for(steps, overflows)
    assert found_inf(run) == flags
    scales, scale, tracker, left = scaler_trace(flags, 65536, 2, 0.5, 2000, hysteresis=2)
    assert_scales(run, scales)
    # Spelled out: 65536 through the isolated overflows 2 and 5 and the first
    # of 8,9,10; backed off at 9 and 10; the isolated 13 changes nothing.
    assert [float(s) for s in scales] == [65536.0] * 10 + [32768.0] + [16384.0] * 5
    assert run.state["loss_scale"] == scale == np.float32(16384)
    assert int(run.state["growth_tracker"]) == tracker == 2
    assert run.state["hysteresis_left"].dtype == np.int64
    assert int(run.state["hysteresis_left"]) == left == 2
    # Stop right after an isolated overflow: the scale is kept, the allowance used.
    short = train(amp_run, mlp, tmp_path, x, y, 6, *F16, *SGD,
                  "--loss-scale-hysteresis", 2, name="short")
    assert short.state["loss_scale"] == np.float32(65536)
    assert int(short.state["hysteresis_left"]) == 1
    assert int(short.state["growth_tracker"]) == 0


# --------------------------------------------------------------------------
# 5. Clamps
# --------------------------------------------------------------------------


def test_max_clamp(amp_run, mlp, tmp_path):
    """--loss-scale-max 262144 with interval 1 from 65536: 65536, 131072, then
    262144 for ever (growth is clamped, not skipped); without the clamp the
    same data grows to 524288 at step 3 (so the clamp is what stops it)."""
    steps = 8
    x, y = make_data(steps, seed=5)
    run = train(amp_run, mlp, tmp_path, x, y, steps, *F16, *SGD,
                "--loss-scale-interval", 1, "--loss-scale-max", 262144, name="max")
    assert found_inf(run) == [0] * steps
    assert [float(s) for s in run.scales()] == [65536.0, 131072.0] + [262144.0] * (steps - 2)
    assert run.state["loss_scale"] == np.float32(262144)
    assert int(run.state["growth_tracker"]) == 0
    free = train(amp_run, mlp, tmp_path, x, y, 4, *F16, *SGD,
                 "--loss-scale-interval", 1, name="free")
    assert [float(s) for s in free.scales()] == [65536.0, 131072.0, 262144.0, 524288.0]


def test_min_clamp(amp_run, mlp, tmp_path):
    """--loss-scale-min: backoff is clamped at the minimum (65536 -> 32768 ->
    20000, not 16384), and the run keeps going while the scale is above it."""
    steps, overflows = 5, (1, 2)
    x, y = make_data(steps, overflows, seed=13)
    run = train(amp_run, mlp, tmp_path, x, y, steps, *F16, *SGD, "--loss-scale-min", 20000)
    flags = flags_for(steps, overflows)
    assert found_inf(run) == flags
    scales, scale, tracker, _ = scaler_trace(flags, 65536, 2, 0.5, 2000, min=20000)
    assert [float(s) for s in scales] == [65536.0, 65536.0, 32768.0, 20000.0, 20000.0]
    assert_scales(run, scales)
    assert run.state["loss_scale"] == scale == np.float32(20000)
    assert int(run.state["growth_tracker"]) == tracker == 2


def test_overflow_at_min_scale_stops(amp_run, mlp, tmp_path):
    """--loss-scale-min 16384 with overflows at steps 1, 2, 3: the scale goes
    65536 -> 32768 -> 16384, and the overflow at the minimum (step 3, printed
    1-based as step 4) stops the run with exit status 1 and an error naming
    the scale and the parameters with non-finite gradients."""
    x, y = make_data(8, (1, 2, 3, 4), seed=17)
    run = train(amp_run, mlp, tmp_path, x, y, 8, *F16, *SGD, "--loss-scale-min", 16384,
                expect_ok=False)
    assert run.proc.returncode == 1, run.proc.stderr
    err = run.proc.stderr
    assert "error: step 4 overflowed with the loss scale at its minimum (16384" in err, err
    assert "non-finite gradients in: " in err and "fc1.weight" in err, err
    # One step earlier it still runs, with the scale at the minimum.
    ok = train(amp_run, mlp, tmp_path, x, y, 3, *F16, *SGD, "--loss-scale-min", 16384,
               name="ok")
    assert [float(s) for s in ok.scales()] == [65536.0, 65536.0, 32768.0]
    assert ok.state["loss_scale"] == np.float32(16384)


# --------------------------------------------------------------------------
# 6. Static scale
# --------------------------------------------------------------------------


def test_static_scale_skips_overflow(amp_run, mlp, tmp_path):
    """--loss-scale=static:1024 (GradScaler with growth/backoff 1, or apex's
    static loss scale): the scale is always 1024, an overflowing step is still
    skipped (state after k+1 steps, step k overflowing, bit-identical to the
    state after k), and the state holds no growth tracker."""
    k, steps = 3, 8
    x, y = make_data(steps, (k, 5), seed=19)
    static = ("--loss-scale=static:1024",)
    full = train(amp_run, mlp, tmp_path, x, y, steps, *F16, *SGD, *static, name="full")
    assert found_inf(full) == flags_for(steps, (k, 5))
    assert [float(s) for s in full.scales()] == [1024.0] * steps
    assert full.state["loss_scale"] == np.float32(1024)
    assert "growth_tracker" not in full.state
    assert int(full.state["step"]) == steps - 2
    before = train(amp_run, mlp, tmp_path, x, y, k, *F16, *SGD, *static, name="before")
    after = train(amp_run, mlp, tmp_path, x, y, k + 1, *F16, *SGD, *static, name="after")
    assert_bit_identical(before.state, after.state, [*PARAMS, "step", "loss_scale"])
    assert int(after.state["step"]) == k
    # Sanity: a clean step does change the parameters.
    earlier = train(amp_run, mlp, tmp_path, x, y, k - 1, *F16, *SGD, *static, name="earlier")
    assert earlier.state["fc1.weight"].tobytes() != before.state["fc1.weight"].tobytes()


# --------------------------------------------------------------------------
# 7. Growth that would overflow float32
# --------------------------------------------------------------------------


def test_huge_scale_stays_finite(amp_run, mlp, tmp_path):
    """fp32 program with --loss-scale=dynamic, init 1e38, growth 16, interval 1:
    1.6e39 is not a float32, so GradScaler keeps the scale (it only grows
    when scale * growth is finite). Every logged scale is finite and
    <= float32(1e38), the sequence equals the rule, and the final scale is
    finite."""
    steps = 6
    x, y = make_data(steps, seed=23)
    run = train(amp_run, mlp, tmp_path, x, y, steps, *SGD, "--loss-scale=dynamic",
                "--loss-scale-init", 1e38, "--loss-scale-growth", 16,
                "--loss-scale-interval", 1)
    scales = run.scales()
    assert all(np.isfinite(s) and s <= np.float32(1e38) for s in scales), scales
    expected, (scale, tracker) = expected_scales(found_inf(run), 1e38, 16, 0.5, 1)
    assert_scales(run, expected)
    assert np.isfinite(run.state["loss_scale"])
    assert run.state["loss_scale"] == scale
    assert int(run.state["growth_tracker"]) == tracker
    assert scales[0] == np.float32(1e38) and scales[1] == np.float32(1e38)


# --------------------------------------------------------------------------
# 8. Skips first, then growth (PyTorch's _run_scaling_case shape)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("skips,clean,interval", [(3, 8, 2), (2, 7, 3)])
def test_scale_after_skips_then_clean_steps(amp_run, mlp, tmp_path, skips, clean, interval):
    """After M overflowing steps (0..M-1) then N clean ones, the scale is
    init * growth**(N // interval) * backoff**M and the tracker N % interval
    (the closed form PyTorch's _run_scaling_case asserts)."""
    steps, init = skips + clean, 4096.0
    x, y = make_data(steps, range(skips), seed=29)
    run = train(amp_run, mlp, tmp_path, x, y, steps, *F16, *SGD,
                "--loss-scale-init", init, "--loss-scale-interval", interval)
    assert found_inf(run) == [1] * skips + [0] * clean
    assert run.state["loss_scale"] == np.float32(init * 2.0 ** (clean // interval) * 0.5 ** skips)
    assert int(run.state["growth_tracker"]) == clean % interval
    assert int(run.state["step"]) == clean
    assert_scales(run, expected_scales(found_inf(run), init, 2, 0.5, interval)[0])


# --------------------------------------------------------------------------
# 9. The schedule does not advance on skipped steps
# --------------------------------------------------------------------------


def test_lr_schedule_frozen_on_skips(amp_run, mlp, tmp_path):
    """--lr-schedule=linear --warmup-steps 4 --total-steps 20: like a
    scheduler stepped only when the optimizer stepped, the lr a step uses
    depends on the optimizer steps taken, not on the batches seen. The step
    after a skip uses the skipped step's lr; the lr of every step equals the
    clean run's lr at the same optimizer-step count; the saved `step` is the
    number of non-skipped steps."""
    steps, overflows = 12, (2, 3, 7)
    schedule = ("--lr-schedule=linear", "--warmup-steps", 4, "--total-steps", 20)
    x, y = make_data(steps, overflows, seed=31)
    run = train(amp_run, mlp, tmp_path, x, y, steps, *F16, *SGD, *schedule, name="skips")
    clean_x, clean_y = make_data(steps, seed=31)
    clean = train(amp_run, mlp, tmp_path, clean_x, clean_y, steps, *F16, *SGD, *schedule,
                  name="clean")
    flags = flags_for(steps, overflows)
    assert found_inf(run) == flags
    assert found_inf(clean) == [0] * steps
    lr, clean_lr = run.log["lr"], clean.log["lr"]
    # The clean run follows the schedule exactly (float32): warm-up 0.1 * t / 4,
    # then 0.1 * (20 - t) / 16, t = optimizer steps taken before the step.
    f32 = np.float32
    want = [(f32(t) / f32(4) if t < 4 else f32(20 - t) / f32(16)) * f32(0.1)
            for t in range(steps)]
    assert [f32(float(v)) for v in clean_lr] == want
    for k in overflows:
        assert lr[k + 1] == lr[k], f"step {k + 1} after the skipped step {k}"
    taken = np.concatenate([[0], np.cumsum(1 - np.array(flags))])[:steps]
    assert lr == [clean_lr[t] for t in taken]
    assert int(run.state["step"]) == steps - len(overflows)
    assert int(clean.state["step"]) == steps


# --------------------------------------------------------------------------
# 6. amp-loss-scale as a pass, and no scaling
# --------------------------------------------------------------------------


def test_pass_on_unscaled_program_equals_train(amp_opt, amp_run, mlp, tmp_path):
    """`amp-opt --train --loss-scale=none` then `amp-opt --amp-loss-scale`
    trains bit-identically to `amp-opt --train` (dynamic), overflows
    included; the options of the pass are the --loss-scale-* flags."""
    steps = 8
    x, y = make_data(steps, (2, 5), seed=11)
    none = tmp_path / "none.mlir"
    scaled = tmp_path / "scaled.mlir"
    direct = tmp_path / "direct.mlir"
    for out, flags in [(none, ["--loss-scale=none"]),
                       (direct, ["--loss-scale-init=1024", "--loss-scale-interval=3",
                                 "--loss-scale-hysteresis=2"])]:
        proc = amp_opt.run(mlp, "--train", "--amp-type=f16", "--optimizer=adamw",
                           *flags, "-o", out)
        assert proc.returncode == 0, proc.stderr
    proc = amp_opt.run(none, "--amp-loss-scale=scale=1024 interval=3 hysteresis=2",
                       "-o", scaled)
    assert proc.returncode == 0, proc.stderr
    a = train(amp_run, scaled, tmp_path, x, y, steps, name="pass")
    b = train(amp_run, direct, tmp_path, x, y, steps, name="direct")
    assert found_inf(a) == flags_for(steps, (2, 5))
    assert sorted(a.state) == sorted(b.state)
    assert_bit_identical(a.state, b.state, sorted(b.state))
    assert a.log == b.log


def test_unscaled_overflow_stops_with_the_parameters(amp_run, mlp, tmp_path):
    """Without loss scaling a step is never skipped: amp-run stops at the
    first non-finite gradient and names the parameters."""
    x, y = make_data(4, (1,), seed=5)
    run = train(amp_run, mlp, tmp_path, x, y, 4, *F16, "--loss-scale=none",
                expect_ok=False)
    assert run.proc.returncode != 0
    err = run.proc.stderr
    assert "step 2 produced non-finite gradients in: fc1.weight, fc1.bias, " \
           "fc2.weight, fc2.bias" in err, err
    assert "without loss scaling the step is not skipped" in err


# --------------------------------------------------------------------------
# 7. @apply_gradients' found_inf input (sharded engines)
# --------------------------------------------------------------------------

MLP_MLIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "Training", "Inputs", "mlp.mlir")


def _signature(text, func):
    """[(name, role)] of the arguments and of the results of @func."""
    head = text[text.index(f"func.func @{func}("):]
    head = head[:head.index("{\n")]
    args, results = head.split(") -> (", 1)
    pattern = r'\{amp\.name = "([^"]+)", amp\.role = "(\w+)"\}'
    return re.findall(pattern, args), re.findall(pattern, results)


@pytest.mark.parametrize("scaled", [True, False], ids=["f16-dynamic", "fp32-unscaled"])
def test_apply_gradients_found_inf_input(amp_opt, amp_run, tmp_path, scaled):
    """A caller's found_inf (every rank's overflow, reduced) makes
    @apply_gradients skip on clean gradients exactly as its own check
    would: parameters, optimizer state and step unchanged, the scale backed
    off, found_inf returned as 1. With 0 it steps as before. Unscaled (no
    skip logic), the flag still comes back so the driver stops."""
    program = tmp_path / "split.mlir"
    flags = ["--amp-type=f16"] if scaled else ["--amp-opt-level=0"]
    proc = amp_opt.run(MLP_MLIR, "--train", *flags, "--optimizer=adamw", "--static-batch=8",
                       "--split-step", "-o", program)
    assert proc.returncode == 0, proc.stderr
    text = program.read_text()
    args, results = _signature(text, "apply_gradients")
    assert args[-1] == ("found_inf", "found_inf"), args
    init = tmp_path / "init"
    subprocess.run([amp_run, program, "--entry", "initial_state", "--output-dir", init],
                   check=True, capture_output=True, timeout=300)
    rng = np.random.default_rng(5)

    def run(flag, name):
        paths = []
        for arg, role in args:
            if role == "grad":
                value = (rng.standard_normal(np.load(init / f"{arg[:-5]}.npy").shape)
                         * (65536.0 if scaled else 1.0)).astype(np.float32)
                path = tmp_path / f"{name}.{arg}.npy"
                np.save(path, value)
            elif role == "found_inf":
                path = tmp_path / f"{name}.found_inf.npy"
                np.save(path, np.array(flag, np.float32))
            else:
                path = init / f"{arg}.npy"
            paths += ["-i", str(path)]
        out = tmp_path / name
        subprocess.run([amp_run, program, "--entry", "apply_gradients", "--output-dir", out,
                        *paths], check=True, capture_output=True, timeout=300)
        return {n: np.load(out / f"{n}.npy") for n, _ in results}

    skipped, stepped = run(1.0, "skip"), run(0.0, "step")
    assert float(skipped["found_inf"]) == 1.0 and float(stepped["found_inf"]) == 0.0
    state = [n for n, role in results if role in ("param", "optimizer", "step")]
    assert "fc1.weight" in state and "step" in state
    for n in state:
        before = np.load(init / f"{n}.npy")
        if scaled:
            assert np.array_equal(skipped[n], before), n
        assert n.endswith("exp_avg_sq") or not np.array_equal(stepped[n], before), n
    assert int(stepped["step"]) == 1
    if scaled:
        assert int(skipped["step"]) == 0
        assert float(skipped["loss_scale"]) == 32768.0
        assert float(stepped["loss_scale"]) == 65536.0


# --------------------------------------------------------------------------
# 8. Naming the parameters whose gradients are not finite (a subset)
# --------------------------------------------------------------------------

def _sqrt_offset_model(path):
    """y = x W^T + b + sqrt(p), p = [0, 1, 1]: d sqrt(p)/dp is +inf at the
    zero, so p's gradient is not finite while W's and b's are (y is)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((0.1 * rng.standard_normal((3, 4))).astype(np.float32),
                                     "W"),
             numpy_helper.from_array(np.zeros(3, np.float32), "b"),
             numpy_helper.from_array(np.array([0.0, 1.0, 1.0], np.float32), "p")]
    nodes = [helper.make_node("Gemm", ["x", "W", "b"], ["h"], transB=1),
             helper.make_node("Sqrt", ["p"], ["s"]),
             helper.make_node("Add", ["h", "s"], ["y"])]
    graph = helper.make_graph(
        nodes, "sqrt_offset",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.mark.parametrize("scaling", ["none", "dynamic-min"])
def test_nonfinite_gradients_name_only_their_parameters(amp_run, tmp_path, scaling):
    """Only p's gradient is infinite: the error names p and not W or b,
    without loss scaling (the first step stops) and with dynamic scaling
    (every step overflows until the scale reaches its minimum)."""
    model = tmp_path / "model.onnx"
    _sqrt_offset_model(model)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4 * BATCH, 4)).astype(np.float32)
    y = rng.integers(0, 3, 4 * BATCH).astype(np.int64)
    flags = (["--amp-opt-level=0", "--loss-scale=none"] if scaling == "none" else
             ["--amp-opt-level=0", "--loss-scale=dynamic", "--loss-scale-min", "16384"])
    run = train(amp_run, str(model), tmp_path, x, y, 4, *flags, expect_ok=False)
    assert run.proc.returncode == 1, run.proc.stderr
    err = run.proc.stderr
    if scaling == "none":
        assert "error: step 1 produced non-finite gradients in: p; without loss " \
               "scaling the step is not skipped" in err, err
    else:
        # 65536 -> 32768 -> 16384, then the overflow at the minimum stops.
        assert "error: step 3 overflowed with the loss scale at its minimum " \
               "(16384.00); non-finite gradients in: p\n" in err, err


def test_clipping_acts_on_unscaled_gradients(amp_run, mlp, tmp_path):
    """--clip-grad-norm with a loss scale clips the unscaled gradients: 10
    fp16 steps with a static scale of 1024 and with dynamic scaling end
    where the same fp16 steps without scaling end (measured 2.5e-8: powers
    of two scale exactly), and the clip is active (the unclipped run ends
    4e-2 .. 0.65 away). Clipping the scaled gradients would shrink every
    step 1024-fold."""
    x, y = make_data(10, seed=11)
    common = ("--amp-type", "f16", "--optimizer", "sgd", "--lr", "0.5")
    clip = ("--clip-grad-norm", "0.05")
    plain = train(amp_run, mlp, tmp_path, x, y, 10, *common, *clip, "--loss-scale=none",
                  name="plain")
    static = train(amp_run, mlp, tmp_path, x, y, 10, *common, *clip,
                   "--loss-scale=static:1024", name="static")
    dynamic = train(amp_run, mlp, tmp_path, x, y, 10, *common, *clip, name="dynamic")
    unclipped = train(amp_run, mlp, tmp_path, x, y, 10, *common, "--loss-scale=none",
                      name="unclipped")
    assert found_inf(dynamic) == [0] * 10
    for name in PARAMS:
        ref = plain.state[name]
        norm = np.linalg.norm(ref)
        for run in (static, dynamic):
            assert np.linalg.norm(run.state[name] - ref) / norm < 1e-5, name
        moved = np.linalg.norm(unclipped.state[name] - ref) / norm
        assert moved > 1e-2, (name, moved)
