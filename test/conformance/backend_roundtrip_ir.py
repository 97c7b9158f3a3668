#!/usr/bin/env python3
"""Import -> ONNX export -> re-import of the ONNX backend node tests gives the same IR.

For every node-test model that amp imports (the onnx package's and Debian's
libonnx-testdata's; the models of ``backend_import_xfail.txt`` are skipped):

    amp-opt MODEL    --amp-opt-level=0 -o first.mlir
    amp-opt MODEL    --amp-opt-level=0 -o exported.onnx
    amp-opt exported --amp-opt-level=0 -o second.mlir

and ``first.mlir`` must equal ``second.mlir`` as printed (no locations).
Nothing is normalised: value names live in ``amp.name`` attributes and the
model's metadata (IR version, opsets, producer, graph name) in module
attributes, so the writer must keep all of them. This is stronger than
``backend_export.py``, which compares onnxruntime's outputs: an attribute
written with its default value dropped, a changed opset, a lost name or
a reordered output shows here even where the numbers agree.

Known differences are listed in ``backend_roundtrip_ir_xfail.txt`` (one
``key  # reason`` per line); anything else that differs, fails to export or
fails to re-import fails the run, and so does a listed test that now
round-trips (remove it from the list).

    python3 test/conformance/backend_roundtrip_ir.py [--amp-opt PATH] [--jobs N]
"""

import argparse
import concurrent.futures
import difflib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backend_import  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
IMPORT_XFAIL = os.path.join(HERE, "backend_import_xfail.txt")
XFAIL = os.path.join(HERE, "backend_roundtrip_ir_xfail.txt")
FLAGS = ["--amp-opt-level=0"]
TIMEOUT = 120


def amp_opt(binary, *args):
    try:
        proc = subprocess.run([binary, *args, *FLAGS], capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"no result within {TIMEOUT} s"
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"]
        return None, lines[0][-300:]
    return proc, None


def first_difference(a, b):
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            return line.strip()[:300]
    return "differs"


def check_one(binary, key, model, scratch):
    stem = os.path.join(scratch, key.replace("/", "__"))
    first, exported, second = stem + ".first.mlir", stem + ".onnx", stem + ".second.mlir"
    try:
        _, error = amp_opt(binary, model, "-o", first)
        if error:
            return key, "skipped", f"does not import: {error}"
        _, error = amp_opt(binary, model, "-o", exported)
        if error:
            return key, "failed", f"export: {error}"
        _, error = amp_opt(binary, exported, "-o", second)
        if error:
            return key, "failed", f"re-import: {error}"
        with open(first, encoding="utf-8") as f:
            a = f.read()
        with open(second, encoding="utf-8") as f:
            b = f.read()
        if a != b:
            return key, "failed", f"IR differs: {first_difference(a, b)}"
        return key, "passed", ""
    finally:
        for path in (first, exported, second):
            if os.path.exists(path):
                os.remove(path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-opt", default=backend_import.DEFAULT_AMP_OPT)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--xfail", default=XFAIL)
    parser.add_argument("--filter", help="only tests whose key contains this text")
    args = parser.parse_args(argv)
    skip = set(backend_import.load_xfail(IMPORT_XFAIL))
    expected = backend_import.load_xfail(args.xfail)
    with tempfile.TemporaryDirectory() as scratch:
        models = {**backend_import.find_onnx_models(scratch), **backend_import.find_debian_models()}
        models = {k: v for k, v in models.items() if k not in skip
                  and (not args.filter or args.filter in k)}
        results = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(check_one, args.amp_opt, k, p, scratch)
                       for k, p in models.items()]
            for future in concurrent.futures.as_completed(futures):
                key, status, detail = future.result()
                results[key] = (status, detail)
    unexpected = []
    for key, (status, detail) in sorted(results.items()):
        if status == "failed":
            listed = key in expected
            print(f"{'xfail' if listed else 'FAIL'} {key}: {detail}")
            if not listed:
                unexpected.append(key)
        elif status == "passed" and key in expected:
            print(f"XPASS {key} (remove it from {os.path.basename(args.xfail)})")
            unexpected.append(key)
        elif status == "skipped":
            print(f"skipped {key}: {detail}")
    if not args.filter:
        for key in sorted(set(expected) - set(results)):
            print(f"STALE {key} (listed, not a test any more)")
            unexpected.append(key)
    counts = {s: sum(1 for v in results.values() if v[0] == s)
              for s in ("passed", "failed", "skipped")}
    listed = sum(1 for k, v in results.items() if v[0] == "failed" and k in expected)
    print(f"{counts['passed']} same IR, {counts['failed']} differ or fail "
          f"({listed} listed), {counts['skipped']} not imported")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
