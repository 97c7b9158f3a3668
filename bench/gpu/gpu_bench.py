#!/usr/bin/env python3
"""GPU benchmarks of bench/gpu/run.sh, all measured in one run on one GPU:

- GEMM: amp's cuBLASLt call (an artifact made here by amp-gpu-make-gemm;
  fp16/bf16 in, fp32 compute) against torch.matmul at the same shapes:
  TFLOP/s, % of the H200's 989 TFLOP/s dense fp16 peak, ratio to torch.
- Kernels: the generated Relu / Cast / Softmax / LayerNorm kernels (the
  ``kernel`` artifacts): bytes moved per second against the device-to-device
  copy bandwidth (torch ``copy_``) measured in the same run.
- End to end (artifacts prepared with ``--e2e``): ResNet-50 and BERT-base at
  batch 32 and 128, amp fp16 / bf16 / fp32 (CUDA graph replay), against
  PyTorch eager fp32 (TF32 off), eager under torch.autocast(fp16) and
  torch.compile under autocast, with the same architecture and batch.

Writes ``OUT/bench.md`` and ``OUT/bench.json``.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runtime", "cuda", "python"))
sys.path.insert(0, HERE)

PEAK_TFLOPS = 989.0  # H200 dense fp16/bf16
GEMM_SHAPES = [(8192, 8192, 8192), (4096, 3072, 768), (4096, 768, 3072),
               (4096, 2304, 768), (16384, 4096, 4096)]


def torch_time(fn, warmup=5, iterations=20):
    import torch
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iterations):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iterations


def gemm_rows(rt, workdir):
    import torch
    make = os.path.join(os.environ.get("AMP_GPU_BIN", "."), "amp-gpu-make-gemm")
    rows = []
    for dtype in ("f16", "bf16"):
        torch_type = torch.float16 if dtype == "f16" else torch.bfloat16
        for m, n, k in GEMM_SHAPES:
            path = os.path.join(workdir, f"gemm_{dtype}_{m}x{n}x{k}.ampgpu")
            subprocess.run([make, "--m", str(m), "--n", str(n), "--k", str(k),
                            "--dtype", dtype, "-o", path], check=True)
            program = rt.load(path)
            program.set_inputs(program.random_inputs())
            amp_ms = program.benchmark(warmup=10, iterations=50)
            program.close()
            a = torch.randn(m, k, device="cuda", dtype=torch_type)
            b = torch.randn(k, n, device="cuda", dtype=torch_type)
            torch_ms = torch_time(lambda: torch.matmul(a, b), iterations=50)
            flops = 2.0 * m * n * k
            amp_tf, torch_tf = flops / amp_ms / 1e9, flops / torch_ms / 1e9
            rows.append({"dtype": dtype, "shape": f"{m}x{n}x{k}", "amp_tflops": amp_tf,
                         "peak_pct": 100 * amp_tf / PEAK_TFLOPS, "torch_tflops": torch_tf,
                         "vs_torch": amp_tf / torch_tf})
    return rows


def copy_bandwidth():
    import torch
    x = torch.empty(1 << 29, dtype=torch.uint8, device="cuda")  # 512 MiB
    y = torch.empty_like(x)
    ms = torch_time(lambda: y.copy_(x))
    return 2 * x.numel() / ms / 1e6  # GB/s (read + write)


def kernel_rows(rt, artifacts, entries, copy_gbs):
    rows = []
    for entry in entries:
        program = rt.load(os.path.join(artifacts, entry["artifact"]))
        program.set_inputs(program.random_inputs())
        ms = program.benchmark(warmup=5, iterations=20)
        program.close()
        gbs = entry["bytes"] / ms / 1e6
        rows.append({"kernel": entry["name"], "ms": ms, "gbs": gbs,
                     "copy_pct": 100 * gbs / copy_gbs})
    return rows


def torch_e2e(name, batch):
    """ms of PyTorch eager fp32 (TF32 off), eager autocast fp16, compile+autocast."""
    import torch
    import models
    results = {}
    try:
        model, x = models.MODELS[name](batch)
    except ImportError as error:
        return {"error": f"{error}"}
    model, x = model.cuda(), x.cuda()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with torch.no_grad():
        results["torch_fp32"] = torch_time(lambda: model(x))
        with torch.autocast("cuda", dtype=torch.float16):
            results["torch_autocast"] = torch_time(lambda: model(x))
            try:
                compiled = torch.compile(model)
                results["torch_compile_autocast"] = torch_time(lambda: compiled(x), warmup=3)
            except Exception as error:  # noqa: BLE001 (reported in the table)
                results["compile_error"] = str(error).splitlines()[0][:120]
    return results


def e2e_rows(rt, artifacts, entries):
    rows = {}
    for entry in entries:
        key = (entry["name"], entry["batch"])
        row = rows.setdefault(key, {"model": entry["name"], "batch": entry["batch"]})
        try:
            program = rt.load(os.path.join(artifacts, entry["artifact"]))
            program.set_inputs(program.random_inputs())
            row[f"amp_{entry['dtype']}"] = program.benchmark(warmup=3, iterations=10,
                                                             cuda_graph=True)
            program.close()
        except Exception as error:  # noqa: BLE001 (reported in the table)
            row[f"amp_{entry['dtype']}_error"] = str(error)[:200]
    for (name, batch), row in rows.items():
        row.update(torch_e2e(name, batch))
    return list(rows.values())


def markdown(gemms, copy_gbs, kernels, e2e, device):
    lines = [f"GPU: {device}; {time.strftime('%Y-%m-%d')}; ratios measured in one run.", "",
             "| GEMM | dtype | amp TFLOP/s | % of 989 peak | torch.matmul TFLOP/s | amp / torch |",
             "|---|---|---|---|---|---|"]
    for r in gemms:
        lines.append(f"| {r['shape']} | {r['dtype']} | {r['amp_tflops']:.0f} | "
                     f"{r['peak_pct']:.0f} % | {r['torch_tflops']:.0f} | {r['vs_torch']:.2f} |")
    lines += ["", f"Device-to-device copy: {copy_gbs:.0f} GB/s.", "",
              "| kernel (8192x8192) | ms | GB/s | % of copy |", "|---|---|---|---|"]
    for r in kernels:
        lines.append(f"| {r['kernel']} | {r['ms']:.3f} | {r['gbs']:.0f} | {r['copy_pct']:.0f} % |")
    if e2e:
        lines += ["", "| model | batch | amp fp16 ms | amp bf16 ms | amp fp32 ms | fp32/fp16 |"
                  " torch fp32 ms | torch autocast ms | torch.compile autocast ms |"
                  " autocast / amp fp16 |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in e2e:
            def cell(key):
                return f"{r[key]:.2f}" if isinstance(r.get(key), float) else "—"
            speedup = (f"{r['amp_fp32'] / r['amp_f16']:.2f}"
                       if "amp_fp32" in r and "amp_f16" in r else "—")
            versus = (f"{r['torch_autocast'] / r['amp_f16']:.2f}"
                      if "torch_autocast" in r and "amp_f16" in r else "—")
            lines.append(f"| {r['model']} | {r['batch']} | {cell('amp_f16')} | "
                         f"{cell('amp_bf16')} | {cell('amp_fp32')} | {speedup} | "
                         f"{cell('torch_fp32')} | {cell('torch_autocast')} | "
                         f"{cell('torch_compile_autocast')} | {versus} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("artifacts")
    parser.add_argument("--out", default="/tmp/amp-gpu-out")
    args = parser.parse_args()
    from amp_gpu import AmpGpuError, Runtime
    try:
        rt = Runtime(os.environ.get("AMP_GPU_LIB", "libamp_gpu.so"))
    except AmpGpuError as error:
        sys.exit(f"no GPU: {error}")
    import torch
    device = f"{torch.cuda.get_device_name()}, driver {platform.release()}"
    with open(os.path.join(args.artifacts, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    workdir = os.path.join(args.out, "gemm")
    os.makedirs(workdir, exist_ok=True)
    gemms = gemm_rows(rt, workdir)
    copy_gbs = copy_bandwidth()
    kernels = kernel_rows(rt, args.artifacts, [e for e in manifest if e["kind"] == "kernel"],
                          copy_gbs)
    e2e = e2e_rows(rt, args.artifacts, [e for e in manifest if e["kind"] == "e2e"])
    table = markdown(gemms, copy_gbs, kernels, e2e, device)
    with open(os.path.join(args.out, "bench.md"), "w", encoding="utf-8") as f:
        f.write(table)
    with open(os.path.join(args.out, "bench.json"), "w", encoding="utf-8") as f:
        json.dump({"device": device, "gemm": gemms, "copy_gbs": copy_gbs,
                   "kernels": kernels, "e2e": e2e}, f, indent=1)
    rt.close()


if __name__ == "__main__":
    main()
