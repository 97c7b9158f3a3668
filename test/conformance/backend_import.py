#!/usr/bin/env python3
"""Import every ONNX backend node-test model with amp-opt and compare with an xfail list.

Model sources, each keyed ``<source>/<test dir name>``:

- ``onnx``: ``<onnx package>/backend/test/data/node/*/model.onnx``. PyPI
  wheels ship without that folder; then the same models are generated from
  the installed onnx's own test-case definitions (what
  ``backend-test-tools generate-data`` writes) into a temporary folder.
- ``debian``: ``.../data/node/*/model.onnx`` of Debian's ``libonnx-testdata``
  package, found with ``dpkg -L``; an error when it is not installed.

Each model is imported with ``amp-opt MODEL -o /dev/null`` (two workers,
60 s and 6 GiB of address space each). A failure's reason is a category derived from amp-opt's error
message ("unsupported operator X", "opset N not supported", ...). The
results are compared with the expected-failure list (default
``test/conformance/backend_import_xfail.txt``, lines ``key  # reason``):

- an *unexpected failure* is a failing test that is not listed, or a listed
  one that now fails for another reason (a crash, a timeout, another error:
  the reason must match the list exactly);
- an *unexpected pass* is a listed test that now imports: remove it from the
  list, which must stay honest;
- a *stale entry* is a listed test with no model (renamed, or its corpus is
  missing).

Without Debian's ``libonnx-testdata`` the run stops with exit status 2
(``--allow-missing-debian`` runs the onnx package's models alone).

The report gives per-reason counts, the number of distinct op types in the
models that imported, the unexpected results, and ends with the line
``backend import: N passed, N failed`` (failed = unexpected failures). The
exit status is 1 if there is any unexpected failure or pass or a stale entry.

``--write-xfail`` rewrites the list from the current failures instead.

Example::

    python3 test/conformance/backend_import.py
    python3 test/conformance/backend_import.py --write-xfail
"""

import argparse
import collections
import concurrent.futures
import contextlib
import dataclasses
import glob
import io
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import warnings

import onnx

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_AMP_OPT = os.environ.get("AMP_OPT", os.path.join(REPO, "build", "bin", "amp-opt"))
DEFAULT_XFAIL = os.path.join(REPO, "test", "conformance", "backend_import_xfail.txt")
DEBIAN_PACKAGE = "libonnx-testdata"
CRASH_PREFIX = "crash"
# Address-space cap inherited by every amp-opt run: a runaway import aborts
# (reported as a crash) instead of exhausting the machine.
MEMORY_LIMIT_BYTES = 6 << 30


@dataclasses.dataclass
class Result:
    """Outcome of importing one test model."""

    key: str
    path: str
    passed: bool
    reason: str = ""
    crashed: bool = False


# --------------------------------------------------------------------------
# Finding the models
# --------------------------------------------------------------------------


def _node_models(node_dir, source):
    """Map ``<source>/<test dir>`` to ``model.onnx`` for every test in ``node_dir``."""
    paths = sorted(glob.glob(os.path.join(node_dir, "*", "model.onnx")))
    return {f"{source}/{os.path.basename(os.path.dirname(p))}": p for p in paths}


def _generate_onnx_node_models(out_dir):
    """Write ``out_dir/<case>/model.onnx`` for every node test case of the installed onnx."""
    from onnx.backend.test.case import node as node_cases

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    for case in cases:
        case_dir = os.path.join(out_dir, case.name)
        os.makedirs(case_dir, exist_ok=True)
        onnx.save_model(case.model, os.path.join(case_dir, "model.onnx"))


def find_onnx_models(scratch_dir):
    """The onnx package's node tests, generated under ``scratch_dir`` if not shipped."""
    shipped = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    models = _node_models(shipped, "onnx")
    if models:
        return models
    generated = os.path.join(scratch_dir, "onnx-node")
    _generate_onnx_node_models(generated)
    return _node_models(generated, "onnx")


def find_debian_models():
    """The node tests of Debian's libonnx-testdata, or {} when it is not installed."""
    try:
        listing = subprocess.run(
            ["dpkg", "-L", DEBIAN_PACKAGE], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    models = {}
    for line in listing.splitlines():
        parts = line.strip().split("/")
        if len(parts) >= 3 and parts[-1] == "model.onnx" and parts[-3] == "node":
            models[f"debian/{parts[-2]}"] = line.strip()
    return dict(sorted(models.items()))


# --------------------------------------------------------------------------
# Importing and classifying
# --------------------------------------------------------------------------

# (pattern on the error text, reason template); the first match wins.
_REASONS = [
    (r"op (\S+), domain '[^']*', opset \d+\): unsupported operator;", "unsupported operator {0}"),
    (r"unsupported operator domain '([^']*)'", "unsupported domain {0}"),
    (r"default-domain opset (\d+) is not supported", "opset {0} not supported"),
    (r"imports no default-domain \(ai\.onnx\) opset", "no default-domain (ai.onnx) opset import"),
    (r"Scan before opset 9 scans a batch axis", "Scan before opset 9 (batch axis)"),
    (r"before opset 11, nearest mode\): the scales are not a constant",
     "opset < 11 nearest Upsample/Resize with non-constant scales"),
    (r"not a tensor \(sequences, maps and optionals", "sequence/map/optional types not supported"),
    (r"unsupported (?:element )?type (\w+)", "unsupported element type {0}"),
    (r"model-local functions are not supported", "model-local functions not supported"),
    (r"sparse initializers are not supported", "sparse initializers not supported"),
    (r"Constant attribute '(\w+)' is not supported", "Constant attribute {0} not supported"),
    (r"attribute '\w+' has unsupported kind (\w+)", "attribute kind {0} not supported"),
    (r"op (\S+), domain .*unknown attribute '(\w+)'", "{0}: unknown attribute {1}"),
    (r"has no shape; amp needs the rank", "graph input or output without a shape"),
    (r"op (\S+), domain [^)]*\): (.{1,100})", "{0}: {1}"),
]


def _name_data_types(text):
    """Replace amp-opt's ``data type N`` (a type its protobuf predates) with the ONNX name."""

    def name(match):
        try:
            return onnx.TensorProto.DataType.Name(int(match.group(1)))
        except ValueError:
            return match.group(0)

    return re.sub(r"data type (\d+)", name, text)


def classify(stderr):
    """Derive a short failure category from amp-opt's stderr."""
    errors = [line for line in stderr.splitlines() if "error:" in line]
    if not errors:
        return "failed without an error message"
    text = _name_data_types(errors[0])
    for pattern, template in _REASONS:
        match = re.search(pattern, text)
        if match:
            return template.format(*match.groups())
    message = re.sub(r"\S*\.onnx: ", "", text.split("error:", 1)[1].strip())
    return "other: " + message[:120]


def import_model(amp_opt, key, path, timeout):
    """Import one model with amp-opt and return its :class:`Result`."""
    try:
        proc = subprocess.run(
            [amp_opt, path, "-o", os.devnull], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return Result(key, path, False, f"timeout after {timeout} s")
    if proc.returncode == 0:
        return Result(key, path, True)
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        return Result(key, path, False, f"{CRASH_PREFIX}: killed by {name}", crashed=True)
    return Result(key, path, False, classify(proc.stderr))


def import_all(amp_opt, models, jobs, timeout):
    """Import ``models`` (key -> path) in parallel; results in key order.

    Lowers this process's address-space limit (soft and hard) to
    :data:`MEMORY_LIMIT_BYTES` first, so that the amp-opt children inherit it.
    """
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = MEMORY_LIMIT_BYTES if hard == resource.RLIM_INFINITY else min(hard, MEMORY_LIMIT_BYTES)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [
            pool.submit(import_model, amp_opt, key, path, timeout) for key, path in models.items()
        ]
        return [f.result() for f in futures]


def _graph_op_types(graph):
    """Op types of ``graph``'s nodes and of the nodes of its subgraphs."""
    types = set()
    for node in graph.node:
        types.add(node.op_type if not node.domain else f"{node.domain}.{node.op_type}")
        for attr in node.attribute:
            for subgraph in list(attr.graphs) + ([attr.g] if attr.HasField("g") else []):
                types |= _graph_op_types(subgraph)
    return types


def imported_op_types(results):
    """Distinct op types used by the models that imported."""
    types = set()
    for result in results:
        if result.passed:
            types |= _graph_op_types(onnx.load(result.path, load_external_data=False).graph)
    return types


# --------------------------------------------------------------------------
# The expected-failure list
# --------------------------------------------------------------------------


def load_xfail(path):
    """Read ``key  # reason`` lines (blank lines and ``#`` comments skipped)."""
    entries = {}
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, _, reason = line.partition("#")
            if key.strip():
                entries[key.strip()] = reason.strip()
    return entries


def write_xfail(path, results):
    """Write the current failures to ``path``, grouped by reason, most frequent first."""
    groups = collections.defaultdict(list)
    for result in results:
        if not result.passed:
            groups[result.reason].append(result.key)
    width = max((len(key) for keys in groups.values() for key in keys), default=0)
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            "# Expected amp-opt import failures of the ONNX backend node tests.\n"
            "# Written by test/conformance/backend_import.py --write-xfail;\n"
            "# one `<source>/<test>  # reason` per line, grouped by reason.\n"
        )
        for reason, keys in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
            f.write(f"\n# --- {reason} ({len(keys)})\n")
            for key in sorted(keys):
                f.write(f"{key:<{width}}  # {reason}\n")


def compare(results, xfail):
    """Return ``(unexpected failures, unexpected passes)`` against ``xfail``.

    An unexpected failure is a failing test that is not listed, or a listed
    one that now fails for another reason (a crash, a timeout, another
    error): the reason must match the list exactly.
    """
    unexpected_failures, unexpected_passes = [], []
    for result in results:
        listed = xfail.get(result.key)
        if result.passed:
            if listed is not None:
                unexpected_passes.append((result, listed))
        elif listed != result.reason:
            unexpected_failures.append((result, listed))
    return unexpected_failures, unexpected_passes


def stale_entries(results, xfail):
    """Listed keys with no model in this run (renamed tests, a missing corpus)."""
    keys = {result.key for result in results}
    return sorted(key for key in xfail if key not in keys)


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def report(results, xfail):
    """Print the report; return True when the results match the xfail list."""
    unexpected_failures, unexpected_passes = compare(results, xfail)
    stale = stale_entries(results, xfail)
    failures = [r for r in results if not r.passed]
    by_source = collections.Counter(r.key.split("/")[0] for r in results)
    print("models: " + ", ".join(f"{s} {n}" for s, n in sorted(by_source.items())))
    print(f"failures by reason ({len(failures)} in all):")
    for reason, count in collections.Counter(r.reason for r in failures).most_common():
        print(f"  {count:5d}  {reason}")
    print(f"distinct op types imported: {len(imported_op_types(results))}")
    for result, listed in unexpected_failures:
        note = f" (listed as: {listed})" if listed is not None else " (not listed)"
        print(f"unexpected failure: {result.key}  # {result.reason}{note}")
    for result, listed in unexpected_passes:
        print(f"unexpected pass: {result.key}  (listed as: {listed})")
    for key in stale:
        print(f"stale entry: {key}  (listed, but no such model; is {DEBIAN_PACKAGE} installed?)")
    expected = len(failures) - len(unexpected_failures)
    print(f"expected failures (xfail): {expected}")
    passed = len(results) - len(failures)
    print(f"backend import: {passed} passed, {len(unexpected_failures)} failed")
    return not unexpected_failures and not unexpected_passes and not stale


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--amp-opt", default=DEFAULT_AMP_OPT, help="amp-opt binary (%(default)s)")
    parser.add_argument(
        "--xfail", default=DEFAULT_XFAIL, help="expected-failure list (%(default)s)"
    )
    parser.add_argument(
        "--write-xfail", action="store_true", help="rewrite the xfail list from this run's failures"
    )
    parser.add_argument("--jobs", type=int, default=2, help="parallel imports (%(default)s)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per model (%(default)s)")
    parser.add_argument("--allow-missing-debian", action="store_true",
                        help=f"run without Debian's {DEBIAN_PACKAGE} (an error by default)")
    args = parser.parse_args(argv)

    if not os.access(args.amp_opt, os.X_OK):
        parser.error(f"amp-opt not found at {args.amp_opt} (set AMP_OPT or --amp-opt)")
    with tempfile.TemporaryDirectory(prefix="amp-backend-") as scratch:
        debian = find_debian_models()
        if not debian and not args.allow_missing_debian:
            print(f"error: no node tests from Debian's {DEBIAN_PACKAGE} (`dpkg -L "
                  f"{DEBIAN_PACKAGE}` lists none): install it (apt-get install "
                  f"{DEBIAN_PACKAGE}); without it a large part of the corpus is missing "
                  f"(--allow-missing-debian runs anyway)")
            return 2
        models = {**find_onnx_models(scratch), **debian}
        results = import_all(args.amp_opt, models, args.jobs, args.timeout)
        if args.write_xfail:
            write_xfail(args.xfail, results)
            print(f"wrote {args.xfail}")
        ok = report(results, load_xfail(args.xfail))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
