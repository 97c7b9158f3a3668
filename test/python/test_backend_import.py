"""Run ``python/amp_testmodels/backend_import.py`` over the ONNX backend node tests.

It must match ``backend_import_xfail.txt`` exactly: no unexpected failure and
no listed test that now passes. Also unit-tests its error classification and
list comparison, so the report itself can be trusted.
"""

import os
import re
import subprocess
import sys

import pytest

from amp_testmodels import backend_import

SCRIPT = backend_import.__file__
XFAIL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "backend_import_xfail.txt")


@pytest.mark.slow
def test_backend_node_tests_match_xfail_list(amp_opt):
    """Every backend node test imports, or fails as the xfail list says."""
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--amp-opt", amp_opt.path, "--xfail", XFAIL],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    lines = proc.stdout.strip().splitlines()
    assert lines and re.fullmatch(r"backend import: \d+ passed, \d+ failed", lines[-1]), proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert lines[-1].endswith(" 0 failed")


def test_xfail_list_format():
    """Each entry is ``<source>/<test>  # reason`` with a known source and a reason."""
    with open(XFAIL, encoding="utf-8") as f:
        entries = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    assert entries
    for line in entries:
        assert re.fullmatch(r"(onnx|debian)/test_\w+ +# \S.*", line), line
    keys = [line.split("#")[0].strip() for line in entries]
    assert len(keys) == len(set(keys)), "duplicate keys"


@pytest.mark.parametrize(
    "stderr, reason",
    [
        (
            "m.onnx:0:0: error: m.onnx: node 'n' (#0 in main, op Foo, domain 'ai.onnx', "
            "opset 17): unsupported operator; amp supports 139 ONNX operators",
            "unsupported operator Foo",
        ),
        (
            "m.onnx:0:0: error: m.onnx: default-domain opset 9 is not supported "
            "(amp supports 11 to 25)",
            "opset 9 not supported",
        ),
        (
            "m.onnx:0:0: error: m.onnx: input 'x' has unsupported type STRING",
            "unsupported element type STRING",
        ),
        (
            "m.onnx:0:0: error: m.onnx: input 'like' has unsupported type data type 17",
            "unsupported element type FLOAT8E4M3FN",
        ),
        (
            "m.onnx:0:0: error: m.onnx: input 's' is not a tensor "
            "(sequences, maps and optionals are not supported)",
            "sequence/map/optional types not supported",
        ),
        (
            "m.onnx:0:0: error: m.onnx: node 'sq' (#0 in main, op Squeeze, "
            "domain 'ai.onnx', opset 13): Squeeze axes must be constant",
            "Squeeze: Squeeze axes must be constant",
        ),
        ("", "failed without an error message"),
    ],
)
def test_classify(stderr, reason):
    """amp-opt's error messages map to stable failure categories."""
    assert backend_import.classify(stderr) == reason


def test_compare_flags_unexpected_results():
    """Unlisted failures, listed passes and new crashes of listed tests are unexpected."""
    result = backend_import.Result
    results = [
        result("onnx/test_a", "", True),
        result("onnx/test_b", "", False, "unsupported operator B"),
        result("onnx/test_c", "", False, "unsupported operator C"),
        result("onnx/test_d", "", False, "crash: killed by SIGSEGV", crashed=True),
        result("onnx/test_e", "", False, "crash: killed by SIGABRT", crashed=True),
    ]
    xfail = {
        "onnx/test_a": "unsupported operator A",
        "onnx/test_b": "unsupported operator B",
        "onnx/test_d": "unsupported operator D",
        "onnx/test_e": "crash: killed by SIGABRT",
    }
    failures, passes = backend_import.compare(results, xfail)
    assert [r.key for r, _ in failures] == ["onnx/test_c", "onnx/test_d"]
    assert [r.key for r, _ in passes] == ["onnx/test_a"]
