"""amp as a torch.compile backend (inference).

    compiled = torch.compile(model, backend=amp_mlir.torch.backend(dtype="bf16"))

Each graph Dynamo captures is exported (Core ATen), imported into amp,
autocast if a dtype is given, and compiled by amp's CPU backend. The
parameters and buffers Dynamo passes as inputs are frozen into the program
as weights (as inductor's ``freezing`` does): call ``torch._dynamo.reset()``
to recompile after changing them. A graph amp cannot take runs eagerly, with one warning naming why
(the ATen ops amp lacks, or gradients being recorded: the backend is for
inference).
"""

from __future__ import annotations

import warnings

import torch

from .. import AmpError, autocast

_SPECIAL_TARGETS = {"operator.getitem"}


def _unsupported_ops(program, supported) -> list:
    names = set()
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        from ._graph import _target_name
        target = _target_name(node.target)
        if target not in supported and target not in _SPECIAL_TARGETS:
            names.add(target)
    return sorted(names)


class _Frozen(torch.nn.Module):
    """The Dynamo graph with its static inputs (parameters, buffers) as
    buffers of this module, so that torch.export makes them weights."""

    def __init__(self, gm, example_inputs, static):
        super().__init__()
        self.gm = gm
        self.count = len(example_inputs)
        self.static = static
        for index in static:
            self.register_buffer(f"input_{index}", example_inputs[index].detach())

    def forward(self, *dynamic):
        args, rest = [], iter(dynamic)
        for index in range(self.count):
            args.append(getattr(self, f"input_{index}") if index in self.static else next(rest))
        return self.gm(*args)


def backend(dtype: str | None = None, **autocast_options):
    """A ``torch.compile`` backend that runs each captured graph on amp's
    CPU backend; ``dtype`` "fp16"/"bf16" autocasts it first (with the
    keywords of :func:`amp_mlir.autocast`: ``allow``, ``deny``,
    ``node_rules``, ``policy``, ...). Use it with ``dynamic=False``."""
    from . import from_exported_program, supported_aten_ops

    supported = {target for target, _ in supported_aten_ops()}

    def compile_graph(gm: torch.fx.GraphModule, example_inputs):
        def eager(why: str):
            warnings.warn(f"amp_mlir.torch.backend: this graph runs eagerly: {why}",
                          stacklevel=2)
            return gm.forward

        if any(not isinstance(a, torch.Tensor) for a in example_inputs):
            return eager("it takes non-tensor inputs (compile with dynamic=False)")
        if torch.is_grad_enabled() and any(a.requires_grad for a in example_inputs):
            return eager("gradients are being recorded (the amp backend is for inference: "
                         "run under torch.no_grad() or torch.inference_mode())")
        static = {i for i, a in enumerate(example_inputs)
                  if getattr(a, "_dynamo_static_input_type", None) is not None
                  or isinstance(a, torch.nn.Parameter)}
        dynamic = [a for i, a in enumerate(example_inputs) if i not in static]
        try:
            with torch.no_grad():
                program = torch.export.export(_Frozen(gm, example_inputs, static),
                                              tuple(dynamic), strict=False)
                program = program.run_decompositions()
        except Exception as error:  # noqa: BLE001 - torch.export's own failures
            return eager(f"torch.export failed: {type(error).__name__}: {error}"[:500])
        missing = _unsupported_ops(program, supported)
        if missing:
            return eager("amp has no translation of " + ", ".join(missing))
        try:
            module = from_exported_program(program, name="torch_compile_graph",
                                           decompose=False)
            if dtype is not None:
                autocast(module, dtype, **autocast_options)
            compiled = module.compile()
        except AmpError as error:
            ops = sorted({d.op for d in error.diagnostics if d.op})
            return eager(f"amp cannot compile it ({', '.join(ops) or error})")
        outputs = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
        as_tuple = isinstance(outputs, (tuple, list))

        def run(*args):
            inputs = [args[i].detach().cpu().numpy() for i in range(len(args)) if i not in static]
            results = [torch.from_numpy(r) for r in compiled(*inputs)]
            return tuple(results) if as_tuple else results[0]

        return run

    return compile_graph
