"""amp_mlir: mixed-precision compilation of neural networks, from Python.

    import amp_mlir
    m = amp_mlir.import_onnx("model.onnx")
    report = amp_mlir.autocast(m, "fp16")
    print(report.summary["casts"], "casts")
    m.to_onnx("model.fp16.onnx")
    outputs = m.compile()(x)

Every function is a thin layer over amp's libraries (the same code and the
same option structs as ``amp-opt`` and ``amp-run``); failures raise
:class:`AmpError` with the diagnostics, and nothing is printed.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Sequence, Union

import numpy as np

from . import _amp_mlir
from ._errors import AmpError, Diagnostic
from ._report import Report

__all__ = [
    "AmpError",
    "Diagnostic",
    "Module",
    "Program",
    "Report",
    "autocast",
    "front_end_options",
    "import_onnx",
    "load_mlir",
]

__version__ = "0.1.0"

PathLike = Union[str, "os.PathLike[str]"]

# The low-precision types by their Python spellings (and amp's own).
_DTYPES = {"fp16": "f16", "float16": "f16", "f16": "f16", "half": "f16",
           "bf16": "bf16", "bfloat16": "bf16"}


def _options(mapping: Mapping[str, Any]) -> list:
    """Keyword arguments -> the pipeline options' names (``opt_level`` ->
    ``opt-level``); the library checks names and kinds."""
    return [(name.replace("_", "-"), list(value) if isinstance(value, (tuple, set, frozenset))
             else value) for name, value in mapping.items()]


class Program:
    """A compiled entry function: ``program(*arrays) -> list[numpy.ndarray]``.

    Arrays are checked against :attr:`inputs` (dtype, rank, static sizes);
    bf16 inputs take float32 arrays and bf16 outputs come back as float32
    (numpy has no bfloat16). Outputs are owned by the arrays returned (no
    copy); inputs are copied once. The GIL is released while it runs.
    """

    def __init__(self, native: "_amp_mlir.Program"):
        self._native = native

    @property
    def inputs(self) -> list:
        """``[(name, dtype, shape)]``; a dynamic size is None."""
        return list(self._native.inputs)

    @property
    def outputs(self) -> list:
        return list(self._native.outputs)

    def __call__(self, *arrays) -> list:
        if len(arrays) != len(self._native.inputs):
            raise AmpError(f"the program takes {len(self._native.inputs)} inputs, "
                           f"got {len(arrays)}")
        prepared = []
        for index, (array, (name, dtype, _)) in enumerate(zip(arrays, self._native.inputs)):
            array = np.asarray(array)
            want = "float32" if dtype == "bfloat16" else dtype
            if array.dtype != np.dtype(want):
                raise AmpError(f"input '{name}' (argument {index}) is {array.dtype}, "
                               f"the program takes {dtype}")
            prepared.append(np.ascontiguousarray(array))
        return self._native.run(prepared)

    def __repr__(self) -> str:
        return f"<amp_mlir.Program inputs={self.inputs} outputs={self.outputs}>"


class Module:
    """A model in the amp dialect. Made by :func:`import_onnx` or
    :func:`load_mlir`; :func:`autocast` rewrites it in place."""

    def __init__(self, native: "_amp_mlir.Module"):
        self._native = native

    @property
    def from_onnx(self) -> bool:
        """Whether the module was imported from ONNX."""
        return self._native.from_onnx

    @property
    def autocast_type(self) -> str:
        """"f16" or "bf16" once autocast ran, else ""."""
        return self._native.autocast_type

    def clone(self) -> "Module":
        """An independent copy (its own MLIR context)."""
        return Module(self._native.clone())

    def to_mlir(self, *, generic: bool = False) -> str:
        """The module as MLIR text."""
        return self._native.to_mlir(generic)

    def to_bytecode(self, path: PathLike) -> None:
        """Writes MLIR bytecode to ``path`` (nothing is left on failure)."""
        self._native.write_bytecode(os.fspath(path))

    def to_onnx(self, path: PathLike | None = None, opset: int | None = None):
        """Writes the model as ONNX to ``path``, or returns its bytes when
        no path is given. ``opset`` None keeps the imported opset."""
        opset = 0 if opset is None else int(opset)
        if path is None:
            return self._native.onnx_bytes(opset)
        self._native.write_onnx(os.fspath(path), opset)
        return None

    def compile(self, target: str = "cpu") -> Program:
        """Lowers a copy of the module and JIT-compiles its entry function
        (``@main`` or the only public function) for the CPU."""
        return Program(self._native.compile(target))

    def __str__(self) -> str:
        return self.to_mlir()

    def __repr__(self) -> str:
        kind = "onnx" if self.from_onnx else "mlir"
        precision = self.autocast_type or "fp32"
        return f"<amp_mlir.Module from {kind}, {precision}>"


def import_onnx(model, *, fold_constants: bool = True,
                limits: Mapping[str, int] | None = None) -> Module:
    """Imports an ONNX model: a path, its serialized bytes, or an
    ``onnx.ModelProto``.

    ``limits`` caps what the file may ask for, by the names of amp-opt's
    ``--amp-max-*`` flags without the prefix (``{"max_nodes": 10000}``).
    """
    limit_options = _options(limits or {})
    if isinstance(model, (bytes, bytearray, memoryview)):
        return Module(_amp_mlir.import_onnx_bytes(bytes(model), "<bytes>",
                                                  fold_constants, limit_options))
    if hasattr(model, "SerializeToString"):
        return Module(_amp_mlir.import_onnx_bytes(model.SerializeToString(), "<ModelProto>",
                                                  fold_constants, limit_options))
    return Module(_amp_mlir.import_onnx_file(os.fspath(model), fold_constants, limit_options))


def load_mlir(source) -> Module:
    """Parses amp MLIR: a path (``str`` naming an existing file, or a
    ``PathLike``; text or bytecode) or MLIR text."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                           and os.path.exists(source)):
        return Module(_amp_mlir.parse_mlir_file(os.fspath(source)))
    return Module(_amp_mlir.parse_mlir_text(source, "<string>"))


def autocast(module: Module, dtype: str = "fp16", *, allow: Iterable[str] = (),
             deny: Iterable[str] = (), node_rules: Mapping[str, str] | None = None,
             opt_level: int = 1, policy: PathLike | None = None, **options) -> Report:
    """Rewrites ``module`` in mixed precision and returns the report.

    This is amp's front end (``amp-front-end``) with amp-autocast's
    options: ``dtype`` "fp16" or "bf16"; ``allow``/``deny`` op types
    added to the policy's lists; ``node_rules`` ``{pattern: class}`` with
    a node name or a regex over whole names and allow|deny|infer|clear;
    ``opt_level`` 0-2; ``policy`` a policy file. Further keywords are the
    other options of ``amp-front-end{...}`` by their names with ``_`` for
    ``-`` (``keep_io_types=False``, ``fold_constants=False``, ...; see
    :func:`front_end_options`).
    """
    if not isinstance(module, Module):
        raise TypeError("autocast() takes an amp_mlir.Module")
    try:
        low = _DTYPES[dtype.lower()]
    except (KeyError, AttributeError):
        raise AmpError(f"unknown dtype {dtype!r} (use 'fp16' or 'bf16')") from None
    given: dict[str, Any] = {"type": low, "opt_level": opt_level}
    if allow:
        given["allow"] = list(allow)
    if deny:
        given["deny"] = list(deny)
    if node_rules:
        given["node_rules"] = [f"{pattern}={cls}" for pattern, cls in node_rules.items()]
    if policy is not None:
        given["policy"] = os.fspath(policy)
    for name, value in options.items():
        if name in given or name == "dtype":
            raise TypeError(f"autocast() got {name!r} twice")
        given[name] = value
    return Report(module._native.autocast(_options(given)))


def front_end_options() -> list:
    """The options :func:`autocast` takes (the front end's and
    amp-autocast's), as dicts: name, description, kind, default, choices."""
    return list(_amp_mlir.describe_options("front-end"))
