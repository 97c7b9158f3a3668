"""Helpers for amp's pytest suite: running amp-opt and reading the MLIR it prints."""

import functools
import importlib
import importlib.util
import os
import re
import resource
import signal
import subprocess

import onnx
import pytest

MLIR_BYTECODE_MAGIC = b"ML\xefR"

# Address-space cap for amp-opt: a runaway rewrite loop then aborts within
# seconds instead of exhausting the machine. The > 2 GiB model needs ~2.2 GiB.
MEMORY_LIMIT_BYTES = 6 << 30

# An operation at the start of a line: `%a, %b:2 = amp.op ...`, `amp.yield ...`
# or the generic form `"amp.op"(...)`.
_OP_RE = re.compile(r'^\s*(?:%[\w#:]+(?:\s*,\s*%[\w#:]+)*\s*=\s*)?"?(amp\.\w+)')
_DEF_RE = re.compile(r"(%\w+)(?::\d+)?(?=(?:\s*,\s*%[\w:]+)*\s*=)")
_USE_RE = re.compile(r"%\w+")
_ARG_RE = re.compile(r"(%\w+):\s")


class AmpOpt:
    """Runs one amp-opt binary and checks its results."""

    def __init__(self, path):
        self.path = os.path.abspath(path)

    def run(self, *args, timeout=300):
        """Run ``amp-opt ARGS`` under the memory cap; return the CompletedProcess (text).

        Running longer than ``timeout`` seconds is an assertion failure.
        """
        command = [self.path, *map(str, args)]
        try:
            return subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, preexec_fn=limit_memory
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{' '.join(command)}: no result within {timeout} s") from None

    def import_model(self, model, out_path, *flags, timeout=300):
        """Import ``model`` (a path, or a ModelProto saved beside ``out_path``)
        with ``--amp-opt-level=0`` (no autocast) unless ``flags`` choose.

        Asserts success within ``timeout`` seconds, then that the output
        parses back (``amp-opt OUT --verify-roundtrip``). Returns the MLIR text.
        """
        model_path = model
        if isinstance(model, onnx.ModelProto):
            model_path = os.path.splitext(str(out_path))[0] + ".onnx"
            onnx.save_model(model, model_path)
        # These are import tests: no precision change unless asked for.
        if not any(f.startswith(("--amp-opt-level", "--amp-type")) for f in flags):
            flags = ("--amp-opt-level=0",) + tuple(flags)
        proc = self.run(model_path, "-o", out_path, *flags, timeout=timeout)
        assert proc.returncode == 0, describe_failure(proc)
        check = self.run(out_path, "--verify-roundtrip", "-o", os.devnull)
        assert check.returncode == 0, describe_failure(check)
        with open(out_path, encoding="utf-8") as f:
            return f.read()

    def expect_import_error(self, model_path, *fragments):
        """Import ``model_path`` and assert a clean failure.

        A clean failure exits with a positive status (not killed by a
        signal), prints every one of ``fragments`` on stderr and writes no
        output file. Returns stderr.
        """
        out_path = str(model_path) + ".mlir"
        proc = self.run(model_path, "-o", out_path)
        assert proc.returncode > 0, describe_failure(proc)
        for fragment in fragments:
            assert fragment in proc.stderr, f"{fragment!r} not in stderr:\n{proc.stderr}"
        assert not os.path.exists(out_path), "amp-opt wrote an output file after failing"
        return proc.stderr


def limit_memory():
    """Cap the calling process's address space at :data:`MEMORY_LIMIT_BYTES`.

    Not under ``AMP_SANITIZED=1`` (scripts/amp.sh sanitize): AddressSanitizer
    reserves terabytes of shadow address space, which any such cap refuses.
    """
    if os.environ.get("AMP_SANITIZED") == "1":
        return
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def describe_failure(proc):
    """A message for an unexpected amp-opt result, naming a crash as such."""
    status = f"exit status {proc.returncode}"
    if proc.returncode < 0:
        status = f"CRASH: killed by {signal.Signals(-proc.returncode).name}"
    return f"{' '.join(proc.args)}: {status}\nstderr:\n{proc.stderr[-4000:]}"


def op_names(mlir_text):
    """The amp op names in ``mlir_text``, in order of appearance."""
    names = []
    for line in mlir_text.splitlines():
        match = _OP_RE.match(line)
        if match:
            names.append(match.group(1))
    return names


def op_regions(mlir_text, op_name):
    """The region bodies of the first ``op_name`` op and the text before it.

    Regions are the top-level ``{...}`` groups of the op that hold an
    ``amp.yield``. Returns ``(text before the op, [region texts])``.
    """
    match = re.search(rf"^.*=\s*{re.escape(op_name)}\b", mlir_text, re.MULTILINE)
    assert match, f"no {op_name} in:\n{mlir_text}"
    regions, depth, start = [], 0, None
    for index in range(match.end(), len(mlir_text)):
        char = mlir_text[index]
        if char == "{":
            if depth == 0:
                start = index + 1
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0 and "amp.yield" in mlir_text[start:index]:
                regions.append(mlir_text[start:index])
        elif char == "\n" and depth == 0 and regions:
            break
    return mlir_text[: match.start()], regions


def defined_values(mlir_text):
    """SSA values ``mlir_text`` defines: op results and block or function arguments."""
    return set(_DEF_RE.findall(mlir_text)) | set(_ARG_RE.findall(mlir_text))


def outer_values_used(region_text):
    """SSA values a region uses but does not define."""
    used = set()
    for line in region_text.splitlines():
        operands = line.split("=", 1)[1] if _DEF_RE.search(line) else line
        used.update(_USE_RE.findall(operands.split(":", 1)[0]))
    return used - defined_values(region_text)


DEBIAN_PYTHON = "/usr/bin/python3"
SHARED_EXPORTS = "/tmp/amp-models/opset17"  # export_torch.py's shared cache
MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models",
                          "amp_testmodels")


@functools.lru_cache(maxsize=None)
def _export_cache():
    """test/models/amp_testmodels/export_cache.py (it imports no torch)."""
    spec = importlib.util.spec_from_file_location(
        "amp_export_cache", os.path.join(MODELS_DIR, "export_cache.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cached_export(folder, name, opset=17, dynamic_batch=False, fp16_range=False):
    """The path of ``folder``'s export of ``name`` by export_torch.py with
    exactly these options, or None. The entry's keys are checked
    (export_cache.py): made from the current exporter sources under
    Debian's torch, and the file is the one the exporter wrote; a stale
    export or another file under the right name is not reused."""
    options = {"opset": opset, "dynamic_batch": bool(dynamic_batch),
               "fp16_range": bool(fp16_range)}
    entry = _export_cache().verified_entry(folder, name, "export_torch", options,
                                           python=DEBIAN_PYTHON)
    return entry["path"] if entry else None


def cached_dynamic_export(folder, name, opset):
    """``folder``'s manifest entry (with ``path``) for export_dynamic.py's
    ``name`` at ``opset``, checked like :func:`cached_export`, or None."""
    return _export_cache().verified_entry(folder, name, "export_dynamic", {"opset": opset},
                                          python=DEBIAN_PYTHON)


def plain_export(folder, name, opset=17):
    """The path of a plain export of ``name`` (export_torch.py without
    ``--dynamic-batch`` or ``--fp16-range``) in ``folder``, or None. The
    shared cache may hold the other variants; tests whose bounds were
    measured on plain exports must not take them."""
    return cached_export(folder, name, opset)


def require_debian_torch():
    """Fails the calling test unless Debian's torch is installed: a missing
    test dependency is an error, never a skip (scripts/amp.sh installs
    python3-torch and python3-torchvision)."""
    if not has_debian_torch():
        pytest.fail(f"{DEBIAN_PYTHON} cannot import torch and torchvision "
                    "(install Debian's python3-torch python3-torchvision)")


def has_debian_torch():
    """Whether Debian's python3-torch and python3-torchvision are installed
    (the torch model exports run under /usr/bin/python3)."""
    if not os.path.exists(DEBIAN_PYTHON):
        return False
    probe = subprocess.run([DEBIAN_PYTHON, "-c", "import torch, torchvision"],
                           capture_output=True)
    return probe.returncode == 0


def require_module(name, package=None):
    """Import and return module ``name``; fail (never skip) when it is missing.

    ``scripts/amp.sh test`` installs every module the tests use, so a missing
    one is a broken set-up: ``pytest.importorskip`` would turn the tests that
    need it into silent skips. Called at module level, the failure is a
    collection error, which fails the pytest run.
    """
    try:
        return importlib.import_module(name)
    except ImportError as error:
        problem = str(error)
    pytest.fail(f"Python module {name!r} is required but cannot be imported ({problem}); "
                f"install it (pip install {package or name}, or scripts/amp.sh test)",
                pytrace=False)
