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
  rtol 1e-2, atol 2e-2). A test beyond them is *inexact*.

Expected failures live in ``test/conformance/backend_run_xfail_<mode>.txt``, one
``<source>/<test>  # <class>: <reason>`` per line. The class is one of
``not lowerable``, ``import error``, ``autocast error``, ``error``,
``crash``, ``timeout``, ``wrong result`` and ``inexact``. A numeric wrong
result (fp32) or inexact result (fp16/bf16) records which outputs fail, the
measured max abs error and a bound (twice the error, rounded up to two
digits): ``...  # inexact: output y: max abs err 0.0039; bound 0.0079``.

The run fails (exit status 1) and prints one line per problem when

- a test fails that is not listed (``FAIL``), including a new inexact one;
- a listed test fails with another class or reason, or its error grows
  beyond its bound (``CHANGED``, with the listed and the new reason);
- a listed test passes (``XPASS``);
- a listed test was not run (``STALE``: renamed, or its corpus is missing).

Without Debian's ``libonnx-testdata`` the run stops with exit status 2
(``--allow-missing-debian`` runs the onnx package's tests alone).

Prints ``corpus: ...``, ``tests: N run, N skipped`` and, per mode, ``N passed,
N failed, N skipped`` (plus ``N beyond <mode> tolerance`` in the mixed modes)
and ``N not as listed``. ``--write-xfail`` rewrites the lists of the modes run
from this run's results (and prints the changes from the old lists); ``--markdown FILE`` writes the results (summary,
reasons, the bounded errors and a per-operator table) for ``docs/``.

    python3 test/conformance/backend_run.py [--modes fp32,fp16,bf16]
        [--amp-run PATH] [--xfail-dir DIR] [--write-xfail] [--markdown FILE]
"""

import argparse
import collections
import concurrent.futures
import dataclasses
import datetime
import glob
import math
import os
import re
import signal
import subprocess
import sys
import time
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backend_export  # noqa: E402
import backend_import  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_AMP_RUN = os.path.join(REPO, "build", "bin", "amp-run")
IMPORT_XFAIL = os.path.join(REPO, "test", "conformance", "backend_import_xfail.txt")
XFAIL_DIR = os.path.join(REPO, "test", "conformance")


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


# Failure classes, as written before the first ": " of a list entry's reason.
NOT_LOWERABLE = "not lowerable"
IMPORT_ERROR = "import error"
AUTOCAST_ERROR = "autocast error"
ERROR = "error"
CRASH = "crash"
TIMEOUT = "timeout"
WRONG_RESULT = "wrong result"
INEXACT = "inexact"
CLASSES = (NOT_LOWERABLE, IMPORT_ERROR, AUTOCAST_ERROR, ERROR, CRASH, TIMEOUT,
           WRONG_RESULT, INEXACT)
# Classes whose entries carry a measured error and a bound instead of an
# exact reason.
NUMERIC_CLASSES = (WRONG_RESULT, INEXACT)


@dataclasses.dataclass
class Outcome:
    """The result of one test in one mode.

    ``status`` is passed / failed / inexact (inexact: a mixed-precision
    result beyond the mode's tolerance). ``cls`` is one of :data:`CLASSES`
    (empty when passed), ``detail`` the reason without the class, and
    ``error`` the largest absolute error of the failing outputs when the
    failure is numeric (else None).
    """

    status: str
    cls: str = ""
    detail: str = ""
    error: float = None

    @property
    def reason(self):
        """The reason as printed and written to the list (no bound)."""
        if self.error is not None:
            return f"{self.cls}: {self.detail}: max abs err {self.error:.3g}"
        return f"{self.cls}: {self.detail}" if self.detail else self.cls


def error_bound(error):
    """The bound recorded for a measured error: twice it, rounded up to two
    significant digits (inf stays inf)."""
    if not math.isfinite(error):
        return math.inf
    if error <= 0:
        return 0.0
    doubled = 2 * error
    scale = 10.0 ** (math.floor(math.log10(doubled)) - 1)
    return float(f"{math.ceil(doubled / scale - 1e-9) * scale:.2g}")


def _strip_paths(text):
    """Absolute paths (temporary folders, the repository) become their base
    names, so that reasons are the same on every machine and run."""
    text = re.sub(r" \(/[^)]*\)", "", text)
    return re.sub(r"(?<![\w.])/(?:[^\s/:'\"]+/)+([^\s/:'\"]+)", r"\1", text)


def classify(stderr, stdout, mode="fp32"):
    """Classify a failed amp-run (exit status > 0) as an :class:`Outcome`."""
    text = stderr + stdout
    match = re.search(r"ONNX (\w+) is not lowerable to the CPU backend yet(?:: ([^\n]*))?", text)
    if match:
        why = f": {match.group(2)}" if match.group(2) else ""
        return Outcome("failed", NOT_LOWERABLE, _strip_paths(f"{match.group(1)}{why}"))
    fails = re.findall(r"^(.+?): FAIL (.*)$", stdout, re.M)
    if fails:
        numeric = [(name, float(m.group(1))) for name, rest in fails
                   for m in [re.match(r"max abs err (\S+),", rest)] if m]
        if len(numeric) == len(fails):
            names = ", ".join(name for name, _ in numeric)
            error = max(e for _, e in numeric)
            if mode == "fp32":
                return Outcome("failed", WRONG_RESULT, f"output {names}", error)
            return Outcome("inexact", INEXACT, f"output {names}", error)
        detail = "; ".join(f"output {name}: {rest}" for name, rest in fails
                           if not rest.startswith("max abs err"))
        return Outcome("failed", WRONG_RESULT, _strip_paths(detail))
    for line in text.splitlines():
        if "error" not in line:
            continue
        message = re.sub(r"^[^ ]*:\d+:\d+: ", "", line.strip())
        message = re.sub(r"^error: ", "", _strip_paths(message))[:160]
        if message.startswith("amp-autocast: "):
            return Outcome("failed", AUTOCAST_ERROR, message[len("amp-autocast: "):])
        # The importer names the model file first ("<file>.onnx: node ...").
        if re.match(r"[^ ]+\.(onnx|pb): ", message):
            return Outcome("failed", IMPORT_ERROR, re.sub(r"^[^ ]+\.(onnx|pb): ", "", message))
        return Outcome("failed", ERROR, message)
    last = (text.strip().splitlines() or ["no output"])[-1]
    return Outcome("failed", ERROR, _strip_paths(last)[:160])


def run_case(amp_run, key, case, mode):
    """Returns (key, :class:`Outcome`, seconds)."""
    start = time.monotonic()
    key, outcome = _run_case(amp_run, key, case, mode)
    return key, outcome, time.monotonic() - start


def _run_case(amp_run, key, case, mode):
    model, inputs, outputs = case
    settings = MODES[mode]
    command = [amp_run, model, *settings["flags"],
               "--rtol", str(settings["rtol"]), "--atol", str(settings["atol"])]
    for path in inputs:
        command += ["-i", path]
    for path in outputs:
        command += ["--compare-to", path]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return key, Outcome("failed", TIMEOUT, f"no result within {TIMEOUT_S} s")
    except OSError as error:  # e.g. amp-run being relinked under the run
        return key, Outcome("failed", ERROR, f"cannot start amp-run: {error.strerror}")
    if proc.returncode == 0:
        return key, Outcome("passed")
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        return key, Outcome("failed", CRASH, f"killed by {name}")
    return key, classify(proc.stderr, proc.stdout, mode)


# --------------------------------------------------------------------------
# The expected-failure lists
# --------------------------------------------------------------------------


@dataclasses.dataclass
class Expected:
    """One entry of an expected-failure list: ``<key>  # <class>: <detail>``,
    and for numeric failures ``...: max abs err E; bound B``."""

    cls: str
    detail: str
    error: float = None
    bound: float = None
    text: str = ""


def parse_entry(reason):
    """Parse the reason of a list entry into an :class:`Expected`; raises
    ValueError for an entry without a known class or with a malformed bound."""
    text = reason.strip()
    for cls in CLASSES:
        if text == cls or text.startswith(cls + ": "):
            detail = text[len(cls) + 2:]
            break
    else:
        raise ValueError(f"no known failure class ({', '.join(CLASSES)}) in {text!r}")
    if cls in NUMERIC_CLASSES and "max abs err" in detail:
        match = re.fullmatch(r"(.*): max abs err (\S+); bound (\S+)", detail)
        if not match:
            raise ValueError(f"a numeric {cls} needs 'max abs err E; bound B': {text!r}")
        return Expected(cls, match.group(1), float(match.group(2)), float(match.group(3)),
                        text)
    return Expected(cls, detail, text=text)


def load_xfail(path):
    """``{key: Expected}`` of a mode's list ({} when the file is missing)."""
    return {key: parse_entry(reason)
            for key, reason in backend_import.load_xfail(path).items()}


def entry_text(outcome):
    """The reason written to the list for a failure."""
    if outcome.error is not None:
        return f"{outcome.reason}; bound {error_bound(outcome.error):.2g}"
    return outcome.reason


def check(expected, outcome):
    """How ``outcome`` differs from the listed ``expected`` (an
    :class:`Expected` or None): None when it matches, else a message."""
    if outcome.status == "passed":
        return None if expected is None else f"passes, but is listed as '{expected.text}'"
    if expected is None:
        return f"not listed: {outcome.reason}"
    if outcome.cls != expected.cls:
        return (f"class changed: {expected.cls} -> {outcome.cls} "
                f"(listed '{expected.text}', now '{outcome.reason}')")
    if outcome.detail != expected.detail:
        return (f"reason changed: '{expected.text}' -> '{outcome.reason}'")
    if expected.bound is not None:
        if outcome.error is None:
            return f"listed with an error bound, now '{outcome.reason}'"
        if not outcome.error <= expected.bound:
            return (f"error grew beyond its bound: max abs err {outcome.error:.3g} > bound "
                    f"{expected.bound:.2g} (listed '{expected.text}')")
    elif outcome.error is not None:
        return f"listed without an error bound, now '{outcome.reason}'"
    return None


GROUP_NOTES = {
    WRONG_RESULT: "fp16/bf16 test models: amp rounds each op result, the reference "
                  "rounds differently",
    INEXACT: "beyond the mode's tolerance after autocast; the bound is twice the "
             "measured error, rounded up",
}


def group_of(outcome):
    """The heading an entry is grouped under (numbers left out)."""
    if outcome.error is not None:
        return f"{outcome.cls}: max abs err within a bound ({GROUP_NOTES[outcome.cls]})"
    return outcome.reason


def write_xfail(path, mode, results):
    by_group = collections.defaultdict(list)
    for key, outcome in results.items():
        if outcome.status != "passed":
            by_group[group_of(outcome)].append(key)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# Expected amp-run failures of the ONNX backend node tests ({mode}).\n")
        f.write("# Written by test/conformance/backend_run.py --write-xfail;\n")
        f.write("# one `<source>/<test>  # <class>: <reason>` per line, grouped by reason.\n")
        f.write(f"# Classes: {', '.join(CLASSES)}.\n")
        f.write("# A listed test must fail with the same class and reason; a wrong result\n")
        f.write("# or inexact entry records the failing outputs, the measured max abs err\n")
        f.write("# and a bound (twice it, rounded up) that the error must stay within.\n")
        for group in sorted(by_group, key=lambda g: (-len(by_group[g]), g)):
            keys = sorted(by_group[group])
            f.write(f"\n# --- {group} ({len(keys)})\n")
            for key in keys:
                f.write(f"{key:<72} # {entry_text(results[key])}\n")


def compare_results(mode, results, expected, check_stale=True):
    """Compare ``results`` ({key: Outcome}) with ``expected`` ({key: Expected})
    and print one line per failure; return ``(key, message)`` for every
    result not as listed and, with ``check_stale``, every listed test not run."""
    problems = []
    for key, outcome in sorted(results.items()):
        problem = check(expected.get(key), outcome)
        if outcome.status != "passed" and problem is None:
            print(f"[{mode}] xfail {key}: {outcome.reason}")
        if problem is not None:
            if outcome.status == "passed":
                mark = "XPASS"
            else:
                mark = "FAIL" if key not in expected else "CHANGED"
            print(f"[{mode}] {mark} {key}: {problem}")
            problems.append((key, problem))
    if check_stale:
        for key in sorted(set(expected) - set(results)):
            print(f"[{mode}] STALE {key}: listed but not run (renamed, or its corpus "
                  f"is missing: is {backend_import.DEBIAN_PACKAGE} installed?)")
            problems.append((key, "listed but not run"))
    return problems


def run_mode(amp_run, cases, mode, jobs, expected, check_stale=True, durations=0):
    """Run ``cases``; return (results, problems) (see :func:`compare_results`).
    With ``durations``, prints the slowest that many cases and the total."""
    results, seconds = {}, {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(run_case, amp_run, k, c, mode) for k, c in cases.items()]
        for future in concurrent.futures.as_completed(futures):
            key, outcome, seconds[key] = future.result()
            results[key] = outcome
    if durations:
        print(f"[{mode}] {sum(seconds.values()):.0f} s in amp-run over {len(seconds)} cases; "
              f"slowest:")
        for key in sorted(seconds, key=seconds.get, reverse=True)[:durations]:
            print(f"[{mode}]   {seconds[key]:7.2f} s  {key}")
    return results, compare_results(mode, results, expected, check_stale)


def summary_line(mode, results, skipped):
    counts = collections.Counter(outcome.status for outcome in results.values())
    line = f"{counts['passed']} passed, {counts['failed']} failed, {skipped} skipped"
    if mode != "fp32":
        line += f", {counts['inexact']} beyond {mode} tolerance"
    return line


def write_markdown(path, all_results, cases, skipped, corpus):
    today = datetime.date.today().isoformat()
    lines = [
        "# ONNX conformance of the CPU backend (amp-run)",
        "",
        f"Generated by `test/conformance/backend_run.py --markdown` on {today}",
        f"(onnx {onnx.__version__} node tests and Debian's libonnx-testdata).",
        "Do not edit by hand.",
        "",
        "Each test runs `amp-run model.onnx -i input_*.pb --compare-to output_*.pb`.",
        "fp32 uses the ONNX runner's tolerance (rtol 1e-3, atol 1e-7, same dtype);",
        "fp16 and bf16 autocast the model first and use onnxruntime's mixed-precision",
        "tolerances (fp16: rtol 1e-3, atol 2.5e-3; bf16: rtol 1e-2, atol 2e-2).",
        f"Tests with data: {corpus}. Run: {len(cases)};",
        f"skipped: {skipped} tests amp does not import"
        " (`test/conformance/backend_import_xfail.txt`).",
        "Every failure is listed in `test/conformance/backend_run_xfail_<mode>.txt` with its",
        "class and reason; a test beyond tolerance is listed with its measured error and",
        "a bound (twice it, rounded up). Any other result fails the run.",
        "",
        "| mode | passed | failed (expected) | beyond tolerance (listed, bounded) |",
        "|---|---:|---:|---:|",
    ]
    for mode, results in all_results.items():
        counts = collections.Counter(outcome.status for outcome in results.values())
        inexact = "-" if mode == "fp32" else str(counts["inexact"])
        lines.append(f"| {mode} | {counts['passed']} | {counts['failed']} | {inexact} |")
    fp32 = all_results.get("fp32", {})
    if fp32:
        lines += ["", "## Failures by reason (fp32)", ""]
        reasons = collections.Counter(group_of(o) for o in fp32.values() if o.status == "failed")
        lines += ["| reason | tests |", "|---|---:|"]
        for reason, n in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"| {reason.replace('|', '/')} | {n} |")
    for mode, results in all_results.items():
        wrong = sorted((k, o) for k, o in results.items() if o.cls == WRONG_RESULT)
        inexact = sorted((k, o) for k, o in results.items() if o.cls == INEXACT)
        title = f"## {mode}: wrong results ({len(wrong)})"
        if mode != "fp32":
            title += f" and results beyond {mode} tolerance ({len(inexact)})"
        lines += ["", title, ""]
        for key, outcome in inexact + wrong:
            lines.append(f"- `{key}`: {entry_text(outcome)}")
    if fp32:
        lines += ["", "## Per operator (fp32)", "",
                  "A test counts for every operator type in its graph.", "",
                  "| operator | passed | failed |", "|---|---:|---:|"]
        per_op = collections.defaultdict(lambda: [0, 0])
        for key, outcome in fp32.items():
            for op in op_types(cases[key][0]):
                per_op[op][0 if outcome.status == "passed" else 1] += 1
        for op in sorted(per_op):
            lines.append(f"| {op} | {per_op[op][0]} | {per_op[op][1]} |")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-run", default=os.environ.get("AMP_RUN", DEFAULT_AMP_RUN))
    parser.add_argument("--modes", default="fp32")
    parser.add_argument("--xfail-dir", default=XFAIL_DIR)
    parser.add_argument("--write-xfail", action="store_true",
                        help="rewrite the lists of the modes run from this run's failures")
    parser.add_argument("--markdown")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--durations", type=int, default=0, metavar="N",
                        help="print the N slowest cases of each mode")
    parser.add_argument("--filter", help="only tests whose key contains this text "
                        "(list entries of other tests are then not checked)")
    parser.add_argument("--allow-missing-debian", action="store_true",
                        help="run without Debian's libonnx-testdata (an error by default)")
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    for mode in modes:
        if mode not in MODES:
            parser.error(f"unknown mode {mode!r} (fp32, fp16, bf16)")
    if not os.access(args.amp_run, os.X_OK):
        parser.error(f"amp-run not found at {args.amp_run} (set AMP_RUN or --amp-run)")

    not_importable = backend_import.load_xfail(IMPORT_XFAIL)
    status = 0
    all_results = {}
    with tempfile.TemporaryDirectory() as scratch:
        cases = collect_cases(scratch)
        by_source = collections.Counter(k.split("/")[0] for k in cases)
        corpus = ", ".join(f"{s} {n}" for s, n in sorted(by_source.items()))
        print(f"corpus: {corpus}")
        if not by_source["debian"] and not args.allow_missing_debian:
            print(f"error: no node tests from Debian's {backend_import.DEBIAN_PACKAGE} "
                  f"(`dpkg -L {backend_import.DEBIAN_PACKAGE}` lists none): install it "
                  f"(apt-get install {backend_import.DEBIAN_PACKAGE}); without it "
                  f"a large part of the corpus is missing (--allow-missing-debian runs anyway)")
            return 2
        skipped = sum(1 for k in cases if k in not_importable)
        cases = {k: c for k, c in cases.items() if k not in not_importable}
        if args.filter:
            cases = {k: c for k, c in cases.items() if args.filter in k}
        print(f"tests: {len(cases)} run, {skipped} skipped (not imported)")
        for mode in modes:
            # With --write-xfail the old list is still compared with, so that
            # the run prints what changed; only the exit status ignores it.
            try:
                expected = load_xfail(xfail_path(mode, args.xfail_dir))
            except ValueError as error:
                if not args.write_xfail:
                    print(f"error: {xfail_path(mode, args.xfail_dir)}: {error}")
                    return 2
                print(f"[{mode}] the old list does not parse ({error}); not compared")
                expected = {}
            results, problems = run_mode(args.amp_run, cases, mode, args.jobs, expected,
                                         check_stale=not args.filter,
                                         durations=args.durations)
            all_results[mode] = results
            print(f"[{mode}] {summary_line(mode, results, skipped)}")
            print(f"[{mode}] {len(problems)} not as listed")
            if args.write_xfail:
                write_xfail(xfail_path(mode, args.xfail_dir), mode, results)
                print(f"[{mode}] wrote {xfail_path(mode, args.xfail_dir)} (the lines above "
                      f"marked FAIL, CHANGED, XPASS and STALE are the changes)")
            elif problems:
                status = 1
        if args.markdown:
            write_markdown(args.markdown, all_results, cases, skipped, corpus)
    return status


if __name__ == "__main__":
    sys.exit(main())
