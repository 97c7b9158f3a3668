"""Hostile sizes and the resource caps (ModelLimits, the --amp-max-* flags).

Small files that ask for huge things must end in a clean error (exit status
1, a message naming the cap or the lie, no output file) or in a correct
result, never in an abort, a signal or a multi-gigabyte allocation. Every
tool here runs under a 4 GiB address-space limit (RLIMIT_AS), so an
allocation of the declared size fails the test as a crash.

- An external tensor that declares more bytes than its data file holds is
  refused before the bytes are allocated.
- amp-fold-constants bounds what it materialises (operands, intermediates,
  results): a splat of 2^26 floats reduced to a scalar is left for run time
  and computed correctly by amp-run; the same model at 2^34 elements is
  refused by the largest-tensor cap.
- Each cap (tensor elements and bytes, total initializer bytes, nodes,
  subgraph depth, folding budget) has a test with a small value; the
  tensor caps hold for declared graph input shapes too.
- 5,000 levels of If inside If get an error that says so (protobuf's parser
  alone would call the file corrupted).
"""

import os
import resource
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_test_utils import describe_failure

ADDRESS_SPACE = 4 << 30
TIMEOUT = 120


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_tool(binary, *args):
    """Run ``binary ARGS`` under the 4 GiB address-space limit."""
    command = [str(binary), *map(str, args)]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                              preexec_fn=_limit_address_space)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{' '.join(command)}: no result within {TIMEOUT} s") from None


def expect_clean_error(binary, model_path, *fragments, flags=(), output=None):
    """Run the tool on ``model_path``: exit status 1, every fragment on stderr,
    no output file (``output``: amp-opt's -o target; default beside the model)."""
    output = output or str(model_path) + ".out.mlir"
    args = [model_path, *flags]
    if os.path.basename(str(binary)).startswith("amp-opt"):
        args += ["-o", output]
    proc = run_tool(binary, *args)
    assert proc.returncode == 1, describe_failure(proc)
    for fragment in fragments:
        assert fragment in proc.stderr, f"{fragment!r} not in stderr:\n{proc.stderr}"
    assert not os.path.exists(output), "an output file was written after the error"
    return proc.stderr


def info(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def save(model, folder, name="model.onnx"):
    path = folder / name
    onnx.save_model(model, str(path))
    return path


# --- An external tensor that lies about its size ---------------------------


def lying_external_model(folder, dims, file_bytes=16):
    """A model whose initializer ``w`` declares ``dims`` floats stored in a
    ``file_bytes``-byte data file beside it."""
    weight = onnx.TensorProto()
    weight.name = "w"
    weight.data_type = TensorProto.FLOAT
    weight.dims.extend(dims)
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "w.bin"
    (folder / "w.bin").write_bytes(b"\0" * file_bytes)
    model = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [info("y", dims)],
                     [weight])
    path = save(model, folder)
    assert os.path.getsize(path) < 200
    return path


@pytest.mark.parametrize("dims", [[1 << 30], [1 << 19, 1 << 19]], ids=["4GiB", "1TiB"])
def test_external_tensor_larger_than_its_file(amp_opt, tmp_path, dims):
    """Before the fix, amp-opt allocated the declared size first (abort)."""
    path = lying_external_model(tmp_path, dims)
    count = int(np.prod(dims))
    if count <= (1 << 32):
        expect_clean_error(amp_opt.path, path, "tensor 'w'", "16 bytes",
                           f"need {4 * count}")
    else:
        expect_clean_error(amp_opt.path, path, "tensor 'w'", "more than the largest tensor",
                           "--amp-max-tensor-elements")


def test_external_tensor_offset_past_the_end(amp_opt, tmp_path):
    path = lying_external_model(tmp_path, [1 << 28])
    model = onnx.load(str(path), load_external_data=False)
    entry = model.graph.initializer[0].external_data.add()
    entry.key, entry.value = "offset", str(1 << 40)
    onnx.save_model(model, str(path))
    expect_clean_error(amp_opt.path, path, "tensor 'w'", "past the end")


def test_external_tensor_lies_to_amp_run(amp_run, tmp_path):
    path = lying_external_model(tmp_path, [1 << 30])
    expect_clean_error(amp_run, path, "tensor 'w'", "16 bytes")


# --- Constant folding of a huge operand -------------------------------------


def reduce_of_splat_model(dims, via="ConstantOfShape", dtype=np.float32):
    """A scalar ReduceSum of a splat of 0.5 made by ConstantOfShape or Expand."""
    shape = numpy_helper.from_array(np.array(dims, np.int64), "shape")
    half = np.array(0.5, dtype)
    if via == "ConstantOfShape":
        make = helper.make_node("ConstantOfShape", ["shape"], ["big"],
                                value=numpy_helper.from_array(half.reshape(1)))
        initializers = [shape]
    else:
        make = helper.make_node("Expand", ["half", "shape"], ["big"])
        initializers = [shape, numpy_helper.from_array(half, "half")]
    nodes = [make,
             helper.make_node("ReduceSum", ["big"], ["sum"], keepdims=0),
             helper.make_node("Add", ["sum", "x"], ["y"])]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return model_of(nodes, [info("x", [], elem)], [info("y", [], elem)], initializers)


@pytest.mark.parametrize("via", ["ConstantOfShape", "Expand"])
def test_folding_leaves_a_huge_operand_for_run_time(amp_opt, amp_run, tmp_path, via):
    """8192^2 floats (256 MiB) are over the 64 MiB folding budget: amp-opt
    keeps the ReduceSum (before: 876 MB RSS and 7.8 s in the JIT). amp-run
    computes it at run time: in float64, whose running sum of 2^25 halves
    is exact, so the expected value is too."""
    path = save(reduce_of_splat_model([8192, 8192], via), tmp_path)
    out = tmp_path / "out.mlir"
    proc = run_tool(amp_opt.path, path, "-o", out)
    assert proc.returncode == 0, describe_failure(proc)
    assert "amp.reduce_sum" in out.read_text()
    path = save(reduce_of_splat_model([4096, 8192], via, np.float64), tmp_path, "f64.onnx")
    np.save(tmp_path / "x.npy", np.array(1.0, np.float64))
    proc = run_tool(amp_run, path, "-i", tmp_path / "x.npy", "--output-dir", tmp_path)
    assert proc.returncode == 0, describe_failure(proc)
    y = np.load(tmp_path / "y.npy")
    assert y == 4096 * 8192 * 0.5 + 1.0, y


def test_folding_budget_option(amp_opt, tmp_path):
    """Within the budget the ReduceSum folds; --amp-max-fold-bytes below the
    operand's size leaves it."""
    path = save(reduce_of_splat_model([64, 64]), tmp_path)
    out = tmp_path / "out.mlir"
    proc = run_tool(amp_opt.path, path, "-o", out)
    assert proc.returncode == 0, describe_failure(proc)
    assert "amp.reduce_sum" not in out.read_text()
    proc = run_tool(amp_opt.path, path, "-o", out, "--amp-max-fold-bytes=16000")
    assert proc.returncode == 0, describe_failure(proc)
    assert "amp.reduce_sum" in out.read_text()
    proc = run_tool(amp_opt.path, path, "-o", out, "--pass-pipeline=builtin.module(amp-fold-constants{max-bytes=16000})")
    assert proc.returncode == 0, describe_failure(proc)


@pytest.mark.parametrize("dims,via", [([1 << 17, 1 << 17], "ConstantOfShape"),
                                      ([1 << 18, 1 << 18], "Expand")])
def test_huge_node_results_are_refused(amp_opt, amp_run, tmp_path, dims, via):
    """2^34 and 2^36 elements: over the largest-tensor cap (before: an abort
    in the LLVM back end emitting the folded operand)."""
    path = save(reduce_of_splat_model(dims, via), tmp_path)
    for tool in (amp_opt.path, amp_run):
        expect_clean_error(tool, path, f"op {via}", "result 0 has",
                           "more than the largest tensor amp accepts",
                           "--amp-max-tensor-elements")


# --- The caps, one by one ---------------------------------------------------


def small_mlp():
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.normal(size=(8, 16)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.normal(size=(16, 4)).astype(np.float32), "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["y"], name="fc2")]
    return model_of(nodes, [info("x", [2, 8])], [info("y", [2, 4])], [w1, w2])


def test_defaults_admit_a_normal_model(amp_opt, tmp_path):
    path = save(small_mlp(), tmp_path)
    proc = run_tool(amp_opt.path, path, "-o", tmp_path / "out.mlir")
    assert proc.returncode == 0, describe_failure(proc)


def test_cap_tensor_elements(amp_opt, tmp_path):
    path = save(small_mlp(), tmp_path)
    expect_clean_error(amp_opt.path, path, "initializer: tensor 'w1' has 128 elements",
                       "(100 elements; --amp-max-tensor-elements)",
                       flags=["--amp-max-tensor-elements=100"])


def test_cap_tensor_bytes(amp_opt, tmp_path):
    path = save(small_mlp(), tmp_path)
    expect_clean_error(amp_opt.path, path, "tensor 'w1' takes 512 bytes",
                       "(300 bytes; --amp-max-tensor-bytes)",
                       flags=["--amp-max-tensor-bytes=300"])


def test_cap_node_results(amp_opt, tmp_path):
    """A node's static result counts as a tensor too, and the error names the node."""
    shape = numpy_helper.from_array(np.array([64, 4], np.int64), "shape")
    model = model_of([helper.make_node("Expand", ["x", "shape"], ["y"], name="grow")],
                     [info("x", [4])], [info("y", [64, 4])], [shape])
    path = save(model, tmp_path)
    proc = run_tool(amp_opt.path, path, "-o", tmp_path / "ok.mlir", "--amp-max-tensor-elements=256")
    assert proc.returncode == 0, describe_failure(proc)
    expect_clean_error(amp_opt.path, path, "node 'grow'", "op Expand", "result 0 has 256 elements",
                       flags=["--amp-max-tensor-elements=255"])
    expect_clean_error(amp_opt.path, path, "node 'grow'", "result 0 takes 1024 bytes",
                       flags=["--amp-max-tensor-bytes=1000"])


def test_cap_graph_input_shapes(amp_opt, amp_run, tmp_path):
    """A declared input shape is a size from the file as well: amp-run
    allocates inputs of it, and shape inference carries it into every node.
    2^40 floats declared in a 100-byte file are refused by name by both
    tools; a small cap applies to a normal input."""
    huge = [1 << 20, 1 << 20]
    model = model_of([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [info("x", huge)], [info("y", huge)])
    path = save(model, tmp_path)
    assert os.path.getsize(path) < 200
    for tool in (amp_opt.path, amp_run):
        expect_clean_error(tool, path, "input 'x' has 1099511627776 elements",
                           "--amp-max-tensor-elements")
    small = model_of([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [info("x", [4, 4])], [info("y", [4, 4])])
    path = save(small, tmp_path, "small.onnx")
    expect_clean_error(amp_opt.path, path, "input 'x' takes 64 bytes",
                       "(60 bytes; --amp-max-tensor-bytes)", flags=["--amp-max-tensor-bytes=60"])
    proc = run_tool(amp_opt.path, path, "-o", tmp_path / "ok.mlir", "--amp-max-tensor-bytes=64")
    assert proc.returncode == 0, describe_failure(proc)


def test_cap_initializer_bytes(amp_opt, tmp_path):
    """512 + 256 bytes of weights against a 600-byte budget: w2 passes it."""
    path = save(small_mlp(), tmp_path)
    expect_clean_error(amp_opt.path, path, "initializer 'w2'", "more than 600 bytes",
                       "--amp-max-initializer-bytes",
                       flags=["--amp-max-initializer-bytes=600"])


def test_cap_initializer_bytes_counts_constant_nodes(amp_opt, tmp_path):
    model = small_mlp()
    value = numpy_helper.from_array(np.ones((2, 4), np.float32), "c")
    model.graph.node.append(helper.make_node("Constant", [], ["c"], name="k", value=value))
    model.graph.node.append(helper.make_node("Add", ["y", "c"], ["z"]))
    model.graph.output[0].name = "z"
    path = save(model, tmp_path)
    proc = run_tool(amp_opt.path, path, "-o", tmp_path / "ok.mlir",
                    "--amp-max-initializer-bytes=800")
    assert proc.returncode == 0, describe_failure(proc)
    expect_clean_error(amp_opt.path, path, "node 'k'", "more than 790 bytes",
                       flags=["--amp-max-initializer-bytes=790"])


def test_cap_nodes(amp_opt, tmp_path):
    path = save(small_mlp(), tmp_path)
    proc = run_tool(amp_opt.path, path, "-o", tmp_path / "ok.mlir", "--amp-max-nodes=3")
    assert proc.returncode == 0, describe_failure(proc)
    expect_clean_error(amp_opt.path, path, "more than 2 nodes", "--amp-max-nodes",
                       flags=["--amp-max-nodes=2"])


def test_cap_value_must_be_positive(amp_opt, tmp_path):
    path = save(small_mlp(), tmp_path)
    proc = run_tool(amp_opt.path, path, "--amp-max-nodes=0")
    assert proc.returncode == 1, describe_failure(proc)
    assert "not a positive integer" in proc.stderr


def test_cap_applies_to_amp_run_tensor_files(amp_run, tmp_path):
    """amp-run's .pb inputs are files from strangers too."""
    path = save(small_mlp(), tmp_path)
    tensor = numpy_helper.from_array(np.ones((2, 8), np.float32), "x")
    (tmp_path / "x.pb").write_bytes(tensor.SerializeToString())
    proc = run_tool(amp_run, path, "-i", tmp_path / "x.pb", "--amp-max-tensor-elements=15")
    assert proc.returncode == 1, describe_failure(proc)
    assert "tensor 'x' has 16 elements" in proc.stderr


# --- Nesting ------------------------------------------------------------------


def _varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def nested_if_model(depth):
    """A model whose If nodes nest ``depth`` levels (then-branches), written
    in protobuf's wire format by hand: the Python API copies a subgraph on
    every assignment."""
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "leaf", [],
                             [info("y", [1])]).SerializeToString()
    output = info("y", [1]).SerializeToString()
    graph_attr = _varint(20 << 3) + _varint(onnx.AttributeProto.GRAPH)
    graph = leaf
    for level in range(depth, 0, -1):
        then_branch = _field(1, b"then_branch") + _field(6, graph) + graph_attr
        else_branch = _field(1, b"else_branch") + _field(6, leaf) + graph_attr
        node = (_field(1, b"c") + _field(2, b"y") + _field(3, f"if_{level}".encode())
                + _field(4, b"If") + _field(5, then_branch) + _field(5, else_branch))
        inputs = b""
        if level == 1:
            inputs = (_field(11, info("c", [], TensorProto.BOOL).SerializeToString())
                      + _field(11, info("x", [1]).SerializeToString()))
        graph = _field(1, node) + _field(2, f"g{level}".encode()) + inputs + _field(12, output)
    head = onnx.ModelProto(ir_version=8)
    head.opset_import.add().version = 17
    return head.SerializeToString() + _field(7, graph)


def test_nested_model_is_well_formed(amp_opt, tmp_path):
    """The hand-written encoding is a valid model: three levels import."""
    data = nested_if_model(3)
    model = onnx.ModelProto()
    model.ParseFromString(data)
    onnx.checker.check_model(model)
    path = tmp_path / "nest3.onnx"
    path.write_bytes(data)
    proc = run_tool(amp_opt.path, path, "-o", tmp_path / "nest3.mlir")
    assert proc.returncode == 0, describe_failure(proc)
    expect_clean_error(amp_opt.path, path, "node 'if_1' (op If) nests subgraphs more than 2 levels",
                       "--amp-max-subgraph-depth", flags=["--amp-max-subgraph-depth=2"])


@pytest.mark.parametrize("depth", [70, 5000])
def test_deep_nesting_is_named(amp_opt, tmp_path, depth):
    """Past the default depth (64), whether protobuf's parser got through
    (70) or gave up (5,000), the error says what is wrong, not 'corrupted'."""
    path = tmp_path / "deep.onnx"
    path.write_bytes(nested_if_model(depth))
    stderr = expect_clean_error(amp_opt.path, path, "node 'if_1' (op If) nests subgraphs",
                                "more than 64", "--amp-max-subgraph-depth")
    assert "corrupted" not in stderr
    if depth == 5000:
        assert "5000 levels deep" in stderr


# --- The ONNX writer and large splats ---------------------------------------


@pytest.mark.parametrize("dims", [[1024, 1024], [1 << 15, 1 << 15]], ids=["4MiB", "4GiB"])
def test_writer_keeps_large_splats_small(amp_opt, tmp_path, dims):
    """A splat above 1 MiB is written as ConstantOfShape, not as every
    element: 2^30 floats would be a 4 GiB allocation (over the address-space
    limit here). The small case runs in onnxruntime against numpy."""
    path = save(reduce_of_splat_model(dims), tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_tool(amp_opt.path, path, "-o", out, "--amp-opt-level=0", "--amp-no-constant-folding")
    assert proc.returncode == 0, describe_failure(proc)
    assert os.path.getsize(out) < 4096
    written = onnx.load(str(out))
    assert [n.op_type for n in written.graph.node].count("ConstantOfShape") == 1
    if dims == [1024, 1024]:
        import onnxruntime as ort
        session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
        (y,) = session.run(None, {"x": np.array(1.0, np.float32)})
        assert y == np.float32(1024 * 1024 * 0.5 + 1.0), y


def _nested_growing_loops(depth):
    """`depth` Loops nested in each other, each carrying a value that grows
    by one element per iteration: every level's body is imported again with
    a dynamic type, inside every import of the level above."""
    def level(d):
        grow = [helper.make_node("Concat", [f"h{d}_in", "step"], [f"h{d}_out"], axis=0),
                helper.make_node("Identity", [f"c{d}_in"], [f"c{d}_out"])]
        if d + 1 < depth:
            grow.append(helper.make_node("Loop", ["n", "", f"h{d}_out"], [f"inner{d}"],
                                         body=level(d + 1)))
        else:
            grow.append(helper.make_node("Identity", [f"h{d}_out"], [f"inner{d}"]))
        return helper.make_graph(
            grow, f"body{d}",
            [helper.make_tensor_value_info(f"i{d}", TensorProto.INT64, []),
             helper.make_tensor_value_info(f"c{d}_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info(f"h{d}_in", TensorProto.FLOAT, None)],
            [helper.make_tensor_value_info(f"c{d}_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info(f"inner{d}", TensorProto.FLOAT, None)])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "h0"], ["h"], body=level(0))], "g",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones(1, np.float32), "step")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=8)


def test_cap_nodes_counts_loop_bodies_imported_again(amp_opt, tmp_path):
    """Nested loops whose carried values change shape import their bodies
    again; those imports count against --amp-max-nodes, so a deep nest
    cannot multiply them without bound."""
    path = save(_nested_growing_loops(3), tmp_path)
    proc = run_tool(amp_opt.path, path, "-o", tmp_path / "ok.mlir")
    assert proc.returncode == 0, describe_failure(proc)
    deep = save(_nested_growing_loops(20), tmp_path, "deep.onnx")
    expect_clean_error(amp_opt.path, deep, "importing again the bodies of loops whose "
                       "carried values change shape passes 200 nodes", "--amp-max-nodes",
                       flags=["--amp-max-nodes=200"])
