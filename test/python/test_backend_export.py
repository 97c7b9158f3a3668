"""Round-trip the ONNX backend node tests through amp's ONNX writer.

``python/amp_testmodels/backend_export.py`` imports each node-test model amp
supports, writes it back as ONNX, checks it with ``onnx.checker`` (full
check) and runs it in onnxruntime against onnxruntime's outputs for the
original. Measured on 2026-12-02 (onnx 1.23.2 node tests):

| mode | passed | failed | skipped | beyond fp16 tolerance |
|---|---:|---:|---:|---:|
| fp32 (``--amp-opt-level=0``) | 1113 | 0 | 34 | - |
| autocast fp16 (default) | 1111 | 0 | 34 | 2 |

Skipped: the original fails ``onnx.checker`` or onnxruntime cannot run it.
The two fp16 differences are Attention's optional ``qk_matmul_output`` where
an fp32 mask of -3.4e38 becomes -inf in fp16.
"""

import re
import subprocess
import sys

import pytest

from amp_testmodels import backend_export

SCRIPT = backend_export.__file__


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
    assert int(match.group(1)) >= 1100, proc.stdout


@pytest.mark.slow
def test_mixed_precision_export(amp_opt):
    """With autocast, every exported model is valid ONNX that onnxruntime
    runs; numeric differences beyond fp16 tolerance stay rare."""
    proc, lines = _run(amp_opt, "--mixed")
    match = re.fullmatch(
        r"(\d+) passed, (\d+) failed, (\d+) skipped, (\d+) beyond fp16 tolerance", lines[-1])
    assert match, proc.stdout
    assert proc.returncode == 0 and match.group(2) == "0", proc.stdout
    assert int(match.group(1)) >= 1100, proc.stdout
    assert int(match.group(4)) <= 5, proc.stdout
