"""amp_mlir.torch.from_torch on the 15 architectures of the test-model set
and the BERT-/GPT-2-/T5-style modules, with dynamic batch (and sequence).

Each module is exported at one batch size and run on amp's CPU backend at
another, against torch eager on the same inputs:

- fp32: relative L2 error <= 1e-5 (measured <= 1.3e-6, convnext_tiny);
- fp16 and bf16 (after ``amp_mlir.autocast``) on a subset: within the
  bounds the ONNX path has for the same models (``MIXED_BOUNDS`` of
  test_cpu_real_models.py, measured on other inputs, so they are used with
  a margin of 2) and above 1e-5 (something ran in low precision).
"""

import numpy as np
import pytest
import torch
from torch.export import Dim

import amp_mlir
import amp_mlir.torch as amp_torch
import export_dynamic
import export_torch

FP32_REL_L2 = 1e-5
MIN_LOW_PRECISION_REL = 1e-5
# test_cpu_real_models.MIXED_MEASURED (ONNX path, 224x224, batch 1):
# (fp16, bf16) relative L2 errors.
ONNX_MIXED_MEASURED = {
    "resnet18": (5.01e-4, 4.00e-3),
    "mobilenet_v2": (1.18e-2, 9.27e-2),
    "shufflenet_v2_x1_0": (2.40e-4, 1.50e-3),
    "bert_encoder": (6.52e-4, 5.15e-3),
    "gpt2_decoder": (6.55e-4, 5.24e-3),
}
MIXED_MARGIN = 2.0

TORCHVISION = export_torch.TORCHVISION_MODELS
HAND_WRITTEN = tuple(export_torch.HAND_WRITTEN_MODELS)
DYNAMIC_TRANSFORMERS = tuple(export_dynamic.MODELS)


def _rel_l2(got, ref):
    ref = np.asarray(ref, dtype=np.float64)
    return float(np.linalg.norm(np.asarray(got, np.float64) - ref) / np.linalg.norm(ref))


class Case:
    """A module, its export (dynamic batch), and inputs of another size."""

    def __init__(self, name):
        self.name = name
        rng = np.random.default_rng(0)
        if name in DYNAMIC_TRANSFORMERS:
            self.model, example, _ = export_dynamic.build_model(name)
            batch, seq = Dim("batch"), Dim("seq", max=32)
            shapes = ({0: batch, 1: seq}, {0: batch, 1: seq})
            ids = rng.integers(1, export_dynamic.VOCAB, (3, 11), dtype=np.int64)
            mask = np.ones((3, 11), dtype=np.int64)
            mask[2, 7:] = 0
            self.inputs = (torch.from_numpy(ids), torch.from_numpy(mask))
        else:
            self.model, example = export_torch.build_model(
                name, fp16_range=name in export_torch.FP16_RANGE_MODELS)
            if name == "vit_b_16":
                # torchvision initialises the classifier to zeros: every
                # output would be 0 and the comparison empty.
                torch.manual_seed(1)
                torch.nn.init.normal_(self.model.heads.head.weight, std=0.02)
            (x,) = example
            shapes = ({0: Dim("batch")},)
            if x.dtype == torch.int64:  # gpt2_decoder: token ids
                example = (torch.cat([x, x]),)
                self.inputs = (torch.from_numpy(rng.integers(0, 1000, (3,) + tuple(x.shape[1:]))),)
            else:
                example = (torch.cat([x, x]),)
                self.inputs = (torch.from_numpy(
                    rng.standard_normal((3,) + tuple(x.shape[1:])).astype(np.float32)),)
        self.module = amp_torch.from_torch(self.model, example, dynamic_shapes=shapes)
        with torch.no_grad():
            reference = self.model(*self.inputs)
        if isinstance(reference, torch.Tensor):
            reference = (reference,)
        self.references = [r.numpy() for r in reference]

    def run(self, module):
        return module.compile()(*[i.numpy() for i in self.inputs])


_CASES = {}


def by_model(names):
    """The parameters, each in its model's xdist group: the tests of one
    model share its export (``case``), so they run on one worker."""
    return [pytest.param(n, marks=pytest.mark.xdist_group(f"torch-model-{n}")) for n in names]


def case(name):
    if name not in _CASES:
        _CASES[name] = Case(name)
    return _CASES[name]


@pytest.mark.parametrize("name", by_model(TORCHVISION + HAND_WRITTEN + DYNAMIC_TRANSFORMERS))
def test_fp32_matches_eager(name):
    c = case(name)
    inputs = c.module.clone().compile().inputs
    assert inputs[0][2][0] is None, f"the batch is not dynamic: {inputs}"
    outputs = c.run(c.module.clone())
    assert len(outputs) == len(c.references)
    for got, ref in zip(outputs, c.references):
        assert got.shape == ref.shape
        assert _rel_l2(got, ref) <= FP32_REL_L2, f"{name}: {_rel_l2(got, ref):.3g}"


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("name", by_model(sorted(ONNX_MIXED_MEASURED)))
def test_mixed_precision_within_onnx_bounds(name, dtype):
    c = case(name)
    module = c.module.clone()
    report = amp_mlir.autocast(module, dtype)
    assert report.summary["casts"] > 0
    outputs = c.run(module)
    bound = MIXED_MARGIN * ONNX_MIXED_MEASURED[name][0 if dtype == "fp16" else 1]
    error = max(_rel_l2(got, ref) for got, ref in zip(outputs, c.references))
    assert MIN_LOW_PRECISION_REL <= error <= bound, f"{name} {dtype}: {error:.3g} > {bound:.3g}"
