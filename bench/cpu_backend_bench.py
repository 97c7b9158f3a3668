#!/usr/bin/env python3
"""Compare amp-run's fp32 CPU latency with onnxruntime's on exported models.

For each model, in one run and on the same machine:

* **amp-run.** ``amp-run MODEL -i IN.npy ... --compare-to REF.npy ...
  --rtol 1e-3 --atol 1e-4 --benchmark N`` in a fresh process: MLIR's JIT
  with fp32 GEMMs in oneDNN's ``dnnl_sgemm``, convolutions in oneDNN
  primitives and everything else as generated loops (oneDNN threads with
  OpenMP, all cores unless ``OMP_NUM_THREADS`` says otherwise). Reported:
  the median of its ``N`` timed runs (after ``max(1, N/10)`` warm-up runs,
  timed inside amp-run around the compiled function only) and its compile
  time (reading and importing the ONNX file, lowering and JIT compilation;
  not the process start).
* **onnxruntime.** ``InferenceSession(MODEL,
  providers=["CPUExecutionProvider"])`` in this process with the default
  session options (all graph optimisations, ``intra_op_num_threads`` 0 =
  one thread per physical core; ``--threads N`` sets it, and amp-run's
  ``OMP_NUM_THREADS``, to N), ``max(3, N/10)`` warm-up runs, then the
  median of ``N`` timed ``session.run`` calls on the same inputs. A second
  session with ``graph_optimization_level=ORT_DISABLE_ALL`` ("no fusion")
  is timed the same way: the gap between the two is what onnxruntime gets
  from its graph rewrites (fused Conv+BN+ReLU, attention, GELU,
  LayerNorm, ...).
* **Correctness.** The outputs of the default onnxruntime session are the
  reference: amp-run compares its outputs with them (``--compare-to``) and
  prints the max abs error and the max rel error (``|got - ref| / |ref|``
  over the elements with ``ref != 0``; large when some reference values
  are near 0) per output; the table shows the worst over the outputs.
  "check" is amp-run's verdict: ok when every element is within
  ``atol + rtol * |ref|``.
* **Low precision.** ``--amp-types fp32,f16,bf16`` also runs amp-run with
  ``--amp-type f16`` / ``bf16`` on the same inputs (checked against the
  same fp32 reference at rtol/atol 5e-2, which catches broken outputs, not
  rounding) and reports each against amp-run's fp32 time (goal: at most
  ``1.2x``) and onnxruntime's fp32 time. Models are exported with
  ``--fp16-range`` (BatchNorm statistics calibrated, so that random-weight
  activations stay inside fp16's range; the weights, and so the fp32 cost,
  are unchanged).
* **Goal** (issue 14): the geometric mean of amp/ORT over the models at
  most ``1.0`` in fp32, and no model above ``1.5x``; a model whose outputs
  FAIL the check does not meet it. The summary under the table says both.

Inputs are seeded random: floats from a standard normal, integers in
``[0, vocab)`` where ``vocab`` is the first dimension of the initializer a
``Gather`` on that input indexes (100 when there is none). Models come from
``test/models/amp_testmodels/export_torch.py`` (run with Debian's
``/usr/bin/python3`` and torch 1.13; random weights, batch 1, static shapes)
at opset 17 in ``--models-dir``; they are reused when that folder's
``manifest.json`` lists them and the file exists, and exported otherwise.
``bert_encoder`` is the exporter's BERT-style encoder: two
``nn.TransformerEncoderLayer`` (d_model 256, 4 heads, FFN 1024, GELU) on a
float input of shape 1x32x256.

A model that amp-run cannot compile or run gets a FAILED row with the first
line of its error. Models run one after another (never in parallel). Other
processes on the machine skew both tools, amp-run's OpenMP threads most (a
concurrent compile can make its median several times slower): the load
average is printed before and after, and under the table the average number
of cores other processes used while each model was timed (``/proc/stat``
busy time minus this process's and its children's), with a warning above
0.1 core. Needs ``onnx``, ``onnxruntime`` and ``numpy``.
Prints a markdown table; ``--json`` also writes the raw numbers.

Example::

    python3 bench/cpu_backend_bench.py --models resnet50,bert_encoder --runs 20
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORT_SCRIPT = os.path.join(REPO_ROOT, "test", "models", "amp_testmodels", "export_torch.py")
DEFAULT_AMP_RUN = os.path.join(REPO_ROOT, "build", "bin", "amp-run")
DEFAULT_MODELS = ("resnet50", "bert_encoder")
DEFAULT_MODELS_DIR = "/tmp/amp-bench-models/fp16-range"
TORCH_PYTHON = "/usr/bin/python3"
OPSET = 17
GOAL_RATIO = 1.5
GOAL_GEOMEAN = 1.0
GOAL_LOW_PRECISION = 1.2
RTOL, ATOL = 1e-3, 1e-4
LOW_PRECISION_TOLERANCE = 5e-2
AMP_TYPES = ("fp32", "f16", "bf16")

NUMPY_TYPES = {
    TensorProto.FLOAT: np.float32,
    TensorProto.DOUBLE: np.float64,
    TensorProto.FLOAT16: np.float16,
    TensorProto.INT64: np.int64,
    TensorProto.INT32: np.int32,
    TensorProto.BOOL: np.bool_,
}


# --------------------------------------------------------------------------
# Machine and models
# --------------------------------------------------------------------------


def machine_info(threads=0):
    """Return lines describing the CPU, the thread settings and the tools."""
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
                                         "avx512_vnni", "amx_tile") if f in have)
    except OSError:
        pass
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        per_core = re.search(r"Thread\(s\) per core:\s*(\d+)", lscpu)
        per_socket = re.search(r"Core\(s\) per socket:\s*(\d+)", lscpu)
        sockets = re.search(r"Socket\(s\):\s*(\d+)", lscpu)
        topology = (f", {per_socket.group(1)} core(s)/socket x {sockets.group(1)} "
                    f"socket(s), {per_core.group(1)} thread(s)/core"
                    if per_core and per_socket and sockets else "")
    except OSError:
        topology = ""
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"CPU: {cpu}; nproc {nproc}{topology}; {flags}",
        f"onnxruntime {ort.__version__} (CPUExecutionProvider, intra_op_num_threads "
        f"{threads if threads else 'default = one per physical core'}), numpy "
        f"{np.__version__}, onnx {onnx.__version__}, python {platform.python_version()}",
        f"OMP_NUM_THREADS="
        f"{threads if threads else os.environ.get('OMP_NUM_THREADS', '(unset)')} "
        "(amp-run's oneDNN threads)",
    ]


def load_average():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


class CpuMeter:
    """CPU time the rest of the machine used while a block ran.

    System-wide busy time from ``/proc/stat`` minus this process's and its
    waited-for children's CPU time (``os.times``), per second of wall time:
    the average number of cores other processes took (a build, tests) while
    the tools were timed. Steal time (a VM's host taking the CPU) is counted
    separately.
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
        # user nice system idle iowait irq softirq steal ...
        steal = fields[7] if len(fields) > 7 else 0
        busy = sum(fields[:8]) - fields[3] - fields[4] - steal
        mine = own.user + own.system + own.children_user + own.children_system
        return time.perf_counter(), busy / self.ticks, steal / self.ticks, mine

    def stop(self):
        """Return ``(other cores, steal cores)`` averaged since construction."""
        end = self._sample()
        if self.start is None or end is None or end[0] <= self.start[0]:
            return None, None
        wall = end[0] - self.start[0]
        other = (end[1] - self.start[1]) - (end[3] - self.start[3])
        return max(0.0, other / wall), (end[2] - self.start[2]) / wall


def ensure_models(names, models_dir):
    """Return ``{name: path or error}``, exporting the models not there yet."""
    manifest_path = os.path.join(models_dir, "manifest.json")

    def present(name):
        if not os.path.exists(manifest_path):
            return False
        with open(manifest_path) as f:
            entries = json.load(f)
        return (name in entries and entries[name].get("opset") == OPSET
                and os.path.isfile(os.path.join(models_dir, f"{name}.onnx")))

    errors = {}
    for name in names:
        if present(name):
            continue
        # One exporter process per model, so that one failure (or an unknown
        # name) leaves the others exported.
        os.makedirs(models_dir, exist_ok=True)
        print(f"exporting {name} into {models_dir} with {TORCH_PYTHON} ...",
              file=sys.stderr, flush=True)
        start = time.perf_counter()
        proc = subprocess.run([TORCH_PYTHON, EXPORT_SCRIPT, "--out", models_dir,
                               "--opset", str(OPSET), "--models", name,
                               "--fp16-range"],
                              capture_output=True, text=True)
        print(f"export of {name} took {time.perf_counter() - start:.1f} s",
              file=sys.stderr, flush=True)
        log = [l for l in (proc.stdout + proc.stderr).splitlines() if l.strip()]
        lines = ([l for l in log if l.startswith(name) and ("FAILED" in l or "SKIPPED" in l)]
                 or [l for l in log if "error" in l.lower()] or log[-1:])
        errors[name] = lines[0].strip() if lines else f"exit status {proc.returncode}"
    result = {}
    for name in names:
        if present(name):
            result[name] = os.path.join(models_dir, f"{name}.onnx")
        else:
            result[name] = RuntimeError("export failed: " + errors.get(name, "?"))
    return result


def make_inputs(model, seed):
    """Seeded random inputs for the graph inputs that are not initializers."""
    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    rng = np.random.default_rng(seed)
    inputs = {}
    for value in graph.input:
        if value.name in initializers:
            continue
        ttype = value.type.tensor_type
        dtype = NUMPY_TYPES.get(ttype.elem_type)
        if dtype is None:
            raise RuntimeError(f"input {value.name}: unsupported element type "
                               f"{TensorProto.DataType.Name(ttype.elem_type)}")
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1
                 for d in ttype.shape.dim]
        if np.issubdtype(dtype, np.floating):
            array = rng.standard_normal(shape).astype(dtype)
        elif dtype is np.bool_:
            array = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            vocab = 100
            for node in graph.node:
                if (node.op_type == "Gather" and len(node.input) > 1
                        and node.input[1] == value.name and node.input[0] in initializers):
                    vocab = initializers[node.input[0]].dims[0]
                    break
            array = rng.integers(0, vocab, shape).astype(dtype)
        inputs[value.name] = array
    return inputs


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------


def time_ort(path, inputs, runs, optimize, threads=0):
    """Return ``(median ms, min ms, outputs, names)`` of onnxruntime on ``inputs``."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    outputs = session.run(None, inputs)
    for _ in range(max(3, runs // 10)):
        session.run(None, inputs)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times), outputs, names


BENCH_RE = re.compile(r"benchmark: (\d+) runs after (\d+) warm-up, median ([\d.]+) ms, "
                      r"min ([\d.]+) ms; compile ([\d.]+) s")
CHECK_RE = re.compile(r"^(.*): (ok|FAIL) max abs err (\S+), max rel err ([^,\s]+)", re.M)


def first_error_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else "(no output)"


def run_amp(amp_run, path, input_files, ref_files, runs, timeout, threads=0,
            amp_type="fp32"):
    """Run amp-run once with --compare-to and --benchmark; return a result dict."""
    cmd = [amp_run, path]
    for f in input_files:
        cmd += ["-i", f]
    for f in ref_files:
        cmd += ["--compare-to", f]
    rtol, atol = (RTOL, ATOL) if amp_type == "fp32" else (LOW_PRECISION_TOLERANCE,) * 2
    cmd += [f"--rtol={rtol}", f"--atol={atol}", f"--benchmark={runs}"]
    if amp_type != "fp32":
        cmd += ["--amp-type", amp_type]
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    for attempt in range(3):
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env=env)
            break
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout} s", "command": " ".join(cmd)}
        except OSError as err:  # E.g. the binary is being relinked right now.
            if attempt == 2:
                return {"error": f"cannot start amp-run: {err}", "command": " ".join(cmd)}
            time.sleep(10)
    wall = time.perf_counter() - start
    result = {"command": " ".join(cmd), "returncode": proc.returncode,
              "wall_s": round(wall, 2), "stdout": proc.stdout, "stderr": proc.stderr[-4000:]}
    bench = BENCH_RE.search(proc.stdout)
    checks = CHECK_RE.findall(proc.stdout)
    fails = re.findall(r"^(.*): FAIL (.*)$", proc.stdout, re.M)
    if not bench:
        text = proc.stderr if proc.stderr.strip() else proc.stdout
        if proc.returncode < 0:
            text = f"killed by signal {-proc.returncode}\n" + text
        result["error"] = first_error_line(text)
        return result
    result.update(median_ms=float(bench.group(3)), min_ms=float(bench.group(4)),
                  warmup=int(bench.group(2)), compile_s=float(bench.group(5)))
    if checks:
        result["max_abs"] = max(float(c[2]) for c in checks)
        result["max_rel"] = max(float(c[3]) for c in checks)
    result["check"] = "FAIL" if fails else ("ok" if checks else "?")
    if fails:
        result["check_detail"] = [f"{n}: FAIL {d}" for n, d in fails]
    return result


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def bench_model(name, path, args, work):
    row = {"model": name}
    if isinstance(path, Exception):
        row["error"] = str(path)
        return row
    model = onnx.load(path, load_external_data=False)
    inputs = make_inputs(model, args.seed)
    del model
    row["inputs"] = {k: f"{v.dtype}{list(v.shape)}" for k, v in inputs.items()}

    row["load_average_before"] = load_average()
    print(f"[{name}] onnxruntime ... (load average {row['load_average_before']})",
          file=sys.stderr, flush=True)
    meter = CpuMeter()
    med, low, outputs, out_names = time_ort(path, inputs, args.runs, True, args.threads)
    row["outputs"] = out_names
    row.update(ort_ms=med, ort_min_ms=low)
    med, low, _, _ = time_ort(path, inputs, args.runs, False, args.threads)
    row.update(ort_nofusion_ms=med, ort_nofusion_min_ms=low)

    model_work = os.path.join(work, name)
    os.makedirs(model_work, exist_ok=True)
    input_files, ref_files = [], []
    for i, (key, array) in enumerate(inputs.items()):
        f = os.path.join(model_work, f"input_{i}.npy")
        np.save(f, array)
        input_files.append(f)
    for i, array in enumerate(outputs):
        f = os.path.join(model_work, f"ref_{i}.npy")
        np.save(f, np.ascontiguousarray(array))
        ref_files.append(f)

    print(f"[{name}] amp-run ...", file=sys.stderr, flush=True)
    amp = run_amp(args.amp_run, path, input_files, ref_files, args.runs, args.timeout,
                  args.threads)
    row["amp"] = amp
    row["low_precision"] = {}
    for amp_type in args.amp_types:
        if amp_type == "fp32":
            continue
        print(f"[{name}] amp-run --amp-type {amp_type} ...", file=sys.stderr, flush=True)
        low = run_amp(args.amp_run, path, input_files, ref_files, args.runs, args.timeout,
                      args.threads, amp_type)
        row["low_precision"][amp_type] = low
        if "error" in low:
            print(f"[{name}] amp-run {amp_type} FAILED: {low['error']}", file=sys.stderr,
                  flush=True)
    row["other_cores"], row["steal_cores"] = meter.stop()
    if "error" in amp:
        row["error"] = amp["error"]
        print(f"[{name}] amp-run FAILED: {amp['error']}", file=sys.stderr, flush=True)
    else:
        row["ratio"] = amp["median_ms"] / row["ort_ms"]
        for line in amp.get("check_detail", []):
            print(f"[{name}] {line}", file=sys.stderr, flush=True)
    return row


def fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def fmt_ms(value):
    """Milliseconds: 3 decimals below 1 ms, 2 above."""
    return "n/a" if value is None else format(value, ".3f" if value < 1 else ".2f")


def low_precision_cells(row, amp_types):
    """Per extra precision: ms, ratio to amp fp32, ratio to ORT, check."""
    cells = []
    for amp_type in amp_types:
        if amp_type == "fp32":
            continue
        low = row.get("low_precision", {}).get(amp_type)
        if not low or "error" in low:
            message = (low or {}).get("error", "not run").replace("|", "\\|")[:80]
            cells += [f"FAILED: {message}", "n/a", "n/a", "n/a"]
            continue
        fp32 = row.get("amp", {}).get("median_ms")
        cells += [fmt_ms(low["median_ms"]),
                  fmt(low["median_ms"] / fp32 if fp32 else None, ".2f"),
                  fmt(low["median_ms"] / row["ort_ms"] if row.get("ort_ms") else None, ".2f"),
                  low["check"]]
    return cells


def summary_lines(rows, amp_types):
    """The geometric mean and worst amp/ORT ratio, against the goals."""
    ratios = [r["ratio"] for r in rows if "ratio" in r and r["amp"]["check"] == "ok"]
    failed = [r["model"] for r in rows if "ratio" not in r or r["amp"]["check"] != "ok"]
    lines = []
    if ratios:
        geomean = float(np.exp(np.mean(np.log(ratios))))
        worst = max((r for r in rows if r.get("ratio") in ratios), key=lambda r: r["ratio"])
        lines.append(
            f"fp32 amp/ORT over {len(ratios)} model(s): geometric mean **{geomean:.2f}** "
            f"(goal <= {GOAL_GEOMEAN:g}: {'met' if geomean <= GOAL_GEOMEAN else 'not met'}), "
            f"worst {worst['ratio']:.2f} ({worst['model']}; goal <= {GOAL_RATIO:g} for every "
            f"model: {'met' if worst['ratio'] <= GOAL_RATIO and not failed else 'not met'}).")
    if failed:
        lines.append("Not counted (failed or outputs FAIL): " + ", ".join(failed) + ".")
    for amp_type in amp_types:
        if amp_type == "fp32":
            continue
        slow = [r["low_precision"][amp_type]["median_ms"] / r["amp"]["median_ms"]
                for r in rows
                if "ratio" in r and "error" not in r.get("low_precision", {}).get(amp_type,
                                                                                 {"error": 1})]
        if slow:
            geomean = float(np.exp(np.mean(np.log(slow))))
            lines.append(
                f"{amp_type}/fp32 (amp-run): geometric mean {geomean:.2f}, worst {max(slow):.2f} "
                f"(goal <= {GOAL_LOW_PRECISION:g} for every model: "
                f"{'met' if max(slow) <= GOAL_LOW_PRECISION else 'not met'}).")
    return lines


def print_table(rows, runs, threads=0, amp_types=("fp32",)):
    extra = [t for t in amp_types if t != "fp32"]
    header = (f"| model | amp-run median ms | ORT median ms | ratio amp/ORT | ORT no-fusion ms "
              f"| amp compile s | max abs err | max rel err | check | goal (<= {GOAL_RATIO:g}x) met? |")
    for amp_type in extra:
        header += f" amp {amp_type} ms | {amp_type}/fp32 | {amp_type}/ORT | {amp_type} check |"
    print(header)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|" + "---:|---:|---:|---|" * len(extra))
    for row in rows:
        ort_ms = fmt_ms(row.get("ort_ms"))
        nofusion = fmt_ms(row.get("ort_nofusion_ms"))
        if "error" in row:
            message = row["error"].replace("|", "\\|")
            print(f"| {row['model']} | FAILED: {message} | {ort_ms} | n/a | {nofusion} "
                  "| n/a | n/a | n/a | n/a | no |" + " n/a |" * (4 * len(extra)))
            continue
        amp = row["amp"]
        met = "yes" if row["ratio"] <= GOAL_RATIO else "no"
        if amp["check"] != "ok":
            met = "no (outputs FAIL)" if amp["check"] == "FAIL" else met + " (unchecked)"
        print(f"| {row['model']} | {fmt_ms(amp['median_ms'])} | {ort_ms} | {row['ratio']:.2f} "
              f"| {nofusion} | {amp['compile_s']:.2f} | {fmt(amp.get('max_abs'), '.3g')} "
              f"| {fmt(amp.get('max_rel'), '.3g')} | {amp['check']} | {met} |"
              + "".join(f" {c} |" for c in low_precision_cells(row, amp_types)))
    print()
    for line in summary_lines(rows, amp_types):
        print(line)
        print()
    busy = [f"{r['model']} {r['other_cores']:.2f}" + (f" (steal {r['steal_cores']:.2f})"
                                                      if r.get("steal_cores") else "")
            for r in rows if r.get("other_cores") is not None]
    if busy:
        print("Cores used by other processes while each model was timed "
              f"(of {os.cpu_count()}): " + ", ".join(busy) + ".")
        if any(r["other_cores"] > 0.1 or (r.get("steal_cores") or 0) > 0.1
               for r in rows if r.get("other_cores") is not None):
            print("WARNING: the machine was busy during the run; the timings are skewed "
                  "(amp-run's OpenMP threads suffer most). Rerun on an idle machine.")
    print(f"Medians of {runs} runs (batch 1, "
          f"{f'{threads} thread(s)' if threads else 'default threads'}). ORT = onnxruntime CPUExecutionProvider, "
          "default session options; no-fusion = ORT_DISABLE_ALL. Errors: amp-run vs ORT's "
          f"outputs, check at rtol {RTOL:g}, atol {ATOL:g}"
          + (f" (f16/bf16: {LOW_PRECISION_TOLERANCE:g} against the same fp32 reference)"
             if extra else "") + ".")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20,
                        help="timed runs per tool and model (default 20)")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help="comma-separated export_torch.py model names, or 'all' "
                             "(the 15 architectures of export_torch.py --list) "
                             f"(default {','.join(DEFAULT_MODELS)})")
    parser.add_argument("--amp-types", default="fp32",
                        help="amp-run precisions, comma-separated from fp32,f16,bf16 "
                             "(default fp32; fp32 is always run: the ratios need it)")
    parser.add_argument("--models-dir", default=DEFAULT_MODELS_DIR,
                        help=f"where exported models are cached (default {DEFAULT_MODELS_DIR})")
    parser.add_argument("--amp-run", default=DEFAULT_AMP_RUN,
                        help="amp-run binary (default build/bin/amp-run)")
    parser.add_argument("--seed", type=int, default=0, help="input seed (default 0)")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds one amp-run call may take (default 1800)")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads for both tools: onnxruntime's intra_op_num_threads "
                             "and amp-run's OMP_NUM_THREADS (default 0: each tool's "
                             "default, i.e. all cores)")
    parser.add_argument("--json", help="also write the raw results to this file")
    args = parser.parse_args(argv)
    if args.threads < 0:
        parser.error("--threads must be >= 0")
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    args.models = [m for m in args.models.split(",") if m]
    if args.models == ["all"]:
        listed = subprocess.run([TORCH_PYTHON, EXPORT_SCRIPT, "--list"], capture_output=True,
                                text=True)
        if listed.returncode != 0:
            parser.error(f"--models all: cannot list the models with {TORCH_PYTHON}: "
                         + first_error_line(listed.stderr))
        args.models = listed.stdout.split()
    args.amp_types = [t for t in args.amp_types.split(",") if t]
    unknown = sorted(set(args.amp_types) - set(AMP_TYPES))
    if unknown:
        parser.error(f"--amp-types: unknown {', '.join(unknown)} (choose from "
                     f"{','.join(AMP_TYPES)})")
    if "fp32" not in args.amp_types:
        args.amp_types.insert(0, "fp32")
    found = shutil.which(args.amp_run) if os.sep not in args.amp_run else args.amp_run
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        parser.error(f"amp-run not found or not executable at '{args.amp_run}' "
                     "(build it: it lands in build/bin/amp-run, or pass --amp-run PATH)")
    args.amp_run = os.path.abspath(found)
    return args


def main(argv=None):
    args = parse_args(argv)
    for line in machine_info(args.threads):
        print(line)
    print(f"amp-run: {args.amp_run}")
    print(f"load average before: {load_average()}")
    print(flush=True)

    paths = ensure_models(args.models, args.models_dir)
    rows = []
    with tempfile.TemporaryDirectory(prefix="amp-cpu-bench-") as work:
        for name in args.models:
            try:
                rows.append(bench_model(name, paths[name], args, work))
            except Exception as err:  # Report and keep going with the others.
                rows.append({"model": name, "error": f"{type(err).__name__}: {err}".splitlines()[0]})
                print(f"[{name}] FAILED: {rows[-1]['error']}", file=sys.stderr, flush=True)

    print(f"load average after: {load_average()}")
    print()
    print_table(rows, args.runs, args.threads, args.amp_types)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine_info(args.threads), "threads": args.threads,
                       "runs": args.runs, "rows": rows}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
