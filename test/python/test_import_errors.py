"""amp-opt must reject bad input cleanly: exit status > 0, a message that
says what is wrong, and no output file.

The invalid models are built with ``onnx.helper`` and saved without running
the onnx checker (they are invalid on purpose).
"""

import os
import zipfile

import pytest
from onnx import TensorProto, helper

from amp_testmodels import build_onnx

FLOAT = TensorProto.FLOAT


def tensor(name, shape=(2,)):
    """A float value_info; ``shape=None`` leaves the shape out."""
    return helper.make_tensor_value_info(name, FLOAT, None if shape is None else list(shape))


def make_model(nodes, inputs, outputs, opset=17, extra_opsets=()):
    """A model around one graph, built without the checker."""
    graph = helper.make_graph(nodes, "bad", inputs, outputs)
    opsets = [helper.make_opsetid("", opset), *extra_opsets]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def save(tmp_path, model, name="model.onnx"):
    """Serialize ``model`` to ``tmp_path/name`` as is (no checker, no fix-ups)."""
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return path


def relu_model(opset=17):
    """A valid one-node model x[2] -> Relu -> y[2]."""
    relu = helper.make_node("Relu", ["x"], ["y"], name="relu")
    return make_model([relu], [tensor("x")], [tensor("y")], opset)


@pytest.fixture
def model_path(tmp_path):
    """Where a test writes its model."""
    return tmp_path / "model.onnx"


# --------------------------------------------------------------------------
# Not an ONNX model at all
# --------------------------------------------------------------------------


def test_truncated_model(amp_opt, model_path):
    """A real model cut in half is reported as a broken protobuf."""
    data = build_onnx.conv_block(17).SerializeToString()
    model_path.write_bytes(data[: len(data) // 2])
    amp_opt.expect_import_error(model_path, "not a valid ONNX protobuf", "truncated")


def test_random_bytes(amp_opt, model_path):
    """Random bytes are not an ONNX protobuf."""
    model_path.write_bytes(os.urandom(4096))
    amp_opt.expect_import_error(model_path, "not a valid ONNX protobuf")


def test_empty_file(amp_opt, model_path):
    """An empty file is named as such."""
    model_path.write_bytes(b"")
    amp_opt.expect_import_error(model_path, "the file is empty")


def test_mlir_bytecode_named_onnx(amp_opt, tmp_path, model_path):
    """amp-opt's own bytecode output given as .onnx is recognised."""
    source = save(tmp_path, build_onnx.mlp(17), "mlp.onnx")
    proc = amp_opt.run(source, "--emit-bytecode", "-o", model_path)
    assert proc.returncode == 0, proc.stderr
    amp_opt.expect_import_error(model_path, "this is MLIR bytecode, not an ONNX model")


def test_zip_named_onnx(amp_opt, model_path):
    """A zip archive (e.g. a PyTorch checkpoint) is recognised."""
    with zipfile.ZipFile(model_path, "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    amp_opt.expect_import_error(model_path, "this is a zip archive")


def test_missing_file(amp_opt, model_path):
    """A model path that does not exist."""
    amp_opt.expect_import_error(model_path, "cannot open file")


# --------------------------------------------------------------------------
# Broken graphs
# --------------------------------------------------------------------------


def test_model_without_graph(amp_opt, tmp_path):
    """A ModelProto without a graph."""
    model = relu_model()
    model.ClearField("graph")
    amp_opt.expect_import_error(save(tmp_path, model), "the model has no graph")


def test_graph_without_outputs(amp_opt, tmp_path):
    """A graph that declares no outputs."""
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x")], [])
    amp_opt.expect_import_error(save(tmp_path, model), "graph main has no outputs")


def test_cycle(amp_opt, tmp_path):
    """Two nodes feeding each other; the first node of the cycle is named."""
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
        helper.make_node("Neg", ["a"], ["y"], name="third"),
    ]
    model = make_model(nodes, [tensor("x")], [tensor("y")])
    amp_opt.expect_import_error(save(tmp_path, model), "has a cycle through node 'first'")


def test_node_using_its_own_output(amp_opt, tmp_path):
    """A node whose input is its own output (a one-node cycle)."""
    nodes = [
        helper.make_node("Add", ["x", "a"], ["a"], name="selfish"),
        helper.make_node("Relu", ["a"], ["y"]),
    ]
    model = make_model(nodes, [tensor("x")], [tensor("y")])
    amp_opt.expect_import_error(save(tmp_path, model), "node 'selfish'", "uses its own output 'a'")


def test_duplicate_output_names(amp_opt, tmp_path):
    """Two nodes producing the same value name."""
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="one"),
        helper.make_node("Neg", ["x"], ["y"], name="two"),
    ]
    model = make_model(nodes, [tensor("x")], [tensor("y")])
    amp_opt.expect_import_error(
        save(tmp_path, model), "value 'y' in main is defined twice", "node 'two'"
    )


def test_duplicate_graph_input(amp_opt, tmp_path):
    """Two graph inputs with the same name (not SSA; the onnx checker rejects it)."""
    relu = helper.make_node("Relu", ["x"], ["y"])
    model = make_model([relu], [tensor("x"), tensor("x")], [tensor("y")])
    amp_opt.expect_import_error(save(tmp_path, model), "'x'", "defined twice")


def test_undefined_input(amp_opt, tmp_path):
    """A node input that nothing defines."""
    nodes = [helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")]
    model = make_model(nodes, [tensor("x")], [tensor("y")])
    amp_opt.expect_import_error(
        save(tmp_path, model), "node 'adder'", "op Add", "uses undefined value 'ghost'"
    )


def test_undefined_graph_output(amp_opt, tmp_path):
    """A graph output that nothing produces."""
    model = make_model([helper.make_node("Relu", ["x"], ["z"])], [tensor("x")], [tensor("y")])
    amp_opt.expect_import_error(
        save(tmp_path, model), "graph output 'y'", "not produced by any node"
    )


# --------------------------------------------------------------------------
# Unsupported content
# --------------------------------------------------------------------------


def test_unsupported_op_type(amp_opt, tmp_path):
    """An unknown op in the default domain: the message names file, node, op, domain and opset."""
    nodes = [helper.make_node("Foo", ["x"], ["y"], name="foo_node")]
    model = make_model(nodes, [tensor("x")], [tensor("y")])
    stderr = amp_opt.expect_import_error(save(tmp_path, model), "unsupported operator")
    for fragment in ("model.onnx", "node 'foo_node'", "op Foo", "domain 'ai.onnx'", "opset 17"):
        assert fragment in stderr, stderr


def test_unsupported_domain(amp_opt, tmp_path):
    """A node in a domain other than ai.onnx."""
    nodes = [helper.make_node("FusedGemm", ["x"], ["y"], name="ms_node", domain="com.microsoft")]
    ms_opset = helper.make_opsetid("com.microsoft", 1)
    model = make_model(nodes, [tensor("x")], [tensor("y")], extra_opsets=[ms_opset])
    amp_opt.expect_import_error(
        save(tmp_path, model),
        "unsupported operator domain 'com.microsoft'",
        "node 'ms_node'",
        "op FusedGemm",
    )


@pytest.mark.parametrize("opset", [0, 99])
def test_unsupported_opset(amp_opt, tmp_path, opset):
    """Default-domain opsets below and above the supported range (1-10 are
    upgraded: test_import_old_opsets.py)."""
    amp_opt.expect_import_error(
        save(tmp_path, relu_model(opset)), f"default-domain opset {opset} is not supported"
    )


def test_no_default_domain_opset(amp_opt, tmp_path):
    """A model that imports no ai.onnx opset at all."""
    model = relu_model()
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    amp_opt.expect_import_error(save(tmp_path, model), "imports no default-domain (ai.onnx) opset")


def test_unknown_attribute(amp_opt, tmp_path):
    """An attribute the op does not declare."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu", bogus=3)]
    model = make_model(nodes, [tensor("x")], [tensor("y")])
    amp_opt.expect_import_error(
        save(tmp_path, model), "node 'relu'", "op Relu", "unknown attribute 'bogus'"
    )


def conv_model(weight_channels, group):
    """x[1,3,8,8] -> Conv 'conv' with 4 filters of `weight_channels` x 3 x 3
    and the given `group` attribute (opset 17)."""
    count = 4 * weight_channels * 9
    weight = helper.make_tensor("w", FLOAT, [4, weight_channels, 3, 3], [0.1] * count)
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", group=group)]
    graph = helper.make_graph(nodes, "bad", [tensor("x", (1, 3, 8, 8))],
                              [tensor("y", None)], [weight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=8)


def test_attribute_of_the_wrong_kind(amp_opt, tmp_path):
    """An attribute of another kind than ODS declares (Conv group as a
    float) is reported before type inference reads it."""
    amp_opt.expect_import_error(
        save(tmp_path, conv_model(3, 1.5)), "node 'conv'", "op Conv",
        "attribute 'group' failed to satisfy constraint")


def test_conv_group_whose_product_overflows(amp_opt, tmp_path):
    """A Conv group of 2^63 - 1: W's channels times the group overflow int64
    (undefined behaviour before; found by the onnx-roundtrip fuzzer); now
    compared without overflow and refused with the channel counts."""
    amp_opt.expect_import_error(
        save(tmp_path, conv_model(2, 2**63 - 1)), "node 'conv'", "op Conv",
        "input has 3 channels but W expects 2 x group 9223372036854775807")


def test_missing_required_attribute(amp_opt, tmp_path):
    """A required attribute without a default (Concat's axis) is named."""
    nodes = [helper.make_node("Concat", ["x", "x"], ["y"], name="cat")]
    model = make_model(nodes, [tensor("x")], [tensor("y", None)])
    amp_opt.expect_import_error(
        save(tmp_path, model), "node 'cat'", "op Concat", "requires attribute 'axis'")


def test_input_without_shape(amp_opt, tmp_path):
    """A graph input with no shape (amp needs every rank)."""
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", None)], [tensor("y")])
    amp_opt.expect_import_error(save(tmp_path, model), "input 'x' has no shape")


def test_sequence_input(amp_opt, tmp_path):
    """A sequence-typed graph input."""
    seq = helper.make_tensor_sequence_value_info("s", FLOAT, [2])
    nodes = [helper.make_node("SequenceLength", ["s"], ["y"])]
    model = make_model(nodes, [seq], [helper.make_tensor_value_info("y", TensorProto.INT64, [])])
    amp_opt.expect_import_error(save(tmp_path, model), "input 's' is not a tensor")


def test_string_input(amp_opt, tmp_path):
    """A STRING tensor graph input."""
    strings = helper.make_tensor_value_info("x", TensorProto.STRING, [2])
    model = make_model([helper.make_node("Identity", ["x"], ["y"])], [strings], [tensor("y")])
    amp_opt.expect_import_error(save(tmp_path, model), "input 'x' has unsupported type STRING")


def test_type_inference_failure_is_reported(amp_opt, tmp_path):
    """A node the op's type inference rejects (MatMul of [2] by [3,4]) must
    fail with a message naming the node, not silently."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    model = make_model(nodes, [tensor("x"), tensor("w", (3, 4))], [tensor("y", (4,))])
    amp_opt.expect_import_error(save(tmp_path, model), "node 'mm'", "op MatMul")


# --------------------------------------------------------------------------
# Declarations that contradict what the graph computes
# --------------------------------------------------------------------------


def test_output_shape_contradicts_computed(amp_opt, tmp_path):
    """A graph output declared [4] while Relu of x[2] computes [2]."""
    relu = helper.make_node("Relu", ["x"], ["y"])
    model = make_model([relu], [tensor("x")], [tensor("y", (4,))])
    amp_opt.expect_import_error(
        save(tmp_path, model), "graph output 'y'", "contradicts the computed type",
        "tensor<2xf32>",
    )


def test_default_domain_listed_twice(amp_opt, tmp_path):
    """opset_import naming the default domain as "" and as "ai.onnx"."""
    model = relu_model()
    model.opset_import.append(helper.make_opsetid("ai.onnx", 13))
    amp_opt.expect_import_error(
        save(tmp_path, model), "opset_import lists domain 'ai.onnx' twice"
    )


def test_foreign_domain_error_names_its_opset(amp_opt, tmp_path):
    """The error for a com.microsoft node reports that domain's opset."""
    node = helper.make_node("FusedGemm", ["x", "x"], ["y"], domain="com.microsoft")
    model = make_model(
        [node], [tensor("x", (2, 2))], [tensor("y", (2, 2))],
        extra_opsets=[helper.make_opsetid("com.microsoft", 1)],
    )
    amp_opt.expect_import_error(
        save(tmp_path, model), "domain 'com.microsoft', opset 1)",
        "unsupported operator domain",
    )
