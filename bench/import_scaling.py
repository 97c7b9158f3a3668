#!/usr/bin/env python3
"""Import time and peak RSS versus graph size.

Generates chains of (MatMul, Add, Relu, Mul) blocks with 10k, 50k, 100k and
200k ONNX nodes, imports each with ``amp-opt --emit-bytecode -o /dev/null``
(median of ``--runs`` fresh processes; with and without the canonicalize +
cse cleanup) and, as the peer in the same run, times ``onnx.load`` plus
``onnx.checker.check_model`` on the same file. Prints a markdown table with
time per 10k nodes, so linear growth shows as a flat column.

    python3 bench/import_scaling.py [--amp-opt build/bin/amp-opt]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = (10_000, 50_000, 100_000, 200_000)


def chain_model(num_nodes, width=16):
    """A model of num_nodes nodes: repeated y = (x @ W + x).relu() ** 2."""
    nodes = []
    prev = "x"
    for i in range(num_nodes // 4):
        nodes += [
            helper.make_node("MatMul", [prev, "w"], [f"m{i}"]),
            helper.make_node("Add", [f"m{i}", prev], [f"a{i}"]),
            helper.make_node("Relu", [f"a{i}"], [f"r{i}"]),
            helper.make_node("Mul", [f"r{i}", f"r{i}"], [f"o{i}"]),
        ]
        prev = f"o{i}"
    weight = numpy_helper.from_array(
        np.random.default_rng(0).random((width, width), dtype=np.float32), "w")
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, width])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4, width])],
        [weight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run_amp(amp_opt, path, extra, runs):
    """Median wall seconds and peak RSS (MB) of amp-opt over fresh processes."""
    times, rss = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", amp_opt, path, "--emit-bytecode",
             "-o", os.devnull, *extra],
            capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit(f"amp-opt failed on {path}:\n{proc.stderr}")
        rss.append(int(proc.stderr.strip().splitlines()[-1]) / 1024)
    return statistics.median(times), statistics.median(rss)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--amp-opt", default=os.path.join(REPO_ROOT, "build", "bin", "amp-opt"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not os.path.exists(args.amp_opt):
        sys.exit(f"amp-opt not found at {args.amp_opt}; build it first (scripts/amp.sh build)")
    print("| ONNX nodes | amp import s | s per 10k | + cleanup s | s per 10k "
          "| peak RSS MB | onnx.load+check s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            path = os.path.join(tmp, f"chain{size}.onnx")
            onnx.save(chain_model(size), path)
            bare, rss = run_amp(args.amp_opt, path, ["--amp-import-only"], args.runs)
            full, _ = run_amp(args.amp_opt, path, [], args.runs)
            start = time.perf_counter()
            onnx.checker.check_model(onnx.load(path))
            peer = time.perf_counter() - start
            print(f"| {size} | {bare:.2f} | {bare / size * 1e4:.3f} | {full:.2f} "
                  f"| {full / size * 1e4:.3f} | {rss:.0f} | {peer:.2f} |")


if __name__ == "__main__":
    main()
