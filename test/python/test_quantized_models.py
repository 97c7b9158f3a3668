"""int8 ResNet-18 made by onnxruntime's static quantizer, run by amp's CPU
backend against onnxruntime.

torchvision's ResNet-18 (random weights, Debian's torch, opset 17) goes
through onnxruntime's ``quant_pre_process`` and ``quantize_static`` (four
seeded random calibration images, uint8 activations, int8 weights per
output channel) in both formats:

- QOperator: 20 ``QLinearConv`` (ReLU, Add, pooling and the classifier stay
  in float between DequantizeLinear and QuantizeLinear). amp's QLinearConv
  is onnxruntime's integer arithmetic (int32 accumulation, the f32
  multiplier, round half to even), so the logits agree to float rounding:
  relative L2 error measured 3.5e-7 (the float Gemm), bound 1e-5.
- QDQ: DequantizeLinear -> Conv -> QuantizeLinear around every layer.
  amp runs each as a float convolution between exact (de)quantizations;
  onnxruntime fuses the pattern into its integer kernels. A float
  convolution that rounds differently moves an activation across a
  quantization boundary now and then, and the random network amplifies it:
  onnxruntime's own fused and unfused runs differ by 1.2e-2 (relative L2);
  amp vs onnxruntime measured 1.25e-2, bound 3e-2. Both are as far from
  the float model (amp 1.7e-2, onnxruntime 1.7e-2): amp's error against
  the fp32 model must stay within 1.25x onnxruntime's.

Both must agree on the top-1 class. ``--amp-type f16`` on the QOperator
model keeps every QLinearConv, DequantizeLinear and QuantizeLinear as it
is, the float ops between them in f32 (report: "quantized region" for
those that read a DequantizeLinear), and
onnxruntime runs the written model (relative L2 to the source measured
2.9e-4: the two Casts around the classifier).
"""

import json
import os
import subprocess
from collections import Counter

import numpy as np
import onnx
import pytest

from amp_test_utils import DEBIAN_PYTHON, plain_export, require_debian_torch, require_module
from test_amp_run import describe, run_amp

ort = require_module("onnxruntime")  # missing: a failure, not a skip
quantization = require_module("onnxruntime.quantization")
from onnxruntime.quantization.shape_inference import quant_pre_process  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPORT_SCRIPT = os.path.join(REPO, "test", "models", "amp_testmodels", "export_torch.py")
SHARED_EXPORTS = "/tmp/amp-models/opset17"

pytestmark = pytest.mark.slow


def rel_l2(got, ref):
    return float(np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref))


class Reader(quantization.CalibrationDataReader):
    def __init__(self, name, seed=0, count=4):
        rng = np.random.default_rng(seed)
        self.batches = iter([{name: rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}
                             for _ in range(count)])

    def get_next(self):
        return next(self.batches, None)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The float (pre-processed) ResNet-18 and its QDQ and QOperator
    quantizations: name -> path."""
    root = tmp_path_factory.mktemp("quantized-models")
    source = plain_export(SHARED_EXPORTS, "resnet18")
    if source is None:
        require_debian_torch()
        proc = subprocess.run([DEBIAN_PYTHON, EXPORT_SCRIPT, "--out", str(root / "export"),
                               "--opset", "17", "--models", "resnet18"],
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr
        source = str(root / "export" / "resnet18.onnx")
    paths = {"float": str(root / "float.onnx")}
    quant_pre_process(source, paths["float"])
    name = onnx.load(paths["float"], load_external_data=False).graph.input[0].name
    for fmt, key, extra in [(quantization.QuantFormat.QDQ, "qdq", {}),
                            (quantization.QuantFormat.QOperator, "qoperator",
                             {"op_types_to_quantize": ["Conv", "MatMul"]})]:
        paths[key] = str(root / f"{key}.onnx")
        quantization.quantize_static(
            paths["float"], paths[key], Reader(name), quant_format=fmt, per_channel=True,
            activation_type=quantization.QuantType.QUInt8,
            weight_type=quantization.QuantType.QInt8, **extra)
    return paths


def run_both(amp_run, path, tmp_path, seed=7):
    """(amp's logits, onnxruntime's, the float model's under onnxruntime)."""
    model = onnx.load(path)
    name, output = model.graph.input[0].name, model.graph.output[0].name
    x = np.random.default_rng(seed).standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    proc = run_amp(amp_run, path, "-i", tmp_path / "x.npy", "--output-dir", tmp_path / "out",
                   timeout=600)
    assert proc.returncode == 0, describe(proc)
    got = np.load(tmp_path / "out" / f"{output}.npy")
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {name: x})[0]
    return got, ref, x


def test_qoperator_resnet18_matches_onnxruntime(amp_run, models, tmp_path):
    ops = Counter(n.op_type for n in onnx.load(models["qoperator"]).graph.node)
    assert ops["QLinearConv"] == 20, ops
    got, ref, _ = run_both(amp_run, models["qoperator"], tmp_path)
    assert got.shape == ref.shape == (1, 1000)
    assert rel_l2(got, ref) < 1e-5
    assert got.argmax() == ref.argmax()


def test_qdq_resnet18_matches_onnxruntime(amp_run, models, tmp_path):
    ops = Counter(n.op_type for n in onnx.load(models["qdq"]).graph.node)
    assert ops["QuantizeLinear"] >= 20 and ops["Conv"] == 20, ops
    got, ref, x = run_both(amp_run, models["qdq"], tmp_path)
    assert rel_l2(got, ref) < 3e-2
    assert got.argmax() == ref.argmax()
    float_model = ort.InferenceSession(models["float"], providers=["CPUExecutionProvider"])
    fp32 = float_model.run(None, {float_model.get_inputs()[0].name: x})[0]
    assert rel_l2(got, fp32) <= 1.25 * rel_l2(ref, fp32), (rel_l2(got, fp32), rel_l2(ref, fp32))


def test_autocast_keeps_the_qoperator_model_quantized(amp_opt, models, tmp_path):
    out, report = tmp_path / "f16.onnx", tmp_path / "report.json"
    proc = amp_opt.run(models["qoperator"], "--amp-type=f16", f"--amp-report={report}",
                       "-o", out)
    assert proc.returncode == 0, proc.stderr
    source = onnx.load(models["qoperator"])
    written = onnx.load(out)
    for op in ("QLinearConv", "QuantizeLinear", "DequantizeLinear"):
        assert (sum(n.op_type == op for n in written.graph.node)
                == sum(n.op_type == op for n in source.graph.node)), op
    producers = {o: n.op_type for n in source.graph.node for o in n.output}
    after_dequantize = {n.name for n in source.graph.node
                        if any(producers.get(i) == "DequantizeLinear" for i in n.input)}
    entries = json.loads(report.read_text())["ops"]
    for entry in entries:
        if entry["op"] in ("Relu", "Add"):
            assert entry["precision"] == "f32", entry
        if entry["node"] in after_dequantize:
            assert entry["reason"].startswith("quantized region"), entry
        if entry["op"] == "QLinearConv":
            assert entry["precision"] == "unchanged", entry
    assert len(after_dequantize) >= 17
    name = source.graph.input[0].name
    x = np.random.default_rng(3).standard_normal((1, 3, 224, 224)).astype(np.float32)
    ref = ort.InferenceSession(models["qoperator"],
                               providers=["CPUExecutionProvider"]).run(None, {name: x})[0]
    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None,
                                                                                {name: x})[0]
    assert rel_l2(got, ref) < 2e-3
