"""The architectures of the foundation issue, exported by torch with random
weights, import at opsets 13 and 17 and, converted by onnx's version
converter, at opsets 18 and 20 (Reduce* axes as inputs, Split num_outputs).

Exports use Debian's python3-torch under /usr/bin/python3 (skipped when it
is not installed); they take about a minute per opset on two cores. For
these static-shape exports the shape arithmetic must fold away completely:
no `amp.shape` op and no dynamic dimension survives.
"""

import os
import re
import subprocess

import pytest

from amp_test_utils import has_debian_torch

from amp_testmodels import upgrade_opset

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPORT = os.path.join(REPO, "python", "amp_testmodels", "export_torch.py")
DEBIAN_PYTHON = "/usr/bin/python3"
MODELS = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small",
          "efficientnet_b0", "regnet_y_400mf", "densenet121", "squeezenet1_0",
          "shufflenet_v2_x1_0", "convnext_tiny", "vit_b_16", "swin_t",
          "bert_encoder", "gpt2_decoder", "mlp_logsoftmax")
# Converted to newer opsets: one of each family, kept small for CI time.
CONVERTED = ("resnet18", "mobilenet_v3_small", "swin_t", "bert_encoder",
             "gpt2_decoder", "mlp_logsoftmax")




pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not has_debian_torch(), reason="Debian python3-torch/torchvision not installed"),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{opset: folder} with every model exported at opsets 13 and 17."""
    root = tmp_path_factory.mktemp("torch-models")
    folders = {}
    for opset in (13, 17):
        out = root / f"opset{opset}"
        subprocess.run([DEBIAN_PYTHON, EXPORT, "--out", str(out), "--opset", str(opset)],
                       check=True, capture_output=True, timeout=1800)
        folders[opset] = out
    return folders


def _check_import(amp_opt, model_path, tmp_path):
    out = tmp_path / (model_path.stem + ".mlir")
    proc = amp_opt.run(model_path, "-o", out, "--mlir-elide-resource-strings-if-larger=16",
                       timeout=600)
    assert proc.returncode == 0, f"{model_path}: {proc.stderr[-3000:]}"
    text = out.read_text()
    assert "amp.shape " not in text, f"{model_path}: shape arithmetic left"
    signature = re.search(r"func\.func @main\((.*)\) -> \((.*)\) \{", text)
    assert signature and "?" not in signature.group(0), f"{model_path}: dynamic signature"
    # Autocast ran (default pipeline): casts only at precision boundaries,
    # i.e. never a cast of a cast, and one cast per (value, type).
    casts = re.findall(r"(%[\w#]+) = amp\.cast (%[\w#]+) \{to = (\w+)\}", text)
    cast_results = {result for result, _, _ in casts}
    assert not [c for c in casts if c[1] in cast_results], f"{model_path}: cast of a cast"
    pairs = [(operand, to) for _, operand, to in casts]
    assert len(pairs) == len(set(pairs)), f"{model_path}: duplicate casts"
    assert "f16" in text, f"{model_path}: nothing ran in fp16"


@pytest.mark.parametrize("opset", (13, 17))
@pytest.mark.parametrize("model", MODELS)
def test_torch_export_imports(amp_opt, exported, tmp_path, model, opset):
    _check_import(amp_opt, exported[opset] / f"{model}.onnx", tmp_path)


@pytest.mark.parametrize("target", (18, 20))
@pytest.mark.parametrize("model", CONVERTED)
def test_converted_export_imports(amp_opt, exported, tmp_path, model, target):
    converted = tmp_path / f"{model}_opset{target}.onnx"
    upgrade_opset.upgrade(str(exported[13] / f"{model}.onnx"), str(converted), target)
    _check_import(amp_opt, converted, tmp_path)
