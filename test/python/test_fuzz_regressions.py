"""What the ONNX fuzz targets found, checked on the release amp-opt.

Every input the fuzzers (scripts/fuzz.sh, test/fuzz) ever failed on is kept
in ``test/fuzz/corpus/<target>/regression-*``. The fuzz run replays them
under ASan + UBSan; here each one also goes through the release ``amp-opt``
(and a policy file through ``--amp-policy``), which must end in an import
or in exit status 1 with an error, never in a signal. Then one small model
per defect class checks the message:

- ONNX's version converter dereferenced null for a graph output no node
  produces (opsets 1-10 are upgraded with it): it now runs in a child
  process, and a crash there is an error;
- an attribute of the wrong kind (``group`` as a list) reached shape
  inference, which read it as an integer;
- the same attribute twice; Reduce ``axes`` or Split ``split`` of the wrong
  kind were silently dropped (a Reduce over everything instead);
- dimension products (Tile, Flatten, DepthToSpace), window arithmetic
  (ConvTranspose pads and strides) and Range counts overflowed int64;
- a policy file with a bad escape made the YAML reader's line lookup read
  out of bounds.
"""

import glob
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_test_utils import describe_failure

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "test", "fuzz", "corpus")
ONNX_REGRESSIONS = sorted(glob.glob(os.path.join(CORPUS, "onnx", "regression-*")))
POLICY_REGRESSIONS = sorted(glob.glob(os.path.join(CORPUS, "policy", "regression-*")))


def test_regressions_exist():
    """The corpus holds the fuzzers' findings (a renamed folder would skip them all)."""
    assert len(ONNX_REGRESSIONS) >= 10
    assert POLICY_REGRESSIONS


@pytest.mark.parametrize("path", ONNX_REGRESSIONS, ids=os.path.basename)
def test_onnx_regression_input(amp_opt, tmp_path, path):
    model = tmp_path / "model.onnx"
    model.write_bytes(open(path, "rb").read())
    out = tmp_path / "out.onnx"
    proc = amp_opt.run(model, "-o", out)
    assert proc.returncode in (0, 1), describe_failure(proc)
    if proc.returncode == 1:
        assert "error:" in proc.stderr, proc.stderr
        assert not out.exists()


@pytest.mark.parametrize("path", POLICY_REGRESSIONS, ids=os.path.basename)
def test_policy_regression_input(amp_opt, tmp_path, path):
    data = open(path, "rb").read()
    policy = tmp_path / "policy.yaml"
    policy.write_bytes(data[1:])  # the first byte picks the fuzz mode
    model = tmp_path / "model.onnx"
    onnx.save_model(relu_model(), str(model))
    proc = amp_opt.run(model, "-o", tmp_path / "out.mlir", f"--amp-policy={policy}")
    assert proc.returncode in (0, 1), describe_failure(proc)
    if proc.returncode == 1:
        assert "policy file" in proc.stderr, proc.stderr


def info(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(nodes, inputs, outputs, initializers=(), opset=17, ir_version=8):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def relu_model():
    return model_of([helper.make_node("Relu", ["x"], ["y"])], [info("x", [2])], [info("y", [2])])


def expect_error(amp_opt, tmp_path, model, *fragments):
    path = tmp_path / "model.onnx"
    onnx.save_model(model, str(path))
    amp_opt.expect_import_error(path, *fragments)


def test_converter_crash_is_an_error(amp_opt, tmp_path):
    """Opset 9, a graph output no node produces: ONNX's checker lets it
    through and its converter dereferences null."""
    model = model_of([helper.make_node("Relu", ["x"], ["y"])], [info("x", [2])],
                     [info("not_produced", [2])], opset=9, ir_version=4)
    expect_error(amp_opt, tmp_path, model, "ONNX's version converter crashed",
                 "malformed in a way ONNX's checker does not catch")


def test_attribute_of_the_wrong_kind_before_shape_inference(amp_opt, tmp_path):
    w = numpy_helper.from_array(np.ones((2, 2, 3, 3), np.float32), "w")
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up")
    node.attribute.append(helper.make_attribute("group", [1, 5]))
    model = model_of([node], [info("x", [1, 2, 4, 4])], [info("y", [1, 2, 6, 6])], [w])
    expect_error(amp_opt, tmp_path, model, "node 'up'", "'group'")


def test_attribute_twice(amp_opt, tmp_path):
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="g", axis=0)
    node.attribute.append(helper.make_attribute("axis", 1))
    i = numpy_helper.from_array(np.array([0], np.int64), "i")
    model = model_of([node], [info("x", [2, 2])], [info("y", [1, 2])], [i])
    expect_error(amp_opt, tmp_path, model, "node 'g'", "attribute 'axis' appears twice")


@pytest.mark.parametrize("op,name,opset", [("ReduceSum", "axes", 11), ("Split", "split", 11)])
def test_list_attribute_of_the_wrong_kind_is_not_dropped(amp_opt, tmp_path, op, name, opset):
    """Before: a Reduce whose `axes` was an INT silently reduced every axis."""
    node = helper.make_node(op, ["x"], ["y"], name="n")
    node.attribute.append(helper.make_attribute(name, 1))
    model = model_of([node], [info("x", [2, 2])], [info("y", None)], opset=opset)
    expect_error(amp_opt, tmp_path, model, "node 'n'",
                 f"attribute '{name}' must be a list of integers (INTS)")


def test_dimension_product_overflow(amp_opt, tmp_path):
    repeats = numpy_helper.from_array(np.array([1 << 62, 4], np.int64), "r")
    model = model_of([helper.make_node("Tile", ["x", "r"], ["y"], name="t")],
                     [info("x", [2, 3])], [info("y", None)], [repeats])
    expect_error(amp_opt, tmp_path, model, "node 't'", "more than the largest tensor")


@pytest.mark.parametrize("attrs,fragment", [
    ({"pads": [0, 1 << 62, 0, 0]}, "pad value 4611686018427387904 is outside"),
    ({"strides": [1 << 40, 1]}, "stride value 1099511627776 is outside"),
    ({"output_padding": [-3, 0]}, "output_padding value -3 is outside"),
])
def test_window_values_out_of_range(amp_opt, tmp_path, attrs, fragment):
    w = numpy_helper.from_array(np.ones((2, 2, 3, 3), np.float32), "w")
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", **attrs)
    model = model_of([node], [info("x", [1, 2, 4, 4])], [info("y", None)], [w])
    expect_error(amp_opt, tmp_path, model, "node 'up'", fragment)


def test_range_count_overflow(amp_opt, tmp_path):
    scalars = [numpy_helper.from_array(np.array(v, np.int64), n)
               for n, v in (("s", -(1 << 62)), ("l", 1 << 62), ("d", 1))]
    model = model_of([helper.make_node("Range", ["s", "l", "d"], ["y"], name="r")],
                     [], [info("y", None, TensorProto.INT64)], scalars)
    expect_error(amp_opt, tmp_path, model, "node 'r'", "more than the largest tensor")


def test_policy_file_with_a_bad_escape(amp_opt, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text('nodes:\n  - regex: "a\\\\ul"\n   \0class: allow\n')
    model = tmp_path / "model.onnx"
    onnx.save_model(relu_model(), str(model))
    proc = amp_opt.run(model, "-o", tmp_path / "out.mlir", f"--amp-policy={policy}")
    assert proc.returncode == 1, describe_failure(proc)
    assert "policy file" in proc.stderr


def test_einsum_equation_bytes(amp_opt, tmp_path):
    """Byte 0xff in an equation was DenseMap's empty key (an assertion)."""
    node = helper.make_node("Einsum", ["a", "b"], ["y"], name="e", equation="ij,jk->ik")
    node.attribute[0].s = b"i\xff,jk->ik"
    model = model_of([node], [info("a", [2, 3]), info("b", [3, 4])], [info("y", None)])
    expect_error(amp_opt, tmp_path, model, "node 'e'", "einsum equation has the character 0xFF")


def test_shape_operand_length_as_rank(amp_opt, tmp_path):
    """Expand's shape input declared with 2^31 entries sized a 16 GiB vector."""
    model = model_of([helper.make_node("Expand", ["x", "s"], ["y"], name="grow")],
                     [info("x", [2]), info("s", [1 << 31], TensorProto.INT64)],
                     [info("y", None)])
    expect_error(amp_opt, tmp_path, model, "node 'grow'",
                 "Expand shape has 2147483648 entries, more than the largest rank amp takes")


def test_runtime_axes_longer_than_the_rank(amp_opt, tmp_path):
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="r", keepdims=0)
    model = model_of([node], [info("x", [2, 3]), info("axes", [5], TensorProto.INT64)],
                     [info("y", None)])
    expect_error(amp_opt, tmp_path, model, "node 'r'", "reduction axes lists 5 axes")


@pytest.mark.parametrize("opset", [11, 12])
def test_coerced_softmax_of_a_zero_size_input(amp_opt, tmp_path, opset):
    """Softmax before opset 13 flattens its input to 2-D and reshapes the
    result back; with a 0 dimension, the reshape read that 0 as "copy the
    input's dimension" and type inference failed inside an op builder (an
    abort; fuzz finding regression-d7d1c0fbedba). Now the model imports, with
    the input's type on the result."""
    node = helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)
    model = model_of([node], [info("x", [3, 4, 5, 0])], [info("y", [3, 4, 5, 0])],
                     opset=opset)
    path = tmp_path / "model.onnx"
    onnx.save_model(model, str(path))
    out = tmp_path / "out.mlir"
    proc = amp_opt.run(str(path), "-o", str(out))
    assert proc.returncode == 0, describe_failure(proc)
    assert "tensor<3x4x5x0xf32>" in out.read_text()
