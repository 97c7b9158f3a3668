"""Data-parallel training on GPUs: ``amp-train-gpu`` (the split train step's
three artifacts, one NCCL all-reduce per step, NCCL's id over MPI).

Without a GPU everything before the first kernel runs and is checked here:
the artifacts of a real program (BatchNorm buffers, training Dropout,
AdamW, fp16 with dynamic loss scaling) are matched and accepted, the data
and a state file written by ``amp-run --train`` are accepted, artifacts
that do not belong together, a batch that does not split and a state file
that lacks a tensor are errors that name what is wrong, two ranks that
cannot start end together (no hang), and NCCL loads (its version, a
communicator id) or, when it cannot be found, says where it looked. The
run itself needs a GPU: ``bench/gpu/run.sh`` trains there and compares the
trajectory with ``amp-run --train``'s; on a machine with a GPU the
trajectory test below does the same.
"""

import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest

from amp_testmodels import build_onnx

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BUILD = os.path.join(REPO, "build")
TIMEOUT = 600
MPI_ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
NO_DEVICE = 3  # amp-train-gpu's exit status without a usable GPU

pytestmark = pytest.mark.slow


def train_gpu():
    path = os.environ.get("AMP_TRAIN_GPU") or os.path.join(BUILD, "bin", "amp-train-gpu")
    if not os.access(path, os.X_OK):
        pytest.skip("amp-train-gpu is not built (no CUDA toolkit)")
    return path


def run(command, ok=True, **kwargs):
    proc = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          timeout=TIMEOUT, env=MPI_ENV, **kwargs)
    if ok:
        assert proc.returncode == 0, (
            f"{' '.join(map(str, command))} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc


TRAIN_FLAGS = ["--train", "--loss=mse", "--optimizer=adamw", "--amp-type=f16"]
ENTRIES = ("initial_state", "compute_gradients", "apply_gradients")


def compile_step(amp_opt, model, folder, *flags, batch=4):
    paths = {}
    for entry in ENTRIES:
        paths[entry] = folder / f"{entry}.ampgpu"
        run([amp_opt, model, *TRAIN_FLAGS, *flags, "--split-step", f"--static-batch={batch}",
             "--amp-target=cuda", f"--amp-cuda-entry={entry}", "-o", paths[entry]])
    return paths


@pytest.fixture(scope="module")
def step(amp_opt, tmp_path_factory):
    folder = tmp_path_factory.mktemp("train_gpu")
    model = folder / "model.onnx"
    onnx.save(build_onnx.train_bn_dropout(), model)
    rng = np.random.default_rng(1)
    np.save(folder / "x.npy", rng.standard_normal((32, 8)).astype(np.float32))
    np.save(folder / "y.npy", rng.standard_normal((32, 4)).astype(np.float32))
    return folder, model, compile_step(amp_opt.path, model, folder)


def command(step, *flags, batch=4, steps=6):
    folder, _, paths = step
    return [train_gpu(), "--init", paths["initial_state"],
            "--compute", paths["compute_gradients"], "--apply", paths["apply_gradients"],
            "--data", folder / "x.npy", "--labels", folder / "y.npy",
            "--batch-size", batch, "--steps", steps, "--no-shuffle", "--log-every", 1, *flags]


def check_reached_device(proc):
    """Exit 0 on a GPU machine; elsewhere the device is the first thing
    missing: every check before it passed."""
    if proc.returncode == 0:
        return True
    assert proc.returncode == NO_DEVICE, proc.stderr
    assert "no CUDA device" in proc.stderr, proc.stderr
    return False


def trajectory(text):
    return [line.split("steps/s")[0] for line in text.splitlines() if line.startswith("step ")]


def test_real_split_step_is_accepted(step, amp_run, tmp_path):
    """The artifacts of a program with BatchNorm buffers, training Dropout,
    AdamW and fp16 dynamic loss scaling match; with a GPU, training follows
    amp-run's trajectory (losses within fp16 rounding, the same skips)."""
    proc = run(command(step, "--log-csv", tmp_path / "gpu.csv"), ok=False)
    if not check_reached_device(proc):
        assert not (tmp_path / "gpu.csv").exists()
        return
    folder, model, _ = step
    cpu = run([amp_run, model, *TRAIN_FLAGS, "--data", folder / "x.npy", "--labels",
               folder / "y.npy", "--batch-size", 4, "--steps", 6, "--no-shuffle",
               "--log-csv", tmp_path / "cpu.csv"])
    gpu_log = np.loadtxt(tmp_path / "gpu.csv", delimiter=",", skiprows=1)
    cpu_log = np.loadtxt(tmp_path / "cpu.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(gpu_log[:, [0, 2, 4, 5]], cpu_log[:, [0, 2, 4, 5]])
    np.testing.assert_allclose(gpu_log[:, 1], cpu_log[:, 1], rtol=2e-2)
    assert cpu.returncode == 0


def test_state_file_of_amp_run_is_accepted(step, amp_run, tmp_path):
    """amp-run --train's --save-state is a starting state (names, types and
    shapes match the artifacts); one tensor missing is an error naming it."""
    folder, model, _ = step
    state = tmp_path / "state.npz"
    run([amp_run, model, *TRAIN_FLAGS, "--data", folder / "x.npy", "--labels",
         folder / "y.npy", "--batch-size", 4, "--steps", 2, "--no-shuffle",
         "--save-state", state])
    cmd = command(step)
    at = cmd.index("--init")
    del cmd[at:at + 2]
    check_reached_device(run([*cmd, "--load-state", state], ok=False))
    arrays = dict(np.load(state))
    del arrays["bn_var"]
    np.savez(tmp_path / "partial.npz", **arrays)
    proc = run([*cmd, "--load-state", tmp_path / "partial.npz"], ok=False)
    assert proc.returncode == 1, proc.stderr
    assert "partial.npz' has no 'bn_var'" in proc.stderr, proc.stderr
    arrays = dict(np.load(state))
    arrays["w1"] = arrays["w1"][:4]
    np.savez(tmp_path / "shaped.npz", **arrays)
    proc = run([*cmd, "--load-state", tmp_path / "shaped.npz"], ok=False)
    assert "'w1' is f32[4, 16], the step takes f32[8, 16]" in proc.stderr, proc.stderr


def test_artifacts_that_do_not_belong_together(step, amp_opt, tmp_path):
    folder, _, paths = step
    # Swapped.
    cmd = command(step)
    cmd[cmd.index("--compute") + 1] = paths["apply_gradients"]
    cmd[cmd.index("--apply") + 1] = paths["compute_gradients"]
    proc = run(cmd, ok=False)
    assert proc.returncode == 1
    assert "not @compute_gradients" in proc.stderr, proc.stderr
    # @train_step is not a half of the split step.
    whole = tmp_path / "train_step.ampgpu"
    run([amp_opt.path, folder / "model.onnx", *TRAIN_FLAGS, "--static-batch=4",
         "--amp-target=cuda", "--amp-cuda-entry=train_step", "-o", whole])
    cmd = command(step)
    cmd[cmd.index("--compute") + 1] = whole
    proc = run(cmd, ok=False)
    assert proc.returncode == 1 and "compute_gradients" in proc.stderr, proc.stderr
    # Another optimizer's initial state (SGD's lacks AdamW's moments).
    other = compile_step(amp_opt.path, folder / "model.onnx", tmp_path, "--optimizer=sgd")
    cmd = command(step)
    cmd[cmd.index("--init") + 1] = other["initial_state"]
    proc = run(cmd, ok=False)
    assert proc.returncode == 1, proc.stderr
    assert "the @initial_state artifact has no 'w1.exp_avg'" in proc.stderr, proc.stderr


def test_batch_errors(step):
    proc = run(command(step, batch=8), ok=False)
    assert proc.returncode == 1
    assert "compiled for 4 (compile it with --static-batch 8)" in proc.stderr, proc.stderr
    folder = step[0]
    np.save(folder / "x_small.npy", np.zeros((2, 8), np.float32))
    np.save(folder / "y_small.npy", np.zeros((2, 4), np.float32))
    cmd = command(step)
    cmd[cmd.index("--data") + 1] = folder / "x_small.npy"
    cmd[cmd.index("--labels") + 1] = folder / "y_small.npy"
    proc = run(cmd, ok=False)
    assert "larger than the data set (2 samples" in proc.stderr, proc.stderr
    np.save(folder / "x_wide.npy", np.zeros((32, 9), np.float32))
    cmd = command(step)
    cmd[cmd.index("--data") + 1] = folder / "x_wide.npy"
    proc = run(cmd, ok=False)
    assert "input 'x' takes rows of f32[8], the file holds f32[32, 9]" in proc.stderr, \
        proc.stderr
    proc = run([train_gpu(), "--compute", "a", "--apply", "b"], ok=False)
    assert proc.returncode == 2 and "--init and --load-state" in proc.stderr


def _mpirun():
    path = shutil.which("mpirun")
    assert path, "mpirun not found: install openmpi-bin (and libopenmpi-dev, then rebuild)"
    return path


def test_two_ranks_split_the_batch_or_fail_together(step):
    """Under mpirun the global batch splits over the ranks (7 does not);
    ranks that cannot start (here: no GPU) end the job together, no rank
    waits for the other."""
    proc = run([_mpirun(), "-np", "2", *command(step, batch=7)], ok=False)
    assert proc.returncode != 0
    assert "--batch-size 7 (the global batch) does not split evenly over 2 ranks" \
        in proc.stderr, proc.stderr
    proc = run([_mpirun(), "-np", "2", *command(step, batch=8)], ok=False)
    if proc.returncode == 0:  # two GPUs
        assert proc.stdout.count("done: 6 steps") == 1, proc.stdout
        assert "NCCL" in proc.stdout and "2 rank(s)" in proc.stdout, proc.stdout
        return
    assert "rank 0: CUDA device 0" in proc.stderr or "rank 1: CUDA device 1" in proc.stderr, \
        proc.stderr


LIBRARY = os.path.join(BUILD, "lib", "libamp_gpu.so")
NCCL_PROBE = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.ampGetLastError.restype = ctypes.c_char_p
version = ctypes.c_int()
if lib.ampCollectiveVersion(ctypes.byref(version)) != 0:
    print("error:", lib.ampGetLastError().decode()); sys.exit(1)
ids = [ctypes.create_string_buffer(128) for _ in range(2)]
for i in ids:
    assert lib.ampCollectiveUniqueId(i) == 0, lib.ampGetLastError()
print(version.value, ids[0].raw.hex(), ids[1].raw.hex())
"""


def test_nccl_loads():
    """NCCL is found (the system's or the nvidia-nccl wheel's), is 2.10 or
    later, and makes communicator ids (no GPU needed for those)."""
    if not os.path.exists(LIBRARY):
        pytest.skip("libamp_gpu.so is not built (no CUDA toolkit)")
    proc = subprocess.run([sys.executable, "-c", NCCL_PROBE, LIBRARY], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    version, first, second = proc.stdout.split()
    assert int(version) >= 21000
    assert first != second and first.strip("0") and len(bytes.fromhex(first)) == 128


def test_nccl_missing_library_is_named():
    if not os.path.exists(LIBRARY):
        pytest.skip("libamp_gpu.so is not built (no CUDA toolkit)")
    env = {**os.environ, "AMP_NCCL_LIBRARY": "/nonexistent/libnccl.so.2"}
    proc = subprocess.run([sys.executable, "-c", NCCL_PROBE, LIBRARY], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 1
    assert "cannot load NCCL" in proc.stdout and "/nonexistent/libnccl.so.2" in proc.stdout, \
        proc.stdout


# The GPU driver's loop (amp_gpu::runTraining) without a GPU: amp-run
# --train --amp-cuda-emulate builds the same three artifacts in memory,
# compiles their kernels for the CPU and trains them with that loop (host
# memory as the device, MPI where NCCL would be).
EMULATED = [*TRAIN_FLAGS, "--no-shuffle", "--steps", "10", "--log-every", "5"]


def emulated(amp_run, step, tmp_path, name, *flags, batch=4, ranks=1):
    folder, model, _ = step
    command = [amp_run, model, *EMULATED, "--data", folder / "x.npy", "--labels",
               folder / "y.npy", "--batch-size", batch, "--log-csv", tmp_path / f"{name}.csv",
               "--save-state", tmp_path / f"{name}.npz", *flags]
    if ranks > 1:
        command = [_mpirun(), "-np", str(ranks), *command]
    proc = run(command)
    log = np.loadtxt(tmp_path / f"{name}.csv", delimiter=",", skiprows=1, ndmin=2)
    return proc, log, dict(np.load(tmp_path / f"{name}.npz"))


def assert_same(a, b):
    np.testing.assert_array_equal(a[1], b[1])
    assert sorted(a[2]) == sorted(b[2])
    for name in a[2]:
        np.testing.assert_array_equal(a[2][name], b[2][name], err_msg=name)


@pytest.mark.parametrize("ranks", [1, 2])
def test_gpu_loop_emulated_equals_cpu_path(step, amp_run, tmp_path, ranks):
    """The loop amp-train-gpu runs, over the emulated artifacts (each run in
    a NaN-filled arena), equals amp-run --train's CPU path bit for bit: log
    and final state, with BatchNorm buffers, Dropout, AdamW and fp16 loss
    scaling; --accumulate 2 in one process, and two ranks (the flat buffer
    summed and averaged over MPI)."""
    flags = ["--accumulate", "2"] if ranks == 1 else []
    batch = 4 * ranks
    gpu_loop = emulated(amp_run, step, tmp_path, "emulated", "--amp-cuda-emulate", *flags,
                        batch=batch, ranks=ranks)
    assert "amp-train-gpu's loop" in gpu_loop[0].stdout, gpu_loop[0].stdout
    assert gpu_loop[0].stdout.count("done: 10 steps") == 1
    cpu = emulated(amp_run, step, tmp_path, "cpu", *flags, batch=batch, ranks=ranks)
    assert_same(gpu_loop, cpu)
    assert len(gpu_loop[1]) == 10


def test_gpu_loop_emulated_resumes_cpu_state(step, amp_run, tmp_path):
    """A state written by the CPU path after 5 steps, continued for 5 by
    the GPU loop, ends where 10 CPU steps end (the batch position, the
    scaler and the optimizer state travel in the file)."""
    folder, model, _ = step
    base = [amp_run, model, *TRAIN_FLAGS, "--no-shuffle", "--data", folder / "x.npy",
            "--labels", folder / "y.npy", "--batch-size", 4]
    run([*base, "--steps", 5, "--save-state", tmp_path / "half.npz"])
    run([*base, "--steps", 5, "--load-state", tmp_path / "half.npz", "--amp-cuda-emulate",
         "--save-state", tmp_path / "resumed.npz"])
    run([*base, "--steps", 10, "--save-state", tmp_path / "whole.npz"])
    resumed, whole = np.load(tmp_path / "resumed.npz"), np.load(tmp_path / "whole.npz")
    for name in whole.files:
        np.testing.assert_array_equal(resumed[name], whole[name], err_msg=name)


def test_gpu_loop_emulated_refuses_what_it_cannot_do(step, amp_run, tmp_path):
    folder, model, _ = step
    proc = run([amp_run, model, *TRAIN_FLAGS, "--data", folder / "x.npy", "--labels",
                folder / "y.npy", "--batch-size", 4, "--steps", 2, "--amp-cuda-emulate",
                "--eval-data", folder / "x.npy", "--eval-labels", folder / "y.npy"], ok=False)
    assert proc.returncode != 0
    assert "no --eval-data or --export-onnx" in proc.stderr, proc.stderr
