"""Every lit input that is valid IR prints and parses back unchanged.

``amp-opt FILE --verify-roundtrip`` prints the parsed module (text and
bytecode), parses it again and compares: a custom printer or parser that
loses an attribute, a region or a type fails here even when no lit test
prints that op. Inputs are every ``.mlir`` under ``test/``: files that
``split-file`` cuts (``//--- name``) are cut the same way, files split by
``// -----`` are passed with ``-split-input-file``. Left out: the
``-verify-diagnostics`` files, whose inputs are invalid on purpose.
"""

import pathlib
import re

import pytest

from amp_test_utils import describe_failure

REPO = pathlib.Path(__file__).resolve().parents[2]
SPLIT_FILE = re.compile(r"^//--- (\S+)\s*$", re.M)


def _inputs():
    for path in sorted((REPO / "test").rglob("*.mlir")):
        text = path.read_text()
        if "-verify-diagnostics" in text:
            continue
        parts = SPLIT_FILE.split(text)
        if len(parts) > 1:
            # [preamble, name1, body1, name2, body2, ...]
            for name, body in zip(parts[1::2], parts[2::2]):
                if name.endswith(".mlir"):
                    yield pytest.param(path, name, body, id=f"{path.relative_to(REPO)}:{name}")
        else:
            yield pytest.param(path, None, text, id=str(path.relative_to(REPO)))


INPUTS = list(_inputs())


def test_inputs_found():
    """A moved test folder must not leave this test with nothing to check."""
    assert len(INPUTS) >= 30


@pytest.mark.parametrize("path,part,text", INPUTS)
def test_roundtrip(amp_opt, tmp_path, path, part, text):
    source = tmp_path / (part or path.name)
    source.write_text(text)
    flags = ["-split-input-file"] if re.search(r"^// -----", text, re.M) else []
    proc = amp_opt.run(source, *flags, "--verify-roundtrip", "-o", "/dev/null", timeout=120)
    assert proc.returncode == 0, describe_failure(proc)


def test_roundtrip_failure_is_reported(amp_opt, tmp_path):
    """A file that does not parse is a failure (exit 1), not a silent pass."""
    source = tmp_path / "bad.mlir"
    source.write_text("func.func @f( {\n")
    proc = amp_opt.run(source, "--verify-roundtrip", "-o", "/dev/null")
    assert proc.returncode == 1, describe_failure(proc)
