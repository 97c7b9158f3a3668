"""Side by side with torch.autocast: which precision each op computes in
under ``torch.autocast`` and under amp's autocast, matched by module, and
the errors of both against a float64 reference.

A ``TorchDispatchMode`` records every ATen op a forward run dispatches
under ``torch.autocast`` (after autocast's casts), with the innermost
module it ran in (forward hooks) and the floating dtypes it read and
wrote. amp's report names each op ``<module path>/<node>``. Both sides are
grouped by (module, op family); a group computes in low precision when
most of its ops write the low-precision type.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

# Op families: ATen op name prefixes (torch side) and amp op types.
FAMILIES = {
    "convolution": (("aten.convolution", "aten.conv"), ("Conv", "ConvTranspose")),
    "matmul": (("aten.addmm", "aten.mm", "aten.bmm", "aten.matmul", "aten.linear",
                "aten.baddbmm"), ("Gemm", "MatMul", "Einsum")),
    "normalization": (("aten.native_batch_norm", "aten._native_batch_norm",
                       "aten.native_layer_norm", "aten.native_group_norm",
                       "aten.layer_norm", "aten.group_norm", "aten.batch_norm"),
                      ("BatchNormalization", "LayerNormalization", "GroupNormalization")),
    "softmax": (("aten._softmax", "aten._log_softmax", "aten.softmax"),
                ("Softmax", "LogSoftmax")),
    "pooling": (("aten.max_pool", "aten.avg_pool", "aten._adaptive_avg_pool",
                 "aten.adaptive_avg_pool", "aten.mean"),
                ("MaxPool", "AveragePool", "GlobalAveragePool", "ReduceMean")),
    "activation": (("aten.relu", "aten.gelu", "aten.sigmoid", "aten.tanh", "aten.hardtanh",
                    "aten.hardswish", "aten.silu", "aten.hardsigmoid", "aten.clamp"),
                   ("Relu", "Gelu", "Sigmoid", "Tanh", "Clip", "HardSwish", "Swish",
                    "HardSigmoid")),
    "elementwise": (("aten.add", "aten.mul", "aten.sub", "aten.div", "aten.where",
                     "aten.pow", "aten.rsqrt", "aten.sqrt", "aten.exp", "aten.neg"),
                    ("Add", "Mul", "Sub", "Div", "Where", "Pow", "Sqrt", "Reciprocal", "Exp",
                     "Neg")),
}


def _family_of_aten(name: str):
    for family, (prefixes, _) in FAMILIES.items():
        if any(name.startswith(p + ".") or name.startswith(p + "_") for p in prefixes):
            return family
    return None


def _family_of_amp(op_type: str):
    for family, (_, types) in FAMILIES.items():
        if op_type in types:
            return family
    return None


class _Tracer(TorchDispatchMode):
    def __init__(self, modules):
        super().__init__()
        self.modules = modules
        self.records = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        written = [t.dtype for t in tree_leaves(out)
                   if isinstance(t, torch.Tensor) and t.is_floating_point()]
        self.records.append((self.modules[-1] if self.modules else "", str(func), written))
        return out


def trace_autocast(model: torch.nn.Module, inputs, *, device_type: str = "cpu",
                   dtype: torch.dtype = torch.bfloat16) -> list:
    """[(module path, ATen op, [dtypes written])] of one forward run of
    ``model`` under ``torch.autocast(device_type, dtype)``, in order."""
    modules: list = []
    handles = []
    def enter(name):
        def hook(module, args):
            modules.append(name)
        return hook

    def leave(module, args, output):
        modules.pop()  # a hook returning a value would replace the output

    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(enter(name)))
        handles.append(module.register_forward_hook(leave))
    tracer = _Tracer(modules)
    try:
        with torch.no_grad(), torch.autocast(device_type, dtype=dtype), tracer:
            model(*inputs)
    finally:
        for handle in handles:
            handle.remove()
    return tracer.records


@dataclasses.dataclass
class ParityRow:
    """One (module, op family) group: the precision each side computes it
    in, and amp's reason where they differ."""
    module: str
    family: str
    torch: str
    amp: str
    reason: str = ""

    @property
    def verdict(self) -> str:
        if self.torch == self.amp:
            return "agree"
        return "amp lower" if self.amp != "f32" else "amp higher"


@dataclasses.dataclass
class ParityResult:
    rows: list
    torch_error: float
    amp_error: float

    def counts(self) -> dict:
        """{family: Counter(verdict)}."""
        result: dict = collections.defaultdict(collections.Counter)
        for row in self.rows:
            result[row.family][row.verdict] += 1
        return dict(result)


def _majority(precisions) -> str:
    counter = collections.Counter(precisions)
    low = sum(n for p, n in counter.items() if p != "f32")
    if low >= counter["f32"] and low:
        return next(p for p in counter if p != "f32")
    return "f32"


def _rel_l2(got, reference) -> float:
    got = np.asarray(got, np.float64)
    reference = np.asarray(reference, np.float64)
    return float(np.linalg.norm(got - reference) / max(np.linalg.norm(reference), 1e-300))


def compare_with_autocast(model: torch.nn.Module, inputs, *, dtype: str = "bf16",
                          device_type: str = "cpu", **autocast_options) -> ParityResult:
    """Runs ``model`` under ``torch.autocast(device_type, dtype)`` and
    through amp (``from_torch`` + ``amp_mlir.autocast`` + the CPU backend)
    on ``inputs``; returns the per-(module, family) precisions of both and
    both relative L2 errors against the model in float64 (first output)."""
    from .. import autocast
    from . import from_torch

    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    amp_type = {"bf16": "bf16", "fp16": "f16"}[dtype]
    model = model.eval()
    records = trace_autocast(model, inputs, device_type=device_type, dtype=torch_dtype)
    torch_groups = collections.defaultdict(list)
    for module, op, written in records:
        family = _family_of_aten(op)
        if family is None or not written:
            continue
        low = written[0] == torch_dtype
        torch_groups[(module, family)].append(amp_type if low else "f32")

    imported = from_torch(model, tuple(inputs))
    report = autocast(imported, dtype, **autocast_options).to_dict()
    amp_groups = collections.defaultdict(list)
    reasons = {}
    for op in report["ops"]:
        family = _family_of_amp(op["op"])
        if family is None:
            continue
        module = op["node"].rsplit("/", 1)[0] if "/" in op["node"] else ""
        amp_groups[(module, family)].append(op["precision"])
        reasons.setdefault((module, family, op["precision"]), op.get("reason", ""))
    rows = []
    for key in sorted(set(torch_groups) & set(amp_groups)):
        torch_precision = _majority(torch_groups[key])
        amp_precision = _majority(amp_groups[key])
        reason = "" if torch_precision == amp_precision else reasons.get(
            (key[0], key[1], amp_precision), "")
        rows.append(ParityRow(key[0], key[1], torch_precision, amp_precision, reason))

    # Numerics against float64.
    with torch.no_grad():
        reference = model.double()(*[t.double() if t.is_floating_point() else t
                                     for t in inputs])
        model.float()
        with torch.autocast(device_type, dtype=torch_dtype):
            peer = model(*inputs)
    first = lambda out: out[0] if isinstance(out, (tuple, list)) else out  # noqa: E731
    amp_out = imported.compile()(*[t.numpy() for t in inputs])[0]
    return ParityResult(rows, _rel_l2(first(peer).float().numpy(), first(reference).numpy()),
                        _rel_l2(amp_out, first(reference).numpy()))
