#!/usr/bin/env python3
"""Import + autocast time versus graph size.

Generates ONNX graphs (opset 17) of stacked pre-norm transformer blocks with
about 10k, 50k and 100k nodes. One block is 28 nodes: LayerNormalization,
Q/K/V MatMuls, Reshape + Transpose into heads, QK^T MatMul, Mul by the
scale, Softmax, PV MatMul, Transpose + Reshape back, output MatMul,
residual Add, a second LayerNormalization, and an MLP with an Erf GELU
(MatMul, Add, Div, Erf, Add, Mul, Mul, MatMul) and a residual Add. Every
block has its own ``--width`` x ``--width`` weights (default 32, which keeps
the 100k-node file under 100 MB); the Reshape shapes and scalars are shared.

Each graph is run through ``amp-opt G.onnx -o OUT.mlirbc --emit-bytecode``
in fresh processes (median of ``--runs``) in three configurations:

* import only (``--amp-import-only``),
* import + cleanup with autocast as a no-op (``--amp-opt-level=0``),
* the default pipeline: import + cleanup + amp-autocast to fp16.

The autocast share is (full - level 0) / full: level 0 still runs the pass
(as a no-op walk) and the canonicalize after it, so this is the cost of the
conversion itself, and on a busy machine it is the noisiest column. Prints
a markdown table with seconds per 10k nodes, so linear growth shows as a
flat column, then the goals: linear growth and 100k nodes through import +
autocast in under 2 s. If amp-opt prints an MLIR ``--mlir-timing`` report
for the ONNX pipeline, ``--runs`` more full runs with ``--mlir-timing`` give
a second table: the median seconds of each pass, the rest of the wall time
(process start, import, writing), and the share of the wall time spent in
amp-autocast plus the canonicalize (cast clean-up) right after it. Graphs
are written to a temporary folder and deleted afterwards.

    python3 bench/autocast_scaling.py [--amp-opt build/bin/amp-opt] [--runs 3]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_AMP_OPT = os.path.join(REPO_ROOT, "build", "bin", "amp-opt")
SIZES = (10_000, 50_000, 100_000)
NODES_PER_BLOCK = 28
SEQ = 8
HEADS = 4
GOAL_100K_SECONDS = 2.0
GNU_TIME = "/usr/bin/time"


def transformer_model(num_nodes, width, seed=0):
    """A chain of pre-norm transformer blocks with about ``num_nodes`` nodes."""
    assert width % HEADS == 0
    head = width // HEADS
    rng = np.random.default_rng(seed)
    inits = [
        numpy_helper.from_array(np.array([1, SEQ, HEADS, head], np.int64), "heads_shape"),
        numpy_helper.from_array(np.array([1, SEQ, width], np.int64), "model_shape"),
        numpy_helper.from_array(np.array(1.0 / np.sqrt(head), np.float32), "scale"),
        numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]
    nodes = []

    def weight(name, shape, scale):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def node(op, inputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    x = "x"
    w_scale = 1.0 / np.sqrt(width)
    for b in range(max(1, num_nodes // NODES_PER_BLOCK)):
        p = f"b{b}_"
        ln1 = node("LayerNormalization", [x, weight(p + "ln1_g", [width], 1.0),
                                          weight(p + "ln1_b", [width], 0.1)],
                   p + "ln1", axis=-1)
        q = node("MatMul", [ln1, weight(p + "wq", [width, width], w_scale)], p + "q")
        k = node("MatMul", [ln1, weight(p + "wk", [width, width], w_scale)], p + "k")
        v = node("MatMul", [ln1, weight(p + "wv", [width, width], w_scale)], p + "v")
        qh = node("Transpose", [node("Reshape", [q, "heads_shape"], p + "qr")], p + "qt",
                  perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [k, "heads_shape"], p + "kr")], p + "kt",
                  perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [v, "heads_shape"], p + "vr")], p + "vt",
                  perm=[0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [qh, kh], p + "qk"), "scale"], p + "scaled")
        probs = node("Softmax", [scores], p + "probs", axis=-1)
        ctx = node("MatMul", [probs, vh], p + "ctx")
        merged = node("Reshape", [node("Transpose", [ctx], p + "ctxt", perm=[0, 2, 1, 3]),
                                  "model_shape"], p + "merged")
        attn = node("MatMul", [merged, weight(p + "wo", [width, width], w_scale)], p + "attn")
        x1 = node("Add", [x, attn], p + "res1")
        ln2 = node("LayerNormalization", [x1, weight(p + "ln2_g", [width], 1.0),
                                          weight(p + "ln2_b", [width], 0.1)],
                   p + "ln2", axis=-1)
        h = node("Add", [node("MatMul", [ln2, weight(p + "w1", [width, width], w_scale)],
                              p + "fc1"), weight(p + "b1", [width], 0.1)], p + "fc1b")
        erf = node("Erf", [node("Div", [h, "sqrt2"], p + "div")], p + "erf")
        gelu = node("Mul", [node("Mul", [h, node("Add", [erf, "one"], p + "erf1")], p + "hg"),
                            "half"], p + "gelu")
        y = node("MatMul", [gelu, weight(p + "w2", [width, width], w_scale)], p + "fc2")
        x = node("Add", [x1, y], p + "res2")
    graph = helper.make_graph(
        nodes, "transformer_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, SEQ, width])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, SEQ, width])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


TIMING_RE = re.compile(r"^\s*([\d.]+) \(\s*[\d.]+%\)\s+(\S.*?)\s*$")


def pass_timings(amp_opt, path, out, runs):
    """Median seconds per pass from ``--mlir-timing`` (None without a report).

    Returns ``(names, medians, wall median)``; repeated pass names get a
    ``#2`` suffix in pipeline order.
    """
    samples, walls, names = [], [], None
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([amp_opt, path, "-o", out, "--emit-bytecode", "--mlir-timing"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - start)
        if proc.returncode != 0 or "Execution time report" not in proc.stderr:
            return None
        seen, row = {}, {}
        for line in proc.stderr.split("Execution time report", 1)[1].splitlines():
            match = TIMING_RE.match(line)
            if not match or match.group(2).startswith("(A)"):
                continue
            name = match.group(2)
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = f"{name} #{seen[name]}"
            row[name] = float(match.group(1))
        names = names or list(row)
        samples.append(row)
    medians = {n: statistics.median(r.get(n, 0.0) for r in samples) for n in names}
    return names, medians, statistics.median(walls)


SUMMARY_RE = re.compile(r"amp-autocast: .*?(\d+) casts.*?([\d.]+)% of FLOPs")


def run_amp(amp_opt, path, out, extra, runs):
    """Median wall seconds and median peak RSS (MB) of ``runs`` amp-opt processes.

    Also returns the last run's stderr (for the autocast summary line).
    """
    times, rss = [], []
    stderr = ""
    cmd = [amp_opt, path, "-o", out, "--emit-bytecode", *extra]
    for _ in range(runs):
        with tempfile.NamedTemporaryFile(mode="r") as rss_file:
            start = time.perf_counter()
            proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", rss_file.name] + cmd,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
            times.append(time.perf_counter() - start)
            if proc.returncode != 0:
                sys.exit(f"autocast_scaling: `{' '.join(cmd)}` exited {proc.returncode}:\n"
                         f"{proc.stderr[-4000:]}")
            rss.append(int(rss_file.read().split()[-1]) / 1024 * 1.024)  # KiB -> MB
        stderr = proc.stderr
    return statistics.median(times), statistics.median(rss), stderr


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--amp-opt", default=DEFAULT_AMP_OPT,
                        help="amp-opt binary (default %(default)s)")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs per measurement (default %(default)s)")
    parser.add_argument("--width", type=int, default=32,
                        help="model width: weights are WIDTH x WIDTH (default %(default)s)")
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES),
                        help="comma-separated node counts (default %(default)s)")
    parser.add_argument("--json", help="also write the raw numbers to this JSON file")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if not os.access(args.amp_opt, os.X_OK):
        sys.exit(f"autocast_scaling: amp-opt not found at {args.amp_opt}; build it first "
                 "(scripts/amp.sh build) or pass --amp-opt PATH")
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"autocast_scaling: {GNU_TIME} is missing; install the Debian package 'time'.")
    sizes = [int(s) for s in args.sizes.split(",")]

    rows = []
    with tempfile.TemporaryDirectory(prefix="amp-autocast-scaling-") as tmp:
        for size in sizes:
            path = os.path.join(tmp, f"transformer{size}.onnx")
            model = transformer_model(size, args.width)
            onnx.save(model, path)
            nodes = len(model.graph.node)
            del model
            out = os.path.join(tmp, "out.mlirbc")
            print(f"{nodes} nodes ({os.path.getsize(path) / 1e6:.1f} MB) ...",
                  file=sys.stderr, flush=True)
            imp, imp_rss, _ = run_amp(args.amp_opt, path, out, ["--amp-import-only"], args.runs)
            lvl0, _, _ = run_amp(args.amp_opt, path, out, ["--amp-opt-level=0"], args.runs)
            full, full_rss, err = run_amp(args.amp_opt, path, out, [], args.runs)
            match = SUMMARY_RE.search(err)
            timings = pass_timings(args.amp_opt, path, out, args.runs)
            rows.append({
                "nodes": nodes,
                "file_mb": os.path.getsize(path) / 1e6,
                "import_s": imp,
                "level0_s": lvl0,
                "full_s": full,
                "autocast_s": full - lvl0,
                "autocast_share": (full - lvl0) / full,
                "import_rss_mb": imp_rss,
                "full_rss_mb": full_rss,
                "casts": int(match.group(1)) if match else None,
                "f16_flops_percent": float(match.group(2)) if match else None,
                "pass_timings": None if timings is None else {
                    "passes": timings[1], "wall_s": timings[2]},
            })
            os.remove(path)

    print(f"\namp-opt: {args.amp_opt}; --emit-bytecode; median of {args.runs} runs; "
          f"width {args.width}, {NODES_PER_BLOCK} nodes per block\n")
    print("| ONNX nodes | file MB | import only s | s per 10k | import + autocast s "
          "| s per 10k | autocast s | autocast share | peak RSS MB | casts | FLOPs in f16 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        per = 1e4 / r["nodes"]
        f16 = f"{r['f16_flops_percent']:.1f}%" if r["f16_flops_percent"] is not None else "?"
        print(f"| {r['nodes']} | {r['file_mb']:.1f} | {r['import_s']:.2f} "
              f"| {r['import_s'] * per:.3f} | {r['full_s']:.2f} | {r['full_s'] * per:.3f} "
              f"| {r['autocast_s']:.2f} | {100 * r['autocast_share']:.0f}% "
              f"| {r['full_rss_mb']:.0f} | {r['casts']} | {f16} |")

    timed = [r for r in rows if r["pass_timings"]]
    if timed:
        names = [n for n in timed[0]["pass_timings"]["passes"] if n != "Total"]
        print("\nPer pass (`--mlir-timing`, median of the same number of runs), seconds:\n")
        # The autocast pass and the cast clean-up (canonicalize) right after it.
        autocast = [n for n in names if n == "AmpAutocast"]
        if autocast:
            i = names.index("AmpAutocast")
            if i + 1 < len(names) and names[i + 1].startswith("Canonicalizer"):
                autocast.append(names[i + 1])
        print("| ONNX nodes | " + " | ".join(names) + " | passes total "
              "| wall | wall - passes (start, import, writing) | autocast + clean-up share |")
        print("|---:|" + "---:|" * (len(names) + 4))
        for r in timed:
            t = r["pass_timings"]
            total = t["passes"].get("Total", sum(t["passes"][n] for n in names))
            share = sum(t["passes"][n] for n in autocast) / t["wall_s"]
            r["pass_timings"]["autocast_cleanup_share"] = share
            print(f"| {r['nodes']} | " + " | ".join(f"{t['passes'][n]:.2f}" for n in names)
                  + f" | {total:.2f} | {t['wall_s']:.2f} | {t['wall_s'] - total:.2f} "
                  f"| {100 * share:.0f}% |")

    print(f"\nGoals: time grows linearly; ~100k nodes through import + autocast "
          f"< {GOAL_100K_SECONDS:g} s.")
    per10k = [r["full_s"] * 1e4 / r["nodes"] for r in rows]
    print(f"  s per 10k nodes (import + autocast): {min(per10k):.3f} .. {max(per10k):.3f} "
          f"(max/min {max(per10k) / min(per10k):.2f})")
    big = [r for r in rows if r["nodes"] >= 95_000]
    for r in big:
        verdict = "PASS" if r["full_s"] < GOAL_100K_SECONDS else "MISS"
        print(f"  {r['nodes']} nodes: {verdict} ({r['full_s']:.2f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"amp_opt": args.amp_opt, "runs": args.runs, "width": args.width,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
