#!/usr/bin/env python3
"""Round-trip the ONNX backend node tests through amp's ONNX writer.

For every node-test model of the installed ``onnx`` package that amp
imports (the models of ``backend_import_xfail.txt`` are skipped) and that
onnxruntime can run as given: ``amp-opt MODEL -o OUT.onnx FLAGS``, then
``onnx.checker.check_model(OUT, full_check=True)``, then onnxruntime on the
test's inputs, compared with onnxruntime's outputs for the original model
(rtol 1e-3, atol 1e-5; NaN must match NaN). Models that fail the checker
or that onnxruntime cannot run as given are skipped.

Default flags are ``--amp-opt-level=0`` (a pure fp32 round trip: import,
canonicalize, export). Prints ``N passed, N failed, N skipped`` and one line
per failure; exits non-zero if something fails that is not in the expected-
failure list given with ``--xfail``.

    python3 test/conformance/backend_export.py [--amp-opt PATH] [--xfail FILE]
"""

import argparse
import concurrent.futures
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.checker
import onnx.numpy_helper
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backend_import  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMPORT_XFAIL = os.path.join(REPO, "test", "conformance", "backend_import_xfail.txt")


def _load_pbs(paths):
    return [onnx.numpy_helper.to_array(onnx.load_tensor(p)) for p in sorted(paths)]


def _run(model_path, inputs):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def write_node_cases(out_dir):
    """Write ``<case>/model.onnx`` and ``<case>/test_data_set_0/*.pb`` for
    every node test case of the installed onnx package (the PyPI wheel does
    not ship the data files)."""
    import contextlib
    import io
    import warnings

    from onnx.backend.test.case import node as node_cases

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    models = {}
    for case in cases:
        if not case.data_sets:
            continue
        case_dir = os.path.join(out_dir, case.name)
        data_dir = os.path.join(case_dir, "test_data_set_0")
        os.makedirs(data_dir, exist_ok=True)
        path = os.path.join(case_dir, "model.onnx")
        onnx.save_model(case.model, path)
        inputs, outputs = case.data_sets[0]
        try:
            for kind, arrays in (("input", inputs), ("output", outputs)):
                for i, array in enumerate(arrays):
                    if isinstance(array, onnx.TensorProto):
                        # Types numpy lacks (8-bit floats, packed 4- and
                        # 2-bit integers) come as TensorProtos already.
                        tensor = array
                    elif isinstance(array, np.ndarray):
                        tensor = onnx.numpy_helper.from_array(array)
                    else:
                        raise TypeError("not a tensor")
                    with open(os.path.join(data_dir, f"{kind}_{i}.pb"), "wb") as f:
                        f.write(tensor.SerializeToString())
        except (TypeError, ValueError):
            continue  # sequences, optionals, strings: amp does not import these
        models[f"onnx/{case.name}"] = path
    return models


def check_one(amp_opt, key, model_path, flags, out_dir, tolerance=(1e-3, 1e-5)):
    """Returns (key, status, detail) with status in passed/failed/skipped."""
    data_dir = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    inputs = _load_pbs(glob.glob(os.path.join(data_dir, "input_*.pb")))
    expected = _load_pbs(glob.glob(os.path.join(data_dir, "output_*.pb")))
    if not expected:
        return key, "skipped", "no test data"
    try:
        onnx.checker.check_model(onnx.load(model_path), full_check=True)
    except Exception:  # noqa: BLE001 - an invalid test model proves nothing
        return key, "skipped", "the original fails onnx.checker"
    try:
        reference = _run(model_path, inputs)
    except Exception as error:  # noqa: BLE001 - onnxruntime cannot run the original
        return key, "skipped", f"onnxruntime cannot run the original: {str(error)[:80]}"
    # The reference is onnxruntime on the original model: the round trip must
    # not change what onnxruntime computes (where onnxruntime disagrees with
    # the test's expected outputs, that is onnxruntime's business).
    expected = reference
    out = os.path.join(out_dir, key.replace("/", "_") + ".onnx")
    proc = subprocess.run([amp_opt, model_path, "-o", out, *flags],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return key, "failed", "amp-opt: " + proc.stderr.strip().splitlines()[0][:200]
    try:
        onnx.checker.check_model(onnx.load(out), full_check=True)
    except Exception as error:  # noqa: BLE001
        return key, "failed", f"checker: {str(error).splitlines()[0][:200]}"
    try:
        actual = _run(out, inputs)
    except Exception as error:  # noqa: BLE001
        return key, "failed", f"onnxruntime: {str(error).splitlines()[0][:200]}"
    status, detail = compare_outputs(actual, expected, tolerance)
    return key, status, detail


def compare_outputs(actual, expected, tolerance):
    """``(status, detail)`` of the exported model's outputs against the
    original's: the same number of outputs (an export that drops one must
    fail), then dtype, shape and values within ``tolerance`` (rtol, atol)."""
    if len(actual) != len(expected):
        return "failed", f"{len(actual)} outputs, the original has {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a.dtype != e.dtype or a.shape != e.shape:
            return "failed", f"output {i}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        if tolerance and not np.allclose(a, e, rtol=tolerance[0], atol=tolerance[1],
                                         equal_nan=True):
            err = np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)))
            return "inexact", f"output {i}: max abs error {err:.3g}"
    return "passed", ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-opt", default=backend_import.DEFAULT_AMP_OPT)
    parser.add_argument("--xfail", help="expected failures: one test key per line")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--mixed", action="store_true",
                        help="autocast (default flags: none): numeric differences "
                             "beyond fp16 tolerance (rtol 1e-3, atol 2.5e-3) are "
                             "reported as inexact, not as failures")
    parser.add_argument("flags", nargs="*")
    args = parser.parse_args(argv)
    if not args.flags and not args.mixed:
        args.flags = ["--amp-opt-level=0"]
    tolerance = (1e-3, 2.5e-3) if args.mixed else (1e-3, 1e-5)

    xfail_import = set(backend_import.load_xfail(IMPORT_XFAIL))
    expected_failures = set()
    if args.xfail:
        with open(args.xfail, encoding="utf-8") as f:
            expected_failures = {l.split()[0] for l in f if l.strip() and not l.startswith("#")}
    with tempfile.TemporaryDirectory() as scratch:
        models = write_node_cases(os.path.join(scratch, "cases"))
        models = {k: v for k, v in models.items() if k not in xfail_import}
        results = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(check_one, args.amp_opt, k, p, args.flags, scratch,
                                   tolerance)
                       for k, p in models.items()]
            for future in concurrent.futures.as_completed(futures):
                key, status, detail = future.result()
                results[key] = (status, detail)
    counts = {s: sum(1 for v in results.values() if v[0] == s)
              for s in ("passed", "failed", "skipped", "inexact")}
    unexpected = []
    for key, (status, detail) in sorted(results.items()):
        if status == "inexact":
            if args.mixed:
                print(f"inexact {key}: {detail}")
                continue
            status = "failed"
            counts["failed"] += 1
            counts["inexact"] -= 1
        if status == "failed":
            mark = "xfail" if key in expected_failures else "FAIL"
            print(f"{mark} {key}: {detail}")
            if key not in expected_failures:
                unexpected.append(key)
        elif status == "passed" and key in expected_failures:
            print(f"XPASS {key}")
            unexpected.append(key)
    summary = f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    if args.mixed:
        summary += f", {counts['inexact']} beyond fp16 tolerance"
    print(summary)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
