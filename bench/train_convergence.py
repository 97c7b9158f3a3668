#!/usr/bin/env python3
"""Mixed-precision training convergence: fp32 against fp16 and bf16 in amp-run.

Trains the small test models of ``test/models/amp_testmodels/train_reference.py``
on scikit-learn's ``load_digits`` (1,797 8x8 grey images of the digits 0-9,
shipped inside the scikit-learn package; pixels / 16 as float32) with
``amp-run --train`` in three precisions from the same initial weights, the
same data order and the same optimizer:

* **fp32**: no ``--amp-type``;
* **fp16**: ``--amp-type f16`` (dynamic loss scaling, amp-run's default for f16:
  initial scale 65536, growth 2 every 2000 clean steps, backoff 0.5);
* **bf16**: ``--amp-type bf16`` (no loss scaling, amp-run's default for bf16).

Split: ``train_test_split(test_size=0.25, random_state=0, stratify=labels)``,
1,347 training and 450 test images. Models: ``mlp`` (Linear(64,32)-ReLU-
Linear(32,10) on the flattened images) and ``cnn`` (1x8x8 input, conv-BN-ReLU,
max pooling, strided conv-BN-ReLU, global mean, Linear(16,10)), built with
``train_reference.build(name, seed)`` and exported in training mode with
``train_reference.export`` under Debian's ``/usr/bin/python3`` (torch 1.13).
Each run reports the test accuracy (``--eval-data``/``--eval-labels``; amp-run's
"eval: accuracy A%" line), the skipped steps and the final loss scale (its
"done: N steps, K skipped, final loss scale S" line), the mean training loss
of the last epoch (``--log-csv``) and the wall time of the amp-run process
(compilation included).

amp-run runs with ``OMP_NUM_THREADS=1`` (``--threads``; 0 leaves it alone):
these models gain nothing from a second thread, and on a shared 2-core
machine OpenMP's spinning threads made wall times vary by 10x between runs.

Seed ``k`` means model initialisation ``build(name, seed=k)`` and
``--shuffle-seed k``. The first seed of ``--seeds`` is the configuration the
pass criteria are checked on; more seeds add a table of the spread.

Pass criteria, per model: fp32 test accuracy >= 95 %, and the fp16 and bf16
test accuracies within 1 percentage point of fp32 (450 test images: 1 pp is
4.5 images).

The ``--underflow`` part (on by default; ``--no-underflow`` leaves it out)
builds an mlp whose gradients fall below fp16's range on purpose and measures
what fp16 without loss scaling (``--loss-scale=none``) loses and what dynamic
loss scaling recovers; see ``underflow_experiment``.

Writes the results as markdown to ``--out`` (default docs/TrainingConvergence.md).

    python3 bench/train_convergence.py [--amp-run build/bin/amp-run] \\
        [--out docs/TrainingConvergence.md] [--models mlp,cnn] [--seeds 0,1,2,3,4] \\
        [--work DIR] [--threads 1] [--no-underflow]
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_AMP_RUN = os.path.join(REPO_ROOT, "build", "bin", "amp-run")
DEFAULT_OUT = os.path.join(REPO_ROOT, "docs", "TrainingConvergence.md")
MODELS_DIR = os.path.join(REPO_ROOT, "test", "models")
DEBIAN_PYTHON = "/usr/bin/python3"

# The fixed split of load_digits.
SPLIT = dict(test_size=0.25, random_state=0)

# One optimizer setting per model (amp-run flags). Both reach >= 95 % fp32
# test accuracy for every seed we tried (see the seed table in the doc).
SETTINGS = {
    "mlp": dict(optimizer="momentum", lr=0.05, momentum=0.9, batch=32, epochs=30),
    "cnn": dict(optimizer="momentum", lr=0.05, momentum=0.9, batch=32, epochs=30),
}
SAMPLE_SHAPES = {"mlp": (64,), "cnn": (1, 8, 8)}

PRECISIONS = {
    "fp32": [],
    "fp16": ["--amp-type", "f16"],
    "bf16": ["--amp-type", "bf16"],
}
# Also run for the first seed, for reference (not a pass criterion): does
# fp16 need loss scaling on these models at all?
NO_SCALING = ("fp16, no loss scaling", ["--amp-type", "f16", "--loss-scale", "none"])
MIN_FP32_ACCURACY = 95.0
MAX_DIFF_PP = 1.0

# fp16's smallest positive subnormal: 2^-24.
FP16_MIN_SUBNORMAL = 2.0 ** -24

# The underflow experiment (see underflow_experiment).
UNDERFLOW = dict(
    # Part 1 and 2: the mlp with fc2.weight * 1e-5, batch 256.
    scale=1e-5, batch=256, step_lr=1.0, k_steps=100, k_optimizer="momentum", k_lr=0.1,
    # Part 3: fc2.weight * 1e-4 and frozen, batch 1024, plain SGD with a large lr.
    frozen_scale=1e-4, frozen_batch=1024, frozen_lr=1e7, frozen_steps=100,
)

_EXPORT_SNIPPET = r"""
import json, sys
import torch
sys.path.insert(0, sys.argv[1])
from amp_testmodels import train_reference as tr
for spec in json.loads(sys.argv[2]):
    model, shape, _ = tr.build(spec["model"], seed=spec["seed"])
    if spec.get("fc2_scale") is not None:
        with torch.no_grad():
            model.fc2.weight.mul_(spec["fc2_scale"])
    tr.export(model, shape, spec["path"])
print(torch.__version__)
"""


# ---------------------------------------------------------------- helpers


def has_debian_torch():
    """Whether /usr/bin/python3 can import torch (it exports the models)."""
    if not os.path.exists(DEBIAN_PYTHON):
        return False
    probe = subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True)
    return probe.returncode == 0


def load_split():
    """load_digits, pixels / 16 as float32, split with SPLIT (stratified)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, stratify=y, **SPLIT)
    return x_train, y_train, x_test, y_test


def write_data(work):
    """Write the split as .npy files; returns {model: {train_x, train_y, test_x, test_y}}."""
    x_train, y_train, x_test, y_test = load_split()
    os.makedirs(work, exist_ok=True)
    paths = {}
    for model, shape in SAMPLE_SHAPES.items():
        files = {}
        for key, array in (("train_x", x_train.reshape((-1,) + shape)),
                           ("test_x", x_test.reshape((-1,) + shape)),
                           ("train_y", y_train), ("test_y", y_test)):
            name = key + ("_img" if model == "cnn" and key.endswith("_x") else "") + ".npy"
            files[key] = os.path.join(work, name)
            np.save(files[key], np.ascontiguousarray(array))
        paths[model] = files
    return paths


def export_models(specs):
    """Export models with train_reference under Debian's python3.

    ``specs``: list of dicts with model, seed, path and optional fc2_scale
    (fc2.weight is multiplied by it under torch.no_grad() before export).
    Returns the torch version."""
    result = subprocess.run(
        [DEBIAN_PYTHON, "-c", _EXPORT_SNIPPET, MODELS_DIR, json.dumps(specs)],
        capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("model export failed:\n" + result.stderr[-4000:])
    return result.stdout.strip().splitlines()[-1]


def onnx_initializers(path):
    """{name: array} of an ONNX file's initializers."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(path)
    return {i.name: numpy_helper.to_array(i).copy() for i in model.graph.initializer}


_DONE = re.compile(r"done: (\d+) steps, (\d+) skipped, final loss scale (\S+)")
_ACC = re.compile(r"eval: accuracy ([0-9.]+)% \((\d+) samples\)")


def amp_env(threads):
    """amp-run's environment: OMP_NUM_THREADS=threads (None/0: inherited)."""
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


def run_amp(amp_run, model, data, labels, args, eval_data=None, eval_labels=None,
            log_csv=None, save_state=None, threads=1):
    """One ``amp-run --train`` process (OMP_NUM_THREADS=threads). Returns a dict
    with accuracy (or None), steps, skipped, scale, wall (s), losses (from the
    CSV, when asked), stdout."""
    cmd = [amp_run, model, "--train", "--data", data, "--labels", labels,
           "--log-every", "1000000"] + list(args)
    if eval_data is not None:
        cmd += ["--eval-data", eval_data, "--eval-labels", eval_labels]
    if log_csv is not None:
        cmd += ["--log-csv", log_csv]
    if save_state is not None:
        cmd += ["--save-state", save_state]
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True, env=amp_env(threads))
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"amp-run failed (exit {result.returncode}): "
                           f"{shlex.join(cmd)}\n{result.stderr[-4000:]}")
    done = _DONE.search(result.stdout)
    if done is None:
        raise RuntimeError(f"no 'done:' line in amp-run's output: {shlex.join(cmd)}\n"
                           + result.stdout[-2000:])
    acc = _ACC.search(result.stdout)
    out = dict(steps=int(done.group(1)), skipped=int(done.group(2)),
               scale=float(done.group(3)), wall=wall, stdout=result.stdout,
               accuracy=float(acc.group(1)) if acc else None,
               eval_samples=int(acc.group(2)) if acc else None, command=cmd)
    if log_csv is not None:
        log = np.genfromtxt(log_csv, delimiter=",", names=True)
        out["losses"] = np.atleast_1d(log["loss"]).astype(np.float64)
        out["found_inf"] = np.atleast_1d(log["found_inf"]).astype(np.int64)
    return out


def optimizer_args(setting):
    args = ["--optimizer", setting["optimizer"], "--lr", repr(setting["lr"])]
    if setting["optimizer"] in ("momentum", "sgd") and "momentum" in setting:
        args += ["--momentum", repr(setting["momentum"])]
    if "weight_decay" in setting:
        args += ["--weight-decay", repr(setting["weight_decay"])]
    return args


def train_args(setting, seed):
    return (["--batch-size", str(setting["batch"]), "--epochs", str(setting["epochs"]),
             "--shuffle-seed", str(seed)] + optimizer_args(setting))


# ------------------------------------------------------------ convergence


def convergence(amp_run, work, models=("mlp", "cnn"), seeds=(0,), data=None,
                progress=print, threads=1, no_scaling=True):
    """Train every model x seed x precision (and, with ``no_scaling``, fp16
    with --loss-scale none on the first seed). Returns a list of row dicts
    (model, seed, precision, accuracy, skipped, scale, steps, wall,
    last_epoch_loss, command)."""
    data = data or write_data(work)
    specs = [dict(model=m, seed=s, path=os.path.join(work, f"{m}_seed{s}.onnx"))
             for m in models for s in seeds]
    export_models(specs)
    rows = []
    for m in models:
        setting = SETTINGS[m]
        files = data[m]
        steps_per_epoch = len(np.load(files["train_y"])) // setting["batch"]
        for s in seeds:
            onnx_path = os.path.join(work, f"{m}_seed{s}.onnx")
            runs = list(PRECISIONS.items())
            if no_scaling and s == seeds[0]:
                runs.append(NO_SCALING)
            for i, (precision, flags) in enumerate(runs):
                csv = os.path.join(work, f"{m}_seed{s}_{i}.csv")
                r = run_amp(amp_run, onnx_path, files["train_x"], files["train_y"],
                            train_args(setting, s) + flags, files["test_x"], files["test_y"],
                            log_csv=csv, threads=threads)
                row = dict(model=m, seed=s, precision=precision, accuracy=r["accuracy"],
                           skipped=r["skipped"], scale=r["scale"], steps=r["steps"],
                           wall=r["wall"], eval_samples=r["eval_samples"],
                           last_epoch_loss=float(np.mean(r["losses"][-steps_per_epoch:])),
                           command=r["command"])
                rows.append(row)
                progress(f"  {m:4s} seed {s} {precision:4s}: accuracy {row['accuracy']:.2f}%  "
                         f"skipped {row['skipped']}  scale {row['scale']:g}  "
                         f"{row['wall']:.1f} s")
    return rows


def add_diffs(rows):
    """Add diff_pp (accuracy - fp32 accuracy of the same model and seed)."""
    fp32 = {(r["model"], r["seed"]): r["accuracy"] for r in rows if r["precision"] == "fp32"}
    for r in rows:
        r["diff_pp"] = r["accuracy"] - fp32[(r["model"], r["seed"])]
    return rows


def check_criteria(rows, seed):
    """The pass criteria on ``seed``: list of (model, precision, ok, text)."""
    verdicts = []
    for r in rows:
        if r["seed"] != seed or r["precision"] not in PRECISIONS:
            continue
        if r["precision"] == "fp32":
            ok = r["accuracy"] >= MIN_FP32_ACCURACY
            text = f"{r['accuracy']:.2f}% {'>=' if ok else '<'} {MIN_FP32_ACCURACY:g}%"
        else:
            ok = abs(r["diff_pp"]) <= MAX_DIFF_PP + 1e-9
            text = f"{r['diff_pp']:+.2f} pp"
        verdicts.append((r["model"], r["precision"], ok, text))
    return verdicts


# ------------------------------------------------------------- underflow


def _grad_stats(reference, grad):
    """Counts for one gradient array against the fp32 one."""
    ref_nz = reference != 0
    return dict(
        nonzero=int(np.count_nonzero(grad)),
        lost=int(np.count_nonzero(ref_nz & (grad == 0))),
        rel_err=float(np.linalg.norm(grad - reference) / np.linalg.norm(reference))
        if np.any(ref_nz) else float("nan"),
    )


def underflow_experiment(amp_run, work, data=None, progress=print, threads=1):
    """fp16 gradient underflow with and without loss scaling.

    Part 1 (one step). The mlp (seed 0) with fc2.weight multiplied by
    UNDERFLOW["scale"] (1e-5) before export: the gradient reaching the hidden
    layer, dL/dhidden = fc2.weight^T (softmax - onehot) / batch, is then about
    1e-8, below fp16's smallest subnormal 2^-24 = 6e-8. One step on the first
    256 training images (--no-shuffle --steps 1 --batch-size 256) with
    ``--optimizer momentum --lr 1`` from the exported weights, in fp32, fp16
    --loss-scale=none, fp16 with dynamic scaling and bf16. The first momentum
    step is a plain SGD step whose momentum buffer is the (unscaled) gradient
    itself, so the saved ``<param>.momentum_buffer`` is the gradient with no
    rounding; ``initial - after`` (from --save-state and the ONNX initializers)
    is reported too, but in fp32 it loses the smallest gradients to the rounding
    of ``w - g`` (|w| ~ 0.1, |g| ~ 1e-8). Counted: fc1.weight/fc1.bias gradient
    elements non-zero in fp32 but exactly zero in the run ("lost").

    Part 2 (training, same model). UNDERFLOW["k_steps"] steps of momentum SGD
    (lr 0.1, batch 256, shuffle seed 0): losses, test accuracy, and the first
    step at which fc1.weight changes in fp16 without scaling. fc2.weight gets
    ordinary-sized gradients (hidden activations times dL/dlogits) and grows
    out of the tiny range within a few steps, after which dL/dhidden is large
    enough for fp16: the underflow only delays fc1.

    Part 3 (training with the small layer frozen). fc2.weight multiplied by
    UNDERFLOW["frozen_scale"] (1e-4) and frozen (``--frozen '^fc2\\.'``), batch
    1024 (dL/dhidden ~ 1e-8 again), plain SGD with lr 1e7 (the update of fc1
    reaches the logits through the 1e-4 weights twice, so fp32 needs a lr
    about 1e8 times the usual one to learn), 100 steps: only fc1 can learn,
    so the loss of fp16 without scaling stays where it started.
    """
    cfg = UNDERFLOW
    data = data or write_data(work)
    files = data["mlp"]
    small = os.path.join(work, "underflow_mlp.onnx")
    frozen = os.path.join(work, "underflow_mlp_frozen.onnx")
    export_models([dict(model="mlp", seed=0, path=small, fc2_scale=cfg["scale"]),
                   dict(model="mlp", seed=0, path=frozen, fc2_scale=cfg["frozen_scale"])])
    init = onnx_initializers(small)
    init_frozen = onnx_initializers(frozen)
    variants = {
        "fp32": [],
        "fp16, no loss scaling": ["--amp-type", "f16", "--loss-scale", "none"],
        "fp16, dynamic loss scaling": ["--amp-type", "f16"],
        "bf16, no loss scaling": ["--amp-type", "bf16"],
    }
    result = dict(config=dict(cfg), variants=list(variants))

    # Part 1: one step.
    step = {}
    for name, flags in variants.items():
        state = os.path.join(work, f"underflow_step_{len(step)}.npz")
        r = run_amp(amp_run, small, files["train_x"], files["train_y"],
                    ["--batch-size", str(cfg["batch"]), "--steps", "1", "--no-shuffle",
                     "--optimizer", "momentum", "--lr", repr(cfg["step_lr"])] + flags,
                    save_state=state, threads=threads)
        saved = np.load(state)
        step[name] = dict(
            skipped=r["skipped"], scale=r["scale"],
            grad={p: saved[p + ".momentum_buffer"].astype(np.float64)
                  for p in ("fc1.weight", "fc1.bias", "fc2.weight")},
            diff={p: (init[p].astype(np.float64) - saved[p].astype(np.float64))
                  / cfg["step_lr"] for p in ("fc1.weight", "fc1.bias")})
    ref = step["fp32"]["grad"]
    ref_diff = step["fp32"]["diff"]
    one_step = {"fp32_grad": {}}
    for p in ("fc1.weight", "fc1.bias"):
        g = ref[p]
        nz = g[g != 0]
        one_step["fp32_grad"][p] = dict(
            size=int(g.size), nonzero=int(nz.size),
            nonzero_by_diff=int(np.count_nonzero(ref_diff[p])),
            median_abs=float(np.median(np.abs(nz))) if nz.size else 0.0,
            max_abs=float(np.max(np.abs(nz))) if nz.size else 0.0,
            below_fp16_subnormal=int(np.count_nonzero(np.abs(nz) < FP16_MIN_SUBNORMAL)))
    one_step["fp32_grad"]["fc2.weight"] = dict(
        median_abs=float(np.median(np.abs(ref["fc2.weight"]))))
    w2 = init["fc2.weight"].astype(np.float64)
    w2_half = init["fc2.weight"].astype(np.float16).astype(np.float64)
    one_step["fc2_weight_fp16"] = dict(
        max_abs=float(np.max(np.abs(w2))),
        subnormal=int(np.count_nonzero(np.abs(w2_half) < 2.0 ** -14)), size=int(w2.size),
        rel_err=float(np.linalg.norm(w2_half - w2) / np.linalg.norm(w2)))
    one_step["runs"] = {}
    for name in variants:
        entry = dict(skipped=step[name]["skipped"], scale=step[name]["scale"])
        for p in ("fc1.weight", "fc1.bias"):
            entry[p] = _grad_stats(ref[p], step[name]["grad"][p])
            d = step[name]["diff"][p]
            entry[p]["lost_by_diff"] = int(np.count_nonzero((ref_diff[p] != 0) & (d == 0)))
            entry[p]["nonzero_by_diff"] = int(np.count_nonzero(d))
        one_step["runs"][name] = entry
    result["one_step"] = one_step
    for name, entry in one_step["runs"].items():
        progress(f"  one step, {name}: fc1.weight non-zero {entry['fc1.weight']['nonzero']}"
                 f"/{one_step['fp32_grad']['fc1.weight']['size']}, lost "
                 f"{entry['fc1.weight']['lost']}; fc1.bias lost {entry['fc1.bias']['lost']}")

    # Part 2: training the same model.
    k = cfg["k_steps"]
    base = ["--batch-size", str(cfg["batch"]), "--shuffle-seed", "0",
            "--optimizer", cfg["k_optimizer"], "--lr", repr(cfg["k_lr"])]
    training = {}
    for i, (name, flags) in enumerate(variants.items()):
        csv = os.path.join(work, f"underflow_train_{i}.csv")
        r = run_amp(amp_run, small, files["train_x"], files["train_y"],
                    base + ["--steps", str(k)] + flags, files["test_x"], files["test_y"],
                    log_csv=csv, threads=threads)
        training[name] = dict(losses=r["losses"].tolist(), accuracy=r["accuracy"],
                              skipped=r["skipped"], scale=r["scale"])
    # First step at which fc1.weight moves in fp16 without scaling (monotone:
    # fc1's momentum buffer stays zero as long as its gradients are zero).
    none_flags = variants["fp16, no loss scaling"]

    def fc1_moved(steps):
        state = os.path.join(work, "underflow_probe.npz")
        run_amp(amp_run, small, files["train_x"], files["train_y"],
                base + ["--steps", str(steps)] + none_flags, save_state=state,
                threads=threads)
        return bool(np.any(np.load(state)["fc1.weight"] != init["fc1.weight"]))

    first_move = None
    if fc1_moved(k):
        lo, hi = 1, k
        while lo < hi:
            mid = (lo + hi) // 2
            if fc1_moved(mid):
                hi = mid
            else:
                lo = mid + 1
        first_move = lo
    result["training"] = dict(steps=k, runs=training, fc1_first_update_fp16_none=first_move)
    progress(f"  {k} steps: " + ", ".join(
        f"{n}: loss {t['losses'][-1]:.4f} acc {t['accuracy']:.2f}%" for n, t in training.items())
        + f"; fc1 first updated (fp16, no scaling) at step {first_move}")

    # Part 3: fc2 frozen at the small weights.
    fk = cfg["frozen_steps"]
    fbase = ["--batch-size", str(cfg["frozen_batch"]), "--shuffle-seed", "0",
             "--optimizer", "sgd", "--lr", repr(cfg["frozen_lr"]), "--frozen", r"^fc2\."]
    frozen_runs = {}
    for i, (name, flags) in enumerate(variants.items()):
        csv = os.path.join(work, f"underflow_frozen_{i}.csv")
        state1 = os.path.join(work, f"underflow_frozen_step_{i}.npz")
        one = run_amp(amp_run, frozen, files["train_x"], files["train_y"],
                      fbase + ["--steps", "1", "--no-shuffle"] + flags, save_state=state1,
                      threads=threads)
        g1 = (init_frozen["fc1.weight"].astype(np.float64)
              - np.load(state1)["fc1.weight"].astype(np.float64)) / cfg["frozen_lr"]
        r = run_amp(amp_run, frozen, files["train_x"], files["train_y"],
                    fbase + ["--steps", str(fk)] + flags, files["test_x"], files["test_y"],
                    log_csv=csv, threads=threads)
        frozen_runs[name] = dict(losses=r["losses"].tolist(), accuracy=r["accuracy"],
                                 skipped=r["skipped"], scale=r["scale"], grad1=g1,
                                 first_skipped=one["skipped"])
    fref = frozen_runs["fp32"]["grad1"]
    for name, fr in frozen_runs.items():
        fr["fc1.weight"] = _grad_stats(fref, fr.pop("grad1"))
    fnz = fref[fref != 0]
    result["frozen"] = dict(
        steps=fk, runs=frozen_runs,
        fp32_grad=dict(size=int(fref.size), nonzero=int(fnz.size),
                       median_abs=float(np.median(np.abs(fnz))) if fnz.size else 0.0,
                       max_abs=float(np.max(np.abs(fnz))) if fnz.size else 0.0,
                       below_fp16_subnormal=int(np.count_nonzero(
                           np.abs(fnz) < FP16_MIN_SUBNORMAL))))
    progress(f"  frozen fc2, {fk} steps: " + ", ".join(
        f"{n}: loss {np.mean(t['losses'][-10:]):.4f} acc {t['accuracy']:.2f}% "
        f"fc1 lost {t['fc1.weight']['lost']}" for n, t in frozen_runs.items()))
    return result


# --------------------------------------------------------------- markdown


def machine_description():
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cores}-core CPU ({cpu}), {platform.system()} {platform.machine()}"


def _git_commit():
    try:
        out = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _fmt_scale(s):
    return f"{s:g}"


def _num(x):
    """1e-05 -> 1e-5, 1e+07 -> 1e7."""
    return f"{x:g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def render_markdown(rows, seeds, underflow=None, info=None):
    """The document, as a string."""
    info = info or {}
    seed0 = seeds[0]
    lines = ["# Mixed-precision training convergence", "",
             "Generated by `bench/train_convergence.py`; do not edit by hand (rerun the "
             "script). It trains amp's training test models on scikit-learn's digits "
             "with `amp-run --train` in fp32, fp16 (dynamic loss scaling) and bf16 and "
             "compares their test accuracy; a second part shows fp16 gradient underflow "
             "without loss scaling and its recovery with dynamic loss scaling.", "",
             "## How it was produced", ""]
    if info.get("command"):
        lines += ["```", info["command"], "```", ""]
    lines += [
        f"- Date: {info.get('date', 'unknown')}; machine: {info.get('machine', 'unknown')}.",
        f"- amp-run: `{info.get('amp_run', 'amp-run')}` (file modified "
        f"{info.get('amp_run_mtime', '?')}); repository checkout at commit "
        f"{info.get('commit', 'unknown')}.",
        f"- Python {platform.python_version()}, numpy {np.__version__}, scikit-learn "
        f"{info.get('sklearn', '?')}; models exported by Debian's `/usr/bin/python3` with "
        f"torch {info.get('torch', '?')}.",
        "- Data: `sklearn.datasets.load_digits()` (1,797 8x8 images, classes 0-9), pixels / 16 "
        "as float32; `train_test_split(test_size=0.25, random_state=0, stratify=labels)`: "
        f"{info.get('n_train', 1347)} training and {info.get('n_test', 450)} test images. "
        "mlp takes the 64 pixels flattened, cnn the 1x8x8 image.",
        "- Models: `train_reference.build(name, seed)` (test/models/amp_testmodels), exported in "
        "training mode with `train_reference.export`; mlp = Linear(64,32)-ReLU-Linear(32,10), "
        "cnn = conv-BN-ReLU, max pooling, strided conv-BN-ReLU, global mean, Linear(16,10).",
        "- Training: `amp-run MODEL.onnx --train --data TRAIN_X --labels TRAIN_Y "
        "--eval-data TEST_X --eval-labels TEST_Y --batch-size B --epochs E --shuffle-seed SEED "
        "--optimizer O --lr LR [--momentum M]` plus the precision flags; the loss is "
        "cross-entropy (default); the last partial batch of each epoch is dropped.",
        "- Seed k = model initialisation `build(name, seed=k)` and `--shuffle-seed k`; "
        f"the main table and the pass criteria use seed {seed0}.",
        "- Precisions: fp32 = no `--amp-type`; fp16 = `--amp-type f16` (dynamic loss scaling, "
        "initial scale 65536, growth x2 after 2000 clean steps, backoff x0.5); "
        "bf16 = `--amp-type bf16` (no loss scaling).",
        "- Wall time: the whole amp-run process (reading the model, compiling the train step, "
        "training, evaluation), "
        + (f"with `OMP_NUM_THREADS={info['threads']}`" if info.get("threads")
           else "with OpenMP's default thread count")
        + ". These models are too small to gain from a second thread, and on a shared "
        "machine OpenMP's spin-waiting threads made 2-thread wall times vary by 10x from run "
        "to run. When this script was written, a full run with OpenMP's default thread "
        "count (2) gave the same 30 accuracies on this machine. Load average (1 min) before/after: "
        + ("/".join(f"{x:.1f}" for x in info["load"]) if info.get("load") else "?") + ".", "",
        "| model | optimizer | lr | momentum | batch | epochs | steps |",
        "|---|---|---|---|---|---|---|"]
    for m in dict.fromkeys(r["model"] for r in rows):
        s = SETTINGS[m]
        steps = next(r["steps"] for r in rows if r["model"] == m)
        lines.append(f"| {m} | {s['optimizer']} | {s['lr']:g} | {s.get('momentum', '-')} | "
                     f"{s['batch']} | {s['epochs']} | {steps} |")
    lines += ["", f"## Results (seed {seed0})", "",
              "| model | precision | test accuracy | vs fp32 | skipped steps | final loss scale "
              "| last-epoch train loss | wall time |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["seed"] != seed0:
            continue
        diff = "-" if r["precision"] == "fp32" else f"{r['diff_pp']:+.2f} pp"
        scale = _fmt_scale(r["scale"]) if r["precision"] == "fp16" else "- (no scaling)"
        if r["precision"] not in PRECISIONS:
            diff += " (reference only)"
        lines.append(f"| {r['model']} | {r['precision']} | {r['accuracy']:.2f}% | {diff} | "
                     f"{r['skipped']} | {scale} | {r['last_epoch_loss']:.4f} | "
                     f"{r['wall']:.1f} s |")
    total = sum(r["wall"] for r in rows)
    lines += [""]
    if any(r["precision"] not in PRECISIONS for r in rows):
        lines += [f"\"{NO_SCALING[0]}\" (`--amp-type f16 --loss-scale none`) is there for "
                  "reference and is not a pass criterion: it shows whether these models need "
                  "loss scaling in fp16 at all.", ""]
    lines += [f"Total amp-run wall time over all {len(rows)} runs: {total:.0f} s.", ""]

    verdicts = check_criteria(rows, seed0)
    lines += ["## Pass criteria", "",
              f"Per model, on seed {seed0}: fp32 test accuracy >= {MIN_FP32_ACCURACY:g} %, "
              f"and fp16 and bf16 each within {MAX_DIFF_PP:g} percentage point of fp32 "
              f"({info.get('n_test', 450)} test images: 1 pp is "
              f"{info.get('n_test', 450) / 100:g} images).", "",
              "| model | precision | criterion | result |", "|---|---|---|---|"]
    for m, p, ok, text in verdicts:
        crit = (f">= {MIN_FP32_ACCURACY:g}%" if p == "fp32"
                else f"within {MAX_DIFF_PP:g} pp of fp32")
        lines.append(f"| {m} | {p} | {crit} | {'PASS' if ok else 'FAIL'}: {text} |")
    passed = all(ok for *_, ok, _ in verdicts)
    lines += ["", f"Overall: **{'PASS' if passed else 'FAIL'}**.", ""]

    if len(seeds) > 1:
        lines += [f"## Spread over seeds {', '.join(map(str, seeds))}", "",
                  "Test accuracy per seed (the same criteria would apply to each seed; "
                  "the main table is seed " + str(seed0) + ").", "",
                  "| model | precision | " + " | ".join(f"seed {s}" for s in seeds)
                  + " | min | mean | max abs diff to fp32 |",
                  "|---|---|" + "---|" * len(seeds) + "---|---|---|"]
        for m in dict.fromkeys(r["model"] for r in rows):
            for p in PRECISIONS:
                sel = {r["seed"]: r for r in rows if r["model"] == m and r["precision"] == p}
                accs = [sel[s]["accuracy"] for s in seeds]
                maxdiff = ("-" if p == "fp32"
                           else f"{max(abs(sel[s]['diff_pp']) for s in seeds):.2f} pp")
                lines.append(f"| {m} | {p} | " + " | ".join(f"{a:.2f}" for a in accs)
                             + f" | {min(accs):.2f} | {np.mean(accs):.2f} | {maxdiff} |")
        failing = [(m, s, p, ok, t) for s in seeds for (m, p, ok, t) in check_criteria(rows, s)
                   if not ok]
        lines += [""]
        if failing:
            lines += ["Seeds that would miss a criterion: " + "; ".join(
                f"{m} seed {s} {p} ({t})" for m, s, p, ok, t in failing) + ".", ""]
        else:
            lines += ["Every seed meets both criteria.", ""]

    if underflow:
        lines += render_underflow(underflow)
    return "\n".join(lines).rstrip() + "\n"


def render_underflow(u):
    cfg = u["config"]
    one = u["one_step"]
    g = one["fp32_grad"]
    lines = ["## fp16 gradient underflow without loss scaling", "",
             "The digits models above do not need loss scaling (see the \"fp16, no loss "
             "scaling\" reference rows: their gradients stay inside fp16's range), so this part "
             "builds a model whose gradients do not: the mlp (seed 0) with `fc2.weight` "
             "multiplied by "
             f"{_num(cfg['scale'])} before export (a /usr/bin/python3 snippet that imports "
             "train_reference, scales the weights under `torch.no_grad()` and calls `export`). "
             "The gradient that reaches the hidden layer, dL/dhidden = fc2.weightᵀ "
             "(softmax - onehot) / batch, is then about 1e-8 with batch "
             f"{cfg['batch']}, below fp16's smallest subnormal 2⁻²⁴ ≈ 5.96e-8. "
             "Four runs: fp32; fp16 with `--loss-scale none`; fp16 with dynamic loss scaling "
             "(the f16 default, initial scale 65536); bf16 (no scaling; fp32's exponent range).",
             "",
             "### One step", "",
             f"`--batch-size {cfg['batch']} --steps 1 --no-shuffle --optimizer momentum "
             f"--lr {cfg['step_lr']:g}` (the first {cfg['batch']} training images) from the "
             "exported weights, `--save-state` afterwards. The first momentum-SGD step is a "
             "plain SGD step and its momentum buffer is the unscaled gradient itself, so "
             "`<param>.momentum_buffer` gives the exact gradient; `initial - after` "
             "(initial = the ONNX initializers) is the same number where fp32 can represent "
             "`w - g`, but in fp32 it already loses the smallest updates to rounding "
             f"(fc1.weight: {g['fc1.weight']['nonzero']} non-zero gradient elements, "
             f"{g['fc1.weight']['nonzero_by_diff']} non-zero differences).", "",
             f"fp32 gradient: fc1.weight {g['fc1.weight']['nonzero']} of "
             f"{g['fc1.weight']['size']} elements non-zero (the others are 0 in exact arithmetic "
             "too: no image of the batch has that pixel non-zero while that hidden unit is "
             "active), median "
             f"|g| {g['fc1.weight']['median_abs']:.2e}, max {g['fc1.weight']['max_abs']:.2e}, "
             f"{g['fc1.weight']['below_fp16_subnormal']} below 2⁻²⁴; fc1.bias "
             f"{g['fc1.bias']['nonzero']} of {g['fc1.bias']['size']} non-zero, median "
             f"{g['fc1.bias']['median_abs']:.2e}; fc2.weight median |g| "
             f"{g['fc2.weight']['median_abs']:.2e} (ordinary size).", "",
             "| run | skipped | loss scale | fc1.weight non-zero | fc1.weight lost (non-zero "
             "in fp32, exactly 0 here) | fc1.weight non-zero `initial - after` | "
             "rel. L2 error vs fp32 | fc1.bias lost |",
             "|---|---|---|---|---|---|---|---|"]
    for name, e in one["runs"].items():
        w, b = e["fc1.weight"], e["fc1.bias"]
        lines.append(f"| {name} | {e['skipped']} | {_fmt_scale(e['scale'])} | "
                     f"{w['nonzero']} | {w['lost']} | {w['nonzero_by_diff']} | "
                     f"{w['rel_err']:.2e} | {b['lost']} of {g['fc1.bias']['nonzero']} |")
    w2 = one["fc2_weight_fp16"]
    lines += ["", "Without scaling, fp16 loses every fc1 gradient; with dynamic scaling (65536, "
              "the step was not skipped) and in bf16 none is lost. Their remaining error "
              "against fp32 is of the size of the error in the forward weights: "
              f"fc2.weight (|w| <= {w2['max_abs']:.2e}) is itself an fp16 subnormal "
              f"({w2['subnormal']} of {w2['size']} elements below 2⁻¹⁴) and rounding it to "
              f"fp16 alone changes it by {w2['rel_err']:.2e} (relative L2); bf16 keeps 8 "
              "significant bits."]
    t = u["training"]
    k = t["steps"]
    marks = [i for i in (1, 5, 10, 20, 50, k) if i <= k]
    lines += ["", f"### Training the same model for {k} steps", "",
              f"`--batch-size {cfg['batch']} --steps {k} --shuffle-seed 0 --optimizer "
              f"{cfg['k_optimizer']} --lr {cfg['k_lr']:g}`, test accuracy on the 450 test "
              "images. Training loss of step N:", "",
              "| run | " + " | ".join(f"step {i}" for i in marks)
              + " | test accuracy | skipped |",
              "|---|" + "---|" * len(marks) + "---|---|"]
    for name, r in t["runs"].items():
        lines.append(f"| {name} | " + " | ".join(f"{r['losses'][i - 1]:.4f}" for i in marks)
                     + f" | {r['accuracy']:.2f}% | {r['skipped']} |")
    fm = t["fc1_first_update_fp16_none"]
    lines += ["", ("In fp16 without scaling fc1.weight first changes at step "
                   f"{fm}: until then its gradients are all zero" if fm else
                   f"In fp16 without scaling fc1.weight never changes in {k} steps")
              + ". fc2.weight's own gradients (hidden activations x dL/dlogits) are of "
              "ordinary size, so fc2 grows out of the tiny range and dL/dhidden with it; "
              "after that fc1 learns in fp16 too. So with every layer trainable the "
              "underflow only delays fc1, and the losses of the runs are close: this "
              "construction shows the lost gradients, not a stalled loss.", ""]
    f = u["frozen"]
    fg = f["fp32_grad"]
    fk = f["steps"]
    fmarks = [i for i in (1, 10, 50, fk) if i <= fk]
    lines += [f"### A stall: the small layer frozen", "",
              f"`fc2.weight` multiplied by {_num(cfg['frozen_scale'])} and frozen "
              f"(`--frozen '^fc2\\.'`, so fc2.bias is frozen too), batch "
              f"{cfg['frozen_batch']} (dL/dhidden ~ 1e-8 again), `--optimizer sgd --lr "
              f"{_num(cfg['frozen_lr'])}`, {fk} steps, `--shuffle-seed 0`. Only fc1 trains, and "
              "its update reaches the logits through the 1e-4 weights twice, hence the large "
              "learning rate that fp32 needs to make progress. The first step's fc1.weight "
              f"gradient (`(initial - after) / lr`, first {cfg['frozen_batch']} images, "
              f"--no-shuffle): fp32 has {fg['nonzero']} of {fg['size']} elements non-zero, "
              f"median |g| {fg['median_abs']:.2e}, max {fg['max_abs']:.2e}, "
              f"{fg['below_fp16_subnormal']} below 2⁻²⁴.", "",
              "| run | fc1.weight lost in step 1 | " + " | ".join(f"loss step {i}" for i in fmarks)
              + " | mean loss last 10 steps | test accuracy | skipped |",
              "|---|---|" + "---|" * len(fmarks) + "---|---|---|"]
    for name, r in f["runs"].items():
        lines.append(f"| {name} | {r['fc1.weight']['lost']} of {fg['nonzero']} | "
                     + " | ".join(f"{r['losses'][i - 1]:.4f}" for i in fmarks)
                     + f" | {np.mean(r['losses'][-10:]):.4f} | {r['accuracy']:.2f}% | "
                     f"{r['skipped']} |")
    lines += ["", "(The per-step loss of a run that does not learn still varies a little: "
              "every step draws a different 1,024-image batch.)", ""]
    return lines


# ------------------------------------------------------------------- main


def run_all(amp_run, work, out, models=("mlp", "cnn"), seeds=(0,), underflow=True,
            command=None, progress=print, threads=1):
    """Everything main does; returns (rows, underflow result or None, markdown)."""
    import sklearn

    data = write_data(work)
    progress(f"convergence: models {', '.join(models)}, seeds {', '.join(map(str, seeds))}")
    load_before = os.getloadavg()[0]
    rows = add_diffs(convergence(amp_run, work, models, seeds, data, progress, threads))
    uf = None
    if underflow:
        progress("underflow experiment")
        uf = underflow_experiment(amp_run, work, data, progress, threads)
    torch_version = subprocess.run([DEBIAN_PYTHON, "-c", "import torch; print(torch.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    n_train = len(np.load(data["mlp"]["train_y"]))
    n_test = len(np.load(data["mlp"]["test_y"]))
    info = dict(command=command, date=datetime.date.today().isoformat(),
                machine=machine_description(), amp_run=os.path.relpath(amp_run, REPO_ROOT)
                if os.path.abspath(amp_run).startswith(REPO_ROOT + os.sep) else amp_run,
                amp_run_mtime=datetime.datetime.fromtimestamp(
                    os.path.getmtime(amp_run),
                    datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                commit=_git_commit(), sklearn=sklearn.__version__, torch=torch_version,
                n_train=n_train, n_test=n_test, threads=threads,
                load=(load_before, os.getloadavg()[0]))
    markdown = render_markdown(rows, list(seeds), uf, info)
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            f.write(markdown)
    return rows, uf, markdown


def print_table(rows, seed):
    print(f"\n{'model':5s} {'precision':21s} {'accuracy':>9s} {'vs fp32':>9s} {'skipped':>7s} "
          f"{'scale':>8s} {'loss':>8s} {'wall':>7s}")
    for r in rows:
        if r["seed"] != seed:
            continue
        diff = "" if r["precision"] == "fp32" else f"{r['diff_pp']:+.2f}pp"
        print(f"{r['model']:5s} {r['precision']:21s} {r['accuracy']:8.2f}% {diff:>9s} "
              f"{r['skipped']:7d} {r['scale']:8g} {r['last_epoch_loss']:8.4f} {r['wall']:6.1f}s")
    for m, p, ok, text in check_criteria(rows, seed):
        print(f"  {m} {p}: {'PASS' if ok else 'FAIL'} ({text})")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--amp-run", default=os.environ.get("AMP_RUN") or DEFAULT_AMP_RUN,
                        help="amp-run binary (default: $AMP_RUN or build/bin/amp-run)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="markdown output (default: %(default)s)")
    parser.add_argument("--models", default="mlp,cnn", help="comma-separated: mlp,cnn")
    parser.add_argument("--seeds", default="0,1,2,3,4",
                        help="comma-separated seeds; the first one is checked "
                        "(default: %(default)s)")
    parser.add_argument("--work", default=None,
                        help="folder for data, models and logs (kept; default: a temporary one)")
    parser.add_argument("--threads", type=int, default=1,
                        help="OMP_NUM_THREADS for amp-run (default 1; 0 = inherit)")
    parser.add_argument("--underflow", dest="underflow", action="store_true", default=True,
                        help="run the underflow experiment (default)")
    parser.add_argument("--no-underflow", dest="underflow", action="store_false")
    args = parser.parse_args(argv)

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in SETTINGS:
            parser.error(f"unknown model {m!r} (choose from {', '.join(SETTINGS)})")
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    if not os.access(args.amp_run, os.X_OK):
        parser.error(f"amp-run not found at {args.amp_run}")
    if not has_debian_torch():
        parser.error(f"{DEBIAN_PYTHON} cannot import torch (needed to export the models)")

    argv_used = sys.argv[1:] if argv is None else list(argv)
    command = "python3 bench/train_convergence.py" + "".join(
        " " + shlex.quote(a) for a in argv_used)
    if os.environ.get("AMP_RUN") and not any(a.startswith("--amp-run") for a in argv_used):
        command = f"AMP_RUN={shlex.quote(os.environ['AMP_RUN'])} " + command
    work = args.work or tempfile.mkdtemp(prefix="amp_train_convergence_")
    start = time.perf_counter()
    try:
        rows, _, _ = run_all(args.amp_run, work, args.out, models, seeds, args.underflow,
                             command, threads=args.threads)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print_table(rows, seeds[0])
    print(f"\nwrote {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0 if all(ok for *_, ok, _ in check_criteria(rows, seeds[0])) else 1


if __name__ == "__main__":
    sys.exit(main())
