"""Round-trip the ONNX backend node tests through amp's ONNX writer.

``test/conformance/backend_export.py`` imports each node-test model amp
supports, writes it back as ONNX, checks it with ``onnx.checker`` (full
check) and runs it in onnxruntime against onnxruntime's outputs for the
original. Measured on 2026-12-02 (onnx 1.23.2 node tests):

| mode | passed | failed | skipped | beyond fp16 tolerance |
|---|---:|---:|---:|---:|
| fp32 (``--amp-opt-level=0``) | 1113 | 0 | 34 | - |
| autocast fp16 (default) | 1111 | 0 | 34 | 2 |

Skipped: the original fails ``onnx.checker`` or onnxruntime cannot run it.
The two fp16 differences are Attention's optional ``qk_matmul_output`` where
an fp32 mask of -3.4e38 becomes -inf in fp16. The pass counts are floors, and
each test beyond fp16 tolerance must be one of :data:`EXPORT_INEXACT` (same
output, error within its bound): a new one, or a larger error, fails.
"""

import re
import subprocess
import sys

import pytest

import backend_export

SCRIPT = backend_export.__file__

MIN_PASSED_FP32 = 1113
MIN_PASSED_MIXED = 1111
# Tests beyond fp16 tolerance after autocast + export: key -> (output, bound
# on the max abs error). The -inf of an fp32 -3.4e38 mask gives an infinite error.
EXPORT_INEXACT = {
    "onnx/test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal":
        ("output 3", float("inf")),
    "onnx/test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal":
        ("output 3", float("inf")),
}


def _run(amp_opt, *args):
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--amp-opt", amp_opt.path, *args],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr
    return proc, lines


@pytest.mark.slow
def test_fp32_round_trip(amp_opt):
    """Every imported node test is written back exactly (fp32, no autocast)."""
    proc, lines = _run(amp_opt)
    match = re.fullmatch(r"(\d+) passed, (\d+) failed, (\d+) skipped", lines[-1])
    assert match, proc.stdout
    assert proc.returncode == 0 and match.group(2) == "0", proc.stdout
    assert int(match.group(1)) >= MIN_PASSED_FP32, (
        f"{match.group(1)} models round-trip, fewer than the {MIN_PASSED_FP32} measured")


@pytest.mark.slow
def test_mixed_precision_export(amp_opt):
    """With autocast, every exported model is valid ONNX that onnxruntime
    runs; the tests beyond fp16 tolerance are the known ones, within their
    bounds."""
    proc, lines = _run(amp_opt, "--mixed")
    match = re.fullmatch(
        r"(\d+) passed, (\d+) failed, (\d+) skipped, (\d+) beyond fp16 tolerance", lines[-1])
    assert match, proc.stdout
    assert proc.returncode == 0 and match.group(2) == "0", proc.stdout
    assert int(match.group(1)) >= MIN_PASSED_MIXED, (
        f"{match.group(1)} models pass, fewer than the {MIN_PASSED_MIXED} measured")
    inexact = {key: (output, float(error)) for key, output, error in re.findall(
        r"^inexact (\S+): (output \d+): max abs error (\S+)$", proc.stdout, re.M)}
    assert len(inexact) == int(match.group(4)), proc.stdout
    problems = []
    for key, (output, error) in sorted(inexact.items()):
        if key not in EXPORT_INEXACT:
            problems.append(f"new: {key}: {output}: max abs error {error:.3g}")
        elif output != EXPORT_INEXACT[key][0] or not error <= EXPORT_INEXACT[key][1]:
            problems.append(f"changed: {key}: {output}: max abs error {error:.3g} (known: "
                            f"{EXPORT_INEXACT[key][0]}, bound {EXPORT_INEXACT[key][1]:.2g})")
    for key in sorted(set(EXPORT_INEXACT) - set(inexact)):
        problems.append(f"now within fp16 tolerance (remove it from EXPORT_INEXACT): {key}")
    assert not problems, "\n".join(problems)


def test_compare_outputs_catches_a_dropped_output():
    """An export that loses an output fails, as does a wrong shape; equal
    outputs pass (the comparison used to zip the lists, so a dropped output
    passed)."""
    import numpy as np

    a, b = np.zeros((2, 3), np.float32), np.ones(4, np.int64)
    assert backend_export.compare_outputs([a, b], [a, b], (1e-3, 1e-5)) == ("passed", "")
    status, detail = backend_export.compare_outputs([a], [a, b], (1e-3, 1e-5))
    assert status == "failed" and "1 outputs, the original has 2" in detail
    status, _ = backend_export.compare_outputs([a.reshape(3, 2), b], [a, b], (1e-3, 1e-5))
    assert status == "failed"


import backend_roundtrip_ir  # noqa: E402

# Measured 2026-12-06 (onnx 1.23.2 node tests and Debian's libonnx-testdata):
# All 2,477 imported node tests give the same printed IR after export and
# re-import (test/conformance/backend_roundtrip_ir_xfail.txt is empty).
MIN_SAME_IR = 2477  # every imported node test (2026-12-07)


@pytest.mark.slow
def test_reimported_ir_is_the_same(amp_opt):
    """Import -> export -> re-import prints the same IR for every imported
    node test not listed as a known difference; a listed one that now
    round-trips fails (XPASS) until its entry is removed."""
    proc = subprocess.run([sys.executable, backend_roundtrip_ir.__file__, "--amp-opt",
                           amp_opt.path], capture_output=True, text=True, timeout=1800)
    problems = "\n".join(line for line in proc.stdout.splitlines()
                         if line.startswith(("FAIL", "XPASS", "STALE")))
    assert proc.returncode == 0, problems or proc.stdout[-3000:] + proc.stderr[-3000:]
    match = re.search(r"^(\d+) same IR, (\d+) differ or fail", proc.stdout, re.M)
    assert match, proc.stdout[-2000:]
    assert int(match.group(1)) >= MIN_SAME_IR, match.group(0)


def test_roundtrip_ir_catches_a_changed_attribute(tmp_path):
    """The comparison is on the printed text: one changed attribute value
    (a writer that dropped a non-default attribute) is a difference."""
    first = "%0 = amp.gemm %a, %b {alpha = 2.500000e-01 : f32, transA = 1 : i64}"
    second = "%0 = amp.gemm %a, %b {alpha = 2.500000e-01 : f32}"
    assert backend_roundtrip_ir.first_difference(first, second).startswith("-%0 = amp.gemm")
