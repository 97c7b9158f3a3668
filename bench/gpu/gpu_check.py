#!/usr/bin/env python3
"""GPU correctness checks of bench/gpu/run.sh: every ``check`` artifact of the
manifest runs on the GPU (``amp-run-gpu -i ... --compare-to ...``) against
the outputs amp-run's CPU path computed for the same program. Tolerances
per dtype (rtol 1e-2 fp16, 4e-2 bf16; atol rtol/10); NaN never passes.
Writes ``OUT/check.md``; exits 1 on any mismatch."""

import argparse
import json
import os
import subprocess
import sys

TOLERANCE = {"f16": 1e-2, "bf16": 4e-2, "fp32": 1e-3}


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
    table = ["| model | dtype | GPU vs CPU path | detail |", "|---|---|---|---|", *rows]
    with open(os.path.join(args.out, "check.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(table) + "\n\n")
    print(f"{len(entries) - failures} of {len(entries)} checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
