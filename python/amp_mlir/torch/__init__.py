"""amp_mlir.torch: PyTorch modules into amp, through ``torch.export``.

    import amp_mlir, amp_mlir.torch
    m = amp_mlir.torch.from_torch(model.eval(), (x,),
                                  dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    report = amp_mlir.autocast(m, "bf16", node_rules={r"layer4\\..*": "deny"})
    y, = m.compile()(x.numpy())

The module is exported (``torch.export.export``), decomposed to the Core
ATen operator set (``run_decompositions``) and translated op by op into the
amp dialect by amp's C++ importer (no ONNX in between). Parameters and
buffers become amp weights under their state-dict names, without a copy
where their memory allows; node names carry the module path
(``layer1.0.conv1/convolution_3``) and locations the user's source line.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import torch

from .. import Module, _amp_mlir
from . import _graph

__all__ = ["from_exported_program", "from_torch", "supported_aten_ops"]


def supported_aten_ops() -> list:
    """The ATen ops amp translates: ``[(target, amp ops), ...]``, sorted."""
    return [tuple(entry) for entry in _amp_mlir.supported_aten_ops()]


def _weight_buffer(tensor: torch.Tensor):
    """(address, byte size, owner) of a tensor's data: the tensor itself
    where it is a contiguous CPU tensor, else a contiguous CPU copy."""
    data = tensor.detach()
    if data.device.type != "cpu":
        data = data.cpu()
    if not data.is_contiguous():
        data = data.contiguous()
    if data.is_quantized or data.is_sparse:
        raise TypeError("quantized and sparse weights are not supported")
    return data.data_ptr(), data.numel() * data.element_size(), data


def from_exported_program(program: "torch.export.ExportedProgram", *,
                          name: str | None = None,
                          decompose: bool = True) -> Module:
    """Translates an ExportedProgram (decomposed to Core ATen first unless
    ``decompose=False``, for a program that already is)."""
    if decompose:
        program = program.run_decompositions()
    graph_name = name or type(getattr(program, "module_call_graph", None) or program).__name__
    graph_json, weights = _graph.serialize(program, graph_name)
    entries = []
    for weight_name, tensor in weights:
        address, size, owner = _weight_buffer(tensor)
        entries.append((weight_name, address, size, owner))
    return Module(_amp_mlir.import_torch_graph(graph_json, entries))


def from_torch(module: torch.nn.Module, args: Sequence[Any] | Any,
               kwargs: Mapping[str, Any] | None = None, *,
               dynamic_shapes: Any = None, strict: bool = False,
               name: str | None = None) -> Module:
    """Exports ``module`` on the example ``args``/``kwargs`` and imports it.

    ``dynamic_shapes`` is passed to ``torch.export.export``: dimensions
    marked with ``torch.export.Dim`` stay dynamic in amp and at run time.
    Put the module in eval mode for inference (in train mode, BatchNorm
    updates its buffers in forward, which the import refuses). An op amp
    cannot translate raises :class:`amp_mlir.AmpError` naming the op and the
    line of your code it came from.
    """
    if not isinstance(args, (tuple, list)):
        args = (args,)
    program = torch.export.export(module, tuple(args), dict(kwargs or {}),
                                  dynamic_shapes=dynamic_shapes, strict=strict)
    return from_exported_program(program, name=name or type(module).__name__)
