"""RNN, GRU and LSTM on amp's CPU backend, against onnxruntime.

- Every direction, both layouts (onnxruntime has only layout 0: its run on
  the transposed data is the reference for layout 1), with and without
  bias, initial states and sequence lengths (including 0 and the full
  length), LSTM peepholes and input_forget, GRU linear_before_reset, clip.
- Activation lists other than the defaults with alpha/beta values
  (consumed in order by the functions that take them), and the ONNX
  defaults of LeakyRelu, HardSigmoid and Elu.
- Symbolic sequence and batch sizes.
- fp16: autocast keeps the op in fp16 with fp32 accumulation (compared with
  onnxruntime's fp32 run on the fp16-rounded data); without fp32
  accumulation the state is fp16 at every step (looser bound); f16 models.
- A sequence length outside [0, seq_length] is a run-time error naming the
  node.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip
RNG = np.random.default_rng(47)
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
        np.dtype(np.int32): TensorProto.INT32}


def make_data(op, seq, batch, inputs, hidden, directions, *, bias=True, lengths=None,
              initial=True, peepholes=True, scale=0.5):
    """Operands in layout 0, as an ordered dict name -> array (None: absent)."""
    gates = GATES[op]
    data = {
        "X": RNG.standard_normal((seq, batch, inputs)).astype(np.float32),
        "W": (RNG.standard_normal((directions, gates * hidden, inputs)) * scale).astype(np.float32),
        "R": (RNG.standard_normal((directions, gates * hidden, hidden)) * scale).astype(np.float32),
        "B": (RNG.standard_normal((directions, 2 * gates * hidden)) * scale).astype(np.float32)
        if bias else None,
        "sequence_lens": None if lengths is None else np.asarray(lengths, np.int32),
        "initial_h": RNG.standard_normal((directions, batch, hidden)).astype(np.float32)
        if initial else None,
    }
    if op == "LSTM":
        data["initial_c"] = (RNG.standard_normal((directions, batch, hidden)).astype(np.float32)
                             if initial else None)
        data["P"] = (RNG.standard_normal((directions, 3 * hidden)) * scale).astype(np.float32) \
            if peepholes else None
    return data


def to_layout1(data):
    out = dict(data)
    out["X"] = data["X"].transpose(1, 0, 2).copy()
    for name in ("initial_h", "initial_c"):
        if out.get(name) is not None:
            out[name] = data[name].transpose(1, 0, 2).copy()
    return out


def outputs_to_layout1(outputs):
    return [outputs[0].transpose(2, 0, 1, 3)] + [o.transpose(1, 0, 2) for o in outputs[1:]]


def make_model(op, data, layout=0, dims=None, opset=14, **attrs):
    """One recurrent node over `data` (absent operands are empty names).
    `dims` replaces X's shape in the graph input (symbolic sizes)."""
    names = [n if a is not None else "" for n, a in data.items()]
    while names and not names[-1]:
        names.pop()
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outputs, name="rec", layout=layout, **attrs)
    inputs = []
    for name, array in data.items():
        if array is None:
            continue
        shape = list(dims) if (name == "X" and dims) else list(array.shape)
        inputs.append(helper.make_tensor_value_info(name, ELEM[array.dtype], shape))
    elem = ELEM[data["X"].dtype]
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info(o, elem, None) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def feeds_of(data):
    return {n: a for n, a in data.items() if a is not None}


def reference(op, data, layout=0, **attrs):
    """onnxruntime's outputs (fp32, layout 0 run, transposed for layout 1)."""
    data32 = {n: (a.astype(np.float32) if a is not None and a.dtype == np.float16 else a)
              for n, a in data.items()}
    want = ort_run(make_model(op, data32, 0, **attrs), feeds_of(data32))
    return outputs_to_layout1(want) if layout else want


def run_amp(amp_run, folder, op, data, layout=0, flags=(), dims=None, **attrs):
    run_data = to_layout1(data) if layout else data
    model = make_model(op, run_data, layout, dims=dims, **attrs)
    proc, got = run_amp_on(amp_run, folder, model, feeds_of(run_data), *flags)
    assert proc.returncode == 0, describe(proc)
    return got


def check(got, want, atol, rtol=0):
    assert len(got) == len(want)
    for name, g, w in zip(["Y", "Y_h", "Y_c"], got, want):
        assert g.shape == w.shape, (name, g.shape, w.shape)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                   atol=atol, rtol=rtol, err_msg=name)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_directions_and_layouts(amp_run, tmp_path, op, direction, layout):
    directions = 2 if direction == "bidirectional" else 1
    data = make_data(op, 5, 3, 4, 6, directions, lengths=[5, 0, 3])
    attrs = dict(hidden_size=6, direction=direction)
    got = run_amp(amp_run, tmp_path, op, data, layout, **attrs)
    check(got, reference(op, data, layout, **attrs), 2e-6)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_defaults_without_optional_operands(amp_run, tmp_path, op):
    """No B, no sequence_lens, no initial states, no hidden_size attribute."""
    data = make_data(op, 4, 2, 3, 5, 1, bias=False, initial=False, peepholes=False)
    got = run_amp(amp_run, tmp_path, op, data)
    check(got, reference(op, data, hidden_size=5), 2e-6)   # onnxruntime needs it


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_sequence_lengths(amp_run, tmp_path, op):
    """Lengths 0..T in both directions: later outputs are 0, Y_h holds each
    entry's last step (0 for an empty sequence, as onnxruntime)."""
    data = make_data(op, 6, 7, 3, 4, 2, lengths=[0, 1, 2, 3, 4, 5, 6])
    attrs = dict(hidden_size=4, direction="bidirectional")
    got = run_amp(amp_run, tmp_path, op, data, **attrs)
    check(got, reference(op, data, **attrs), 2e-6)
    assert np.all(got[0][1:, :, 1] == 0) and np.all(got[0][3:, :, 3] == 0)
    assert np.all(got[1][:, 0] == 0)


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_input_forget_and_clip(amp_run, tmp_path, direction):
    directions = 2 if direction == "bidirectional" else 1
    data = make_data("LSTM", 5, 2, 3, 4, directions, lengths=[5, 2], scale=1.5)
    for attrs in (dict(input_forget=1), dict(clip=0.7), dict(input_forget=1, clip=1.1)):
        attrs.update(hidden_size=4, direction=direction)
        got = run_amp(amp_run, tmp_path / str(len(attrs)), "LSTM", data, **attrs)
        check(got, reference("LSTM", data, **attrs), 2e-6)


@pytest.mark.parametrize("op", ["RNN", "GRU"])
def test_clip(amp_run, tmp_path, op):
    data = make_data(op, 5, 2, 3, 4, 2, scale=1.5)
    attrs = dict(hidden_size=4, direction="bidirectional", clip=0.5)
    got = run_amp(amp_run, tmp_path, op, data, **attrs)
    check(got, reference(op, data, **attrs), 2e-6)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_gru_linear_before_reset(amp_run, tmp_path, direction):
    directions = 2 if direction == "bidirectional" else 1
    data = make_data("GRU", 5, 3, 4, 6, directions, lengths=[1, 5, 3])
    attrs = dict(hidden_size=6, direction=direction, linear_before_reset=1)
    got = run_amp(amp_run, tmp_path, "GRU", data, **attrs)
    check(got, reference("GRU", data, **attrs), 2e-6)


ACTIVATION_CASES = [
    ("RNN", "forward", dict(activations=["Relu"])),
    ("RNN", "bidirectional", dict(activations=["LeakyRelu", "Elu"])),   # ONNX defaults
    ("RNN", "forward", dict(activations=["Affine"], activation_alpha=[0.7],
                            activation_beta=[0.2])),
    ("RNN", "forward", dict(activations=["ThresholdedRelu"], activation_alpha=[0.3])),
    ("RNN", "forward", dict(activations=["ScaledTanh"], activation_alpha=[1.3],
                            activation_beta=[0.6])),
    ("GRU", "forward", dict(activations=["HardSigmoid", "Softsign"])),
    ("GRU", "bidirectional", dict(activations=["HardSigmoid", "LeakyRelu", "Sigmoid", "Elu"],
                                  activation_alpha=[0.3, 0.05, 0.8],
                                  activation_beta=[0.4])),
    ("LSTM", "forward", dict(activations=["Sigmoid", "Softplus", "Softsign"])),
    ("LSTM", "bidirectional", dict(activations=["HardSigmoid", "Tanh", "ScaledTanh",
                                                "Sigmoid", "Affine", "Tanh"],
                                   activation_alpha=[0.25, 0.9, 0.5],
                                   activation_beta=[0.45, 1.2, 0.1])),
    ("LSTM", "forward", dict(activations=["sigmoid", "tanh", "relu"])),   # any case
]


@pytest.mark.parametrize("op,direction,attrs", ACTIVATION_CASES,
                         ids=[f"{c[0]}-{'-'.join(c[2]['activations'])}" for c in ACTIVATION_CASES])
def test_activations(amp_run, tmp_path, op, direction, attrs):
    directions = 2 if direction == "bidirectional" else 1
    data = make_data(op, 5, 2, 3, 4, directions, lengths=[5, 3])
    attrs = dict(attrs, hidden_size=4, direction=direction)
    got = run_amp(amp_run, tmp_path, op, data, **attrs)
    check(got, reference(op, data, **attrs), 5e-6)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("layout", [0, 1])
def test_symbolic_sizes(amp_run, tmp_path, op, layout):
    data = make_data(op, 7, 3, 5, 4, 2, lengths=[7, 4, 1])
    attrs = dict(hidden_size=4, direction="bidirectional")
    dims = ["B", "T", 5] if layout else ["T", "B", 5]
    got = run_amp(amp_run, tmp_path, op, data, layout, dims=dims, **attrs)
    check(got, reference(op, data, layout, **attrs), 2e-6)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_autocast_fp16(amp_run, tmp_path, op):
    """Autocast runs the op in fp16 with fp32 accumulation: the outputs are
    the fp32 computation rounded once."""
    data = make_data(op, 8, 4, 16, 16, 2, lengths=[8, 5, 2, 7])
    attrs = dict(hidden_size=16, direction="bidirectional")
    want = reference(op, data, **attrs)
    got = run_amp(amp_run, tmp_path / "acc", op, data, flags=("--amp-type", "f16"), **attrs)
    check(got, want, 1e-2)
    # Without fp32 accumulation the state is rounded at every step.
    got = run_amp(amp_run, tmp_path / "noacc", op, data,
                  flags=("--amp-type", "f16", "--amp-fp32-accumulate=false"), **attrs)
    check(got, want, 6e-2)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_fp16_model(amp_run, tmp_path, op):
    """An fp16 model computes in fp16 (GEMMs rounded per step, gates in fp32);
    compared with the fp32 computation on the same fp16 values."""
    data = make_data(op, 6, 2, 8, 8, 1, lengths=[6, 3])
    data = {n: (a.astype(np.float16) if a is not None and a.dtype == np.float32 else a)
            for n, a in data.items()}
    attrs = dict(hidden_size=8)
    got = run_amp(amp_run, tmp_path, op, data, **attrs)
    assert all(g.dtype == np.float16 for g in got)
    check(got, reference(op, data, **attrs), 3e-2)


@pytest.mark.parametrize("lengths,value", [([2, 6], 6), ([-1, 2], -1)])
def test_sequence_length_out_of_range(amp_run, tmp_path, lengths, value):
    data = make_data("GRU", 5, 2, 3, 4, 1, lengths=lengths)
    model = make_model("GRU", data, hidden_size=4)
    proc, _ = run_amp_on(amp_run, tmp_path, model, feeds_of(data))
    assert proc.returncode != 0, describe(proc)
    assert (f"node 'rec' (GRU): sequence length {value} is outside [0, 5] "
            "(the sequence length of X)") in proc.stderr, describe(proc)
    assert "Traceback" not in proc.stderr and "Aborted" not in proc.stderr


def test_inconsistent_weights_refused(amp_run, tmp_path):
    """A W for another gate count is an import error naming the node."""
    data = make_data("GRU", 3, 2, 3, 4, 1)
    data["W"] = data["W"][:, :8]
    model = make_model("GRU", data, hidden_size=4)
    proc, _ = run_amp_on(amp_run, tmp_path, model, feeds_of(data))
    assert proc.returncode != 0, describe(proc)
    assert ("W must be [num_directions, 3*hidden_size, input_size] = [1, 12, 3], "
            "not [1, 8, 3]") in proc.stderr, describe(proc)
    assert "rec" in proc.stderr
