"""Mixed-precision training converges like fp32 (``bench/train_convergence.py``).

Runs the benchmark's functions in its documented configuration on seed 0 (the
seed its pass criteria are defined on; the benchmark's extra seeds only add a
spread table): the mlp and the cnn of
``test/models/amp_testmodels/train_reference.py`` trained with
``amp-run --train`` on scikit-learn's digits (1,347 training / 450 test
images) in fp32, fp16 (dynamic loss scaling) and bf16, then the underflow
experiment. The markdown goes to tmp_path. Asserted:

* fp32 test accuracy >= 95 % for both models;
* fp16 and bf16 test accuracy within 1 percentage point of fp32;
* in the underflow construction (mlp with fc2.weight * 1e-5, batch 256), fp16
  without loss scaling loses (flushes to exactly zero) most of fc1's gradient
  elements that are non-zero in fp32, and fp16 with dynamic loss scaling
  loses (almost) none; with the small layer frozen, fp16 without scaling makes
  no progress while dynamic scaling follows fp32.

Takes about 25 s on 2 cores (amp-run single-threaded, as the benchmark runs
it). Skips when scikit-learn (the data) or Debian's torch under
/usr/bin/python3 (the model exports) is missing.
"""

import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "bench"))

import sklearn  # noqa: E402,F401  (the digits data set; a missing one fails)

import train_convergence as tc  # noqa: E402  (needs the path above)
from amp_test_utils import require_debian_torch  # noqa: E402


@pytest.fixture(autouse=True)
def _needs_debian_torch():
    """Debian's python3-torch exports the models (missing: the test fails)."""
    require_debian_torch()

SEED = 0
MODELS = ("mlp", "cnn")
NONE = "fp16, no loss scaling"
DYNAMIC = "fp16, dynamic loss scaling"


@pytest.fixture(scope="module")
def results(amp_run, tmp_path_factory):
    """(rows, underflow, markdown path) of one benchmark run."""
    work = tmp_path_factory.mktemp("train_convergence")
    out = work / "TrainingConvergence.md"
    rows, underflow, _ = tc.run_all(amp_run, str(work / "work"), str(out), MODELS, (SEED,),
                                    underflow=True, command="(pytest)",
                                    progress=lambda *_: None)
    return rows, underflow, out


def _accuracy(rows, model, precision):
    (row,) = [r for r in rows if r["model"] == model and r["precision"] == precision
              and r["seed"] == SEED]
    return row


@pytest.mark.parametrize("model", MODELS)
def test_fp32_reaches_95_percent(results, model):
    rows, _, _ = results
    row = _accuracy(rows, model, "fp32")
    assert row["eval_samples"] == 450
    assert row["accuracy"] >= tc.MIN_FP32_ACCURACY, row


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_mixed_precision_within_1pp_of_fp32(results, model, precision):
    rows, _, _ = results
    fp32 = _accuracy(rows, model, "fp32")["accuracy"]
    row = _accuracy(rows, model, precision)
    assert abs(row["accuracy"] - fp32) <= tc.MAX_DIFF_PP + 1e-9, (
        f"{model} {precision}: {row['accuracy']:.2f}% vs fp32 {fp32:.2f}%")
    # These models never overflow in fp16 at the default scale.
    assert row["skipped"] == 0


def test_fp16_without_scaling_loses_gradients(results):
    _, uf, _ = results
    one = uf["one_step"]
    reference = one["fp32_grad"]["fc1.weight"]
    # The construction works: most fp32 gradient elements are below fp16's
    # smallest subnormal.
    assert reference["nonzero"] > 1000
    assert reference["below_fp16_subnormal"] > reference["nonzero"] // 2
    none = one["runs"][NONE]["fc1.weight"]
    dynamic = one["runs"][DYNAMIC]["fc1.weight"]
    assert none["lost"] >= 0.9 * reference["nonzero"], none
    assert dynamic["lost"] <= 0.01 * reference["nonzero"], dynamic
    assert dynamic["rel_err"] < 0.1, dynamic
    assert one["runs"][DYNAMIC]["skipped"] == 0
    assert one["runs"][NONE]["fc1.bias"]["lost"] > 0
    assert one["runs"][DYNAMIC]["fc1.bias"]["lost"] == 0


def test_fp16_without_scaling_stalls_with_the_small_layer_frozen(results):
    _, uf, _ = results
    runs = uf["frozen"]["runs"]
    first = runs["fp32"]["losses"][0]

    def tail(name):
        return float(np.mean(runs[name]["losses"][-10:]))

    # fp32 learns; fp16 without scaling does not move (every fc1 gradient is 0);
    # fp16 with dynamic scaling follows fp32.
    assert tail("fp32") < first - 0.1
    assert runs[NONE]["fc1.weight"]["lost"] == uf["frozen"]["fp32_grad"]["nonzero"]
    assert abs(tail(NONE) - first) < 0.02
    assert abs(tail(DYNAMIC) - tail("fp32")) < 0.02
    assert runs[DYNAMIC]["accuracy"] > runs[NONE]["accuracy"] + 20


def test_markdown_written(results):
    _, _, out = results
    text = out.read_text()
    for needle in ("## Results (seed 0)", "## Pass criteria", "Overall: **",
                   "## fp16 gradient underflow without loss scaling", "| cnn | bf16 |"):
        assert needle in text, needle
