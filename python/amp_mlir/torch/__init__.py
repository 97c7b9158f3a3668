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

import re
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from .. import Module, Trainer, _amp_mlir, build_train_step
from . import _graph
from ._backend import backend
from ._parity import ParityResult, ParityRow, compare_with_autocast, trace_autocast

__all__ = ["ParityResult", "ParityRow", "TorchTrainer", "backend", "compare_with_autocast",
           "from_exported_program", "from_torch", "supported_aten_ops", "trace_autocast",
           "train_step"]


def supported_aten_ops() -> list:
    """The ATen ops amp translates: ``[(target, amp ops), ...]``, sorted."""
    return [tuple(entry) for entry in _amp_mlir.supported_aten_ops()]


def _weight_buffer(tensor: torch.Tensor):
    """(address, byte size, owner) of a tensor's data: the tensor itself
    where it is a contiguous CPU tensor, else a contiguous CPU copy."""
    data = tensor.detach()
    if data.is_quantized or data.is_sparse:
        raise TypeError("quantized and sparse weights are not supported")
    if data.device.type != "cpu":
        data = data.cpu()
    if not data.is_contiguous():
        data = data.contiguous()
    return data.data_ptr(), data.numel() * data.element_size(), data


def from_exported_program(program: "torch.export.ExportedProgram", *,
                          name: str | None = None, decompose: bool = True,
                          _training: bool = False) -> Module:
    """Translates an ExportedProgram (decomposed to Core ATen first unless
    ``decompose=False``, for a program that already is)."""
    if decompose:
        program = program.run_decompositions()
    graph_name = name or "ExportedProgram"
    graph_json, weights = _graph.serialize(program, graph_name)
    entries = []
    for weight_name, tensor in weights:
        address, size, owner = _weight_buffer(tensor)
        entries.append((weight_name, address, size, owner))
    return Module(_amp_mlir.import_torch_graph(graph_json, entries, _training))


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


class TorchTrainer(Trainer):
    """The :class:`amp_mlir.Trainer` of a torch module: its state is named by
    the module's state-dict names (parameters, and BatchNorm running
    statistics), and :meth:`load_into` writes it back."""

    def load_into(self, module: torch.nn.Module) -> list:
        """Copies the trained values into ``module``'s parameters and buffers
        of the same state-dict names (in place, in their dtype); returns the
        names written. The optimizer's own state (``step``, moments) has no
        counterpart in the module and stays here."""
        state = self.state_dict()
        written = []
        with torch.no_grad():
            for name, tensor in module.state_dict().items():
                if name not in state:
                    continue
                value = torch.from_numpy(np.ascontiguousarray(state[name]))
                if tuple(value.shape) != tuple(tensor.shape):
                    raise ValueError(f"'{name}': the trainer holds {tuple(value.shape)}, "
                                     f"the module {tuple(tensor.shape)}")
                tensor.copy_(value.to(tensor.dtype))
                written.append(name)
        return written


def train_step(module: torch.nn.Module, example_batch: torch.Tensor, *,
               loss: str = "cross_entropy", optimizer: str = "adamw", lr: float = 1e-3,
               dtype: str | None = "fp16", loss_scale=None, accumulate: int = 1,
               **options) -> TorchTrainer:
    """Builds amp's train step for ``module`` from its exported forward and
    returns the trainer (:class:`TorchTrainer`; ``step(x, y)`` takes numpy
    arrays or tensors of ``example_batch``'s shape and the labels).

    The forward is exported in training mode (``module.train()``): BatchNorm
    normalises with the batch statistics and the step updates its running
    statistics (with the population variance, as ONNX defines it; PyTorch
    uses the unbiased one), and dropout layers drop, with amp's generator
    (docs/Training.md). ``loss``: "cross_entropy" or "mse"
    (on the module's first output), or "output" (the module returns its
    loss). ``optimizer``: "sgd", "momentum" or "adamw" (PyTorch's update
    formulas); ``dtype``: "fp16" (dynamic loss scaling, fp32 master
    weights), "bf16" or None (fp32). The batch size is
    ``example_batch.shape[0]``. Parameters with ``requires_grad=False`` are
    not trained. Further keywords are :func:`amp_mlir.build_train_step`'s
    (``weight_decay``, ``lr_schedule``, ``clip_grad_norm``, ...).
    """
    if not isinstance(example_batch, torch.Tensor):
        raise TypeError("example_batch must be a torch.Tensor (the input of one step)")
    was_training = module.training
    module.train()
    try:
        program = torch.export.export(module, (example_batch,), strict=False)
    finally:
        module.train(was_training)
    imported = from_exported_program(program, name=type(module).__name__, _training=True)
    frozen = [name for name, parameter in module.named_parameters()
              if not parameter.requires_grad]
    if frozen and "frozen" not in options:
        options["frozen"] = "|".join(re.escape(name) for name in frozen)
    trainer = build_train_step(imported, loss=loss.replace("_", "-"), optimizer=optimizer,
                               lr=lr, dtype=dtype, loss_scale=loss_scale,
                               batch_size=int(example_batch.shape[0]),
                               accumulate=accumulate, **options)
    return TorchTrainer(trainer._native)
