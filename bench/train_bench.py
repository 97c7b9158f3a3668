#!/usr/bin/env python3
"""Compare the train-step time and peak RSS of ``amp-run --train`` with PyTorch eager.

For each model, in one run and on the same machine, both tools train the
same model (same initial weights) on the same random data (fixed seed) with
the same batch size, loss (softmax cross-entropy, mean over the batch) and
optimizer (``torch.optim.SGD``, momentum 0.9, lr 0.01):

* **amp-run.** The model is exported by PyTorch in training mode
  (``torch.onnx.export(..., training=TrainingMode.TRAINING,
  do_constant_folding=False, opset_version=17)``, dynamic batch unless the
  model name says ``:static``) and trained by ``amp-run MODEL.onnx --train
  --data x.npy --labels y.npy --batch-size B --steps S --optimizer momentum
  --lr 0.01 --no-shuffle --log-every W`` in a fresh process, in fp32 and
  again with ``--amp-type bf16`` and ``--amp-type f16`` (f16: dynamic loss
  scaling, amp-run's default). amp-run prints a progress line after step W
  and after step S. Its stdout is a pseudo-terminal, so LLVM's stream writes
  each line unbuffered, and this script timestamps the lines as they
  arrive: **ms/step = (time of line S - time of line W) / (S - W)**, the
  mean over the last S - W steps. For fast steps the lines' arrival is
  too coarse (this script may see a line a few ms late while amp-run's
  threads take every core), and amp-run's own clock is used instead: the
  two lines' ``steps/s`` give the time since the first step as ``n /
  rate``, exact up to the printed rounding; the benchmark uses it whenever
  that rounding leaves less than 10 ms of doubt (the JSON says which
  clock, and keeps both). Either way this excludes the import, train-step
  build, lowering and JIT compilation ("amp startup": from the process
  start to the first step, also reported) and the first W warm-up steps
  (the first steps are several times slower: first-touch page faults and
  malloc growth; ResNet-18's first step takes ~5x a later one). The
  alternatives are worse: the ``steps/s`` of the last progress line counts
  from the first step, so it includes the warm-up steps (and has only two
  decimals: +-2% at 0.25 steps/s); the wall time of an S-step run minus a
  W-step run carries the run-to-run noise of two compilations (ResNet-18's
  takes 15-25 s).
* **PyTorch.** A script run by Debian's ``/usr/bin/python3`` (torch 1.13,
  CPU, eager, fp32) with ``torch.set_num_threads(T)``: ``model.train()``,
  then per step ``zero_grad``, forward, ``CrossEntropyLoss``, ``backward``,
  ``step`` and ``loss.item()`` (amp-run reads each step's loss too), each
  step timed with ``time.perf_counter``; ms/step = the mean of steps W+1..S.
* **Same work.** Both sides consume the same batches in the same order
  (step k uses batch ``k mod D`` of the D = ``min(S, 8)`` batches in
  x.npy/y.npy; amp-run's ``--no-shuffle`` epochs cycle the same way) from
  the same initial weights, so their fp32 losses at steps W and S agree
  (the table's "loss diff" is the larger relative difference of the two);
  a large difference means they did not train the same thing.
* **Peak RSS.** Both processes run under GNU ``/usr/bin/time -v``
  ("Maximum resident set size"). amp-run's includes the MLIR/LLVM
  libraries, the compilation (its peak for small models) and the data;
  PyTorch's includes the interpreter, ``import torch`` (~250 MiB) and the
  data.
* **Threads.** ``--threads T`` (default: the CPUs this process may use)
  sets amp-run's ``OMP_NUM_THREADS`` (oneDNN and the generated loops) and
  PyTorch's ``torch.set_num_threads``.
* **PyTorch's BLAS.** Debian's torch 1.13 runs convolutions in oneDNN but
  fp32 GEMMs (``nn.Linear``, ``matmul`` and their gradients) in whatever
  ``libblas.so.3`` the system provides; with Debian's default, the netlib
  reference BLAS (one thread, ~4 GFLOPS here against ~95 for OpenBLAS), it
  is a weak baseline for GEMM-heavy models (the notes say which library it
  loaded). amp-run's GEMMs use oneDNN's ``dnnl_sgemm``. ``--torch-blas
  LIB`` times PyTorch a second time with ``LD_PRELOAD=LIB`` (and
  ``OPENBLAS_NUM_THREADS=T``): the "torch+BLAS" columns. OpenBLAS can be
  had without installing it system-wide (which would change every user's
  ``libblas.so.3``)::

      apt-get download libopenblas0-pthread
      dpkg -x libopenblas0-pthread_*.deb /tmp/openblas
      ... --torch-blas /tmp/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3

bf16 and f16 on the CPU are emulated: a low-precision op computes in fp32
and rounds its result to the storage type (docs/CpuBackend.md, "Numerics"),
with casts around it and no native fp16/bf16 kernels, so they are expected
to be slower than fp32: low precision pays off on GPUs, not here. Their
columns show what the emulation costs, not the speed of mixed precision.

Models (``--models``, comma-separated; ``NAME[:static][:nodropout]``):

* ``mlp``, ``cnn``: ``test/models/amp_testmodels/train_reference.py``'s
  builders (Linear(64,32)-ReLU-Linear(32,10); 1x8x8 conv-BN-ReLU, max pool,
  strided conv-BN-ReLU, global mean, Linear(16,10)); batch 64, 10 classes.
* ``resnet18`` (or any torchvision name in ``export_torch.py``): the
  builders of ``test/models/amp_testmodels/export_torch.py``
  (``build_model(name)``: random weights, seed 0), 3x224x224 inputs, 1000
  classes, batch 8. Training-mode BatchNormalization (batch statistics,
  running statistics updated) on both sides.
* ``bert_encoder``: export_torch.py's BERT-style encoder, two
  ``nn.TransformerEncoderLayer`` (d_model 256, 4 heads, FFN 1024, GELU,
  dropout 0.1, batch_first). Its input is not integer tokens but float
  embeddings of shape (N, 32, 256), and its output is per-token features
  (N, 32, 256), not class logits. Any model whose output has three
  dimensions (N, T, F) is therefore wrapped, in both the exported model
  and the PyTorch one, in a classifier head: the mean over the T tokens,
  then ``nn.Linear(F, 10)`` (created after ``torch.manual_seed(1)``), giving
  (N, 10) logits for the cross-entropy loss against 10 random classes.
  Batch 8.
* ``:nodropout`` sets every ``nn.Dropout``'s p and every
  ``nn.MultiheadAttention``'s dropout to 0 on both sides (the export still
  has Dropout nodes, with ratio 0), to time the model without the masks
  (amp trains Dropout with a seeded Philox mask, PyTorch with its own
  generator: the two differ in the masks, so only the no-dropout loss is
  comparable between them).
* ``:static`` exports with a fixed batch of B instead of a dynamic batch
  dimension (PyTorch is unaffected).

Integer inputs (e.g. ``gpt2_decoder``'s tokens) get random values in
``[0, num_embeddings)`` of the model's first ``nn.Embedding``. Default steps
per model: mlp 2000 (200 warm-up), cnn 400 (40), resnet18 8 (3), bert_encoder
30 (5), others 10 (3); ``--steps``/``--warmup``/``--batch`` take one number
for all models or ``name=N,...``. A model amp-run cannot train gets a FAILED
cell with the first line of its error and the run goes on; the table's
notes repeat the errors in full. Other processes on the machine skew the
timings (amp-run's OpenMP threads most): the cores they used during each
run's timed steps are measured (``/proc/stat`` minus the CPU time of the
measured process tree and of this script); a run during which they used
more than 0.1 core is repeated, up to ``--retries`` times (default 2), and
the quietest run is kept; the table's notes give the most any kept run of
each model saw, with a warning above 0.1 core. ``--wait-idle SECONDS``
also waits (up to that long) before each model and each repeat until they
use less than 0.1 core. Models and runs go one after another, never in
parallel. Needs ``numpy`` here and torch + torchvision under
``/usr/bin/python3``. ``--markdown FILE`` appends the table with the date
and the command; ``--json FILE`` writes the raw numbers.

Example::

    python3 bench/train_bench.py --amp-run build/bin/amp-run \\
        --models mlp,cnn,bert_encoder:nodropout --markdown /tmp/train_bench.md
"""

import argparse
import datetime
import json
import os
import platform
import pty
import re
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_MODELS = os.path.join(REPO_ROOT, "test", "models")
DEFAULT_AMP_RUN = os.environ.get("AMP_RUN") or os.path.join(REPO_ROOT, "build", "bin", "amp-run")
TORCH_PYTHON = "/usr/bin/python3"
GNU_TIME = "/usr/bin/time"
OPSET = 17
LR = 0.01
MOMENTUM = 0.9
DATA_SEED = 1
MAX_DATA_BATCHES = 8
AMP_TYPES = ("fp32", "bf16", "f16")
BUSY_WARNING = 0.1
# How late this script may see a progress line (scheduling, pty): with
# amp-run's threads on every core, a few milliseconds.
ARRIVAL_UNCERTAINTY = 0.01
DEFAULT_MODELS = ("mlp", "cnn", "resnet18", "bert_encoder", "bert_encoder:nodropout")
# name -> (batch, steps, warm-up steps); other models use OTHER_DEFAULTS.
MODEL_DEFAULTS = {
    "mlp": (64, 2000, 200),
    "cnn": (64, 400, 40),
    "resnet18": (8, 8, 3),
    "bert_encoder": (8, 30, 5),
}
OTHER_DEFAULTS = (8, 10, 3)

# The PyTorch side, run by /usr/bin/python3: `export` writes the ONNX model
# and prints what the data must look like; `train` times the training loop.
TORCH_SCRIPT = r'''
import json, sys, time
import torch
from torch import nn

sys.path.insert(0, TEST_MODELS)
# export_torch.py imports its sibling export_cache.py.
sys.path.insert(0, TEST_MODELS + "/amp_testmodels")


class ClassifierHead(nn.Module):
    """(N, T, F) per-token features -> (N, C) class logits: mean over T, Linear."""

    def __init__(self, body, features, classes):
        super().__init__()
        self.body = body
        self.head = nn.Linear(features, classes)

    def forward(self, x):
        return self.head(self.body(x).mean(1))


def build(name, options):
    """Return (model in train mode, example input of batch 2, info)."""
    info = {}
    if name in ("mlp", "cnn", "regressor"):
        from amp_testmodels.train_reference import build as build_small
        model, shape, _ = build_small(name)
        example = torch.zeros((2,) + tuple(shape))
    else:
        from amp_testmodels.export_torch import build_model
        model, inputs = build_model(name)
        if len(inputs) != 1:
            raise SystemExit(f"error: {name} has {len(inputs)} inputs; the benchmark feeds one")
        example = torch.cat([inputs[0], inputs[0]])
    model.eval()
    with torch.no_grad():
        out = model(example)
    if not isinstance(out, torch.Tensor):
        raise SystemExit(f"error: {name} returns {type(out).__name__}, not one tensor")
    if out.dim() == 3:
        torch.manual_seed(1)
        model = ClassifierHead(model, out.shape[-1], 10)
        info["head"] = (f"mean over dim 1 of ({out.shape[1]}, {out.shape[2]}), "
                        f"Linear({out.shape[2]}, 10)")
        classes = 10
    elif out.dim() == 2:
        classes = out.shape[1]
    else:
        raise SystemExit(f"error: {name}'s output has shape {tuple(out.shape)}; "
                         "the benchmark needs (N, C) or (N, T, F)")
    if "nodropout" in options:
        zeroed = 0
        for m in model.modules():
            if isinstance(m, nn.Dropout) and m.p != 0:
                m.p, zeroed = 0.0, zeroed + 1
            if isinstance(m, nn.MultiheadAttention) and m.dropout != 0:
                m.dropout, zeroed = 0.0, zeroed + 1
        info["dropouts_zeroed"] = zeroed
    info["dropout_p"] = sorted({m.p for m in model.modules() if isinstance(m, nn.Dropout)})
    info["sample_shape"] = list(example.shape[1:])
    info["dtype"] = str(example.dtype).replace("torch.", "")
    info["classes"] = int(classes)
    info["parameters"] = sum(p.numel() for p in model.parameters())
    embeddings = [m for m in model.modules() if isinstance(m, nn.Embedding)]
    info["high"] = embeddings[0].num_embeddings if embeddings else 100
    return model.train(), example, info


def export(name, options, batch, path):
    model, example, info = build(name, options)
    dynamic = None
    if "static" in options:
        example = torch.cat([example[:1]] * batch)
    else:
        dynamic = {"x": {0: "N"}, "y": {0: "N"}}
    torch.onnx.export(model, example, path, input_names=["x"], output_names=["y"],
                      opset_version=OPSET, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, dynamic_axes=dynamic)
    print("INFO " + json.dumps(info))


def busy_sample():
    """(wall s, machine busy s, this process's CPU s) for the cores others used."""
    import os
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    steal = fields[7] if len(fields) > 7 else 0
    own = os.times()
    return (time.perf_counter(), (sum(fields[:8]) - fields[3] - fields[4] - steal) / ticks,
            own.user + own.system)


def train(name, options, batch, steps, warmup, x_path, y_path, threads, out):
    import numpy as np
    torch.set_num_threads(threads)
    model, _, info = build(name, options)
    x, y = np.load(x_path), np.load(y_path)
    batches = len(x) // batch
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    criterion = nn.CrossEntropyLoss()
    model.train()
    times, losses = [], []
    window = None
    for k in range(steps):
        if k == warmup:
            window = busy_sample()
        i = k % batches
        start = time.perf_counter()
        xb = torch.from_numpy(x[i * batch:(i + 1) * batch])
        yb = torch.from_numpy(y[i * batch:(i + 1) * batch])
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        times.append(time.perf_counter() - start)
    end = busy_sample()
    other = ((end[1] - window[1]) - (end[2] - window[2])) / (end[0] - window[0])
    blas = [l.split()[-1] for l in open("/proc/self/maps") if "blas" in l.lower()]
    with open(out, "w") as f:
        json.dump({"times": times, "losses": losses, "info": info,
                   "blas": blas[0] if blas else "none mapped", "other_cores": max(0.0, other),
                   "torch": torch.__version__, "threads": torch.get_num_threads(),
                   "mkldnn": torch.backends.mkldnn.is_available()}, f)


if __name__ == "__main__":
    command, name, options = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    if command == "export":
        export(name, options, int(sys.argv[4]), sys.argv[5])
    else:
        batch, steps, warmup = (int(a) for a in sys.argv[4:7])
        train(name, options, batch, steps, warmup, sys.argv[7], sys.argv[8],
              int(sys.argv[9]), sys.argv[10])
'''


# --------------------------------------------------------------------------
# Machine
# --------------------------------------------------------------------------


def available_cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def machine_info(threads):
    cpu = platform.processor() or "unknown"
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        m = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
        if m:
            cpu = m.group(1).strip()
        m = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
        if m:
            have = set(m.group(1).split())
            flags = " ".join(f for f in ("avx2", "fma", "avx512f", "avx512_bf16",
                                         "avx512_fp16", "amx_tile") if f in have)
    except OSError:
        pass
    return [f"CPU: {cpu}; {available_cpus()} CPUs available; {flags}",
            f"threads: {threads} (amp-run OMP_NUM_THREADS, torch.set_num_threads); "
            f"python {platform.python_version()}, numpy {np.__version__}"]


def load_average():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def process_tree_cpu(pid):
    """CPU seconds (all threads) of process ``pid`` and its descendants, or None."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, pending = 0.0, [pid]
    while pending:
        p = pending.pop()
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    pending += [int(c) for c in f.read().split()]
        except (OSError, ValueError, IndexError):
            if p == pid:
                return None
    return total


def machine_busy():
    """(wall s, busy CPU s of the whole machine, this process's CPU s) or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    steal = fields[7] if len(fields) > 7 else 0
    own = os.times()
    return (time.perf_counter(), (sum(fields[:8]) - fields[3] - fields[4] - steal)
            / os.sysconf("SC_CLK_TCK"), own.user + own.system)


class CpuMeter:
    """Cores the rest of the machine used while a block ran.

    System-wide busy time from ``/proc/stat`` minus this process's and its
    waited-for children's CPU time, per second of wall time.
    """

    def __init__(self):
        self.ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.start = self._sample()

    def _sample(self):
        own = os.times()
        try:
            with open("/proc/stat") as f:
                fields = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        steal = fields[7] if len(fields) > 7 else 0
        busy = sum(fields[:8]) - fields[3] - fields[4] - steal
        mine = own.user + own.system + own.children_user + own.children_system
        return time.perf_counter(), busy / self.ticks, mine

    def stop(self):
        end = self._sample()
        if self.start is None or end is None or end[0] <= self.start[0]:
            return None
        wall = end[0] - self.start[0]
        return max(0.0, ((end[1] - self.start[1]) - (end[2] - self.start[2])) / wall)


def wait_idle(limit):
    """Wait up to ``limit`` s until other processes use < BUSY_WARNING cores."""
    deadline = time.monotonic() + limit
    while True:
        meter = CpuMeter()
        time.sleep(1.0)
        busy = meter.stop()
        if busy is None or busy < BUSY_WARNING or time.monotonic() >= deadline:
            return busy
        print(f"  waiting for an idle machine (other processes use {busy:.2f} cores) ...",
              file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Running the tools
# --------------------------------------------------------------------------


def first_error_line(text):
    lines = [l.strip() for l in text.splitlines()
             if l.strip() and not l.startswith("Command exited with non-zero status")]
    for line in lines:
        if "error" in line.lower():
            # Without the location prefix (the model's temporary path).
            return re.sub(r"^\S+\.onnx:\d+:\d+:\s*", "", line)
    return lines[-1] if lines else "(no output)"


def python_error(text):
    """The exception line of a Python traceback (its last line)."""
    lines = [l.strip() for l in text.splitlines()
             if l.strip() and not l.startswith("Command exited with non-zero status")]
    return lines[-1] if lines else "(no output)"


def parse_gnu_time(path):
    """Peak RSS in MiB from a ``/usr/bin/time -v -o`` file (None if absent)."""
    try:
        with open(path) as f:
            m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", f.read())
    except OSError:
        return None
    return int(m.group(1)) / 1024 if m else None


STEP_RE = re.compile(r"^step (\d+)\s+loss (\S+)\s+scale (\S+)\s+lr (\S+)\s+skipped (\d+)\s+"
                     r"([\d.]+) steps/s")


def run_amp(args, model, data, labels, batch, steps, warmup, amp_type, work):
    """Train with amp-run; return a dict (``error`` set when it failed)."""
    cmd = [args.amp_run, model, "--train", "--data", data, "--labels", labels,
           "--batch-size", str(batch), "--steps", str(steps), "--optimizer", "momentum",
           "--lr", str(LR), "--no-shuffle", "--log-every", str(warmup)]
    if amp_type != "fp32":
        cmd += ["--amp-type", amp_type]
    result = {"command": " ".join(shlex.quote(c) for c in cmd)}
    time_file = os.path.join(work, f"amp-{amp_type}.time")
    err_file = os.path.join(work, f"amp-{amp_type}.stderr")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    # A pseudo-terminal as stdout: LLVM's raw_fd_ostream does not buffer a
    # terminal, so each progress line arrives when amp-run writes it.
    master, slave = pty.openpty()
    with open(err_file, "wb") as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen([GNU_TIME, "-v", "-o", time_file] + cmd,
                                    stdin=subprocess.DEVNULL, stdout=slave, stderr=err, env=env,
                                    close_fds=True)
        except OSError as e:
            os.close(master)
            os.close(slave)
            result["error"] = f"cannot start amp-run: {e}"
            return result
        os.close(slave)
        lines, buf, timed_out, samples = [], b"", False, {}
        deadline = start + args.timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                timed_out = True
                proc.kill()
                break
            ready, _, _ = select.select([master], [], [], min(left, 1.0))
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            now = time.perf_counter()
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child side closed.
                break
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                line = line.decode(errors="replace").strip()
                lines.append((now, line))
                # What the machine and amp-run used over the timed steps.
                m = STEP_RE.match(line)
                if m and int(m.group(1)) in (warmup, steps):
                    samples[int(m.group(1))] = (machine_busy(), process_tree_cpu(proc.pid))
        os.close(master)
        proc.wait()
    wall = time.perf_counter() - start
    with open(err_file, errors="replace") as f:
        stderr = f.read()
    result.update(wall_s=wall, returncode=proc.returncode, peak_rss_mib=parse_gnu_time(time_file),
                  stdout=[l for _, l in lines][-20:], stderr=stderr[-4000:])
    if timed_out:
        result["error"] = f"timed out after {args.timeout:g} s"
        return result
    if proc.returncode != 0:
        text = stderr if stderr.strip() else "\n".join(l for _, l in lines)
        result["error"] = first_error_line(text)
        return result
    progress = {}
    for stamp, line in lines:
        m = STEP_RE.match(line)
        if m:
            progress[int(m.group(1))] = (stamp, float(m.group(2)), float(m.group(6)))
    if warmup not in progress or steps not in progress:
        result["error"] = f"no progress lines for steps {warmup} and {steps} in amp-run's output"
        return result
    (t_w, loss_w, rate_w), (t_s, loss_s, rate_s) = progress[warmup], progress[steps]
    result["ms_per_step_arrival"] = (t_s - t_w) / (steps - warmup) * 1e3
    result["ms_per_step"], result["clock"] = result["ms_per_step_arrival"], "line arrival"
    if rate_w > 0 and rate_s > 0:
        # amp-run's own clock: the cumulative time after n steps is n / rate,
        # exact up to the printed rate's rounding (+-0.005 steps/s).
        result["ms_per_step_amp_clock"] = ((steps / rate_s - warmup / rate_w)
                                           / (steps - warmup) * 1e3)
        rounding = 0.005 * (steps / rate_s ** 2 + warmup / rate_w ** 2)
        if rounding < ARRIVAL_UNCERTAINTY:
            result["ms_per_step"], result["clock"] = result["ms_per_step_amp_clock"], "amp-run"
        result["startup_s"] = t_w - start - warmup / rate_w
        result["ms_per_step_incl_warmup"] = 1e3 / rate_s
    result["losses"] = {warmup: loss_w, steps: loss_s}
    (busy_w, tree_w), (busy_s, tree_s) = samples.get(warmup, (None, None)), samples.get(
        steps, (None, None))
    if busy_w and busy_s and tree_w is not None and tree_s is not None and busy_s[0] > busy_w[0]:
        other = ((busy_s[1] - busy_w[1]) - (tree_s - tree_w) - (busy_s[2] - busy_w[2])) / (
            busy_s[0] - busy_w[0])
        result["other_cores"] = max(0.0, other)
    return result


def run_torch(args, script, name, options, data, labels, batch, steps, warmup, work,
              preload=None):
    """Train with PyTorch (``preload``: a BLAS library to LD_PRELOAD)."""
    tag = "torch-blas" if preload else "torch"
    out = os.path.join(work, f"{tag}.json")
    time_file = os.path.join(work, f"{tag}.time")
    cmd = [TORCH_PYTHON, script, "train", name, ",".join(options) or "-", str(batch),
           str(steps), str(warmup), data, labels, str(args.threads), out]
    env = dict(os.environ)
    prefix = ""
    if preload:
        env.update(LD_PRELOAD=preload, OPENBLAS_NUM_THREADS=str(args.threads))
        prefix = f"LD_PRELOAD={shlex.quote(preload)} OPENBLAS_NUM_THREADS={args.threads} "
    result = {"command": prefix + " ".join(shlex.quote(c) for c in cmd)}
    try:
        proc = subprocess.run([GNU_TIME, "-v", "-o", time_file] + cmd, capture_output=True,
                              text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        result["error"] = f"timed out after {args.timeout:g} s"
        return result
    result["peak_rss_mib"] = parse_gnu_time(time_file)
    if proc.returncode != 0 or not os.path.exists(out):
        result["error"] = python_error(proc.stderr or proc.stdout)
        result["stderr"] = proc.stderr[-4000:]
        return result
    with open(out) as f:
        raw = json.load(f)
    timed = raw["times"][warmup:]
    result.update(ms_per_step=sum(timed) / len(timed) * 1e3,
                  ms_per_step_min=min(timed) * 1e3,
                  losses={warmup: raw["losses"][warmup - 1], steps: raw["losses"][steps - 1]},
                  torch=raw["torch"], threads=raw["threads"], mkldnn=raw["mkldnn"],
                  blas=raw["blas"], other_cores=raw["other_cores"],
                  info=raw["info"])
    return result


def export_model(script, name, options, batch, path):
    """Export with PyTorch; return the info dict or raise RuntimeError."""
    cmd = [TORCH_PYTHON, script, "export", name, ",".join(options) or "-", str(batch), path]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    info = [l for l in proc.stdout.splitlines() if l.startswith("INFO ")]
    if proc.returncode != 0 or not info or not os.path.exists(path):
        raise RuntimeError("export failed: " + python_error(proc.stderr or proc.stdout))
    return json.loads(info[-1][5:])


def make_data(info, batch, steps, work):
    """Seeded random inputs and class labels for min(steps, 8) batches."""
    rng = np.random.default_rng(DATA_SEED)
    count = min(steps, MAX_DATA_BATCHES) * batch
    shape = (count,) + tuple(info["sample_shape"])
    if info["dtype"].startswith("float"):
        x = rng.standard_normal(shape).astype(np.float32)
    else:
        x = rng.integers(0, info["high"], shape).astype(np.dtype(info["dtype"]))
    y = rng.integers(0, info["classes"], count).astype(np.int64)
    paths = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(paths[0], x)
    np.save(paths[1], y)
    return paths


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def measure(args, label, run):
    """``run()`` again (up to --retries times) while other processes used more
    than BUSY_WARNING cores during its timed steps; keep the quietest result."""
    best = None
    for attempt in range(1 + args.retries):
        if attempt and args.wait_idle > 0:
            wait_idle(args.wait_idle)
        result = run()
        result["attempts"] = attempt + 1
        busy = result.get("other_cores")
        if best is None or (busy is not None and busy < best.get("other_cores", float("inf"))):
            best = result
        if "error" in result or busy is None or busy <= BUSY_WARNING:
            break
        print(f"[{label}] other processes used {busy:.2f} cores during the timed steps"
              + ("; measuring again" if attempt < args.retries else ""), file=sys.stderr,
              flush=True)
    return best


def model_settings(args, spec):
    name = spec.split(":")[0]
    batch, steps, warmup = MODEL_DEFAULTS.get(name, OTHER_DEFAULTS)
    batch = args.batch.get(spec, args.batch.get(name, args.batch.get("*", batch)))
    steps = args.steps.get(spec, args.steps.get(name, args.steps.get("*", steps)))
    warmup = args.warmup.get(spec, args.warmup.get(name, args.warmup.get("*", None)))
    if warmup is None:  # The default, unless the steps leave too few timed steps.
        default = MODEL_DEFAULTS.get(name, OTHER_DEFAULTS)[2]
        warmup = default if steps >= 2 * default else max(1, steps // 2)
    return batch, steps, warmup


def bench_model(args, script, spec, work):
    name, *options = spec.split(":")
    batch, steps, warmup = model_settings(args, spec)
    row = {"model": spec, "batch": batch, "steps": steps, "warmup": warmup}
    if steps <= warmup:
        row["error"] = f"--steps ({steps}) must be larger than the warm-up ({warmup})"
        return row
    unknown = sorted(set(options) - {"static", "nodropout"})
    if unknown:
        row["error"] = f"unknown model option(s) {', '.join(unknown)} (static, nodropout)"
        return row
    model_work = os.path.join(work, spec.replace(":", "_"))
    os.makedirs(model_work, exist_ok=True)
    if args.wait_idle > 0:
        wait_idle(args.wait_idle)
    print(f"[{spec}] exporting with {TORCH_PYTHON} (batch {batch}, {steps} steps, "
          f"{warmup} warm-up; load average {load_average()}) ...", file=sys.stderr, flush=True)
    path = os.path.join(model_work, "model.onnx")
    try:
        row["info"] = export_model(script, name, options, batch, path)
    except RuntimeError as err:
        row["error"] = str(err)
        print(f"[{spec}] {err}", file=sys.stderr, flush=True)
        return row
    data, labels = make_data(row["info"], batch, steps, model_work)

    print(f"[{spec}] torch ...", file=sys.stderr, flush=True)
    row["torch"] = measure(args, f"{spec} torch", lambda: run_torch(
        args, script, name, options, data, labels, batch, steps, warmup, model_work))
    if "error" in row["torch"]:
        print(f"[{spec}] torch FAILED: {row['torch']['error']}", file=sys.stderr, flush=True)
    if args.torch_blas:
        print(f"[{spec}] torch with {args.torch_blas} ...", file=sys.stderr, flush=True)
        row["torch_blas"] = measure(args, f"{spec} torch+BLAS", lambda: run_torch(
            args, script, name, options, data, labels, batch, steps, warmup, model_work,
            preload=args.torch_blas))
        if "error" in row["torch_blas"]:
            print(f"[{spec}] torch with {args.torch_blas} FAILED: {row['torch_blas']['error']}",
                  file=sys.stderr, flush=True)
    for amp_type in args.amp_types:
        print(f"[{spec}] amp-run {amp_type} ...", file=sys.stderr, flush=True)
        result = measure(args, f"{spec} amp-run {amp_type}", lambda: run_amp(
            args, path, data, labels, batch, steps, warmup, amp_type, model_work))
        row[amp_type] = result
        if "error" in result:
            print(f"[{spec}] amp-run {amp_type} FAILED: {result['error']}", file=sys.stderr,
                  flush=True)
        else:
            print(f"[{spec}] amp-run {amp_type}: {result['ms_per_step']:.3f} ms/step "
                  f"({result['clock']} clock; line arrival "
                  f"{result['ms_per_step_arrival']:.3f}, amp-run's clock "
                  f"{result.get('ms_per_step_amp_clock', float('nan')):.3f}), startup "
                  f"{result.get('startup_s', float('nan')):.1f} s", file=sys.stderr, flush=True)
    busy = [row[k]["other_cores"] for k in ("torch", "torch_blas") + tuple(args.amp_types)
            if row.get(k, {}).get("other_cores") is not None]
    row["other_cores"] = max(busy) if busy else None
    for key in ("torch", "torch_blas"):
        if "ms_per_step" in row.get(key, {}):
            print(f"[{spec}] {key}: {row[key]['ms_per_step']:.3f} ms/step", file=sys.stderr,
                  flush=True)
    if "ms_per_step" in row["torch"]:
        for amp_type in args.amp_types:
            amp = row[amp_type]
            if "losses" in amp:
                amp["loss_rel_diff"] = max(
                    abs(amp["losses"][k] - row["torch"]["losses"][k])
                    / max(abs(row["torch"]["losses"][k]), 1e-12) for k in (warmup, steps))
    return row


def fmt_ms(value):
    if value is None:
        return "n/a"
    return format(value, ".3f" if value < 1 else ".2f" if value < 100 else ".1f")


def fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def cell_error(message, limit=110):
    message = message.replace("|", "\\|")
    return "FAILED: " + (message if len(message) <= limit else message[:limit - 3] + "...")


def table_lines(rows, amp_types, torch_blas):
    low = [t for t in amp_types if t != "fp32"]
    extra = ["torch+BLAS ms/step", "amp/torch+BLAS"] if torch_blas else []
    header = ("| model | batch | steps (warm-up) | amp fp32 ms/step | torch fp32 ms/step "
              "| amp/torch | " + "".join(f"{e} | " for e in extra)
              + "amp peak RSS MiB | torch peak RSS MiB | "
              + "".join(f"amp {t} ms/step | " for t in low)
              + "amp startup s | loss diff | busy cores |")
    lines = [header, "|---|---:|---|---:|---:|---:|" + "---:|" * len(extra) + "---:|---:|"
             + "---:|" * len(low) + "---:|---:|---:|"]
    for row in rows:
        prefix = f"| {row['model']} | {row['batch']} | {row['steps']} ({row['warmup']}) |"
        if "torch" not in row:
            lines.append(prefix + f" {cell_error(row.get('error', '?'))} | n/a | n/a | n/a | n/a | "
                         + "n/a | " * (len(low) + len(extra)) + "n/a | n/a | n/a |")
            continue
        torch_r = row["torch"]
        amp = row.get("fp32", {"error": "not run"})
        torch_ms = (cell_error(torch_r["error"]) if "error" in torch_r
                    else fmt_ms(torch_r["ms_per_step"]))
        amp_ms = cell_error(amp["error"]) if "error" in amp else fmt_ms(amp["ms_per_step"])
        ratio = ("n/a" if "error" in amp or "error" in torch_r
                 else f"{amp['ms_per_step'] / torch_r['ms_per_step']:.2f}")
        cells = [amp_ms, torch_ms, ratio]
        if torch_blas:
            blas_r = row.get("torch_blas", {"error": "not run"})
            cells.append(cell_error(blas_r["error"]) if "error" in blas_r
                         else fmt_ms(blas_r["ms_per_step"]))
            cells.append("n/a" if "error" in amp or "error" in blas_r
                         else f"{amp['ms_per_step'] / blas_r['ms_per_step']:.2f}")
        cells += [fmt(amp.get("peak_rss_mib"), ".0f"), fmt(torch_r.get("peak_rss_mib"), ".0f")]
        for t in low:
            r = row.get(t, {"error": "not run"})
            if "error" in r:
                same = "error" in amp and r["error"] == amp["error"]
                cells.append("FAILED (same error)" if same else cell_error(r["error"]))
            else:
                cells.append(fmt_ms(r["ms_per_step"]))
        cells.append(fmt(amp.get("startup_s"), ".1f"))
        cells.append(fmt(amp.get("loss_rel_diff"), ".1e"))
        cells.append(fmt(row.get("other_cores"), ".2f"))
        lines.append(prefix + " " + " | ".join(cells) + " |")
    return lines


def note_lines(rows, args):
    lines = []
    torch_r = next((r["torch"] for r in rows if "ms_per_step" in r.get("torch", {})), None)
    if torch_r:
        lines.append(f"PyTorch {torch_r['torch']} eager fp32 on the CPU ({torch_r['threads']} "
                     f"thread(s), oneDNN {'available' if torch_r['mkldnn'] else 'absent'}, "
                     f"BLAS {torch_r['blas']}); amp-run with OMP_NUM_THREADS={args.threads}.")
        if "/blas/libblas" in torch_r["blas"]:
            lines.append("WARNING: this PyTorch's GEMMs (Linear, matmul) run in the netlib "
                         "reference BLAS (unoptimized, one thread), its convolutions in oneDNN: "
                         "a weak baseline for GEMM-heavy models (mlp, bert_encoder). "
                         + ("See the torch+BLAS columns." if args.torch_blas else
                            "Pass --torch-blas LIB to also time it with an optimized BLAS."))
    blas_r = next((r["torch_blas"] for r in rows
                   if "ms_per_step" in r.get("torch_blas", {})), None)
    if blas_r:
        lines.append(f"torch+BLAS: the same PyTorch runs with LD_PRELOAD={args.torch_blas} "
                     f"(loaded: {blas_r['blas']}), OPENBLAS_NUM_THREADS={args.threads}.")
    lines.append("ms/step: mean over the steps after the warm-up (amp-run: between its progress "
                 "lines, so without compilation). Peak RSS: GNU time, whole process. amp startup: "
                 "import, train-step build, lowering, JIT compilation and data loading of the fp32 "
                 "run. loss diff: largest relative difference of amp-run's and PyTorch's fp32 "
                 "losses after the warm-up and after the last step (same weights, same batches). "
                 "busy cores: the most that other processes used during the timed steps of any "
                 "of the model's kept runs (above 0.1 the row's timings are skewed). "
                 "bf16/f16 are emulated on the CPU (each op computes in fp32 and rounds): "
                 "slower than fp32 by design (no native low-precision kernels); mixed precision "
                 "pays off on GPUs.")
    low = [t for t in args.amp_types if t != "fp32"]
    for row in rows:
        for t in low:
            r = row.get(t, {})
            if "loss_rel_diff" in r:
                lines.append(f"{row['model']} {t}: loss diff vs torch fp32 "
                             f"{r['loss_rel_diff']:.1e}.")
        info = row.get("info", {})
        if "head" in info:
            lines.append(f"{row['model']}: output wrapped in a classifier head ({info['head']}).")
        if info.get("dropouts_zeroed"):
            lines.append(f"{row['model']}: {info['dropouts_zeroed']} dropout(s) set to p=0 on both "
                         "sides.")
        elif info.get("dropout_p") and any(p > 0 for p in info["dropout_p"]):
            lines.append(f"{row['model']}: dropout p={info['dropout_p']} in training mode on both "
                         "sides.")
    errors = []
    for row in rows:
        if "error" in row and "torch" not in row:
            errors.append(f"{row['model']}: {row['error']}")
        for key in ("torch", "torch_blas") + tuple(args.amp_types):
            if "error" in row.get(key, {}):
                tool = (key.replace("_blas", "+BLAS") if key.startswith("torch")
                        else "amp-run " + key)
                errors.append(f"{row['model']} {tool}: {row[key]['error']}")
    if errors:
        lines.append("Errors (first line of each):")
        lines += [f"- {e}" for e in errors]
    busy = [r["model"] for r in rows if (r.get("other_cores") or 0) > BUSY_WARNING]
    if busy:
        lines.append(f"WARNING: other processes used more than {BUSY_WARNING:g} core while "
                     f"{', '.join(busy)} ran (busy cores); those timings are skewed. Rerun on an "
                     "idle machine (or with --wait-idle, --retries).")
    return lines


def parse_per_model(text, option, parser):
    """``N`` (all models) or ``name=N,name=N`` -> {name or '*': N}."""
    result = {}
    if text is None:
        return result
    for part in text.split(","):
        if not part:
            continue
        key, sep, value = part.rpartition("=")
        try:
            number = int(value)
        except ValueError:
            parser.error(f"{option}: '{part}' is not N or name=N")
        if number < 1:
            parser.error(f"{option}: {number} must be >= 1")
        result[key if sep else "*"] = number
    return result


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--amp-run", default=DEFAULT_AMP_RUN,
                        help="amp-run binary (default: $AMP_RUN, else build/bin/amp-run)")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help="comma-separated NAME[:static][:nodropout] (default %(default)s)")
    parser.add_argument("--steps", help="training steps: N for all models or name=N,... "
                                        "(defaults per model, see above)")
    parser.add_argument("--warmup", help="untimed warm-up steps: N or name=N,...")
    parser.add_argument("--batch", help="batch size: N or name=N,...")
    parser.add_argument("--amp-types", default=",".join(AMP_TYPES),
                        help="amp-run precisions to run (default %(default)s; fp32 is needed "
                             "for the ratio)")
    parser.add_argument("--torch-blas", metavar="LIB",
                        help="also time PyTorch with this BLAS library LD_PRELOADed (e.g. "
                             "OpenBLAS's libblas.so.3, see above)")
    parser.add_argument("--threads", type=int, default=available_cpus(),
                        help="threads for both tools (default: the available CPUs, "
                             "%(default)s here)")
    parser.add_argument("--timeout", type=float, default=1200,
                        help="seconds one amp-run or PyTorch run may take (default %(default)s)")
    parser.add_argument("--wait-idle", type=float, default=0,
                        help="before each model, wait up to this many seconds for other "
                             "processes to use < 0.1 core (default 0: do not wait)")
    parser.add_argument("--retries", type=int, default=2,
                        help="measure a tool again up to this many times when other processes "
                             "used > 0.1 core during its timed steps (default %(default)s)")
    parser.add_argument("--markdown", help="append the table (with the date and the command) "
                                           "to this file")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--keep", help="keep the exported models, data and logs in this folder")
    args = parser.parse_args(argv)
    args.steps = parse_per_model(args.steps, "--steps", parser)
    args.warmup = parse_per_model(args.warmup, "--warmup", parser)
    args.batch = parse_per_model(args.batch, "--batch", parser)
    args.models = [m for m in args.models.split(",") if m]
    args.amp_types = [t for t in args.amp_types.split(",") if t]
    bad = sorted(set(args.amp_types) - set(AMP_TYPES))
    if bad:
        parser.error(f"--amp-types: unknown {', '.join(bad)} (fp32, bf16, f16)")
    if args.threads < 1:
        parser.error("--threads must be >= 1")
    found = shutil.which(args.amp_run) if os.sep not in args.amp_run else args.amp_run
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        parser.error(f"amp-run not found or not executable at '{args.amp_run}' "
                     "(build it, set $AMP_RUN or pass --amp-run PATH)")
    args.amp_run = os.path.abspath(found)
    if args.torch_blas:
        if not os.path.isfile(args.torch_blas):
            parser.error(f"--torch-blas: no such file '{args.torch_blas}'")
        args.torch_blas = os.path.abspath(args.torch_blas)
    for tool in (TORCH_PYTHON, GNU_TIME):
        if not os.access(tool, os.X_OK):
            parser.error(f"{tool} is needed (torch under Debian's python; GNU time)")
    return args


def main(argv=None):
    args = parse_args(argv)
    command = " ".join(shlex.quote(a) for a in [sys.argv[0]] + (sys.argv[1:] if argv is None
                                                                   else list(argv)))
    header = machine_info(args.threads) + [f"amp-run: {args.amp_run}"]
    for line in header:
        print(line)
    print(f"load average before: {load_average()}", flush=True)
    sys.stdout.flush()

    work = args.keep or tempfile.mkdtemp(prefix="amp-train-bench-")
    os.makedirs(work, exist_ok=True)
    rows = []
    try:
        script = os.path.join(work, "torch_side.py")
        with open(script, "w") as f:
            f.write(f"TEST_MODELS = {TEST_MODELS!r}\nOPSET = {OPSET}\nLR = {LR}\n"
                    f"MOMENTUM = {MOMENTUM}\n" + TORCH_SCRIPT)
        for spec in args.models:
            try:
                rows.append(bench_model(args, script, spec, work))
            except Exception as err:  # Report it and go on with the other models.
                rows.append({"model": spec, "batch": "?", "steps": "?", "warmup": "?",
                             "error": f"{type(err).__name__}: {err}".splitlines()[0]})
                print(f"[{spec}] FAILED: {rows[-1]['error']}", file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print(f"load average after: {load_average()}")
    print()
    table = table_lines(rows, args.amp_types, args.torch_blas)
    notes = note_lines(rows, args)
    print("\n".join(table))
    print()
    print("\n".join(notes))
    if args.markdown:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        with open(args.markdown, "a") as f:
            f.write(f"\n## Training step: amp-run --train vs PyTorch eager ({stamp})\n\n"
                    f"Command: `{command}`\n\n" + "".join(f"{l}  \n" for l in header) + "\n"
                    + "\n".join(table) + "\n\n" + "\n".join(
                        l if l.startswith("- ") else l + "\n" for l in notes) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command, "machine": header, "threads": args.threads,
                       "rows": rows}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
