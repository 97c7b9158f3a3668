#!/usr/bin/env python3
"""Data-parallel scaling of ``amp-run --train`` on MPI: one rank against two.

For each model (train_bench.py's exports: the MLP, the small CNN and the
BERT-style encoder without dropout), on the same data and global batch:

* **1 rank, T threads**: ``amp-run --train`` alone with ``OMP_NUM_THREADS=T``
  (T = the CPUs this process may use);
* **1 rank, T/2 threads**: the same with half the threads, one rank's share
  of the machine below;
* **2 ranks, T/2 threads each**: ``mpirun -np 2 amp-run --train`` with the
  same global batch (half per rank) and ``OMP_NUM_THREADS=T/2``.

ms/step is amp-run's own clock between the progress lines after the warm-up
step W and the last step S (``n / steps-per-second`` at each, as
train_bench.py does). The 2-rank runs print the all-reduce's mean time per
step (which includes waiting for the slower rank) and its bytes (every
fp32 gradient, the float buffers, the loss): the table gives both, the
all-reduce's share of the step, and the effective bandwidth (bytes / time).
On one machine the ranks talk over shared memory and share its cores and
memory bandwidth: the 2-rank row shows the cost of the exchange and of the
duplicated per-rank work, not a speed-up; docs/DataParallel.md projects the
numbers to 8-64 ranks on a network.

    python3 bench/train_scaling.py [--models mlp,cnn,bert_encoder:nodropout]
        [--markdown docs/DataParallel.md]
"""

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_bench  # noqa: E402  (exports and data)

REPO = os.path.dirname(HERE)
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
# name -> (global batch, steps, warm-up steps)
SETTINGS = {"mlp": (64, 600, 100), "cnn": (64, 200, 40), "bert_encoder": (8, 30, 6)}
PROGRESS = re.compile(r"^step (\d+) .* ([\d.]+) steps/s$", re.M)
ALLREDUCE = re.compile(r"^all-reduce: ([\d.]+) ms per step .*, (\d+) bytes$", re.M)


def ms_per_step(stdout, warmup, steps):
    times = {}
    for match in PROGRESS.finditer(stdout):
        n, rate = int(match.group(1)), float(match.group(2))
        times[n] = n / rate
    if warmup not in times or steps not in times:
        raise RuntimeError("no progress lines at steps %d and %d:\n%s"
                           % (warmup, steps, stdout[-1500:]))
    return 1e3 * (times[steps] - times[warmup]) / (steps - warmup)


def run(command, threads, ranks):
    env = {**os.environ, **MPI_ENV, "OMP_NUM_THREADS": str(threads)}
    if ranks > 1:
        command = [shutil.which("mpirun"), "-np", str(ranks), "-x", "OMP_NUM_THREADS",
                   "--bind-to", "none", *command]
    proc = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          env=env, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:] or proc.stdout[-2000:])
    return proc.stdout


def bench_model(args, script, spec, work):
    name = spec.split(":")[0]
    options = spec.split(":")[1:]
    batch, steps, warmup = SETTINGS.get(name, (8, 20, 5))
    folder = os.path.join(work, spec.replace(":", "_"))
    os.makedirs(folder, exist_ok=True)
    model = os.path.join(folder, "model.onnx")
    info = train_bench.export_model(script, name, options, batch, model)
    x, y = train_bench.make_data(info, batch, steps, folder)
    command = [args.amp_run, model, "--train", "--data", x, "--labels", y,
               "--batch-size", batch, "--steps", steps, "--no-shuffle",
               "--optimizer", "momentum", "--lr", "0.01", "--log-every", warmup]
    # --log-every W prints at W, 2W, ...: S must be a multiple of W.
    assert steps % warmup == 0
    half = max(1, args.threads // 2)
    row = {"model": spec, "batch": batch}
    out = run(command, args.threads, 1)
    row["one_full"] = ms_per_step(out, warmup, steps)
    out = run(command, half, 1)
    row["one_half"] = ms_per_step(out, warmup, steps)
    out = run(command, half, 2)
    row["two"] = ms_per_step(out, warmup, steps)
    match = ALLREDUCE.search(out)
    if not match:
        raise RuntimeError("no all-reduce line:\n" + out[-1500:])
    row["allreduce_ms"], row["bytes"] = float(match.group(1)), int(match.group(2))
    print(f"[{spec}] {row}", file=sys.stderr, flush=True)
    return row


def table(rows, threads):
    half = max(1, threads // 2)
    lines = [f"| model | global batch | 1 rank, {threads} threads (ms/step) | "
             f"1 rank, {half} threads | 2 ranks x {half} threads | 2 ranks / 1 rank "
             f"({threads} threads) | all-reduce (ms/step) | its share of the step | "
             "bytes per step | effective bandwidth |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | error: {r['error']} |" + " |" * 8)
            continue
        bandwidth = r["bytes"] / (r["allreduce_ms"] / 1e3) / 1e9 if r["allreduce_ms"] else 0
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['one_full']:.3f} | {r['one_half']:.3f} | "
            f"{r['two']:.3f} | {r['two'] / r['one_full']:.2f}x | {r['allreduce_ms']:.3f} | "
            f"{100 * r['allreduce_ms'] / r['two']:.0f}% | {r['bytes']:,} | "
            f"{bandwidth:.2f} GB/s |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-run", default=os.path.join(REPO, "build", "bin", "amp-run"))
    parser.add_argument("--models", default="mlp,cnn,bert_encoder:nodropout")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--markdown")
    args = parser.parse_args(argv)
    if not shutil.which("mpirun"):
        parser.error("mpirun not found (apt-get install openmpi-bin libopenmpi-dev)")
    header = train_bench.machine_info(args.threads)
    print("\n".join(header), flush=True)
    work = tempfile.mkdtemp(prefix="amp-train-scaling-")
    rows = []
    try:
        script = os.path.join(work, "torch_side.py")
        with open(script, "w") as f:
            f.write(f"TEST_MODELS = {train_bench.TEST_MODELS!r}\nOPSET = {train_bench.OPSET}\n"
                    f"LR = {train_bench.LR}\nMOMENTUM = {train_bench.MOMENTUM}\n"
                    + train_bench.TORCH_SCRIPT)
        for spec in args.models.split(","):
            try:
                rows.append(bench_model(args, script, spec, work))
            except Exception as err:  # report it, go on
                message = (str(err).strip().splitlines() or [type(err).__name__])[-1]
                print(f"[{spec}] FAILED: {err}", file=sys.stderr, flush=True)
                rows.append({"model": spec, "error": message[:160]})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = table(rows, args.threads)
    print("\n".join(lines))
    if args.markdown:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        with open(args.markdown, "a") as f:
            f.write(f"\n### Measured ({stamp})\n\n" + "".join(f"{l}  \n" for l in header)
                    + "\n" + "\n".join(lines) + "\n")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
