#!/usr/bin/env python3
"""Compare amp's fp16 autocast with onnxconverter-common on exported models.

For each model, in one run:

* **Conversion time.** amp: ``amp-opt MODEL -o OUT.onnx`` end to end in a
  fresh process (import, cleanup, amp-autocast to fp16 with the graph's input
  and output types kept, ONNX writing). The peer:
  ``onnxconverter_common.float16.convert_float_to_float16(model,
  keep_io_types=True)``, timed twice: in this process as ``onnx.load`` +
  convert + ``onnx.save`` (no Python start-up or imports, which favours the
  peer; the speedup and the goal use this one), and as a fresh ``python3``
  process doing the same (like amp's). Medians of ``--runs``; speedup = peer
  time / amp time.
* **Output error.** onnxruntime (CPU provider) runs the fp32 model, amp's
  model and the peer's model on the same ``--inputs`` seeded random inputs
  (floats from a standard normal, integers in [0, 100); seeds ``--seed``,
  ``--seed``+1, ...). Reported: the max abs error over all outputs and
  inputs, that divided by max|fp32 output|, and the RMS relative error
  ||out - ref|| / ||ref|| (steadier: on these random-weight models the max
  abs error moves by up to ~10% when a few weights change by one fp16 ulp).
  A model that fails to load or run in onnxruntime is reported as such.
  onnxruntime's CPU provider has few fp16 kernels: it computes fp16 nodes
  in fp32 behind Casts and removes the Cast pairs between them, so its error
  mostly reflects the rounding of weights and graph inputs. The relative
  errors are therefore also measured, on the first input only, with
  ``onnx.reference.ReferenceEvaluator`` (numpy), which computes and stores
  every fp16 tensor in fp16 (``--no-reference`` skips it; one run takes
  ~25 s for ResNet-50 and ~110 s for ViT-B/16).
* **FLOPs in fp16.** For amp, the report's ``flops_low_precision_share``
  (``--amp-report``, written by one extra untimed run). For both outputs, an
  estimate from the ONNX files with the cost model of amp's report: after
  ``onnx.shape_inference.infer_shapes``, MatMul/Gemm count 2*M*N*K, Conv
  2*output elements*(C_in/group)*kernel, ConvTranspose 2*input
  elements*(C_out/group)*kernel, every other node its output elements
  (unknown dimensions count as 1). Only top-level nodes whose first output
  is a float tensor count; Cast, Identity and Constant nodes do not. A node
  is fp16 if its first output is float16.
* **Casts** in each output (all graphs, subgraphs included), and its size.

Models come from ``test/models/amp_testmodels/export_torch.py`` (run with
Debian's ``/usr/bin/python3`` and torch) at opset 17 in ``--model-dir``.
They are reused when ``manifest.json`` lists them and the files exist, and
exported otherwise (resnet18 stands in for resnet50 if that export fails).
Their weights are random. fp32 weights of rank >= 2 that are all zeros
(torchvision zero-initialises ViT's classifier head, which makes its output
0, and its class token) are replaced by seeded N(0, 0.02^2) values in a copy
that both tools convert.

Needs the ``onnx``, ``onnxruntime``, ``numpy`` and ``onnxconverter-common``
PyPI packages (``python3 -m pip install onnxconverter-common``). Prints
markdown tables; ``--json`` also writes the raw numbers.

Example::

    python3 bench/autocast_bench.py --models bert_encoder,gpt2_decoder --json /tmp/autocast.json
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

try:
    from onnxconverter_common import float16 as peer_float16
    import onnxconverter_common
except ImportError:
    sys.exit("autocast_bench: the peer onnxconverter-common is missing; install it with\n"
             "    python3 -m pip install onnxconverter-common")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORT_SCRIPT = os.path.join(REPO_ROOT, "test", "models", "amp_testmodels", "export_torch.py")
DEFAULT_AMP_OPT = os.path.join(REPO_ROOT, "build", "bin", "amp-opt")
DEFAULT_MODELS = ("resnet50", "mobilenet_v2", "efficientnet_b0", "vit_b_16",
                  "bert_encoder", "gpt2_decoder")
DEFAULT_MODEL_DIR = "/tmp/amp-models/opset17"
FALLBACKS = {"resnet50": "resnet18"}
GOAL_SPEEDUP = 10.0

FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE,
               TensorProto.BFLOAT16}
NO_COMPUTE = {"Cast", "Identity", "Constant"}


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------


def resolve_amp_opt(path):
    """Return an executable path for ``path`` or exit with a clear message."""
    found = shutil.which(path) if os.sep not in path else path
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        sys.exit(f"autocast_bench: amp-opt not found or not executable at '{path}'.\n"
                 "Build it first (it lands in build/bin/amp-opt) or pass --amp-opt PATH.")
    return os.path.abspath(found)


def ensure_models(names, model_dir, torch_python):
    """Return ``{name: path}``, exporting the models that are not there yet."""
    def present(name):
        manifest = os.path.join(model_dir, "manifest.json")
        if not os.path.exists(manifest):
            return False
        with open(manifest) as f:
            entries = json.load(f)
        return name in entries and os.path.isfile(os.path.join(model_dir, f"{name}.onnx"))

    result = {}
    for name in names:
        for candidate in (name, FALLBACKS.get(name)):
            if candidate is None:
                continue
            if not present(candidate):
                print(f"exporting {candidate} into {model_dir} with {torch_python} ...",
                      file=sys.stderr, flush=True)
                subprocess.run([torch_python, EXPORT_SCRIPT, "--out", model_dir,
                                "--opset", "17", "--models", candidate])
            if present(candidate):
                result[candidate] = os.path.join(model_dir, f"{candidate}.onnx")
                break
            print(f"autocast_bench: no {candidate} model; skipping it", file=sys.stderr)
    return result


def prepare_model(name, path, work, seed):
    """Return ``(path, count)``: a copy with all-zero weight tensors randomised.

    ``path`` itself when the model has none.
    """
    model = onnx.load(path)
    rng = np.random.default_rng(seed)
    count = 0
    for i, init in enumerate(model.graph.initializer):
        if init.data_type != TensorProto.FLOAT or len(init.dims) < 2:
            continue
        array = numpy_helper.to_array(init)
        if array.size and not np.any(array):
            values = (rng.standard_normal(array.shape) * 0.02).astype(np.float32)
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(values, init.name))
            count += 1
    if not count:
        return path, 0
    copy = os.path.join(work, f"{name}.fp32.onnx")
    onnx.save(model, copy)
    return copy, count


# --------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------


def run_amp(amp_opt, model, out, extra=()):
    """Run amp-opt once; return ``(wall seconds, stderr)``. Raises on failure."""
    cmd = [amp_opt, model, "-o", out, *extra]
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` exited {proc.returncode}: {proc.stderr[-2000:]}")
    return wall, proc.stderr


PEER_SCRIPT = """
import sys, warnings
import onnx
from onnxconverter_common import float16
warnings.simplefilter("ignore")
onnx.save(float16.convert_float_to_float16(onnx.load(sys.argv[1]), keep_io_types=True),
          sys.argv[2])
"""


def run_peer_process(model, out):
    """The peer in a fresh ``python3 -c`` process (start-up and imports included)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", PEER_SCRIPT, model, out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def run_peer(model, out):
    """onnx.load + convert_float_to_float16(keep_io_types=True) + onnx.save; seconds."""
    with warnings.catch_warnings():
        # The converter warns once per weight value it clamps to the fp16 range.
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        converted = peer_float16.convert_float_to_float16(onnx.load(model),
                                                          keep_io_types=True)
        onnx.save(converted, out)
        return time.perf_counter() - start


# --------------------------------------------------------------------------
# FLOPs, casts
# --------------------------------------------------------------------------


def _shape(type_proto):
    if not type_proto.HasField("tensor_type"):
        return None, None
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return tensor.elem_type, None
    return tensor.elem_type, [d.dim_value if d.HasField("dim_value") else None
                              for d in tensor.shape.dim]


def _elements(shape):
    if shape is None:
        return 0
    return math.prod(d if d else 1 for d in shape)


def _node_flops(node, types):
    def shape(name):
        return types.get(name, (None, None))[1]

    outputs = [o for o in node.output if o]
    if node.op_type in ("MatMul", "Gemm"):
        a = shape(node.input[0])
        if not a:
            return 0
        trans_a = any(at.name == "transA" and at.i for at in node.attribute)
        k = a[0] if (len(a) == 1 or (node.op_type == "Gemm" and trans_a)) else a[-1]
        return 2 * _elements(shape(outputs[0])) * (k or 1)
    if node.op_type in ("Conv", "ConvTranspose"):
        w = shape(node.input[1])
        per = _elements(w[1:]) if w else 1
        base = shape(node.input[0]) if node.op_type == "ConvTranspose" else shape(outputs[0])
        return 2 * _elements(base) * per
    return sum(_elements(shape(o)) for o in outputs)


def flops_estimate(path):
    """fp16 share of the estimated FLOPs of ``path``'s top-level nodes.

    Returns a dict: flops_total, flops_fp16, share, nodes_fp16, nodes_fp32,
    nodes_untyped (first output of unknown type after shape inference).
    """
    model = onnx.load(path)
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    graph = inferred.graph
    types = {}
    for info in list(graph.input) + list(graph.output) + list(graph.value_info):
        types[info.name] = _shape(info.type)
    for init in graph.initializer:
        types[init.name] = (init.data_type, list(init.dims))
    for node in graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    types[node.output[0]] = (attr.t.data_type, list(attr.t.dims))
    total = fp16 = 0
    counts = {"nodes_fp16": 0, "nodes_fp32": 0, "nodes_untyped": 0}
    for node in graph.node:
        if node.op_type in NO_COMPUTE or not node.output:
            continue
        elem = types.get(node.output[0], (None, None))[0]
        if elem is None or elem == TensorProto.UNDEFINED:
            counts["nodes_untyped"] += 1
            continue
        if elem not in FLOAT_TYPES:
            continue
        flops = _node_flops(node, types)
        total += flops
        if elem == TensorProto.FLOAT16:
            fp16 += flops
            counts["nodes_fp16"] += 1
        else:
            counts["nodes_fp32"] += 1
    return {"flops_total": total, "flops_fp16": fp16,
            "share": fp16 / total if total else 0.0, **counts}


def count_casts(path):
    """Cast nodes in all graphs of ``path`` (subgraphs included)."""
    def walk(graph):
        n = 0
        for node in graph.node:
            n += node.op_type == "Cast"
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    n += walk(attr.g)
                for sub in attr.graphs:
                    n += walk(sub)
        return n
    return walk(onnx.load(path, load_external_data=False).graph)


# --------------------------------------------------------------------------
# Accuracy
# --------------------------------------------------------------------------


def make_inputs(path, seed):
    """Seeded random inputs for the graph inputs of ``path`` (not initializers)."""
    model = onnx.load(path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in model.graph.input:
        if info.name in inits:
            continue
        elem, shape = _shape(info.type)
        shape = [d if d else 1 for d in shape or []]
        dtype = helper.tensor_dtype_to_np_dtype(elem)
        if np.issubdtype(dtype, np.floating):
            feeds[info.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[info.name] = rng.integers(0, 2, shape).astype(dtype)
        else:
            feeds[info.name] = rng.integers(0, 100, shape).astype(dtype)
    return feeds


def ort_run(path, feeds):
    """Outputs of ``path`` on ``feeds`` with the onnxruntime CPU provider."""
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def compare(reference, outputs):
    """Errors of ``outputs`` against ``reference`` (lists of arrays).

    max_abs_err: over all elements; rel_err: that / max|reference|;
    rms_rel_err: ||outputs - reference|| / ||reference|| over all elements.
    """
    err = ref_max = sq_err = sq_ref = 0.0
    nonfinite = 0
    for ref, out in zip(reference, outputs, strict=True):
        ref = np.asarray(ref, dtype=np.float64)
        out = np.asarray(out, dtype=np.float64)
        nonfinite += int(np.count_nonzero(~np.isfinite(out)))
        diff = np.abs(out - ref)
        err = max(err, float(np.max(diff)) if diff.size else 0.0)
        ref_max = max(ref_max, float(np.max(np.abs(ref))) if ref.size else 0.0)
        sq_err += float(np.sum(diff * diff))
        sq_ref += float(np.sum(ref * ref))
    nan = float("nan")
    return {"max_abs_err": err, "rel_err": err / ref_max if ref_max else nan,
            "rms_rel_err": math.sqrt(sq_err / sq_ref) if sq_ref else nan,
            "nonfinite": nonfinite}


def reference_run(path, feeds):
    """Outputs of ``path`` with onnx.reference (every fp16 tensor stays fp16)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return ReferenceEvaluator(path).run(None, feeds)


def accuracy(runner, path, feeds_list, reference):
    """``compare`` results of ``runner(path, feeds)`` for each feeds against
    ``reference`` (the outputs of all feeds, concatenated), or ``{"error": message}``."""
    try:
        outputs = [out for feeds in feeds_list for out in runner(path, feeds)]
        return compare(reference, outputs)
    except Exception as err:  # The peer's model may not load; that is a result.
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return {"error": f"{type(err).__name__}: {message[:300]}"}


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def bench_model(name, path, amp_opt, runs, seed, num_inputs, work, use_reference):
    """All measurements for one model; a dict for the JSON file and the tables."""
    source, randomized = prepare_model(name, path, work, seed)
    row = {"model": name, "source": path, "zero_weights_randomized": randomized,
           "file_mb": os.path.getsize(source) / 1e6,
           "nodes": len(onnx.load(source, load_external_data=False).graph.node)}
    amp_out = os.path.join(work, f"{name}.amp.onnx")
    peer_out = os.path.join(work, f"{name}.peer.onnx")
    report = os.path.join(work, f"{name}.amp.json")

    try:
        row["amp_s"] = statistics.median(run_amp(amp_opt, source, amp_out)[0]
                                         for _ in range(runs))
        _, stderr = run_amp(amp_opt, source, amp_out, [f"--amp-report={report}"])
        row["amp_summary_line"] = next(
            (line for line in stderr.splitlines() if line.startswith("amp-autocast:")), "")
        with open(report) as f:
            summary = json.load(f)["summary"]
        row["amp_report"] = {k: summary.get(k) for k in
                             ("casts", "flops_low_precision_share", "flops_total",
                              "constants_converted", "constants_clamped", "ops")}
    except Exception as err:
        row["amp_error"] = str(err)
    try:
        row["peer_s"] = statistics.median(run_peer(source, peer_out) for _ in range(runs))
        row["peer_process_s"] = statistics.median(run_peer_process(source, peer_out)
                                                  for _ in range(runs))
    except Exception as err:
        row["peer_error"] = f"{type(err).__name__}: {err}"
    if "amp_s" in row and "peer_s" in row:
        row["speedup"] = row["peer_s"] / row["amp_s"]
        row["speedup_process"] = row["peer_process_s"] / row["amp_s"]

    feeds_list = [make_inputs(source, seed + i) for i in range(num_inputs)]
    reference = [out for feeds in feeds_list for out in ort_run(source, feeds)]
    first_reference = ort_run(source, feeds_list[0])
    row["ref_max_abs"] = max((float(np.max(np.abs(r))) for r in reference if np.size(r)),
                             default=0.0)
    for key, out in (("amp", amp_out), ("peer", peer_out)):
        if f"{key}_s" not in row:
            continue
        row[f"{key}_accuracy"] = accuracy(ort_run, out, feeds_list, reference)
        if use_reference:
            row[f"{key}_fp16_accuracy"] = accuracy(reference_run, out, feeds_list[:1],
                                                   first_reference)
        row[f"{key}_flops_estimate"] = flops_estimate(out)
        row[f"{key}_casts"] = count_casts(out)
        row[f"{key}_out_mb"] = os.path.getsize(out) / 1e6
    row["fp32_flops_estimate"] = flops_estimate(source)["flops_total"]
    return row


def _fmt(row, key, spec=".3f", missing="failed"):
    return format(row[key], spec) if key in row else missing


def _fmt_err(acc, which):
    if acc is None:
        return "-"
    if "error" in acc:
        return "fails"
    if which == "abs":
        suffix = f" ({acc['nonfinite']} non-finite)" if acc["nonfinite"] else ""
        return f"{acc['max_abs_err']:.3g}{suffix}"
    if which == "rms":
        return f"{acc['rms_rel_err']:.2e}"
    return f"{acc['rel_err']:.2e}"


def _fmt_share(share):
    return f"{100 * share:.2f}%"


def print_tables(rows, runs, inputs):
    print(f"\n### Conversion time (median of {runs})\n")
    print("| model | file MB | ONNX nodes | amp s | peer s (in-process) | speedup "
          "| peer s (fresh process) | speedup |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['file_mb']:.1f} | {r['nodes']} | {_fmt(r, 'amp_s')} "
              f"| {_fmt(r, 'peer_s')} | {_fmt(r, 'speedup', '.2f', '-')}x "
              f"| {_fmt(r, 'peer_process_s')} | {_fmt(r, 'speedup_process', '.2f', '-')}x |")

    print(f"\n### Output error vs the fp32 model, onnxruntime CPU ({inputs} seeded inputs)\n")
    print("| model | max abs fp32 output | amp max abs err | amp max abs / max abs ref "
          "| amp RMS rel | peer max abs err | peer max abs / max abs ref | peer RMS rel |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        amp, peer = r.get("amp_accuracy"), r.get("peer_accuracy")
        print(f"| {r['model']} | {r['ref_max_abs']:.3g} | {_fmt_err(amp, 'abs')} "
              f"| {_fmt_err(amp, 'rel')} | {_fmt_err(amp, 'rms')} | {_fmt_err(peer, 'abs')} "
              f"| {_fmt_err(peer, 'rel')} | {_fmt_err(peer, 'rms')} |")
    if any(r.get("amp_fp16_accuracy") or r.get("peer_fp16_accuracy") for r in rows):
        print("\n### Output error with fp16 computed in fp16 (onnx.reference, first input)\n")
        print("| model | amp max abs / max abs ref | amp RMS rel "
              "| peer max abs / max abs ref | peer RMS rel |")
        print("|---|---:|---:|---:|---:|")
        for r in rows:
            amp16, peer16 = r.get("amp_fp16_accuracy"), r.get("peer_fp16_accuracy")
            print(f"| {r['model']} | {_fmt_err(amp16, 'rel')} | {_fmt_err(amp16, 'rms')} "
                  f"| {_fmt_err(peer16, 'rel')} | {_fmt_err(peer16, 'rms')} |")

    print("\n### fp16 share of FLOPs, Casts, output size\n")
    print("| model | amp FLOPs in fp16 (report) | amp (estimate) | peer (estimate) "
          "| amp Casts | peer Casts | amp MB | peer MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        rep = r.get("amp_report")
        amp_est, peer_est = r.get("amp_flops_estimate"), r.get("peer_flops_estimate")
        print(f"| {r['model']} "
              f"| {_fmt_share(rep['flops_low_precision_share']) if rep else '-'} "
              f"| {_fmt_share(amp_est['share']) if amp_est else '-'} "
              f"| {_fmt_share(peer_est['share']) if peer_est else '-'} "
              f"| {r.get('amp_casts', '-')} | {r.get('peer_casts', '-')} "
              f"| {_fmt(r, 'amp_out_mb', '.1f', '-')} | {_fmt(r, 'peer_out_mb', '.1f', '-')} |")

    notes = []
    for r in rows:
        if r["zero_weights_randomized"]:
            notes.append(f"{r['model']}: {r['zero_weights_randomized']} all-zero weight "
                         "tensors (rank >= 2) randomised before converting")
        for key in ("amp_error", "peer_error"):
            if key in r:
                notes.append(f"{r['model']}: {key.split('_')[0]} conversion failed: {r[key]}")
        for key in ("amp", "peer"):
            for kind, what in (("accuracy", "onnxruntime"), ("fp16_accuracy", "onnx.reference")):
                acc = r.get(f"{key}_{kind}")
                if acc and "error" in acc:
                    notes.append(f"{r['model']}: {key}'s model fails in {what}: {acc['error']}")
    if notes:
        print()
        for note in notes:
            print(f"- {note}")


def _no_worse(amp, peer):
    """amp's error is at most the peer's (1% slack for equal results)."""
    return amp <= peer * 1.01 + 1e-30


def print_goals(rows):
    print(f"\nGoals: amp converts >= {GOAL_SPEEDUP:g}x faster than the peer (in-process); "
          "error no worse than the peer's with at least as large a FLOP share in fp16.")
    for r in rows:
        parts = []
        if "speedup" in r:
            verdict = "PASS" if r["speedup"] >= GOAL_SPEEDUP else "MISS"
            parts.append(f"speed {verdict} ({r['speedup']:.2f}x)")
        for kind, label in (("accuracy", "error (ORT)"), ("fp16_accuracy", "error (fp16 ref.)")):
            amp_acc, peer_acc = r.get(f"amp_{kind}"), r.get(f"peer_{kind}")
            if not amp_acc or not peer_acc:
                continue
            if "error" in amp_acc:
                parts.append(f"{label} MISS (amp's model fails)")
            elif "error" in peer_acc:
                parts.append(f"{label} PASS (peer's model fails)")
            else:
                ok = _no_worse(amp_acc["max_abs_err"], peer_acc["max_abs_err"])
                ok_rms = _no_worse(amp_acc["rms_rel_err"], peer_acc["rms_rel_err"])
                parts.append(f"{label} max abs {'PASS' if ok else 'MISS'} "
                             f"({amp_acc['max_abs_err']:.3g} vs {peer_acc['max_abs_err']:.3g}), "
                             f"RMS {'PASS' if ok_rms else 'MISS'} "
                             f"({amp_acc['rms_rel_err']:.3g} vs {peer_acc['rms_rel_err']:.3g})")
        amp_est, peer_est = r.get("amp_flops_estimate"), r.get("peer_flops_estimate")
        if amp_est and peer_est:
            ok = amp_est["share"] >= peer_est["share"] - 1e-9
            parts.append(f"fp16 share {'PASS' if ok else 'MISS'} "
                         f"({_fmt_share(amp_est['share'])} vs {_fmt_share(peer_est['share'])})")
        print(f"  {r['model']}: " + "; ".join(parts))


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help="comma-separated export_torch.py model names (default %(default)s)")
    parser.add_argument("--model-dir", default=DEFAULT_MODEL_DIR,
                        help="where the opset-17 exports are, or go (default %(default)s)")
    parser.add_argument("--amp-opt", default=DEFAULT_AMP_OPT,
                        help="amp-opt binary (default %(default)s)")
    parser.add_argument("--runs", type=int, default=3,
                        help="timed conversions per tool and model (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the first input (default %(default)s)")
    parser.add_argument("--inputs", type=int, default=3,
                        help="random inputs for the onnxruntime error (default %(default)s)")
    parser.add_argument("--torch-python", default="/usr/bin/python3",
                        help="interpreter with Debian's torch, for exports (default %(default)s)")
    parser.add_argument("--no-reference", action="store_true",
                        help="skip the fp16-faithful onnx.reference runs")
    parser.add_argument("--keep-dir", help="keep the converted models and reports here")
    parser.add_argument("--json", help="write the raw numbers to this JSON file")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.inputs < 1:
        parser.error("--inputs must be at least 1")

    amp_opt = resolve_amp_opt(args.amp_opt)
    models = ensure_models([m for m in args.models.split(",") if m], args.model_dir,
                           args.torch_python)
    if not models:
        sys.exit("autocast_bench: no models to benchmark")

    rows = []
    with tempfile.TemporaryDirectory(prefix="amp-autocast-bench-") as tmp:
        work = args.keep_dir or tmp
        os.makedirs(work, exist_ok=True)
        for name, path in models.items():
            print(f"benchmarking {name} ...", file=sys.stderr, flush=True)
            rows.append(bench_model(name, path, amp_opt, args.runs, args.seed, args.inputs,
                                    work, not args.no_reference))

    print(f"amp-opt: {amp_opt}; onnxconverter-common {onnxconverter_common.__version__}, "
          f"onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}; "
          f"inputs seeded with {args.seed}..{args.seed + args.inputs - 1}")
    print_tables(rows, args.runs, args.inputs)
    print_goals(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(_json_safe({
                "amp_opt": amp_opt, "runs": args.runs, "seed": args.seed,
                "inputs": args.inputs,
                "versions": {"onnxconverter_common": onnxconverter_common.__version__,
                             "onnx": onnx.__version__,
                             "onnxruntime": onnxruntime.__version__},
                "rows": rows}), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
