"""Run ``test/conformance/backend_import.py`` over the ONNX backend node tests.

It must match ``test/conformance/backend_import_xfail.txt`` exactly: no
unexpected failure, no listed test that now passes or fails for another
reason, and no listed test without a model. The counts are floors: a corpus
that shrinks (Debian's libonnx-testdata missing, an onnx upgrade dropping
tests) fails the test.
Also unit-tests its error classification and list comparison, so the report
itself can be trusted.
"""

import os
import re
import subprocess
import sys

import pytest

import backend_import

SCRIPT = backend_import.__file__
XFAIL = backend_import.DEFAULT_XFAIL  # test/conformance/backend_import_xfail.txt

# Measured with onnx 1.23.2 and Debian 12's libonnx-testdata (README.md).
MIN_ONNX_MODELS = 1884
MIN_DEBIAN_MODELS = 932
MIN_MODELS = 2816  # both together
MIN_IMPORTED = 2520


@pytest.mark.slow
def test_backend_node_tests_match_xfail_list(amp_opt):
    """Every backend node test imports, or fails as the xfail list says, and
    the corpus and the number of imported models do not shrink."""
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--amp-opt", amp_opt.path, "--xfail", XFAIL],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    out = proc.stdout
    lines = out.strip().splitlines()
    models = re.search(r"^models: (.*)$", out, re.M)
    assert models, f"no model count (is libonnx-testdata installed?):\n{out[-3000:]}{proc.stderr}"
    counts = {source: int(n) for source, n in re.findall(r"(\w+) (\d+)", models.group(1))}
    assert counts.get("debian", 0) >= MIN_DEBIAN_MODELS, (
        f"{counts.get('debian', 0)} models from Debian's libonnx-testdata, at least "
        f"{MIN_DEBIAN_MODELS} expected: is the package installed and complete?")
    assert counts.get("onnx", 0) >= MIN_ONNX_MODELS, (
        f"{counts.get('onnx', 0)} models from the onnx package, at least {MIN_ONNX_MODELS} "
        f"expected: which onnx is installed?")
    assert sum(counts.values()) >= MIN_MODELS, counts
    problems = "\n".join(l for l in lines if l.startswith(("unexpected ", "stale entry")))
    assert proc.returncode == 0, f"not as listed:\n{problems}\n{out[-1500:]}{proc.stderr[-2000:]}"
    match = lines and re.fullmatch(r"backend import: (\d+) passed, (\d+) failed", lines[-1])
    assert match, out
    assert match.group(2) == "0", out
    assert int(match.group(1)) >= MIN_IMPORTED, (
        f"{match.group(1)} models import, fewer than the {MIN_IMPORTED} measured")


def test_missing_debian_testdata_fails_the_run(amp_opt, tmp_path):
    """Without libonnx-testdata the import run stops with an error (exit
    status 2) instead of checking part of the corpus."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "dpkg").write_text("#!/bin/sh\nexit 1\n")
    (fake_bin / "dpkg").chmod(0o755)
    env = dict(os.environ, PATH=f"{fake_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([sys.executable, SCRIPT, "--amp-opt", amp_opt.path, "--xfail", XFAIL],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "libonnx-testdata" in proc.stdout, proc.stdout


def test_debian_testdata_installed():
    """libonnx-testdata is installed with all its node tests (a missing
    package fails here, in the fast tests, too)."""
    models = backend_import.find_debian_models()
    assert len(models) >= MIN_DEBIAN_MODELS, (
        f"{len(models)} node tests from Debian's libonnx-testdata, at least "
        f"{MIN_DEBIAN_MODELS} expected: apt-get install libonnx-testdata")


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
            "m.onnx:0:0: error: m.onnx: default-domain opset 29 is not supported "
            "(amp supports 1 to 28)",
            "opset 29 not supported",
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
    """Unlisted failures, listed passes and listed tests that fail for
    another reason (a crash, a timeout, another error) are unexpected."""
    result = backend_import.Result
    results = [
        result("onnx/test_a", "", True),
        result("onnx/test_b", "", False, "unsupported operator B"),
        result("onnx/test_c", "", False, "unsupported operator C"),
        result("onnx/test_d", "", False, "crash: killed by SIGSEGV", crashed=True),
        result("onnx/test_e", "", False, "crash: killed by SIGABRT", crashed=True),
        result("onnx/test_f", "", False, "timeout after 60 s"),
        result("onnx/test_g", "", False, "unsupported operator G2"),
    ]
    xfail = {
        "onnx/test_a": "unsupported operator A",
        "onnx/test_b": "unsupported operator B",
        "onnx/test_d": "unsupported operator D",
        "onnx/test_e": "crash: killed by SIGABRT",
        "onnx/test_f": "unsupported operator F",
        "onnx/test_g": "unsupported operator G",
        "debian/test_gone": "unsupported operator X",
    }
    failures, passes = backend_import.compare(results, xfail)
    assert [r.key for r, _ in failures] == ["onnx/test_c", "onnx/test_d", "onnx/test_f",
                                            "onnx/test_g"]
    assert [r.key for r, _ in passes] == ["onnx/test_a"]
    assert backend_import.stale_entries(results, xfail) == ["debian/test_gone"]
