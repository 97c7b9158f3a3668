#!/usr/bin/env python3
"""GPU correctness checks of bench/gpu/run.sh: every ``check`` artifact of the
manifest runs on the GPU (``amp-run-gpu -i ... --compare-to ...``) against
the outputs amp-run's CPU path computed for the same program. Tolerances
per dtype (rtol 1e-2 fp16, 4e-2 bf16; atol rtol/10); NaN never passes.
Every ``train`` entry trains with ``amp-train-gpu`` (a one-rank NCCL
communicator, and once without NCCL) and must follow amp-run --train's
trajectory: the same loss scales, skipped steps and step count, losses
within 2e-2, the final state within 2e-2 (relative L2; integers equal);
the NCCL and the plain run must agree bit for bit.
Writes ``OUT/check.md``; exits 1 on any mismatch."""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

TOLERANCE = {"f16": 1e-2, "bf16": 4e-2, "fp32": 1e-3}


def compare_training(gpu_csv, cpu_csv, gpu_state, cpu_state):
    """(ok, detail) of a GPU run against amp-run --train's."""
    gpu = np.loadtxt(gpu_csv, delimiter=",", skiprows=1, ndmin=2)
    cpu = np.loadtxt(cpu_csv, delimiter=",", skiprows=1, ndmin=2)
    if gpu.shape != cpu.shape:
        return False, f"{len(gpu)} log rows, amp-run {len(cpu)}"
    # step, loss_scale, found_inf, skipped: exactly; the loss: fp16 rounding.
    if not np.array_equal(gpu[:, [0, 2, 4, 5]], cpu[:, [0, 2, 4, 5]]):
        return False, "loss scales or skipped steps differ from amp-run's"
    loss = float(np.max(np.abs(gpu[:, 1] - cpu[:, 1]) / np.maximum(np.abs(cpu[:, 1]), 1e-6)))
    if not loss <= 2e-2:
        return False, f"loss differs from amp-run's by {loss:.3g} (relative)"
    detail = f"{len(gpu)} steps, max loss rel. error {loss:.2g}"
    if gpu_state is None:
        return True, detail + " (no state file: built without libzip)"
    gpu_arrays, cpu_arrays = dict(np.load(gpu_state)), dict(np.load(cpu_state))
    worst = 0.0
    for name, want in cpu_arrays.items():
        got = gpu_arrays.get(name)
        if got is None or got.shape != want.shape:
            return False, f"state '{name}' missing or reshaped"
        if want.dtype.kind in "iub":
            if not np.array_equal(got, want):
                return False, f"state '{name}' = {got} (amp-run: {want})"
            continue
        error = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-12))
        worst = max(worst, error)
        if not error <= 2e-2:
            return False, f"state '{name}' differs by {error:.3g} (relative L2)"
    return True, detail + f", max state rel. error {worst:.2g}"


def check_training(entry, artifacts, out):
    """Trains each run of a ``train`` entry with amp-train-gpu."""
    runner = os.path.join(os.environ.get("AMP_GPU_BIN", "."), "amp-train-gpu")
    paths = {k: os.path.join(artifacts, v) for k, v in entry["artifacts"].items()}
    results = []
    for spec in entry["runs"]:
        logs = {}
        for nccl in (True, False):
            stem = os.path.join(out, f"train_k{spec['accumulate']}_{'nccl' if nccl else 'plain'}")
            command = [runner, "--init", paths["initial_state"],
                       "--compute", paths["compute_gradients"], "--apply", paths["apply_gradients"],
                       "--data", os.path.join(artifacts, entry["data"]),
                       "--labels", os.path.join(artifacts, entry["labels"]),
                       "--batch-size", str(entry["batch"]), "--accumulate", str(spec["accumulate"]),
                       "--steps", str(spec["steps"]), "--no-shuffle", "--log-every", "1",
                       "--log-csv", stem + ".csv", "--save-state", stem + ".npz"]
            if nccl:
                command.append("--nccl")
            proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
            if proc.returncode == 2 and "libzip" in proc.stderr:
                command = command[:command.index("--save-state")] + command[
                    command.index("--save-state") + 2:]
                proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
            print(" ".join(command) + "\n" + proc.stdout + proc.stderr, flush=True)
            label = f"--accumulate {spec['accumulate']}, {'NCCL' if nccl else 'no NCCL'}"
            if proc.returncode != 0:
                results.append((False, f"{label}: {proc.stderr.strip()[-300:]}"))
                continue
            state = stem + ".npz" if os.path.exists(stem + ".npz") else None
            ok, detail = compare_training(stem + ".csv", os.path.join(artifacts, spec["csv"]),
                                          state, os.path.join(artifacts, spec["state"]))
            results.append((ok, f"{label}: {detail}"))
            logs[nccl] = stem + ".csv"
        if len(logs) == 2:
            same = open(logs[True], encoding="utf-8").read() == open(
                logs[False], encoding="utf-8").read()
            results.append((same, f"--accumulate {spec['accumulate']}: one-rank NCCL run "
                                  f"{'equals' if same else 'DIFFERS from'} the plain run"))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("artifacts")
    parser.add_argument("--out", default="/tmp/amp-gpu-out")
    args = parser.parse_args()
    runner = os.path.join(os.environ.get("AMP_GPU_BIN", "."), "amp-run-gpu")
    with open(os.path.join(args.artifacts, "manifest.json"), encoding="utf-8") as f:
        entries = [e for e in json.load(f) if e["kind"] == "check"]
    rows, failures = [], 0
    for entry in entries:
        rtol = TOLERANCE[entry["dtype"]]
        command = [runner, os.path.join(args.artifacts, entry["artifact"])]
        for path in entry["inputs"]:
            command += ["-i", os.path.join(args.artifacts, path)]
        for path in entry["references"]:
            command += ["--compare-to", os.path.join(args.artifacts, path)]
        command += ["--rtol", str(rtol), "--atol", str(rtol / 10)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if proc.returncode == 3:
            sys.exit(f"no GPU: {proc.stderr.strip()}")
        ok = proc.returncode == 0
        failures += not ok
        detail = (proc.stdout.strip().splitlines() or [proc.stderr.strip()])[-1]
        rows.append(f"| {entry['name']} | {entry['dtype']} | {'ok' if ok else 'FAIL'} | "
                    f"{detail} |")
        print(("ok   " if ok else "FAIL ") + " ".join(command) + "\n" + proc.stdout
              + proc.stderr, flush=True)
    train = [e for e in json.load(open(os.path.join(args.artifacts, "manifest.json"),
                                       encoding="utf-8")) if e["kind"] == "train"]
    for entry in train:
        for ok, detail in check_training(entry, args.artifacts, args.out):
            failures += not ok
            rows.append(f"| {entry['name']} (amp-train-gpu) | {entry['dtype']} | "
                        f"{'ok' if ok else 'FAIL'} | {detail} |")
    table = ["| model | dtype | GPU vs CPU path | detail |", "|---|---|---|---|", *rows]
    with open(os.path.join(args.out, "check.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(table) + "\n\n")
    total = len(rows)
    print(f"{total - failures} of {total} checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
