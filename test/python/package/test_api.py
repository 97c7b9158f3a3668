"""The amp_mlir package against the tools: the installed package (not the
build tree) gives what amp-opt and amp-run give for the same inputs, and
reports failures as AmpError with diagnostics.

The package is installed by the README's test command (`pip install
./python`); a missing package fails here, it is never skipped.
"""

import json
import os
import pathlib
import subprocess
import threading

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import amp_mlir

REPO = pathlib.Path(__file__).resolve().parents[3]


def test_the_installed_package_is_tested():
    location = pathlib.Path(amp_mlir.__file__).resolve()
    assert REPO / "python" not in location.parents, location
    assert "site-packages" in location.parts or "dist-packages" in location.parts


def mlp_model(path=None, opset=17):
    """x[4,16] -> MatMul/Add/Relu -> MatMul/Add -> LayerNorm -> Softmax, with
    an fp32-only Exp/ReduceSum branch: fp16 and fp32 ops and casts."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((16, 32)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b1"),
             numpy_helper.from_array(rng.standard_normal((32, 8)).astype(np.float32), "w2"),
             numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b2"),
             numpy_helper.from_array(np.ones(8, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(8, np.float32), "beta")]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1/matmul"),
             helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1/add"),
             helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
             helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="fc2/matmul"),
             helper.make_node("Add", ["h3", "b2"], ["h4"], name="fc2/add"),
             helper.make_node("LayerNormalization", ["h4", "gamma", "beta"], ["h5"],
                              name="norm", axis=-1),
             helper.make_node("Softmax", ["h5"], ["y"], name="softmax", axis=-1),
             helper.make_node("Exp", ["h4"], ["e"], name="exp"),
             helper.make_node("ReduceSum", ["e"], ["s"], name="sum", keepdims=0)]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if path is not None:
        onnx.save(model, path)
    return model


@pytest.fixture
def mlp(tmp_path):
    path = tmp_path / "mlp.onnx"
    mlp_model(path)
    return path


AUTOCAST_CASES = [
    ("fp16", {}, []),
    ("bf16", {"opt_level": 2}, ["--amp-type=bf16", "--amp-opt-level=2"]),
    ("fp16", {"deny": ["Relu"], "node_rules": {"fc2/.*": "deny"}},
     ["--amp-deny=Relu", "--amp-node-rule=fc2/.*=deny"]),
    ("fp16", {"keep_io_types": False}, ["--amp-keep-io-types=false"]),
]


@pytest.mark.parametrize("dtype,kwargs,flags", AUTOCAST_CASES)
def test_autocast_equals_amp_opt(amp_opt, mlp, tmp_path, dtype, kwargs, flags):
    """Same report (byte for byte), same ONNX bytes, same MLIR text."""
    report_path = tmp_path / "report.json"
    out_onnx = tmp_path / "out.onnx"
    out_mlir = tmp_path / "out.mlir"
    proc = amp_opt.run(str(mlp), "-o", str(out_onnx), f"--amp-report={report_path}", *flags)
    assert proc.returncode == 0, proc.stderr
    proc = amp_opt.run(str(mlp), "-o", str(out_mlir), *flags)
    assert proc.returncode == 0, proc.stderr
    # amp-opt's summary line names the casts the report counts.
    summary_line = [line for line in proc.stderr.splitlines() if line.startswith("amp-autocast:")]

    module = amp_mlir.import_onnx(mlp)
    report = amp_mlir.autocast(module, dtype, **kwargs)
    assert report.to_json() == report_path.read_text()
    assert report.to_dict() == json.loads(report_path.read_text())
    assert f"; {report.summary['casts']} casts," in summary_line[0]
    assert report.casts == report.to_dict()["summary"]["casts"]
    assert module.autocast_type == ("bf16" if dtype == "bf16" else "f16")
    assert module.to_onnx() == out_onnx.read_bytes()
    py_onnx = tmp_path / "py.onnx"
    module.to_onnx(py_onnx)
    assert py_onnx.read_bytes() == out_onnx.read_bytes()
    # amp-opt ends the file with an empty line.
    assert module.to_mlir() + "\n" == out_mlir.read_text()


def test_report_lists_every_op(mlp):
    module = amp_mlir.import_onnx(mlp)
    report = amp_mlir.autocast(module, "fp16")
    by_node = {op["node"]: op for op in report.ops}
    assert by_node["fc1/matmul"]["precision"] == "f16"
    assert by_node["fc1/matmul"]["op"] == "MatMul"
    assert by_node["exp"]["precision"] == "f32"
    assert by_node["exp"]["reason"]
    summary = report.summary
    assert summary["ops"]["f16"] + summary["ops"]["f32"] + summary["ops"]["without_fp32_data"] \
        == len(report.ops)
    assert 0 < summary["flops_low_precision_share"] <= 1


@pytest.mark.parametrize("dtype,flags,rtol", [(None, [], 0), ("fp16", ["--amp-type=f16"], 0),
                                              ("bf16", ["--amp-type=bf16"], 0)])
def test_run_equals_amp_run(amp_run, mlp, tmp_path, dtype, flags, rtol):
    """Program outputs are bit for bit amp-run's (same lowering, same JIT)."""
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    proc = subprocess.run([amp_run, str(mlp), "-i", str(tmp_path / "x.npy"),
                           f"--output-dir={out}", *flags], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    module = amp_mlir.import_onnx(mlp)
    if dtype:
        amp_mlir.autocast(module, dtype)
    program = module.compile()
    assert [name for name, _, _ in program.inputs] == ["x"]
    assert [name for name, _, _ in program.outputs] == ["y", "s"]
    y, s = program(x)
    np.testing.assert_array_equal(y, np.load(out / "y.npy"))
    np.testing.assert_array_equal(s, np.load(out / "s.npy"))
    assert y.dtype == np.float32 and y.shape == (4, 8) and s.shape == ()


def test_fp32_run_matches_onnxruntime(mlp):
    x = np.random.default_rng(2).standard_normal((4, 16)).astype(np.float32)
    ref = ort.InferenceSession(str(mlp), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = amp_mlir.import_onnx(mlp).compile()(x)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)


def test_inputs_from_bytes_and_model_proto(mlp):
    a = amp_mlir.import_onnx(mlp).to_mlir()
    assert amp_mlir.import_onnx(mlp.read_bytes()).to_mlir() == a
    assert amp_mlir.import_onnx(onnx.load(mlp)).to_mlir() == a


def test_outputs_own_their_memory_and_the_gil_is_released(mlp):
    program = amp_mlir.import_onnx(mlp).compile()
    x = np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32)
    first = program(x)[0]
    second = program(x)[0]
    assert first.ctypes.data != second.ctypes.data
    first[...] = 0  # writable, not shared with the program
    np.testing.assert_array_equal(program(x)[0], second)
    results = [None] * 4

    def work(i):
        results[i] = program(x)[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, second)


def test_program_checks_its_inputs(mlp):
    program = amp_mlir.import_onnx(mlp).compile()
    with pytest.raises(amp_mlir.AmpError,
                       match=r"input 'x' \(argument 0\) has element type f64 but the model expects f32"):
        program(np.zeros((4, 16)))
    with pytest.raises(amp_mlir.AmpError, match="takes 1 inputs, got 2"):
        program(np.zeros((4, 16), np.float32), np.zeros(1, np.float32))
    with pytest.raises(amp_mlir.AmpError, match=r"input 'x' \(argument 0\) has shape \[3, 16\]"):
        program(np.zeros((3, 16), np.float32))
    # Non-contiguous arrays are accepted (copied).
    x = np.random.default_rng(4).standard_normal((16, 4)).astype(np.float32).T
    np.testing.assert_array_equal(program(x)[0], program(np.ascontiguousarray(x))[0])


def test_run_time_check_failures_raise(tmp_path):
    """An index out of range is an AmpError naming the node (amp-run's
    message); the program stays usable for in-range inputs."""
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["y"], name="lookup")], "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
        [numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    program = amp_mlir.import_onnx(model).compile()
    with pytest.raises(amp_mlir.AmpError,
                       match=r"run-time check failed in 'main': node 'lookup' \(Gather\): "
                             r"index 6 is outside \[-6, 6\)"):
        program(np.array([0, 6, 1], np.int64))
    ids = np.array([5, -6, 2], np.int64)
    np.testing.assert_array_equal(program(ids)[0], table[ids])


def test_mlir_text_bytecode_and_clone(mlp, tmp_path):
    module = amp_mlir.import_onnx(mlp)
    text = module.to_mlir()
    assert amp_mlir.load_mlir(text).to_mlir() == text
    module.to_bytecode(tmp_path / "m.mlirbc")
    assert amp_mlir.load_mlir(tmp_path / "m.mlirbc").to_mlir() == text
    (tmp_path / "m.mlir").write_text(text)
    assert amp_mlir.load_mlir(str(tmp_path / "m.mlir")).to_mlir() == text
    copy = module.clone()
    amp_mlir.autocast(copy, "bf16")
    assert module.to_mlir() == text and "bf16" in copy.to_mlir()
    assert module.autocast_type == "" and copy.autocast_type == "bf16"
    generic = module.to_mlir(generic=True)
    assert '"amp.matmul"' in generic


def test_import_errors_name_node_and_op(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="Relu_0"),
         helper.make_node("Frobnicate", ["r"], ["y"], name="Frobnicate_1")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "bad.onnx"
    onnx.save(model, path)
    with pytest.raises(amp_mlir.AmpError) as info:
        amp_mlir.import_onnx(path)
    errors = [d for d in info.value.diagnostics if d.severity == "error"]
    assert len(errors) == 1
    assert errors[0].node == "Frobnicate_1" and errors[0].op == "Frobnicate"
    assert errors[0].file == str(path)
    assert "unsupported operator" in errors[0].message
    assert "Frobnicate_1" in str(info.value)


def test_file_errors(tmp_path):
    with pytest.raises(amp_mlir.AmpError, match="cannot open file"):
        amp_mlir.import_onnx(tmp_path / "missing.onnx")
    with pytest.raises(amp_mlir.AmpError, match="not a valid ONNX protobuf"):
        amp_mlir.import_onnx(b"\x08\x07\x12\xff\xff\xff")
    with pytest.raises(amp_mlir.AmpError) as info:
        amp_mlir.load_mlir("module { func.func @f( }")
    assert info.value.diagnostics[0].line == 1 and info.value.diagnostics[0].file == "<string>"
    with pytest.raises(amp_mlir.AmpError, match="cannot open"):
        amp_mlir.load_mlir(pathlib.Path(tmp_path / "missing.mlir"))
    with pytest.raises(amp_mlir.AmpError, match="cannot open"):
        amp_mlir.load_mlir(str(tmp_path / "missing.mlir"))


def test_limits_are_the_tools_caps(mlp):
    with pytest.raises(amp_mlir.AmpError, match="max-nodes|nodes"):
        amp_mlir.import_onnx(mlp, limits={"max_nodes": 3})
    with pytest.raises(amp_mlir.AmpError, match="max-nodes: 0 is not a positive integer"):
        amp_mlir.import_onnx(mlp, limits={"max_nodes": 0})
    with pytest.raises(amp_mlir.AmpError, match="unknown option 'max-bogus'"):
        amp_mlir.import_onnx(mlp, limits={"max_bogus": 3})
    amp_mlir.import_onnx(mlp, limits={"max_nodes": 100})


def test_autocast_options_are_checked(mlp):
    module = amp_mlir.import_onnx(mlp)
    with pytest.raises(amp_mlir.AmpError, match=r"unknown option 'bogus' \(the options are: .*opt-level"):
        amp_mlir.autocast(module, "fp16", bogus=1)
    with pytest.raises(amp_mlir.AmpError, match="option 'opt-level' expects a non-negative integer"):
        amp_mlir.autocast(module, "fp16", opt_level="two")
    with pytest.raises(amp_mlir.AmpError, match="option 'report' cannot be given here"):
        amp_mlir.autocast(module, "fp16", report="r.json")
    with pytest.raises(amp_mlir.AmpError, match="unknown dtype 'fp8'"):
        amp_mlir.autocast(module, "fp8")
    with pytest.raises(amp_mlir.AmpError, match="Frobnicate"):
        amp_mlir.autocast(module, "fp16", deny=["Frobnicate"])
    # A failed call leaves the module as it was; it can still be autocast once.
    amp_mlir.autocast(module, "fp16")
    with pytest.raises(amp_mlir.AmpError, match="already autocast to f16"):
        amp_mlir.autocast(module, "bf16")


def test_front_end_options_describe_the_struct():
    options = {o["name"]: o for o in amp_mlir.front_end_options()}
    assert options["type"]["default"] == "f16"
    assert options["opt-level"]["kind"] == "int" and options["opt-level"]["default"] == "1"
    assert options["allow"]["kind"] == "list"
    assert options["fold-constants"]["default"] == "true"
    assert all(o["description"] for o in options.values())


def test_nothing_is_printed(mlp, tmp_path):
    """Diagnostics and summaries stay out of stderr (run in a subprocess to
    see the process's own file descriptors)."""
    script = (f"import amp_mlir\n"
              f"m = amp_mlir.import_onnx({str(mlp)!r})\n"
              f"amp_mlir.autocast(m, 'fp16')\n"
              f"m.compile()\n"
              f"try:\n    amp_mlir.import_onnx({str(tmp_path / 'missing.onnx')!r})\n"
              f"except amp_mlir.AmpError:\n    pass\n")
    proc = subprocess.run(["python3", "-c", script], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
