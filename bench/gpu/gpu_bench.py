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

Every artifact's output is checked before its timing counts: the GEMMs
against torch.matmul in fp32 (TF32 off) on the same rounded inputs, the
kernels against torch's Relu / cast / softmax / layer_norm in fp32, the
end-to-end models (random weights: no reference exists) for finite,
non-constant outputs. A wrong result, or an artifact that fails to load or
run, is listed under "Failures" and the script exits 1.

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


# Output checks (relative L2 for GEMMs, elementwise rtol/atol for kernels).
# fp32 accumulation with fp32 output: the error is the inputs' rounding,
# already in the reference; a transposed or misstrided GEMM is off by ~1.
GEMM_REL_L2 = {"f16": 1e-3, "bf16": 1e-3, "f32": 1e-3}
KERNEL_TOLERANCE = (1e-2, 1e-3)  # fp16 outputs vs an fp32 reference (rtol, atol)


def bf16_bits(x):
    """float32 -> bfloat16 bits (round to nearest even), as uint16."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def rounded_normal(rng, shape, dtype):
    """Standard normal values in ``dtype`` (bf16 as bits) and their exact fp32 values."""
    x = rng.standard_normal(shape).astype(np.float32)
    if dtype == "bf16":
        bits = bf16_bits(x)
        return bits, from_bf16_bits(bits)
    if dtype == "f16":
        x = x.astype(np.float16)
    return x, x.astype(np.float32)


def relative_l2(actual, expected):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return float("inf")
    if not np.all(np.isfinite(actual)):
        return float("nan")
    return float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), 1e-30))


def check_gemm(actual, expected, dtype):
    """None when amp's GEMM output matches the reference, else what is wrong."""
    error = relative_l2(actual, expected)
    bound = GEMM_REL_L2[dtype]
    if not error <= bound:  # NaN fails too
        return f"relative L2 error {error:.3g} > {bound:g}"
    return None


def check_elementwise(actual, expected, rtol=KERNEL_TOLERANCE[0], atol=KERNEL_TOLERANCE[1]):
    """None when |actual - expected| <= atol + rtol |expected| everywhere."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    excess = np.abs(actual - expected) - (atol + rtol * np.abs(expected))
    bad = ~(excess <= 0)  # NaN fails
    if bad.any():
        index = np.unravel_index(int(np.argmax(np.where(bad, 1, 0))), actual.shape)
        return (f"{int(bad.sum())} elements out of tolerance, first at {index}: "
                f"{actual[index]:.6g} vs {expected[index]:.6g}")
    return None


def check_plausible(outputs):
    """For outputs without a reference: finite and not constant."""
    for i, out in enumerate(outputs):
        values = np.asarray(out, dtype=np.float64)
        if not np.all(np.isfinite(values)):
            return f"output {i}: {int((~np.isfinite(values)).sum())} non-finite values"
        if values.size > 1 and np.ptp(values) == 0:
            return f"output {i}: every value is {values.flat[0]:.6g}"
    return None


def kernel_reference(name, x32):
    """torch's fp32 result of a ``kernel`` artifact (prepare.kernel_models)."""
    import torch
    x = torch.from_numpy(x32).cuda()
    if name == "relu":
        y = torch.relu(x)
    elif name == "cast":
        y = x.half().float()
    elif name == "softmax":
        y = torch.softmax(x, dim=-1)
    elif name == "layernorm":  # scale 1, bias 0, epsilon 1e-5 (ONNX default)
        y = torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)
    else:
        raise KeyError(f"no reference for kernel {name!r}")
    return y.cpu().numpy()


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


def gemm_rows(rt, workdir, failures):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    make = os.path.join(os.environ.get("AMP_GPU_BIN", "."), "amp-gpu-make-gemm")
    rows = []
    for dtype in ("f16", "bf16"):
        torch_type = torch.float16 if dtype == "f16" else torch.bfloat16
        for m, n, k in GEMM_SHAPES:
            label = f"GEMM {dtype} {m}x{n}x{k}"
            path = os.path.join(workdir, f"gemm_{dtype}_{m}x{n}x{k}.ampgpu")
            try:
                subprocess.run([make, "--m", str(m), "--n", str(n), "--k", str(k),
                                "--dtype", dtype, "-o", path], check=True)
                program = rt.load(path)
                rng = np.random.default_rng(0)
                stored, exact = zip(*(rounded_normal(rng, info["shape"], dtype)
                                      for info in program.inputs))
                actual = program.run(list(stored))[0]
                a, b = (torch.from_numpy(x).cuda() for x in exact)
                expected = torch.matmul(a, b).cpu().numpy()  # [batch, m, k] x [batch, k, n]
                del a, b
                problem = check_gemm(actual, expected, dtype)
                if problem:
                    failures.append(f"{label}: {problem}")
                amp_ms = program.benchmark(warmup=10, iterations=50)
                program.close()
            except Exception as error:  # noqa: BLE001 (a failure of the run)
                failures.append(f"{label}: {type(error).__name__}: {error}")
                continue
            a = torch.randn(m, k, device="cuda", dtype=torch_type)
            b = torch.randn(k, n, device="cuda", dtype=torch_type)
            torch_ms = torch_time(lambda: torch.matmul(a, b), iterations=50)
            flops = 2.0 * m * n * k
            amp_tf, torch_tf = flops / amp_ms / 1e9, flops / torch_ms / 1e9
            rows.append({"dtype": dtype, "shape": f"{m}x{n}x{k}", "amp_tflops": amp_tf,
                         "peak_pct": 100 * amp_tf / PEAK_TFLOPS, "torch_tflops": torch_tf,
                         "vs_torch": amp_tf / torch_tf, "checked": problem is None})
    return rows


def copy_bandwidth():
    import torch
    x = torch.empty(1 << 29, dtype=torch.uint8, device="cuda")  # 512 MiB
    y = torch.empty_like(x)
    ms = torch_time(lambda: y.copy_(x))
    return 2 * x.numel() / ms / 1e6  # GB/s (read + write)


def storage_name(code):
    """f16 / bf16 / f32 for an amp_gpu dtype code."""
    from amp_gpu import BF16, DTYPES
    if code == BF16:
        return "bf16"
    return "f16" if DTYPES[code] == np.float16 else "f32"


def kernel_rows(rt, artifacts, entries, copy_gbs, failures):
    rows = []
    for entry in entries:
        label = f"kernel {entry['name']}"
        try:
            program = rt.load(os.path.join(artifacts, entry["artifact"]))
            rng = np.random.default_rng(0)
            info = program.inputs[0]
            dtype = storage_name(info["dtype"])
            stored, exact = rounded_normal(rng, info["shape"], dtype)
            actual = program.run([stored])[0]
            problem = check_elementwise(actual, kernel_reference(entry["name"], exact))
            if problem:
                failures.append(f"{label}: {problem}")
            ms = program.benchmark(warmup=5, iterations=20)
            program.close()
        except Exception as error:  # noqa: BLE001 (a failure of the run)
            failures.append(f"{label}: {type(error).__name__}: {error}")
            continue
        gbs = entry["bytes"] / ms / 1e6
        rows.append({"kernel": entry["name"], "ms": ms, "gbs": gbs,
                     "copy_pct": 100 * gbs / copy_gbs, "checked": problem is None})
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


def e2e_rows(rt, artifacts, entries, failures):
    rows = {}
    for entry in entries:
        key = (entry["name"], entry["batch"])
        row = rows.setdefault(key, {"model": entry["name"], "batch": entry["batch"]})
        label = f"{entry['name']} batch {entry['batch']} {entry['dtype']}"
        try:
            program = rt.load(os.path.join(artifacts, entry["artifact"]))
            problem = check_plausible(program.run(program.random_inputs()))
            if problem:
                failures.append(f"{label}: {problem}")
            row[f"amp_{entry['dtype']}"] = program.benchmark(warmup=3, iterations=10,
                                                             cuda_graph=True)
            program.close()
        except Exception as error:  # noqa: BLE001 (a failure of the run)
            row[f"amp_{entry['dtype']}_error"] = str(error)[:200]
            failures.append(f"{label}: {type(error).__name__}: {error}")
    for (name, batch), row in rows.items():
        row.update(torch_e2e(name, batch))
    return list(rows.values())


def markdown(gemms, copy_gbs, kernels, e2e, device, failures):
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
    lines += ["", f"Failures (wrong results, load or run errors): {len(failures)}"]
    lines += [f"- {f}" for f in failures]
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
    failures = []
    gemms = gemm_rows(rt, workdir, failures)
    copy_gbs = copy_bandwidth()
    kernels = kernel_rows(rt, args.artifacts, [e for e in manifest if e["kind"] == "kernel"],
                          copy_gbs, failures)
    e2e = e2e_rows(rt, args.artifacts, [e for e in manifest if e["kind"] == "e2e"], failures)
    table = markdown(gemms, copy_gbs, kernels, e2e, device, failures)
    with open(os.path.join(args.out, "bench.md"), "w", encoding="utf-8") as f:
        f.write(table)
    with open(os.path.join(args.out, "bench.json"), "w", encoding="utf-8") as f:
        json.dump({"device": device, "gemm": gemms, "copy_gbs": copy_gbs,
                   "kernels": kernels, "e2e": e2e, "failures": failures}, f, indent=1)
    rt.close()
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
