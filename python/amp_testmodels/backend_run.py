#!/usr/bin/env python3
"""Run the ONNX backend node tests through amp-run (ONNX conformance).

Every node test of the installed ``onnx`` package and of Debian's
``libonnx-testdata`` that amp imports (``backend_import_xfail.txt`` lists the
ones it does not; they count as skipped) is run by ``amp-run`` on the test's
own input ``.pb`` files and compared with the test's expected outputs by
amp-run itself (``--compare-to``). Modes:

- ``fp32``: the model as given; tolerance as the ONNX backend runner
  (rtol 1e-3, atol 1e-7); the element type must match.
- ``fp16`` / ``bf16``: autocast first (``--amp-type``), tolerances of
  onnxruntime's mixed-precision tests (fp16: rtol 1e-3, atol 2.5e-3; bf16:
  rtol 1e-2, atol 2e-2). A test beyond them is reported as *inexact* (a
  measurement, not a failure); the other failures must be expected.

Prints ``N passed, N failed, N skipped`` (plus ``N beyond <mode>
tolerance`` in the mixed modes) and one line per failure. Expected failures
live in ``test/python/backend_run_xfail_<mode>.txt`` (``<test>  # reason``);
an unexpected failure or an unexpected pass (XPASS) makes the run fail, so
the lists stay honest. ``--write-xfail`` rewrites the lists of the modes
run; ``--markdown FILE`` writes the results (summary and per-operator
table) for ``docs/``.

    python3 python/amp_testmodels/backend_run.py [--modes fp32,fp16,bf16]
        [--amp-run PATH] [--xfail-dir DIR] [--write-xfail] [--markdown FILE]
"""

import argparse
import collections
import concurrent.futures
import datetime
import glob
import os
import re
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backend_export  # noqa: E402
import backend_import  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_AMP_RUN = os.path.join(REPO, "build", "bin", "amp-run")
IMPORT_XFAIL = os.path.join(REPO, "test", "python", "backend_import_xfail.txt")
XFAIL_DIR = os.path.join(REPO, "test", "python")


def xfail_path(mode, directory=XFAIL_DIR):
    """The expected-failure list of a mode."""
    return os.path.join(directory, f"backend_run_xfail_{mode}.txt")

MODES = {
    "fp32": {"flags": [], "rtol": 1e-3, "atol": 1e-7},
    "fp16": {"flags": ["--amp-type", "f16"], "rtol": 1e-3, "atol": 2.5e-3},
    "bf16": {"flags": ["--amp-type", "bf16"], "rtol": 1e-2, "atol": 2e-2},
}
TIMEOUT_S = 300


def collect_cases(scratch):
    """Map test key -> (model path, [input .pb], [output .pb])."""
    models = backend_export.write_node_cases(os.path.join(scratch, "cases"))
    models.update(backend_import.find_debian_models())
    cases = {}
    for key, path in models.items():
        data = os.path.join(os.path.dirname(path), "test_data_set_0")
        inputs = sorted(glob.glob(os.path.join(data, "input_*.pb")),
                        key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
        outputs = sorted(glob.glob(os.path.join(data, "output_*.pb")),
                         key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
        if outputs:
            cases[key] = (path, inputs, outputs)
    return cases


def op_types(model_path):
    """The operator types of a model's main graph (for the per-op table)."""
    try:
        graph = onnx.load(model_path, load_external_data=False).graph
    except Exception:  # noqa: BLE001
        return []
    return sorted({node.op_type for node in graph.node})


def classify(stderr, stdout):
    """A short reason for a failed amp-run."""
    text = stderr + stdout
    match = re.search(r"ONNX (\w+) is not lowerable to the CPU backend yet(?:: ([^\n]*))?", text)
    if match:
        why = f": {match.group(2)}" if match.group(2) else ""
        return f"not lowerable: {match.group(1)}{why}"
    match = re.search(r"^(\S+): FAIL (.*)$", stdout, re.M)
    if match:
        detail = re.sub(r"\d+ of \d+ elements beyond.*", "", match.group(2)).strip(", ")
        return f"wrong result: {detail}"
    for line in text.splitlines():
        if "error" in line:
            line = re.sub(r"^[^ ]*:\d+:\d+: ", "", line.strip())
            return re.sub(r" \(/[^)]*\)", "", line)[:160]
    return (text.strip().splitlines() or ["no output"])[-1][:160]


def run_case(amp_run, key, case, mode):
    """Returns (key, status, detail); status in passed/failed/inexact/crashed."""
    model, inputs, outputs = case
    settings = MODES[mode]
    command = [amp_run, model, *settings["flags"],
               "--rtol", str(settings["rtol"]), "--atol", str(settings["atol"])]
    for path in inputs:
        command += ["-i", path]
    for path in outputs:
        command += ["--compare-to", path]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                              preexec_fn=backend_import.limit_memory
                              if hasattr(backend_import, "limit_memory") else None)
    except subprocess.TimeoutExpired:
        return key, "failed", f"timeout after {TIMEOUT_S} s"
    if proc.returncode == 0:
        return key, "passed", ""
    if proc.returncode < 0:
        return key, "failed", f"crash (signal {-proc.returncode})"
    reason = classify(proc.stderr, proc.stdout)
    if mode != "fp32" and reason.startswith("wrong result"):
        return key, "inexact", reason
    return key, "failed", reason


def load_xfail(path):
    return backend_import.load_xfail(path)


def xfail_reason(detail):
    """The reason recorded in the expected-failure list: numbers and paths
    are left out so that reasons group."""
    detail = re.sub(r"wrong result: .*", "wrong result: beyond tolerance (an fp16/bf16 "
                    "model; amp rounds each op result, the reference rounds differently)",
                    detail)
    detail = re.sub(r" \(/[^)]*\)", "", detail)
    return detail


def write_xfail(path, mode, results):
    by_reason = collections.defaultdict(list)
    for key, (status, detail) in results.items():
        if status == "failed":
            by_reason[xfail_reason(detail)].append(key)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# Expected amp-run failures of the ONNX backend node tests ({mode}).\n")
        f.write("# Written by python/amp_testmodels/backend_run.py --write-xfail;\n")
        f.write("# one `<source>/<test>  # reason` per line, grouped by reason.\n")
        for reason in sorted(by_reason, key=lambda r: (-len(by_reason[r]), r)):
            keys = sorted(by_reason[reason])
            f.write(f"\n# --- {reason} ({len(keys)})\n")
            for key in keys:
                f.write(f"{key:<72} # {reason}\n")


def run_mode(amp_run, cases, mode, jobs, expected):
    results = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(run_case, amp_run, k, c, mode) for k, c in cases.items()]
        for future in concurrent.futures.as_completed(futures):
            key, status, detail = future.result()
            results[key] = (status, detail)
    unexpected = []
    for key, (status, detail) in sorted(results.items()):
        if status == "failed":
            mark = "xfail" if key in expected else "FAIL"
            print(f"[{mode}] {mark} {key}: {detail}")
            if key not in expected:
                unexpected.append(key)
        elif status == "inexact":
            print(f"[{mode}] inexact {key}: {detail}")
        elif status == "passed" and key in expected:
            print(f"[{mode}] XPASS {key}")
            unexpected.append(key)
    return results, unexpected


def summary_line(mode, results, skipped):
    counts = collections.Counter(status for status, _ in results.values())
    line = f"{counts['passed']} passed, {counts['failed']} failed, {skipped} skipped"
    if mode != "fp32":
        line += f", {counts['inexact']} beyond {mode} tolerance"
    return line


def write_markdown(path, all_results, cases, skipped, import_reasons):
    today = datetime.date.today().isoformat()
    lines = [
        "# ONNX conformance of the CPU backend (amp-run)",
        "",
        f"Generated by `python/amp_testmodels/backend_run.py --markdown` on {today}",
        f"(onnx {onnx.__version__} node tests and Debian's libonnx-testdata).",
        "Do not edit by hand.",
        "",
        "Each test runs `amp-run model.onnx -i input_*.pb --compare-to output_*.pb`.",
        "fp32 uses the ONNX runner's tolerance (rtol 1e-3, atol 1e-7, same dtype);",
        "fp16 and bf16 autocast the model first and use onnxruntime's mixed-precision",
        "tolerances (fp16: rtol 1e-3, atol 2.5e-3; bf16: rtol 1e-2, atol 2e-2).",
        f"Skipped: {skipped} tests amp does not import (`test/python/backend_import_xfail.txt`).",
        "",
        "| mode | passed | failed (expected) | beyond tolerance |",
        "|---|---:|---:|---:|",
    ]
    for mode, results in all_results.items():
        counts = collections.Counter(status for status, _ in results.values())
        inexact = "-" if mode == "fp32" else str(counts["inexact"])
        lines.append(f"| {mode} | {counts['passed']} | {counts['failed']} | {inexact} |")
    lines += ["", "## Failures by reason (fp32)", ""]
    fp32 = all_results.get("fp32", {})
    reasons = collections.Counter(d for s, d in fp32.values() if s == "failed")
    lines += ["| reason | tests |", "|---|---:|"]
    for reason, n in reasons.most_common():
        lines.append(f"| {reason.replace('|', '/')} | {n} |")
    for mode, results in all_results.items():
        if mode == "fp32":
            continue
        inexact = sorted((k, d) for k, (s, d) in results.items() if s == "inexact")
        lines += ["", f"## Tests beyond {mode} tolerance ({len(inexact)})", ""]
        for key, detail in inexact:
            lines.append(f"- `{key}`: {detail}")
    lines += ["", "## Per operator (fp32)", "",
              "A test counts for every operator type in its graph.", "",
              "| operator | passed | failed |", "|---|---:|---:|"]
    per_op = collections.defaultdict(lambda: [0, 0])
    for key, (status, _) in fp32.items():
        for op in op_types(cases[key][0]):
            per_op[op][0 if status == "passed" else 1] += 1
    for op in sorted(per_op):
        lines.append(f"| {op} | {per_op[op][0]} | {per_op[op][1]} |")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-run", default=os.environ.get("AMP_RUN", DEFAULT_AMP_RUN))
    parser.add_argument("--modes", default="fp32")
    parser.add_argument("--xfail-dir", default=XFAIL_DIR)
    parser.add_argument("--write-xfail", action="store_true")
    parser.add_argument("--markdown")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--filter", help="only tests whose key contains this text")
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    for mode in modes:
        if mode not in MODES:
            parser.error(f"unknown mode {mode!r} (fp32, fp16, bf16)")

    not_importable = backend_import.load_xfail(IMPORT_XFAIL)
    status = 0
    all_results = {}
    with tempfile.TemporaryDirectory() as scratch:
        cases = collect_cases(scratch)
        skipped = sum(1 for k in cases if k in not_importable)
        cases = {k: c for k, c in cases.items() if k not in not_importable}
        if args.filter:
            cases = {k: c for k, c in cases.items() if args.filter in k}
        for mode in modes:
            expected = {} if args.write_xfail else load_xfail(
                xfail_path(mode, args.xfail_dir))
            results, unexpected = run_mode(args.amp_run, cases, mode, args.jobs,
                                           expected)
            all_results[mode] = results
            print(f"[{mode}] {summary_line(mode, results, skipped)}")
            if unexpected and not args.write_xfail:
                status = 1
            if args.write_xfail:
                write_xfail(xfail_path(mode, args.xfail_dir), mode, results)
        if args.markdown:
            write_markdown(args.markdown, all_results, cases, skipped, not_importable)
    return status


if __name__ == "__main__":
    sys.exit(main())
