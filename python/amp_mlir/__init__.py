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

import collections
import os
from typing import Any, Iterable, Mapping, Sequence, Union

import numpy as np

from . import _amp_mlir
from ._errors import AmpError, Diagnostic
from ._report import NumericsReport, Report

__all__ = [
    "AmpError",
    "Diagnostic",
    "Module",
    "NumericsReport",
    "Program",
    "Report",
    "StepResult",
    "Trainer",
    "autocast",
    "build_train_step",
    "check_numerics",
    "front_end_options",
    "import_onnx",
    "load_mlir",
    "train_step_options",
]

__version__ = "0.1.0"

PathLike = Union[str, "os.PathLike[str]"]

# The low-precision types by their Python spellings (and amp's own).
_DTYPES = {"fp16": "f16", "float16": "f16", "f16": "f16", "half": "f16",
           "bf16": "bf16", "bfloat16": "bf16"}


def _c_order(array) -> np.ndarray:
    """The array in C order (copied only if it is not); 0-d arrays stay 0-d
    (numpy.ascontiguousarray would make them 1-d)."""
    return np.asarray(array, order="C")


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
        return self._native.run([_c_order(a) for a in arrays])

    def __repr__(self) -> str:
        return f"<amp_mlir.Program inputs={self.inputs} outputs={self.outputs}>"


class Module:
    """A model in the amp dialect. Made by :func:`import_onnx` or
    :func:`load_mlir`; :func:`autocast` rewrites it in place."""

    def __init__(self, native: "_amp_mlir.Module"):
        self._native = native

    @property
    def from_torch(self) -> bool:
        """Imported by amp_mlir.torch (a torch.export graph)."""
        return self._native.from_torch

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
        kind = "onnx" if self.from_onnx else "torch" if self.from_torch else "mlir"
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
    """Parses amp MLIR: a path (a ``PathLike``, or a ``str`` naming an
    existing file or ending in ``.mlir``/``.mlirbc``; text or bytecode) or
    MLIR text."""
    looks_like_path = isinstance(source, str) and "\n" not in source and (
        os.path.exists(source) or source.endswith((".mlir", ".mlirbc")))
    if isinstance(source, os.PathLike) or looks_like_path:
        return Module(_amp_mlir.parse_mlir_file(os.fspath(source)))
    return Module(_amp_mlir.parse_mlir_text(source, "<string>"))


def _autocast_options(dtype: str, options: dict) -> dict:
    """autocast()'s arguments as the front end's options."""
    try:
        low = _DTYPES[dtype.lower()]
    except (KeyError, AttributeError):
        raise AmpError(f"unknown dtype {dtype!r} (use 'fp16' or 'bf16')") from None
    given: dict[str, Any] = {"type": low}
    for name, value in options.items():
        if name in ("type", "dtype"):
            raise TypeError(f"{name!r} is given by the dtype argument")
        if name in ("allow", "deny", "infer", "clear") and not value:
            continue
        if name == "node_rules":
            if value:
                given["node_rules"] = [f"{p}={c}" for p, c in value.items()]
            continue
        if name == "policy":
            if value is not None:
                given["policy"] = os.fspath(value)
            continue
        given[name] = list(value) if isinstance(value, (tuple, set, frozenset)) else value
    return given


def autocast(module: Module, dtype: str = "fp16", *, allow: Iterable[str] = (),
             deny: Iterable[str] = (), node_rules: Mapping[str, str] | None = None,
             opt_level: int = 1, policy: PathLike | None = None, **options) -> Report:
    """Rewrites ``module`` in mixed precision and returns the report.

    This is amp's front end (``amp-front-end``) with amp-autocast's
    options: ``dtype`` "fp16" or "bf16"; ``allow``/``deny`` op types
    added to the policy's lists; ``node_rules`` ``{pattern: class}`` with
    a node name or a regex over whole names and
    allow|deny|infer|clear|promote; ``opt_level`` 0-2; ``policy`` a policy
    file or a preset name (``"torch-cuda-fp16"``, ``"torch-cpu-bf16"``:
    torch.autocast's op lists). Further keywords are the
    other options of ``amp-front-end{...}`` by their names with ``_`` for
    ``-`` (``keep_io_types=False``, ``fold_constants=False``, ...; see
    :func:`front_end_options`).
    """
    if not isinstance(module, Module):
        raise TypeError("autocast() takes an amp_mlir.Module")
    options.update(allow=allow, deny=deny, node_rules=node_rules, opt_level=opt_level,
                   policy=policy)
    given = _autocast_options(dtype, options)
    return Report(module._native.autocast(_options(given)))


def check_numerics(module: Module, dtype: str, inputs, *, underflow: float = 0.01,
                   **options) -> NumericsReport:
    """Runs ``module`` in ``dtype`` beside its fp32 self on ``inputs`` (an
    array or a sequence of arrays) and compares every op's output, as
    ``amp-run --check-numerics`` does: the first op that goes non-finite
    where fp32 is finite, the ops losing more than ``underflow`` of their
    nonzero values to zero or subnormals, and every op's error. Further
    keywords are :func:`autocast`'s (``deny``, ``node_rules``, ...). The
    module is left as it is (fp32)."""
    if not isinstance(module, Module):
        raise TypeError("check_numerics() takes an amp_mlir.Module")
    if isinstance(inputs, np.ndarray):
        inputs = [inputs]
    given = _autocast_options(dtype, options)
    json_text, outputs = module._native.check_numerics(
        _options(given), _options({"underflow": float(underflow)}),
        [_c_order(a) for a in inputs])
    return NumericsReport(json_text, list(outputs))


StepResult = collections.namedtuple("StepResult", "loss scale skipped lr")
StepResult.__doc__ = """One optimizer step: the mean loss of the batch, the loss scale the step
ran with (1 without scaling), whether the update was skipped (non-finite
gradients; the scale backed off) and the learning rate."""


class Trainer:
    """A compiled training program and its state: made by
    :func:`build_train_step`. The same code takes ``amp-run --train``'s
    steps, so the same batches give the same state bit for bit."""

    def __init__(self, native: "_amp_mlir.Trainer"):
        self._native = native

    @property
    def batch_inputs(self) -> list:
        """``[(name, dtype, shape)]`` of the model input and the labels a
        step takes."""
        return list(self._native.batch_inputs)

    @property
    def steps(self) -> int:
        """Steps taken (skipped ones included)."""
        return self._native.steps

    def step(self, x, y) -> StepResult:
        """One optimizer step on the batch ``x`` with labels (or targets)
        ``y`` (with ``accumulate=K``: K micro-batches, the rows split
        evenly). Non-finite gradients without loss scaling, or with the
        scale at its minimum, raise :class:`AmpError` (training cannot go
        on)."""
        return StepResult(*self._native.step(_c_order(x),
                                             _c_order(y)))

    def predict(self, x) -> list:
        """The model's outputs on ``x`` with the current weights (inference
        mode: Dropout off, BatchNorm with the running statistics)."""
        return self._native.predict(_c_order(x))

    def state_dict(self) -> dict:
        """Parameters, buffers, optimizer and scaler state and the step
        count, by the names of ``amp-run --save-state``'s ``.npz`` files."""
        return dict(self._native.state())

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        """Replaces the whole state (every name, same dtypes and shapes);
        an ``.npz`` from ``amp-run --save-state`` loads too (its
        ``amp_run.batches_done`` entry is the loop's and is ignored)."""
        state = {k: _c_order(v) for k, v in state.items()
                 if k != "amp_run.batches_done"}
        self._native.set_state(state)

    def export_onnx(self, path: PathLike) -> None:
        """Writes the ONNX model trained, with the trained weights and
        running statistics (inference mode)."""
        self._native.export_onnx(os.fspath(path))


def build_train_step(module: Module, *, loss: str = "cross-entropy", optimizer: str = "sgd",
                     lr: float = 1e-3, dtype: str | None = None, loss_scale=None,
                     batch_size: int | None = None, accumulate: int = 1, **options) -> Trainer:
    """Builds and compiles the training program of an ONNX model, as
    ``amp-opt --train`` / ``amp-run --train`` do, with the same options.

    ``loss`` "cross-entropy" | "mse" | "output"; ``optimizer`` "sgd" |
    "momentum" | "adamw"; ``dtype`` None (fp32), "fp16" or "bf16" (the
    forward pass is autocast; fp32 master weights); ``loss_scale``
    "dynamic" (the fp16 default), "none", "static:S" or a number S;
    ``batch_size`` gives the step a static batch size (convolution weight
    gradients need one; amp-run uses ``--batch-size``). ``accumulate`` K > 1:
    each :meth:`Trainer.step` takes K micro-batches of ``batch_size`` rows
    (its arrays have K * batch_size rows), one optimizer step over them, as
    ``amp-run --train --accumulate K`` does. Further keywords
    are the other options of ``amp-train-step{...}`` and the front end with
    ``_`` for ``-`` (``weight_decay``, ``lr_schedule``, ``warmup_steps``,
    ``clip_grad_norm``, ``loss_scale_init``, ``frozen``, ``deny``, ...;
    see :func:`train_step_options`). A module that already is a training
    program (``amp-opt --train`` output, loaded with :func:`load_mlir`)
    is compiled as it is.
    """
    if not isinstance(module, Module):
        raise TypeError("build_train_step() takes an amp_mlir.Module")
    if not module.from_onnx and not module.from_torch:
        if any(v is not None for v in (dtype, loss_scale, batch_size)) or options:
            raise AmpError("the module is a training program already: its options are fixed")
        return Trainer(_amp_mlir.build_train_step(module._native, [], int(accumulate)))
    given: dict[str, Any] = {"loss": loss, "optimizer": optimizer, "lr": float(lr)}
    if dtype is not None:
        try:
            given["type"] = _DTYPES[dtype.lower()]
        except (KeyError, AttributeError):
            raise AmpError(f"unknown dtype {dtype!r} (use 'fp16', 'bf16' or None)") from None
    if loss_scale is not None:
        given["loss_scale"] = (f"static:{loss_scale:g}" if isinstance(loss_scale, (int, float))
                               else loss_scale)
    if batch_size is not None:
        given["static_batch"] = int(batch_size)
    for name, value in options.items():
        if name in given or name in ("type", "static_batch"):
            raise TypeError(f"build_train_step() got {name!r} twice")
        given[name] = value
    return Trainer(_amp_mlir.build_train_step(module._native, _options(given), int(accumulate)))


def train_step_options() -> list:
    """The options :func:`build_train_step` takes (the train step's and the
    front end's), as dicts: name, description, kind, default, choices."""
    return list(_amp_mlir.describe_options("train-step"))


def front_end_options() -> list:
    """The options :func:`autocast` takes (the front end's and
    amp-autocast's), as dicts: name, description, kind, default, choices."""
    return list(_amp_mlir.describe_options("front-end"))
