#!/usr/bin/env python3
"""Benchmark amp's ONNX import against onnx.load and onnxruntime session creation.

For each model, ``amp-opt MODEL -o /dev/null`` (plus ``--emit-bytecode`` with
``--bytecode``) runs ``--runs`` times in fresh processes; the median wall time
and the median peak RSS (measured by GNU ``/usr/bin/time``) are reported
next to the model's weights size (sum of initializer bytes). As peers, the
same file is timed with ``onnx.load`` + ``onnx.checker.check_model`` and with
``onnxruntime.InferenceSession`` creation (CPU provider), in this process.

Without model arguments, resnet50 and vit_b_16 are exported at opset 17 by
``test/models/amp_testmodels/export_torch.py`` under Debian's ``/usr/bin/python3``
into ``--models-dir`` (reused when already there).

Prints a markdown table, then the goals: amp import < 1 s per 100 MB of
weights and amp peak RSS < 2x the weights. MB here is 10^6 bytes.

Example::

    python3 bench/import_bench.py --amp-opt build/bin/amp-opt /tmp/amp-models/opset17/resnet18.onnx
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import onnx
import onnxruntime
from onnx import helper

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORT_SCRIPT = os.path.join(REPO_ROOT, "test", "models", "amp_testmodels", "export_torch.py")
DEFAULT_AMP_OPT = os.path.join(REPO_ROOT, "build", "bin", "amp-opt")
DEFAULT_MODELS = ("resnet50", "vit_b_16")
DEFAULT_MODELS_DIR = "/tmp/amp-models/bench-opset17"
GNU_TIME = "/usr/bin/time"  # Debian package "time".
MB = 1e6

GOAL_SECONDS_PER_100MB = 1.0
GOAL_RSS_PER_WEIGHTS = 2.0


def check_gnu_time():
    """Exit with a clear message unless GNU time is installed."""
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"import_bench: {GNU_TIME} is missing; install the Debian package 'time'.")


def resolve_amp_opt(path):
    """Return an executable path for ``path`` or exit with a clear message."""
    found = shutil.which(path) if os.sep not in path else path
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        sys.exit(
            f"import_bench: amp-opt not found or not executable at '{path}'.\n"
            "Build it first (it lands in build/bin/amp-opt) or pass --amp-opt PATH."
        )
    return os.path.abspath(found)


def default_models(models_dir, torch_python):
    """Export the default models with ``export_torch.py`` unless already present."""
    paths = [os.path.join(models_dir, f"{name}.onnx") for name in DEFAULT_MODELS]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        names = ",".join(os.path.basename(p)[: -len(".onnx")] for p in missing)
        print(f"exporting {names} into {models_dir} with {torch_python} ...", flush=True)
        subprocess.run(
            [torch_python, EXPORT_SCRIPT, "--out", models_dir, "--opset", "17", "--models", names],
            check=True,
        )
    return paths


def weights_bytes(path):
    """Sum of the main graph's initializer sizes, from dims and element type."""
    model = onnx.load(path, load_external_data=False)
    total = 0
    for tensor in model.graph.initializer:
        if tensor.data_type == onnx.TensorProto.STRING:
            total += sum(len(s) for s in tensor.string_data)
            continue
        count = 1
        for dim in tensor.dims:
            count *= dim
        total += count * helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    return total


def run_amp_opt(amp_opt, model, bytecode):
    """Run amp-opt once under GNU time; return ``(wall seconds, peak RSS bytes)``.

    The peak RSS comes from ``/usr/bin/time``, not from this process's own
    wait4: a child forked from this (large) interpreter inherits its RSS
    high-water mark. Exits with amp-opt's stderr tail if it fails.
    """
    cmd = [amp_opt, model, "-o", os.devnull] + (["--emit-bytecode"] if bytecode else [])
    with tempfile.NamedTemporaryFile(mode="r") as rss, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.run(
            [GNU_TIME, "-f", "%M", "-o", rss.name] + cmd,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-4000:]
            sys.exit(f"import_bench: `{' '.join(cmd)}` exited {proc.returncode}:\n{tail}")
        max_rss_kib = int(rss.read().split()[-1])
    return wall, max_rss_kib * 1024


def time_onnx_load_check(model):
    """Seconds for ``onnx.load`` plus ``onnx.checker.check_model``."""
    start = time.perf_counter()
    onnx.checker.check_model(onnx.load(model))
    return time.perf_counter() - start


def time_ort_session(model):
    """Seconds to create an onnxruntime CPU InferenceSession."""
    start = time.perf_counter()
    onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    return time.perf_counter() - start


def bench_model(model, amp_opt, runs, bytecode):
    """Measure one model; return a dict of the table's values."""
    weights = weights_bytes(model)
    amp = [run_amp_opt(amp_opt, model, bytecode) for _ in range(runs)]
    amp_s = statistics.median(w for w, _ in amp)
    rss = statistics.median(r for _, r in amp)
    return {
        "model": os.path.basename(model),
        "weights_mb": weights / MB,
        "amp_s": amp_s,
        "s_per_100mb": amp_s / (weights / (100 * MB)) if weights else float("nan"),
        "rss_mb": rss / MB,
        "rss_ratio": rss / weights if weights else float("nan"),
        "onnx_load_s": statistics.median(time_onnx_load_check(model) for _ in range(runs)),
        "ort_s": statistics.median(time_ort_session(model) for _ in range(runs)),
    }


def print_table(rows):
    """Print the results as a markdown table."""
    print(
        "| model | weights MB | amp import s | s/100MB | amp peak RSS MB | RSS/weights "
        "| onnx.load s | ORT session s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['model']} | {r['weights_mb']:.1f} | {r['amp_s']:.3f} | "
            f"{r['s_per_100mb']:.3f} | {r['rss_mb']:.1f} | {r['rss_ratio']:.2f} | "
            f"{r['onnx_load_s']:.3f} | {r['ort_s']:.3f} |"
        )


def print_goals(rows):
    """Print each model's standing against the import goals."""
    print()
    print(
        f"Goals: amp import < {GOAL_SECONDS_PER_100MB:g} s per 100 MB of weights; "
        f"amp peak RSS < {GOAL_RSS_PER_WEIGHTS:g}x weights."
    )
    for r in rows:
        speed = "PASS" if r["s_per_100mb"] < GOAL_SECONDS_PER_100MB else "MISS"
        memory = "PASS" if r["rss_ratio"] < GOAL_RSS_PER_WEIGHTS else "MISS"
        print(f"  {r['model']}: speed {speed} ({r['s_per_100mb']:.3f} s/100MB), "
              f"memory {memory} ({r['rss_ratio']:.2f}x)")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument(
        "models", nargs="*", help="ONNX files (default: export resnet50 and vit_b_16)"
    )
    parser.add_argument(
        "--amp-opt", default=DEFAULT_AMP_OPT, help="amp-opt binary (default %(default)s)"
    )
    parser.add_argument(
        "--bytecode", action="store_true", help="pass --emit-bytecode to amp-opt"
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="runs per measurement (default %(default)s)"
    )
    parser.add_argument(
        "--models-dir",
        default=DEFAULT_MODELS_DIR,
        help="where default models are exported (default %(default)s)",
    )
    parser.add_argument(
        "--torch-python",
        default="/usr/bin/python3",
        help="interpreter with Debian's torch, for the default models (default %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    amp_opt = resolve_amp_opt(args.amp_opt)
    check_gnu_time()
    models = args.models or default_models(args.models_dir, args.torch_python)
    missing = [m for m in models if not os.path.isfile(m)]
    if missing:
        parser.error(f"no such model file(s): {', '.join(missing)}")

    rows = []
    for model in models:
        print(f"benchmarking {model} ...", file=sys.stderr, flush=True)
        rows.append(bench_model(model, amp_opt, args.runs, args.bytecode))
    mode = "bytecode" if args.bytecode else "text"
    print(f"amp-opt: {amp_opt} (output: {mode}), median of {args.runs} runs\n")
    print_table(rows)
    print_goals(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
