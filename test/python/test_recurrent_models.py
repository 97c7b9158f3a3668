"""Sequence models with nn.LSTM, nn.GRU and nn.RNN, exported by Debian's
torch (1.13, opsets 14 and 17) with random weights, on amp's CPU backend.

The exporter writes one ONNX LSTM/GRU/RNN node per layer (bidirectional
layers as one node) with its weights reordered to ONNX's gate order, and
the Squeeze/Transpose/Concat glue between layers; the sequence and batch
axes are dynamic. Each model runs at two sequence lengths and two batch
sizes in fp32 against onnxruntime, and under autocast fp16 and bf16 with
the relative L2 error bounded (measured values in ``MIXED_BOUND``'s
comments).
"""

import subprocess
import textwrap

import numpy as np
import pytest

from amp_test_utils import DEBIAN_PYTHON, require_debian_torch, require_module
from test_amp_run import describe, ort_run, run_amp_on

onnx = require_module("onnx")
ort = require_module("onnxruntime")

EXPORT_SCRIPT = textwrap.dedent('''
    import sys, torch
    from torch import nn

    class Tagger(nn.Module):
        """Speech-style tagger: 2-layer bidirectional LSTM, batch first."""
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(40, 64, num_layers=2, bidirectional=True, batch_first=True)
            self.head = nn.Linear(128, 10)
        def forward(self, x):
            y, _ = self.lstm(x)
            return self.head(y).log_softmax(-1)

    class Encoder(nn.Module):
        """GRU encoder, time first, returning its outputs and last state."""
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(32, 48, num_layers=2)
            self.proj = nn.Linear(48, 16)
        def forward(self, x, h0):
            y, h = self.gru(x, h0)
            return self.proj(y), torch.tanh(h)

    class Elman(nn.Module):
        """ReLU RNN, reverse over time via a bidirectional layer."""
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(16, 24, nonlinearity="relu", bidirectional=True, batch_first=True)
        def forward(self, x):
            y, h = self.rnn(x)
            return y, h

    opset, out = int(sys.argv[1]), sys.argv[2]
    torch.manual_seed(0)
    models = {
        "lstm_tagger": (Tagger(), (torch.randn(2, 30, 40),), ["x"], ["y"],
                        {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}),
        "gru_encoder": (Encoder(), (torch.randn(25, 3, 32), torch.randn(2, 3, 48)),
                        ["x", "h0"], ["y", "h"],
                        {"x": {0: "seq", 1: "batch"}, "h0": {1: "batch"},
                         "y": {0: "seq", 1: "batch"}, "h": {1: "batch"}}),
        "rnn_relu": (Elman(), (torch.randn(3, 20, 16) * 0.5,), ["x"], ["y", "h"],
                     {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"},
                      "h": {1: "batch"}}),
    }
    for name, (model, inputs, input_names, output_names, axes) in models.items():
        torch.onnx.export(model.eval(), inputs, f"{out}/{name}.onnx", opset_version=opset,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=axes, do_constant_folding=True)
''')

# name -> the inputs at two (batch, seq) sizes.
RNG = np.random.default_rng(5)


def make_inputs(name, batch, seq):
    if name == "lstm_tagger":
        return {"x": RNG.standard_normal((batch, seq, 40)).astype(np.float32)}
    if name == "gru_encoder":
        return {"x": RNG.standard_normal((seq, batch, 32)).astype(np.float32),
                "h0": RNG.standard_normal((2, batch, 48)).astype(np.float32)}
    return {"x": (RNG.standard_normal((batch, seq, 16)) * 0.5).astype(np.float32)}


MODELS = ("lstm_tagger", "gru_encoder", "rnn_relu")
OPS = {"lstm_tagger": "LSTM", "gru_encoder": "GRU", "rnn_relu": "RNN"}
SIZES = [(1, 7), (3, 30)]
# Relative L2 error bound of autocast runs against onnxruntime fp32.
MIXED_BOUND = {("f16", "lstm_tagger"): 5e-4,   # measured 2.45e-4
               ("bf16", "lstm_tagger"): 4e-3,  # 1.98e-3
               ("f16", "gru_encoder"): 1e-3,   # 4.67e-4 (y, h: 4.55e-4, 4.67e-4)
               ("bf16", "gru_encoder"): 7e-3,  # 3.34e-3
               ("f16", "rnn_relu"): 7e-4,      # 3.47e-4
               ("bf16", "rnn_relu"): 6e-3}     # 2.92e-3


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{opset: folder} with the three models exported at opsets 14 and 17."""
    require_debian_torch()
    folders = {}
    for opset in (14, 17):
        folder = tmp_path_factory.mktemp(f"recurrent-opset{opset}")
        proc = subprocess.run([DEBIAN_PYTHON, "-c", EXPORT_SCRIPT, str(opset), str(folder)],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        folders[opset] = folder
    return folders


def rel_l2(got, want):
    got, want = got.astype(np.float64), want.astype(np.float64)
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)


@pytest.mark.parametrize("opset", [14, 17])
@pytest.mark.parametrize("name", MODELS)
def test_fp32_matches_onnxruntime(amp_run, exported, tmp_path, name, opset):
    model = onnx.load(str(exported[opset] / f"{name}.onnx"))
    assert OPS[name] in {n.op_type for n in model.graph.node}
    for batch, seq in SIZES:
        feeds = make_inputs(name, batch, seq)
        proc, got = run_amp_on(amp_run, tmp_path / f"{batch}x{seq}", model, feeds)
        assert proc.returncode == 0, describe(proc)
        want = ort_run(model, feeds)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("amp_type", ["f16", "bf16"])
@pytest.mark.parametrize("name", MODELS)
def test_mixed_precision_error(amp_run, exported, tmp_path, name, amp_type):
    model = onnx.load(str(exported[17] / f"{name}.onnx"))
    feeds = make_inputs(name, 3, 30)
    proc, got = run_amp_on(amp_run, tmp_path, model, feeds, "--amp-type", amp_type)
    assert proc.returncode == 0, describe(proc)
    want = ort_run(model, feeds)
    errors = [rel_l2(g, w) for g, w in zip(got, want)]
    assert max(errors) <= MIXED_BOUND[amp_type, name], errors
