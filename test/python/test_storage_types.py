"""ONNX's storage types on amp's CPU backend: the 8-bit floats
(FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ) and the packed
4- and 2-bit integers (INT4, UINT4, INT2, UINT2).

Cast to and from each, against onnx's reference implementation, on values
chosen to hit every rounding case: every code of the format, the midpoints
between neighbours (ties to even) and just beside them, the subnormal range,
values that round up to and beyond the largest finite value, infinities,
NaN and signed zeros, with and without ``saturate``. Tensors travel through
``.pb`` files (packed 4- and 2-bit data, 8-bit codes) and ``.npy`` files
(their carrier types); initializers of these types are unpacked, lowered as
constants and exported packed again. Ops that compute on them other than
Cast are refused with a clear error."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from amp_test_utils import require_module
from test_amp_run import describe, run_amp, run_amp_on, save_model

ort = require_module("onnxruntime")  # missing: a failure, not a skip

FLOAT8 = {
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
}
NARROW = {  # type -> (numpy carrier, low, high)
    TensorProto.INT4: (np.int8, -8, 7),
    TensorProto.UINT4: (np.uint8, 0, 15),
    TensorProto.INT2: (np.int8, -2, 1),
    TensorProto.UINT2: (np.uint8, 0, 3),
}
NAMES = {t: TensorProto.DataType.Name(t) for t in list(FLOAT8) + list(NARROW)}


def cast_model(src, dst, shape, saturate=None, opset=25):
    attrs = {"to": dst}
    if saturate is not None:
        attrs["saturate"] = saturate
    node = helper.make_node("Cast", ["x"], ["y"], name="cast", **attrs)
    graph = helper.make_graph([node], "cast",
                              [helper.make_tensor_value_info("x", src, shape)],
                              [helper.make_tensor_value_info("y", dst, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=11)


def reference(model, x):
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


def float8_values(dtype):
    """Every finite code of `dtype`, the midpoints between neighbours and
    their float64 neighbours, values around the largest finite value and
    the specials."""
    codes = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float64)
    finite = np.unique(codes[np.isfinite(codes)])
    mids = (finite[:-1] + finite[1:]) / 2
    top = float(finite[-1])
    step = top - float(finite[-2])
    values = np.concatenate([
        finite, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
        [top + step / 2, top + step / 2 * 0.999, top + step / 2 * 1.001,
         top * 2, 1e30, np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 1e-30,
         -1e-30, finite[finite > 0].min() / 2, finite[finite > 0].min() * 1.5],
    ])
    return np.concatenate([values, -values])


def assert_same_floats(got, want, what):
    """Equal values, NaN where NaN, and the same sign of zero."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, what
    nan = np.isnan(want)
    bad = ~(np.isnan(got) == nan)
    bad |= ~nan & ((got != want) | (np.signbit(got) != np.signbit(want)))
    assert not bad.any(), (f"{what}: {int(bad.sum())} of {bad.size} differ, e.g. "
                           f"inputs at {np.flatnonzero(bad)[:5]}: got {got[bad][:5]}, "
                           f"want {want[bad][:5]}")


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("src", [TensorProto.FLOAT, TensorProto.FLOAT16,
                                 TensorProto.DOUBLE])
@pytest.mark.parametrize("dst", list(FLOAT8), ids=lambda t: NAMES[t])
def test_cast_to_float8(amp_run, tmp_path, dst, src, saturate):
    np_src = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16,
              TensorProto.DOUBLE: np.float64}[src]
    with np.errstate(over="ignore"):
        x = float8_values(FLOAT8[dst]).astype(np_src)
    model = cast_model(src, dst, [x.size], saturate)
    want = reference(model, x).astype(np.float64)
    proc, outputs = run_amp_on(amp_run, tmp_path, model, {"x": x})
    assert proc.returncode == 0, describe(proc)
    assert outputs[0].dtype == np.float32  # the .npy carrier
    assert_same_floats(outputs[0], want, f"{NAMES[dst]} saturate={saturate}")


@pytest.mark.parametrize("dst", [TensorProto.FLOAT, TensorProto.FLOAT16,
                                 TensorProto.BFLOAT16, TensorProto.INT32])
@pytest.mark.parametrize("src", list(FLOAT8), ids=lambda t: NAMES[t])
def test_cast_from_float8_every_code(amp_run, tmp_path, src, dst):
    """All 256 codes, given as a .pb file of the 8-bit type."""
    codes = np.arange(256, dtype=np.uint8).view(FLOAT8[src])
    if dst == TensorProto.INT32:  # NaN and Inf have no integer value
        codes = codes[np.isfinite(codes.astype(np.float32))]
    model = cast_model(src, dst, [codes.size])
    want = reference(model, codes)
    (tmp_path / "x.pb").write_bytes(
        numpy_helper.from_array(codes, "x").SerializeToString())
    path = save_model(model, tmp_path)
    proc = run_amp(amp_run, path, "-i", tmp_path / "x.pb", "--output-dir",
                   tmp_path / "out")
    assert proc.returncode == 0, describe(proc)
    got = np.load(tmp_path / "out" / "y.npy")
    if dst == TensorProto.BFLOAT16:
        want = want.astype(np.float32)
    if dst == TensorProto.INT32:
        np.testing.assert_array_equal(got, want)
    else:
        assert_same_floats(got, want, f"{NAMES[src]} -> {dst}")


@pytest.mark.parametrize("pair", [(TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E4M3FN),
                                  (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2FNUZ)],
                         ids=lambda p: f"{NAMES[p[0]]}-{NAMES[p[1]]}")
def test_cast_between_float8(amp_run, tmp_path, pair):
    src, dst = pair
    codes = np.arange(256, dtype=np.uint8).view(FLOAT8[src])
    model = cast_model(src, dst, [256])
    want = reference(model, codes).astype(np.float64)
    proc, outputs = run_amp_on(amp_run, tmp_path, model,
                               {"x": codes.astype(np.float32)})
    assert proc.returncode == 0, describe(proc)
    assert_same_floats(outputs[0], want, f"{NAMES[src]} -> {NAMES[dst]}")


@pytest.mark.parametrize("src", [TensorProto.FLOAT, TensorProto.FLOAT16,
                                 TensorProto.INT8, TensorProto.INT32])
@pytest.mark.parametrize("dst", list(NARROW), ids=lambda t: NAMES[t])
def test_cast_to_narrow_integer(amp_run, tmp_path, dst, src):
    """Floats truncate toward zero (out of range: 0, as onnx's reference);
    integers wrap. An odd count checks the packing of the last byte."""
    np_src = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16,
              TensorProto.INT8: np.int8, TensorProto.INT32: np.int32}[src]
    if np.issubdtype(np_src, np.floating):
        x = np.array([-20, -9, -8.9, -8, -2.5, -2, -1.7, -0.5, -0.0, 0, 0.5, 1, 1.9,
                      2, 3.99, 7, 7.5, 8, 15, 15.9, 16, 1e4, np.inf, -np.inf, np.nan],
                     np_src)
    else:
        x = np.arange(np.iinfo(np_src).min if np_src == np.int8 else -300,
                      np.iinfo(np_src).max + 1 if np_src == np.int8 else 301,
                      dtype=np_src)
    model = cast_model(src, dst, [x.size])
    with np.errstate(invalid="ignore"):
        want = reference(model, x).astype(np.int64)
    proc, outputs = run_amp_on(amp_run, tmp_path, model, {"x": x})
    assert proc.returncode == 0, describe(proc)
    carrier = NARROW[dst][0]
    assert outputs[0].dtype == carrier
    np.testing.assert_array_equal(outputs[0].astype(np.int64), want)


@pytest.mark.parametrize("dst", [TensorProto.FLOAT, TensorProto.FLOAT16,
                                 TensorProto.INT8, TensorProto.UINT8,
                                 TensorProto.INT64])
@pytest.mark.parametrize("src", list(NARROW), ids=lambda t: NAMES[t])
def test_cast_from_narrow_integer_every_value(amp_run, tmp_path, src, dst):
    """Every value of the type, read from a packed .pb file (odd count)."""
    carrier, low, high = NARROW[src]
    values = np.arange(low, high + 1).astype(carrier)
    values = np.concatenate([values, values[:1]])  # odd for 2-bit types too
    if values.size % 2 == 0:
        values = values[:-1]
    tensor = helper.make_tensor("x", src, [values.size], values.tolist())
    (tmp_path / "x.pb").write_bytes(tensor.SerializeToString())
    model = cast_model(src, dst, [values.size])
    want = reference(model, numpy_helper.to_array(tensor))
    path = save_model(model, tmp_path)
    proc = run_amp(amp_run, path, "-i", tmp_path / "x.pb", "--output-dir",
                   tmp_path / "out")
    assert proc.returncode == 0, describe(proc)
    got = np.load(tmp_path / "out" / "y.npy")
    np.testing.assert_array_equal(got, want.astype(got.dtype))
    if dst != TensorProto.UINT8:  # every value is representable
        np.testing.assert_array_equal(got.astype(np.float64), values.astype(np.float64))


def test_compare_to_pb_of_storage_types(amp_run, tmp_path):
    """--compare-to reads the packed and 8-bit references (what the ONNX
    node tests use); a wrong reference is reported, not accepted."""
    x = np.array([0.3, -1.7, 2.2, 100.0, -7.0], np.float32)
    node4 = helper.make_node("Cast", ["x"], ["q4"], to=TensorProto.INT4)
    node8 = helper.make_node("Cast", ["x"], ["f8"], to=TensorProto.FLOAT8E4M3FN)
    graph = helper.make_graph(
        [node4, node8], "g", [helper.make_tensor_value_info("x", 1, [5])],
        [helper.make_tensor_value_info("q4", TensorProto.INT4, [5]),
         helper.make_tensor_value_info("f8", TensorProto.FLOAT8E4M3FN, [5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                              ir_version=10)
    q4, f8 = ReferenceEvaluator(model).run(None, {"x": x})
    path = save_model(model, tmp_path)
    np.save(tmp_path / "x.npy", x)
    for name, array, elem in [("q4", q4, TensorProto.INT4),
                              ("f8", f8, TensorProto.FLOAT8E4M3FN)]:
        t = helper.make_tensor(name, elem, array.shape,
                               array.astype(np.float32).tolist())
        (tmp_path / f"{name}.pb").write_bytes(t.SerializeToString())
    proc = run_amp(amp_run, path, "-i", tmp_path / "x.npy", "--compare-to",
                   tmp_path / "q4.pb", "--compare-to", tmp_path / "f8.pb")
    assert proc.returncode == 0, describe(proc)
    assert "q4: ok" in proc.stdout and "f8: ok" in proc.stdout, proc.stdout
    wrong = helper.make_tensor("q4", TensorProto.INT4, [5], [1, -1, 2, 0, -7])
    (tmp_path / "q4.pb").write_bytes(wrong.SerializeToString())
    proc = run_amp(amp_run, path, "-i", tmp_path / "x.npy", "--compare-to",
                   tmp_path / "q4.pb", "--compare-to", tmp_path / "f8.pb")
    assert proc.returncode != 0 and "q4: FAIL" in proc.stdout, describe(proc)


def initializer_model():
    """Casts of an INT4 initializer (odd count: a half-used last byte), a
    UINT2 one and an 8-bit float one, added to a float input."""
    w4 = helper.make_tensor("w4", TensorProto.INT4, [7], [-8, -3, -1, 0, 1, 5, 7])
    w2 = helper.make_tensor("w2", TensorProto.UINT2, [7], [0, 1, 2, 3, 3, 2, 1])
    f8 = helper.make_tensor("f8", TensorProto.FLOAT8E5M2, [7],
                            [0.5, -1.5, 3.0, 57344.0, -0.0, 1e-5, 2.5])
    nodes = [helper.make_node("Cast", ["w4"], ["w4f"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["w2"], ["w2f"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["f8"], ["f8f"], to=TensorProto.FLOAT),
             helper.make_node("Sum", ["x", "w4f", "w2f", "f8f"], ["y"])]
    graph = helper.make_graph(nodes, "init",
                              [helper.make_tensor_value_info("x", 1, [7])],
                              [helper.make_tensor_value_info("y", 1, [7])],
                              initializer=[w4, w2, f8])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)],
                             ir_version=11)


def test_initializers_of_storage_types(amp_run, tmp_path):
    model = initializer_model()
    x = np.linspace(-1, 1, 7).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    proc, outputs = run_amp_on(amp_run, tmp_path, model, {"x": x})
    assert proc.returncode == 0, describe(proc)
    np.testing.assert_array_equal(outputs[0], want)


def test_export_keeps_storage_types(amp_opt, tmp_path):
    """A weight-only INT4 model (DequantizeLinear of a packed initializer)
    with an 8-bit float initializer, exported again with fp16 autocast
    (constant folding off, which would fold the Cast): both initializers
    keep their types and values (INT4 packed again), and onnxruntime runs
    the result to the reference."""
    rng = np.random.default_rng(3)
    w = rng.integers(-8, 8, (7, 5))
    inits = [helper.make_tensor("w4", TensorProto.INT4, [7, 5], w.ravel().tolist()),
             helper.make_tensor("s", 1, [], [0.25]),
             helper.make_tensor("zp", TensorProto.INT4, [], [1]),
             helper.make_tensor("q8", TensorProto.FLOAT8E4M3FN, [5],
                                [0.5, -2, 448, 0, 1.25])]
    nodes = [helper.make_node("DequantizeLinear", ["w4", "s", "zp"], ["wd"]),
             helper.make_node("MatMul", ["x", "wd"], ["m"]),
             helper.make_node("Cast", ["q8"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["m", "f"], ["y"])]
    graph = helper.make_graph(
        nodes, "w4", [helper.make_tensor_value_info("x", 1, [3, 7])],
        [helper.make_tensor_value_info("y", 1, [3, 5])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                              ir_version=10)
    src = save_model(model, tmp_path)
    out = tmp_path / "out.onnx"
    proc = amp_opt.run(src, "--amp-type=f16", "--amp-no-constant-folding", "-o", out)
    assert proc.returncode == 0, proc.stderr
    exported = onnx.load(out)
    w4 = next(t for t in exported.graph.initializer if t.name == "w4")
    assert w4.data_type == TensorProto.INT4 and len(w4.raw_data) == 18  # 35 packed
    np.testing.assert_array_equal(numpy_helper.to_array(w4).astype(np.int64), w)
    q8 = next(t for t in exported.graph.initializer if t.name == "q8")
    assert q8.data_type == TensorProto.FLOAT8E4M3FN
    np.testing.assert_array_equal(numpy_helper.to_array(q8).astype(np.float32),
                                  [0.5, -2, 448, 0, 1.25])
    feeds = {"x": rng.standard_normal((3, 7)).astype(np.float32)}
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    sess = ort.InferenceSession(out.read_bytes(), providers=["CPUExecutionProvider"])
    got = sess.run(None, feeds)[0]
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-3, atol=2e-2)


def test_npy_inputs_in_carrier_types(amp_run, tmp_path):
    """An 8-bit float input takes float32 (rounded, saturating); a 4-bit one
    takes int8 within its range, and says which element is out of it."""
    model = cast_model(TensorProto.INT4, TensorProto.FLOAT, [4])
    proc, outputs = run_amp_on(amp_run, tmp_path, model,
                               {"x": np.array([-8, -1, 0, 7], np.int8)})
    assert proc.returncode == 0, describe(proc)
    np.testing.assert_array_equal(outputs[0], [-8, -1, 0, 7])
    proc, _ = run_amp_on(amp_run, tmp_path / "bad", model,
                         {"x": np.array([-8, 9, 0, 7], np.int8)})
    assert proc.returncode != 0
    assert "element 1 is 9, outside the range of i4 [-8, 7]" in proc.stderr, describe(proc)
    model = cast_model(TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT, [4])
    proc, outputs = run_amp_on(amp_run, tmp_path / "f8", model,
                               {"x": np.array([0.3, 1000, -np.inf, 1.0], np.float32)})
    assert proc.returncode == 0, describe(proc)
    np.testing.assert_array_equal(outputs[0], [0.3125, 448, -448, 1.0])


@pytest.mark.parametrize("raw,count,message", [
    (b"\x12\x34", 5, "holds 2 bytes but its shape and type need 3"),
    (b"\x12\x34\x56\x78", 5, "holds 4 bytes but its shape and type need 3"),
])
def test_packed_size_mismatch_is_an_error(amp_opt, tmp_path, raw, count, message):
    tensor = TensorProto(name="w", data_type=TensorProto.INT4, dims=[count],
                         raw_data=raw)
    node = helper.make_node("Cast", ["w"], ["y"], to=TensorProto.FLOAT)
    graph = helper.make_graph([node], "g", [],
                              [helper.make_tensor_value_info("y", 1, [count])],
                              initializer=[tensor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    src = save_model(model, tmp_path)
    proc = amp_opt.run(src, "-o", tmp_path / "out.mlir")
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


def test_arithmetic_on_storage_types_is_refused(amp_opt, tmp_path):
    """ONNX's Add takes no 8-bit floats: a hostile file gets a clear error."""
    node = helper.make_node("Add", ["a", "a"], ["y"], name="add8")
    f8 = TensorProto.FLOAT8E4M3FN
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", f8, [3])],
                              [helper.make_tensor_value_info("y", f8, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    src = save_model(model, tmp_path)
    proc = amp_opt.run(src, "-o", tmp_path / "out.mlir")
    assert proc.returncode != 0
    assert "add8" in proc.stderr and "f8E4M3FN" in proc.stderr, proc.stderr


QUANT_TYPES = list(FLOAT8) + list(NARROW)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("dst", QUANT_TYPES, ids=lambda t: NAMES[t])
def test_quantize_linear_to_storage_types(amp_run, tmp_path, dst, saturate):
    """Per-axis scales; integer types with a zero point (saturating to
    their range), 8-bit floats rounding as Cast with the op's saturate."""
    x = np.concatenate([np.linspace(-30, 30, 37), [np.inf, -np.inf, 1e9, 0.0]])
    x = np.stack([x, -x * 0.5]).astype(np.float32)
    scale = np.array([0.5, 0.03], np.float32)
    inits = [numpy_helper.from_array(scale, "s")]
    inputs = ["x", "s"]
    if dst in NARROW:
        carrier, low, high = NARROW[dst]
        inits.append(helper.make_tensor("zp", dst, [2], [low + 1, high]))
        inputs.append("zp")
        attrs = {}
        # onnx's reference casts x / scale to int32 before saturating, which
        # is undefined for +-Inf; amp saturates them, as onnxruntime does
        # (checked below).
        x = np.where(np.isinf(x), 0, x).astype(np.float32)
    else:
        attrs = {"saturate": saturate, "output_dtype": dst}
        if saturate == 0:
            x = x[:, :-4]  # keep the non-saturating case to finite inputs too
    node = helper.make_node("QuantizeLinear", inputs, ["y"], axis=0, **attrs)
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", 1, x.shape)],
                              [helper.make_tensor_value_info("y", dst, x.shape)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)],
                              ir_version=11)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    proc, outputs = run_amp_on(amp_run, tmp_path, model, {"x": x})
    assert proc.returncode == 0, describe(proc)
    assert_same_floats(outputs[0], want.astype(np.float64), NAMES[dst])
    if dst in NARROW:
        inf = np.array([[np.inf, -np.inf], [-np.inf, np.inf]], np.float32)
        model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 2
        model.graph.output[0].type.tensor_type.shape.dim[1].dim_value = 2
        proc, outputs = run_amp_on(amp_run, tmp_path / "inf", model, {"x": inf})
        assert proc.returncode == 0, describe(proc)
        np.testing.assert_array_equal(outputs[0], [[high, low], [low, high]])


@pytest.mark.parametrize("src", QUANT_TYPES, ids=lambda t: NAMES[t])
def test_dequantize_linear_of_storage_types(amp_run, tmp_path, src):
    """Every value of the type (an initializer: DequantizeLinear is not
    folded), per-axis scales, a zero point for the integer types."""
    if src in FLOAT8:
        codes = np.arange(256, dtype=np.uint8).view(FLOAT8[src])
        values = codes[np.isfinite(codes.astype(np.float32))][:96].reshape(2, 48)
        w = helper.make_tensor("w", src, values.shape,
                               values.astype(np.float32).ravel().tolist())
        zp = []
    else:
        carrier, low, high = NARROW[src]
        values = np.stack([np.arange(low, high + 1)] * 2)
        w = helper.make_tensor("w", src, values.shape, values.ravel().tolist())
        zp = [helper.make_tensor("zp", src, [2], [low, high])]
    scale = helper.make_tensor("s", 1, [2], [0.5, -3.0])
    node = helper.make_node("DequantizeLinear", ["w", "s"] + (["zp"] if zp else []),
                            ["d"], axis=0)
    add = helper.make_node("Add", ["d", "x"], ["y"])
    graph = helper.make_graph([node, add], "dq",
                              [helper.make_tensor_value_info("x", 1, values.shape)],
                              [helper.make_tensor_value_info("y", 1, values.shape)],
                              initializer=[w, scale] + zp)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)],
                              ir_version=11)
    x = np.zeros(values.shape, np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    proc, outputs = run_amp_on(amp_run, tmp_path, model, {"x": x})
    assert proc.returncode == 0, describe(proc)
    np.testing.assert_array_equal(outputs[0], want)
