"""The bundled demo model (examples/small_convnet.onnxtxt) can expose a miscompile.

Its first version had one conv kernel repeated in all 8 filters and one FC
row repeated 512 times: a miscompile that reordered channels or flattened in
another order moved its output by 3e-8, and the demo's checks (also the CUDA
tests' model) still said ok. The weights now come from a seeded generator
(examples/make_small_convnet.py). The tests below check that the text is what
the generator writes, that the weights are distinct, and that the two planted
miscompiles change the output far beyond the demo's tolerances, so that
``amp-run --compare-to`` against the correct reference fails on them.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from amp_test_utils import require_module

onnx = require_module("onnx")
ort = require_module("onnxruntime")
numpy_helper = onnx.numpy_helper
helper = onnx.helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT = os.path.join(REPO, "examples", "small_convnet.onnxtxt")
GENERATOR = os.path.join(REPO, "examples", "make_small_convnet.py")
ENCODE = os.path.join(REPO, "test", "lit-tools", "onnx-encode.py")
# scripts/amp.sh demo: amp-run in f16 against onnxruntime's fp32 output.
DEMO_RTOL, DEMO_ATOL = 1e-2, 1e-3


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "small_convnet.onnx"
    subprocess.run([sys.executable, ENCODE, TEXT, str(path)], check=True)
    return path


def constant(model, name):
    node = next(n for n in model.graph.node if n.output[0] == name)
    return numpy_helper.to_array(node.attribute[0].t)


def run(model, image):
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {"image": image})[0]


def image():
    return np.random.default_rng(0).random((1, 3, 16, 16), dtype=np.float32)


def test_the_text_is_the_generators():
    generated = subprocess.run([sys.executable, GENERATOR], check=True, capture_output=True,
                               text=True).stdout
    with open(TEXT, encoding="utf-8") as f:
        assert f.read().strip() == generated.strip(), \
            "regenerate: python3 examples/make_small_convnet.py > examples/small_convnet.onnxtxt"


def test_weights_are_distinct(model_path):
    model = onnx.load(model_path)
    conv = constant(model, "w").reshape(8, -1)
    fc = constant(model, "fc")
    assert len({tuple(f) for f in conv}) == 8
    assert len({tuple(row) for row in fc}) == 512
    assert len({tuple(col) for col in fc.T}) == 4


def reorder_channels(model):
    """A planted miscompile: the pooled channels in another order."""
    model.graph.node.insert(
        [n.output[0] for n in model.graph.node].index("p") + 1,
        helper.make_node("Gather", ["p", "perm"], ["p_reordered"], axis=1))
    model.graph.initializer.append(numpy_helper.from_array(
        np.array([1, 2, 3, 4, 5, 6, 7, 0], dtype=np.int64), "perm"))
    reshape = next(n for n in model.graph.node if n.op_type == "Reshape")
    reshape.input[0] = "p_reordered"
    return model


def flatten_channels_last(model):
    """A planted miscompile: flattening (N, C, H, W) in (N, H, W, C) order."""
    model.graph.node.insert(
        [n.output[0] for n in model.graph.node].index("p") + 1,
        helper.make_node("Transpose", ["p"], ["p_nhwc"], perm=[0, 2, 3, 1]))
    reshape = next(n for n in model.graph.node if n.op_type == "Reshape")
    reshape.input[0] = "p_nhwc"
    return model


@pytest.mark.parametrize("plant", [reorder_channels, flatten_channels_last])
def test_planted_miscompiles_fail_the_demo_check(model_path, amp_run, tmp_path, plant):
    x = image()
    reference = run(onnx.load(model_path), x)
    wrong = run(plant(onnx.load(model_path)), x)
    # Far beyond the f16 demo tolerance, element by element.
    assert np.any(np.abs(wrong - reference) > 10 * (DEMO_ATOL + DEMO_RTOL * np.abs(reference)))
    # amp-run compiling the planted model, checked against the correct
    # reference as the demo does, reports the mismatch and fails.
    planted = tmp_path / "planted.onnx"
    onnx.save(plant(onnx.load(model_path)), planted)
    np.save(tmp_path / "image.npy", x)
    np.save(tmp_path / "reference.npy", reference)
    proc = subprocess.run([amp_run, str(planted), "--amp-type", "f16", "-i",
                           str(tmp_path / "image.npy"), "--compare-to",
                           str(tmp_path / "reference.npy"), "--rtol", str(DEMO_RTOL),
                           "--atol", str(DEMO_ATOL)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    # The unplanted model passes the same check.
    proc = subprocess.run([amp_run, str(model_path), "--amp-type", "f16", "-i",
                           str(tmp_path / "image.npy"), "--compare-to",
                           str(tmp_path / "reference.npy"), "--rtol", str(DEMO_RTOL),
                           "--atol", str(DEMO_ATOL)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
