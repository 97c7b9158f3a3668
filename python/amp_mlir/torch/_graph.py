"""An exported program's graph as the JSON that amp's Torch importer reads.

This file knows nothing about what the ATen ops mean: it writes each FX
node's target, arguments and result metadata (dtype, shape with symbolic
sizes by name), the module path it came from and the user's source line.
The translation, op by op, is C++ (``lib/Target/Torch``), where the amp
ops are built through their ODS builders and checked by shape inference.
"""

from __future__ import annotations

import json
import math
import os
import re

import torch

FORMAT = "amp-torch-graph"
VERSION = 1

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n?(?:\s+(.*))?')


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _dim(size):
    """A size: an int, or the name of its symbol ("s77") when dynamic.
    (int() of a symbolic size would answer its example value.)"""
    if isinstance(size, torch.SymInt):
        from torch.fx.experimental.symbolic_shapes import is_concrete_int
        return int(size) if is_concrete_int(size) else str(size)
    return int(size)


def _meta(value):
    """The metadata of a result: a tensor, a symbolic int, or a tuple."""
    if isinstance(value, torch.Tensor):
        return {"dtype": dtype_name(value.dtype), "shape": [_dim(s) for s in value.shape]}
    if isinstance(value, (list, tuple)):
        return [_meta(v) for v in value]
    if isinstance(value, torch.SymInt):
        return {"symint": str(value)}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": value}
    if isinstance(value, torch.SymFloat):
        return {"symfloat": str(value)}
    return None


def _number(value: float):
    if math.isfinite(value):
        return value
    return {"float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def _arg(value):
    """One argument of a call (nodes by name; Python values as JSON)."""
    if isinstance(value, torch.fx.Node):
        return {"node": value.name}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, (list, tuple)):
        return [_arg(v) for v in value]
    if isinstance(value, torch.dtype):
        return {"dtype": dtype_name(value)}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, (torch.layout, torch.memory_format)):
        return {"enum": str(value).replace("torch.", "")}
    return {"unsupported": type(value).__name__, "repr": repr(value)[:200]}


def _source(stack_trace):
    """The innermost frame of the user's code (outside torch itself):
    (file, line, text), or None."""
    if not stack_trace:
        return None
    frames = _FRAME.findall(stack_trace)
    if not frames:
        return None
    chosen = None
    for path, line, _function, text in frames:
        if not os.path.abspath(path).startswith(_TORCH_DIR):
            chosen = (path, int(line), text.strip())
    if chosen is None:
        path, line, _function, text = frames[-1]
        chosen = (path, int(line), text.strip())
    return chosen


def _module_path(node):
    stack = node.meta.get("nn_module_stack") or {}
    for path, _type in reversed(list(stack.values())):
        if path and not path.startswith("_empty_nn_module_stack"):
            # torch.export spells nested paths as attribute accesses in some
            # versions ("L['self'].layer1[0]"); keep the dotted state-dict form.
            return re.sub(r"\[(\d+)\]", r".\1", path.replace("L['self'].", ""))
    return ""


def _node(node):
    entry = {
        "name": node.name,
        "target": _target_name(node.target),
        "args": [_arg(a) for a in node.args],
        "kwargs": {k: _arg(v) for k, v in node.kwargs.items()},
        "meta": _meta(node.meta.get("val")),
        "module": _module_path(node),
    }
    source = _source(node.meta.get("stack_trace"))
    if source:
        entry["file"], entry["line"], entry["code"] = source
    return entry


def _target_name(target) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # "aten.convolution.default"
    module = getattr(target, "__module__", "") or ""
    name = getattr(target, "__name__", repr(target))
    if module in ("_operator", "operator"):
        return "operator." + name
    return f"{module}.{name}" if module else name


def serialize(program, name: str):
    """(graph JSON, [(state-dict name, tensor)]) of an ExportedProgram whose
    graph is in the Core ATen operator set."""
    from torch.export.graph_signature import InputKind, OutputKind

    signature = program.graph_signature
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    inputs, weights = [], []
    for spec in signature.input_specs:
        arg_name = getattr(spec.arg, "name", None)
        node = placeholders.get(arg_name)
        entry = {"name": arg_name or "", "kind": spec.kind.name.lower(),
                 "meta": _meta(node.meta.get("val")) if node is not None else None}
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            entry["target"] = spec.target
            value = program.state_dict.get(spec.target)
            if value is None:
                value = program.constants.get(spec.target)
            if value is None:
                raise ValueError(f"the exported program has no value for '{spec.target}'")
            weights.append((spec.target, value))
        elif spec.kind == InputKind.USER_INPUT:
            if node is not None and not isinstance(node.meta.get("val"), torch.Tensor):
                entry["kind"] = "scalar_input"
        inputs.append(entry)
    outputs = []
    for spec in signature.output_specs:
        outputs.append({"kind": spec.kind.name.lower(),
                        "value": _arg(getattr(spec.arg, "name", None) and
                                      _node_by_name(program, spec.arg.name)),
                        "target": spec.target})
    nodes = [_node(n) for n in program.graph.nodes if n.op == "call_function"]
    graph = {"format": FORMAT, "version": VERSION, "name": name,
             "inputs": inputs, "nodes": nodes, "outputs": outputs}
    return json.dumps(graph, allow_nan=False), weights


def _node_by_name(program, name):
    for n in program.graph.nodes:
        if n.name == name:
            return n
    return None
