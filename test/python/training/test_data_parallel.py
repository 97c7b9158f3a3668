"""Data-parallel training: ``mpirun -np 2 amp-run --train`` (Open MPI, two
ranks on this machine).

The global batch (``--batch-size``) is split evenly over the ranks; each
rank runs ``@compute_gradients`` on its shard with the gradient
pre-divided by micro-batches times ranks, one all-reduce sums the
gradients (and averages the float buffers and the loss), and every rank
runs ``@apply_gradients`` (docs/DataParallel.md). Checked here:

- two ranks with a global batch of 8 = one process with ``--accumulate 2``
  of 4 (the same rows, the same sums: bit-identical) after 20 steps of SGD
  and AdamW, in fp32 and in fp16 with dynamic loss scaling; = one process
  with a batch of 8 within fp32 rounding (fp16: the same steps skipped
  while the scale backs off);
- an overflow in one rank's shard makes both ranks skip that step (rank 0's
  log shows the skip its own data did not cause);
- a state saved by two ranks resumes on two ranks bit-identically and on
  one process within fp32 rounding;
- a rank that fails (its data file is missing) ends the whole job with its
  message and a non-zero status, without a hang;
- a global batch that does not split evenly is an error.

The reference data come from test/models/amp_testmodels/train_reference.py
under Debian's python3 (torch 1.13). mpirun (Debian's openmpi-bin) is
required: without it the tests fail.
"""

import os
import shutil
import signal
import subprocess

import numpy as np
import pytest

from amp_test_utils import DEBIAN_PYTHON, require_debian_torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
MODELS = os.path.join(REPO, "test", "models", "amp_testmodels")
TIMEOUT = 600
# Open MPI refuses root without these; two ranks on a machine with fewer
# cores need --oversubscribe.
MPI_ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def _mpirun():
    path = shutil.which("mpirun")
    assert path, "mpirun not found: install openmpi-bin (and libopenmpi-dev, then rebuild)"
    return path


def _run(cmd, ok=True):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=TIMEOUT, env=MPI_ENV)
    if ok:
        assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def mlp_data(tmp_path_factory):
    require_debian_torch()
    out = tmp_path_factory.mktemp("mlp")
    _run([DEBIAN_PYTHON, os.path.join(MODELS, "train_reference.py"), "--out", out,
          "--model", "mlp", "--steps", "12", "--batch", "16"])
    return out


def _command(amp_run, folder, tmp, name, *flags, data="x.npy", batch=8, steps=20):
    return [amp_run, folder / "model.onnx", "--train", "--data", folder / data,
            "--labels", folder / "y.npy", "--batch-size", batch, "--no-shuffle",
            "--steps", steps, "--log-csv", tmp / f"{name}.csv",
            "--save-state", tmp / f"{name}.npz", *flags]


def _result(tmp, name):
    log = np.loadtxt(tmp / f"{name}.csv", delimiter=",", skiprows=1, ndmin=2)
    return log, dict(np.load(tmp / f"{name}.npz"))


def _ranks(n, command):
    return [_mpirun(), "-np", str(n), *command]


PRECISIONS = {
    "sgd-fp32": ["--optimizer", "sgd", "--lr", "0.1"],
    "adamw-fp32": ["--optimizer", "adamw", "--lr", "0.01"],
    "adamw-fp16-dynamic": ["--optimizer", "adamw", "--lr", "0.01", "--amp-type", "f16",
                           "--loss-scale-init", "1e9"],
}


@pytest.mark.parametrize("case", PRECISIONS)
def test_two_ranks_equal_one_process(mlp_data, amp_run, tmp_path, case):
    flags = PRECISIONS[case]
    proc = _run(_ranks(2, _command(amp_run, mlp_data, tmp_path, "two", *flags)))
    assert "data-parallel: MPI" in proc.stdout and "2 ranks" in proc.stdout, proc.stdout
    # Rank 0 alone writes the progress.
    assert proc.stdout.count("done: 20 steps") == 1, proc.stdout
    _run(_command(amp_run, mlp_data, tmp_path, "accumulated", *flags, "--accumulate", "2",
                  batch=4))
    _run(_command(amp_run, mlp_data, tmp_path, "large", *flags))
    two_log, two = _result(tmp_path, "two")
    acc_log, acc = _result(tmp_path, "accumulated")
    large_log, large = _result(tmp_path, "large")
    # The same rows and the same sums in the same order: bit-identical.
    np.testing.assert_array_equal(two_log, acc_log)
    for name in acc:
        if name != "amp_run.batches_done":
            np.testing.assert_array_equal(two[name], acc[name], err_msg=name)
    # One batch of 8: the same step within fp32 rounding (fp16: within its
    # rounding; the same steps skipped while the scale of 1e9 backs off).
    if "fp32" in case:
        np.testing.assert_array_equal(two_log[:, 4], large_log[:, 4])
        np.testing.assert_allclose(two_log[:, 1], large_log[:, 1], rtol=1e-5)
        for name in ("fc1.weight", "fc2.bias"):
            scale = np.linalg.norm(large[name]) or 1
            assert np.linalg.norm(two[name] - large[name]) / scale < 1e-5, name
    else:
        # The scale of 1e9 backs off in the same steps; later, a half
        # batch's scaled gradient (pre-divided by 2) can stay finite where
        # the whole batch's overflows, so the runs may part (as they do
        # between --accumulate 2 and one batch).
        backoff = int(np.argmin(large_log[:, 4]))
        assert backoff >= 1, large_log
        np.testing.assert_array_equal(two_log[:backoff + 1, 4], large_log[:backoff + 1, 4])
        np.testing.assert_array_equal(two_log[:backoff + 1, 2], large_log[:backoff + 1, 2])
        np.testing.assert_allclose(two_log[:backoff + 1, 1], large_log[:backoff + 1, 1],
                                   rtol=2e-3)


def test_overflow_on_one_rank_skips_on_every_rank(mlp_data, amp_run, tmp_path):
    """Rank 1's shard of the third global batch holds a value that overflows
    fp16; rank 0's own data is finite, yet its log shows the skip."""
    x = np.load(mlp_data / "x.npy")
    bad = x.copy()
    bad[2 * 8 + 5, 0] = 6e4  # row 21: rank 1's half of global batch 3
    np.save(tmp_path / "x_bad.npy", bad)
    flags = ["--optimizer", "sgd", "--lr", "0.05", "--amp-type", "f16",
             "--loss-scale-init", "1024"]
    rank0 = _command(amp_run, mlp_data, tmp_path, "two", *flags, steps=5)
    rank1 = [str(c) for c in _command(amp_run, mlp_data, tmp_path, "two", *flags, steps=5)]
    rank1[rank1.index(str(mlp_data / "x.npy"))] = str(tmp_path / "x_bad.npy")
    _run([_mpirun(), "-np", "1", *rank0, ":", "-np", "1", *rank1])
    log, _ = _result(tmp_path, "two")
    # step 3 skipped (found_inf 1), the scale halves after it.
    assert list(log[:, 4]) == [0, 0, 1, 0, 0], log
    assert log[3, 2] == log[2, 2] / 2, log
    # Without the bad row, nothing is skipped.
    _run(_ranks(2, _command(amp_run, mlp_data, tmp_path, "clean", *flags, steps=5)))
    clean, _ = _result(tmp_path, "clean")
    assert clean[:, 4].sum() == 0, clean


def test_resume_on_two_ranks_and_on_one(mlp_data, amp_run, tmp_path):
    flags = ["--optimizer", "adamw", "--lr", "0.01"]
    _run(_ranks(2, _command(amp_run, mlp_data, tmp_path, "full", *flags, steps=10)))
    _run(_ranks(2, _command(amp_run, mlp_data, tmp_path, "half", *flags, steps=6)))
    _run(_ranks(2, _command(amp_run, mlp_data, tmp_path, "two", *flags, "--load-state",
                            tmp_path / "half.npz", steps=4)))
    _run(_command(amp_run, mlp_data, tmp_path, "one", *flags, "--load-state",
                  tmp_path / "half.npz", steps=4))
    _, full = _result(tmp_path, "full")
    _, two = _result(tmp_path, "two")
    _, one = _result(tmp_path, "one")
    for name in full:
        np.testing.assert_array_equal(two[name], full[name], err_msg=name)
        scale = np.linalg.norm(full[name].astype(np.float64)) or 1
        assert np.linalg.norm(one[name] - full[name]) / scale < 1e-5, name


def test_a_failing_rank_fails_the_job(mlp_data, amp_run, tmp_path):
    ok = _command(amp_run, mlp_data, tmp_path, "two", steps=5)
    bad = [str(c) for c in ok]
    bad[bad.index(str(mlp_data / "x.npy"))] = str(tmp_path / "missing.npy")
    proc = _run([_mpirun(), "-np", "1", *ok, ":", "-np", "1", *bad], ok=False)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "error: rank 1: " in proc.stderr and "missing.npy" in proc.stderr, proc.stderr
    assert not (tmp_path / "two.npz").exists()
    assert not (tmp_path / "two.csv").exists()


def test_uneven_global_batch_is_an_error(mlp_data, amp_run, tmp_path):
    proc = _run(_ranks(2, _command(amp_run, mlp_data, tmp_path, "two", batch=7, steps=2)),
                ok=False)
    assert proc.returncode != 0
    assert "--batch-size 7 (the global batch) does not split evenly over 2 ranks" \
        in proc.stderr, proc.stderr


def _mpmd(rank0, rank1):
    return [_mpirun(), "-np", "1", *map(str, rank0), ":", "-np", "1", *map(str, rank1)]


def test_ranks_must_run_the_same_job(mlp_data, amp_run, tmp_path):
    """Different steps, or a different starting state on one rank, is an
    error on every rank before the first step (not a hang or a silent
    divergence)."""
    proc = _run(_mpmd(_command(amp_run, mlp_data, tmp_path, "a", steps=5),
                      _command(amp_run, mlp_data, tmp_path, "b", steps=3)), ok=False)
    assert proc.returncode != 0
    assert "the ranks disagree on the number of steps" in proc.stderr, proc.stderr
    _run(_command(amp_run, mlp_data, tmp_path, "saved", steps=2))
    proc = _run(_mpmd(_command(amp_run, mlp_data, tmp_path, "a", steps=2),
                      _command(amp_run, mlp_data, tmp_path, "b", "--load-state",
                               tmp_path / "saved.npz", steps=2)), ok=False)
    assert proc.returncode != 0
    assert "the ranks disagree on the starting state (--load-state)" in proc.stderr, \
        proc.stderr
    assert not (tmp_path / "a.npz").exists()


def test_a_hung_rank_ends_the_job(mlp_data, amp_run, tmp_path):
    """One rank stopped (SIGSTOP) mid-training: the other sees no step
    finish for --rank-timeout seconds and ends the job."""
    command = _ranks(2, _command(amp_run, mlp_data, tmp_path, "two", "--rank-timeout", "3",
                                 "--log-every", "1", steps=1000000))
    proc = subprocess.Popen([str(c) for c in command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=MPI_ENV)
    try:
        line = proc.stdout.readline()
        while line and not line.startswith("step 1 "):
            line = proc.stdout.readline()
        assert line, proc.stderr.read()
        pids = subprocess.run(["pgrep", "-P", str(proc.pid), "-f", "amp-run"],
                              capture_output=True, text=True).stdout.split()
        assert len(pids) == 2, pids
        os.kill(int(pids[1]), signal.SIGSTOP)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0
    assert "no step finished for 3 s (another rank hung or died; --rank-timeout)" in err, err
