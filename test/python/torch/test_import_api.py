"""amp_mlir.torch.from_torch: names, weights, dynamic sizes and errors."""

import inspect
import os
import re

import numpy as np
import pytest
import torch
from torch import nn
from torch.export import Dim

import amp_mlir
import amp_mlir.torch as amp_torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8),
                                      nn.ReLU())
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def small_net():
    torch.manual_seed(0)
    return SmallNet().eval()


def test_weights_keep_state_dict_names():
    model = small_net()
    module = amp_torch.from_torch(model, (torch.randn(1, 3, 8, 8),))
    text = module.to_mlir()
    keys = set(re.findall(r"dense_resource<([^>]+)>", text))
    # Names starting with a digit get a 'w' (an MLIR resource key is an
    # identifier), as ONNX initializer names do.
    expected = {("w" + k if k[0].isdigit() else k) for k in model.state_dict()
                if not k.endswith("num_batches_tracked")}
    assert expected <= keys, sorted(expected - keys)


def test_weights_are_not_copied():
    """The weights are the parameters' own memory: scaling a parameter in
    place after the import changes what the compiled module computes."""
    model = small_net()
    x = torch.randn(2, 3, 8, 8)
    module = amp_torch.from_torch(model, (x,))
    with torch.no_grad():
        model.head.weight.mul_(2.0)
        model.head.bias.mul_(2.0)
        expected = model(x).numpy()
    (got,) = module.compile()(x.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_node_names_carry_module_paths_and_rules_match_them():
    model = small_net()
    module = amp_torch.from_torch(model, (torch.randn(1, 3, 8, 8),))
    report = amp_mlir.autocast(module, "bf16", node_rules={r"head/.*": "deny"})
    ops = {op["node"]: op for op in report.to_dict()["ops"]}
    conv = [name for name in ops if name.startswith("features.0/")]
    head = [name for name in ops if name.startswith("head/") and ops[name]["op"] == "Gemm"]
    assert conv and ops[conv[0]]["precision"] == "bf16", ops
    assert head and ops[head[0]]["precision"] == "f32", ops
    assert "node rule" in ops[head[0]]["reason"]


def test_dynamic_batch_runs_at_other_sizes():
    model = small_net()
    module = amp_torch.from_torch(model, (torch.randn(2, 3, 8, 8),),
                                  dynamic_shapes=({0: Dim("batch")},))
    program = module.compile()
    assert program.inputs[0][2][0] is None
    for batch in (1, 5):
        x = torch.randn(batch, 3, 8, 8)
        (got,) = program(x.numpy())
        with torch.no_grad():
            np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-5, atol=1e-6)


class UsesTopK(nn.Module):
    def forward(self, x):
        return torch.topk(x, 2).values  # LINE-OF-TOPK


def test_untranslated_op_names_the_op_and_the_source_line():
    with pytest.raises(amp_mlir.AmpError) as error:
        amp_torch.from_torch(UsesTopK(), (torch.randn(3, 5),))
    (diagnostic,) = error.value.diagnostics
    source, first = inspect.getsourcelines(UsesTopK.forward)
    line = first + next(i for i, text in enumerate(source) if "LINE-OF-TOPK" in text)
    assert diagnostic.op == "aten.topk.default"
    assert diagnostic.file == __file__ and diagnostic.line == line, diagnostic
    assert "amp has no translation of aten.topk.default" in diagnostic.message
    assert "torch.topk(x, 2)" in diagnostic.message


def test_train_mode_batchnorm_is_refused_with_the_reason():
    model = small_net().train()
    with pytest.raises(amp_mlir.AmpError, match="eval mode"):
        amp_torch.from_torch(model, (torch.randn(2, 3, 8, 8),))


def test_non_tensor_output_is_refused():
    class ReturnsShape(nn.Module):
        def forward(self, x):
            return x * 2, x.shape[0]

    with pytest.raises(amp_mlir.AmpError, match="output #1 is not a tensor"):
        amp_torch.from_torch(ReturnsShape(), (torch.randn(3, 2),))


def test_bf16_and_int_inputs_and_type_promotion():
    class Mixed(nn.Module):
        def forward(self, x, n):
            return (x * n + 1).to(torch.bfloat16).float() / 3, n // 2, n // 2 > 1

    x = torch.randn(4, 3)
    n = torch.arange(-6, 6).reshape(4, 3)  # floor division of negatives
    module = amp_torch.from_torch(Mixed(), (x, n))
    got = module.compile()(x.numpy(), n.numpy())
    expected = Mixed()(x, n)
    np.testing.assert_allclose(got[0], expected[0].numpy(), rtol=1e-6)
    np.testing.assert_array_equal(got[1], expected[1].numpy())
    np.testing.assert_array_equal(got[2], expected[2].numpy())


def test_supported_ops_doc_is_current():
    """docs/TorchOps.md is what utils/gen_torch_ops_doc.py writes from the
    importer's rule tables (rerun it after adding a translation)."""
    import subprocess
    import sys
    generated = subprocess.run([sys.executable, os.path.join(REPO, "utils", "gen_torch_ops_doc.py"),
                                "--stdout"], check=True, capture_output=True, text=True).stdout
    with open(os.path.join(REPO, "docs", "TorchOps.md")) as f:
        assert f.read() == generated
    ops = dict(amp_torch.supported_aten_ops())
    assert "aten.convolution.default" in ops and "amp.conv" in ops["aten.convolution.default"]


def test_a_new_program_does_not_reuse_another_programs_cached_weights():
    """The CPU runtime caches convolution weights reordered for oneDNN; the
    cache is per compiled program. Two programs over the same weight memory
    (here: the parameter, changed in place between the two compiles) each
    read the weights they were compiled with. Keyed by address alone, the
    second took the first one's reordered copy (a silent wrong answer that
    a freed program's memory, reallocated, also caused)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(32, 64, 3, padding=1)).eval()
    x = torch.randn(2, 32, 16, 16)
    module = amp_torch.from_torch(model, (x,))
    first = module.compile()
    first(x.numpy())
    with torch.no_grad():
        model[0].weight.mul_(-1.0)
        expected = model(x).numpy()
    (got,) = module.compile()(x.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
