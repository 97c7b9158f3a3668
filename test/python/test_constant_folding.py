"""amp-fold-constants in the front end: constant math is evaluated by the
CPU backend before autocast decides.

- an attention layer whose scale 1/sqrt(d) is computed from a constant
  (Sqrt, Reciprocal) keeps every op in fp16 with folding; without
  (`--amp-no-constant-folding`) Sqrt and Reciprocal stay fp32 and their
  rank-0 result is cast for the Mul (the small-operand rule), as when d is
  a graph input; its fp16 output matches onnxruntime's fp32 output within
  the fp16 tolerance;
- folded and unfolded programs give bit-identical fp32 outputs (folding
  uses the backend's own numerics), for a chain of float math (Pow, Div,
  Exp, Erf, Cast to fp16 and back);
- a constant that does not fit fp16 still keeps its op in fp32.
"""

import json
import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_amp_run import run_amp

D = 32
SHAPE = [2, 4, 64, D]


def attention(path, d=D):
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Sqrt", ["d"], ["sd"]),
        helper.make_node("Reciprocal", ["sd"], ["scale"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(float(d), np.float32), "d")]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, SHAPE) for n in "qkv"]
    graph = helper.make_graph(nodes, "attention", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return model


def summary(proc):
    line = [l for l in proc.stderr.splitlines() if l.startswith("amp-autocast:")]
    assert line, proc.stderr
    m = re.search(r"(\d+) ops: (\d+) f16, (\d+) f32.*?(\d+) casts", line[0])
    return dict(zip(("ops", "f16", "f32", "casts"), map(int, m.groups())))


def test_attention_scale_stays_fp16(amp_opt, tmp_path):
    attention(tmp_path / "attn.onnx")
    folded = amp_opt.run(tmp_path / "attn.onnx", "-o", tmp_path / "a.mlir")
    plain = amp_opt.run(tmp_path / "attn.onnx", "--amp-no-constant-folding",
                        "-o", tmp_path / "b.mlir")
    assert folded.returncode == 0 and plain.returncode == 0, folded.stderr + plain.stderr
    f, p = summary(folded), summary(plain)
    assert f["f32"] == 0 and f["f16"] == f["ops"], f
    # Sqrt and Reciprocal in fp32; their rank-0 result is cast to fp16 for
    # the Mul (one more cast), which does not pull Mul and Softmax to fp32.
    assert p["f32"] == 2 and p["casts"] == f["casts"] + 1, (f, p)
    text = (tmp_path / "a.mlir").read_text()
    assert "amp.sqrt" not in text and "amp.reciprocal" not in text
    assert re.search(r"amp\.softmax .*tensor<2x4x64x64xf16>", text), text
    plain_text = (tmp_path / "b.mlir").read_text()
    assert re.search(r"amp\.softmax .*tensor<2x4x64x64xf16>", plain_text), plain_text
    assert re.search(r"scalar fp32 operand from 'scale' cast to f16|amp\.mul .*f16", plain_text)


def test_run_time_scale_is_cast_not_followed(amp_opt, tmp_path):
    """The scale's d a graph input (nothing folds): the rank-0 result of
    Reciprocal(Sqrt(d)) is cast to fp16 for the Mul; Mul and Softmax stay
    fp16, and the report says why."""
    model = attention(tmp_path / "attn.onnx")
    graph = model.graph
    del graph.initializer[:]
    graph.input.append(helper.make_tensor_value_info("d", TensorProto.FLOAT, []))
    onnx.save(model, tmp_path / "attn_d.onnx")
    report = tmp_path / "report.json"
    proc = amp_opt.run(tmp_path / "attn_d.onnx", f"--amp-report={report}", "-o",
                       tmp_path / "d.mlir")
    assert proc.returncode == 0, proc.stderr
    s = summary(proc)
    # q, k, v and the scale in, y out: the five boundaries, nothing inside.
    assert s["f32"] == 2 and s["casts"] == 5, s
    ops = {o["op"]: o for o in json.loads(report.read_text())["ops"]}
    assert ops["Mul"]["precision"] == "f16"
    assert "scalar fp32 operand from" in ops["Mul"]["reason"], ops["Mul"]
    assert ops["Softmax"]["precision"] == "f16"


def test_attention_fp16_matches_onnxruntime(amp_run, tmp_path):
    model = attention(tmp_path / "attn.onnx")
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal(SHAPE).astype(np.float32) for n in "qkv"}
    args = []
    for n in "qkv":
        np.save(tmp_path / f"{n}.npy", feeds[n])
        args += ["-i", tmp_path / f"{n}.npy"]
    proc = run_amp(amp_run, tmp_path / "attn.onnx", *args, "--amp-type", "f16",
                   "--output-dir", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    got = np.load(tmp_path / "out" / "y.npy")
    (want,) = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=2e-3)


def chain(path):
    """y = x * (erf(c) + exp(c / 3) ** 2.5) with c a constant vector, part of
    it computed in fp16 (Cast to fp16 and back)."""
    c = np.linspace(-2.0, 2.0, 16).astype(np.float32)
    nodes = [
        helper.make_node("Erf", ["c"], ["e"]),
        helper.make_node("Div", ["c", "three"], ["c3"]),
        helper.make_node("Cast", ["c3"], ["h"], to=TensorProto.FLOAT16),
        helper.make_node("Exp", ["h"], ["eh"]),
        helper.make_node("Cast", ["eh"], ["ef"], to=TensorProto.FLOAT),
        helper.make_node("Pow", ["ef", "p"], ["pw"]),
        helper.make_node("Add", ["e", "pw"], ["s"]),
        helper.make_node("Mul", ["x", "s"], ["y"]),
    ]
    inits = [numpy_helper.from_array(c, "c"),
             numpy_helper.from_array(np.array(3.0, np.float32), "three"),
             numpy_helper.from_array(np.array(2.5, np.float32), "p")]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 16])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_folding_has_the_backend_numerics(amp_opt, amp_run, tmp_path):
    chain(tmp_path / "chain.onnx")
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    outs = []
    for flags in [(), ("--amp-no-constant-folding",)]:
        out = tmp_path / f"out{len(outs)}"
        # --amp-type turns the front end (and folding) on; opt level 0
        # keeps fp32.
        proc = run_amp(amp_run, tmp_path / "chain.onnx", "-i", tmp_path / "x.npy",
                       "--amp-type", "f16", "--amp-opt-level", "0", *flags,
                       "--output-dir", out)
        assert proc.returncode == 0, proc.stderr
        outs.append(np.load(out / "y.npy"))
    assert outs[0].tobytes() == outs[1].tobytes()
    proc = amp_opt.run(tmp_path / "chain.onnx", "--amp-opt-level=0", "-o", tmp_path / "c.mlir")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "c.mlir").read_text()
    for op in ("amp.erf", "amp.exp", "amp.pow", "amp.div", "amp.cast"):
        assert op not in text, text


def test_out_of_range_constant_keeps_fp32(amp_opt, tmp_path):
    """A folded scale of 1e6 * 1e-1 = 1e5 does not fit fp16: its Mul stays
    fp32 (the range rule holds for folded values)."""
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["s"]),
        helper.make_node("Mul", ["x", "s"], ["y"]),
        helper.make_node("MatMul", ["y", "w"], ["z"]),
    ]
    inits = [numpy_helper.from_array(np.array(1e6, np.float32), "a"),
             numpy_helper.from_array(np.array(1e-1, np.float32), "b"),
             numpy_helper.from_array(np.ones((16, 16), np.float32), "w")]
    graph = helper.make_graph(
        nodes, "range", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [8, 16])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "r.onnx")
    proc = amp_opt.run(tmp_path / "r.onnx", "-o", tmp_path / "r.mlir")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "r.mlir").read_text()
    assert "dense<1.000000e+05>" in text
    assert re.search(r"amp\.mul %arg0, %\d+ : \(tensor<8x16xf32>, tensor<f32>\) -> "
                     r"tensor<8x16xf32>", text), text
