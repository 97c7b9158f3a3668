"""Shape inputs known only at run time, on amp's CPU backend, against
onnxruntime: Slice axes and steps, Split sizes, CumSum's axis, OneHot's
depth, Squeeze and Unsqueeze axes (graph inputs, so nothing folds; the
result's rank is static). Invalid values are run-time errors naming the
node, never a read outside a tensor."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip
RNG = np.random.default_rng(11)
I64 = TensorProto.INT64


def make(nodes, inputs, outputs, opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def check_against_ort(amp_run, folder, model, feeds):
    proc, outputs = run_amp_on(amp_run, folder, model, feeds)
    assert proc.returncode == 0, describe(proc)
    for got, want in zip(outputs, ort_run(model, feeds)):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def expect_error(amp_run, folder, model, feeds, message):
    proc, _ = run_amp_on(amp_run, folder, model, feeds)
    assert proc.returncode != 0, describe(proc)
    assert message in proc.stderr, describe(proc)


SLICE_CASES = [
    # starts, ends, axes, steps
    ([1, 0], [3, 5], [0, 2], [1, 2]),
    ([-1, 4], [-100, 0], [-1, 1], [-1, -2]),
    ([0], [2], [1], [1]),
    ([5, 0, 0], [-6, 9, 9], [2, 0, 1], [-2, 3, 1]),
    ([2, 10], [2, 20], [0, 1], [1, 1]),  # empty and out-of-range
]


@pytest.mark.parametrize("case", range(len(SLICE_CASES)))
def test_slice_runtime_axes_and_steps(amp_run, tmp_path, case):
    starts, ends, axes, steps = (np.array(v, np.int64) for v in SLICE_CASES[case])
    n = len(starts)
    node = helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice")
    model = make([node], [vi("x", 1, [4, 5, 6]), vi("s", I64, [n]), vi("e", I64, [n]),
                          vi("a", I64, [n]), vi("st", I64, [n])],
                 [vi("y", 1, None)])
    x = RNG.standard_normal((4, 5, 6)).astype(np.float32)
    check_against_ort(amp_run, tmp_path, model,
                      {"x": x, "s": starts, "e": ends, "a": axes, "st": steps})


def test_slice_runtime_errors(amp_run, tmp_path):
    node = helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice")
    model = make([node], [vi("x", 1, [4, 5]), vi("s", I64, [1]), vi("e", I64, [1]),
                          vi("a", I64, [1]), vi("st", I64, [1])], [vi("y", 1, None)])
    x = np.zeros((4, 5), np.float32)
    one = np.array([1], np.int64)
    expect_error(amp_run, tmp_path / "step", model,
                 {"x": x, "s": one * 0, "e": one * 3, "a": one, "st": one * 0},
                 "node 'slice' (Slice): step 0 is 0")
    expect_error(amp_run, tmp_path / "axis", model,
                 {"x": x, "s": one * 0, "e": one * 3, "a": one * 2, "st": one},
                 "slice")


@pytest.mark.parametrize("sizes", [[1, 3, 2], [0, 6, 0], [6, 0, 0]])
def test_split_runtime_sizes(amp_run, tmp_path, sizes):
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1,
                            name="split")
    model = make([node], [vi("x", 1, [2, 6, 3]), vi("sizes", I64, [3])],
                 [vi(n, 1, None) for n in "abc"])
    x = RNG.standard_normal((2, 6, 3)).astype(np.float32)
    check_against_ort(amp_run, tmp_path, model, {"x": x, "sizes": np.array(sizes, np.int64)})


def test_split_runtime_sizes_that_do_not_add_up(amp_run, tmp_path):
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=0, name="split")
    model = make([node], [vi("x", 1, [6]), vi("sizes", I64, [2])],
                 [vi("a", 1, None), vi("b", 1, None)])
    x = np.arange(6, dtype=np.float32)
    expect_error(amp_run, tmp_path / "sum", model,
                 {"x": x, "sizes": np.array([2, 7], np.int64)},
                 "node 'split' (Split): the split sizes add up to 9 but the axis has "
                 "6 elements")
    expect_error(amp_run, tmp_path / "neg", model,
                 {"x": x, "sizes": np.array([8, -2], np.int64)},
                 "split size 1 is -2, negative")


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum_runtime_axis(amp_run, tmp_path, axis, exclusive, reverse):
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive,
                            reverse=reverse, name="cumsum")
    model = make([node], [vi("x", 1, [3, 4, 5]), vi("axis", I64, [])],
                 [vi("y", 1, [3, 4, 5])])
    x = RNG.integers(-5, 5, (3, 4, 5)).astype(np.float32)  # exact sums
    check_against_ort(amp_run, tmp_path, model, {"x": x, "axis": np.array(axis, np.int64)})


def test_cumsum_runtime_axis_out_of_range(amp_run, tmp_path):
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], name="cumsum")
    model = make([node], [vi("x", 1, [3, 4]), vi("axis", I64, [])], [vi("y", 1, [3, 4])])
    expect_error(amp_run, tmp_path, model,
                 {"x": np.zeros((3, 4), np.float32), "axis": np.array(2, np.int64)},
                 "cumsum")


@pytest.mark.parametrize("depth,dtype", [(5, np.int64), (3, np.int32), (4.7, np.float32)])
@pytest.mark.parametrize("axis", [-1, 0])
def test_onehot_runtime_depth(amp_run, tmp_path, depth, dtype, axis):
    elem = {np.int64: I64, np.int32: TensorProto.INT32, np.float32: 1}[dtype]
    node = helper.make_node("OneHot", ["i", "depth", "v"], ["y"], axis=axis, name="onehot")
    model = make([node], [vi("i", I64, [2, 3]), vi("depth", elem, [1]), vi("v", 1, [2])],
                 [vi("y", 1, None)])
    feeds = {"i": np.array([[0, 2, -1], [4, 1, 9]], np.int64),
             "depth": np.array([depth], dtype), "v": np.array([-1, 3], np.float32)}
    check_against_ort(amp_run, tmp_path, model, feeds)


@pytest.mark.parametrize("axes", [[0], [-1], [1, 3], [3, 0], [-5, 2]])
def test_unsqueeze_runtime_axes(amp_run, tmp_path, axes):
    node = helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="unsq")
    model = make([node], [vi("x", 1, [2, 3, 4]), vi("axes", I64, [len(axes)])],
                 [vi("y", 1, None)])
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    check_against_ort(amp_run, tmp_path, model, {"x": x, "axes": np.array(axes, np.int64)})


@pytest.mark.parametrize("axes", [[1], [-1], [1, 3], [3, -3]])
def test_squeeze_runtime_axes(amp_run, tmp_path, axes):
    node = helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq")
    model = make([node], [vi("x", 1, [2, 1, 4, 1]), vi("axes", I64, [len(axes)])],
                 [vi("y", 1, None)])
    x = RNG.standard_normal((2, 1, 4, 1)).astype(np.float32)
    check_against_ort(amp_run, tmp_path, model, {"x": x, "axes": np.array(axes, np.int64)})


def test_squeeze_and_unsqueeze_runtime_errors(amp_run, tmp_path):
    sq = make([helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq")],
              [vi("x", 1, [2, 1, 4]), vi("axes", I64, [1])], [vi("y", 1, None)])
    x = np.zeros((2, 1, 4), np.float32)
    expect_error(amp_run, tmp_path / "size", sq, {"x": x, "axes": np.array([2], np.int64)},
                 "node 'sq' (Squeeze): cannot squeeze dimension 2 of size 4")
    unsq = make([helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="unsq")],
                [vi("x", 1, [2, 1, 4]), vi("axes", I64, [2])], [vi("y", 1, None)])
    expect_error(amp_run, tmp_path / "repeat", unsq,
                 {"x": x, "axes": np.array([1, -4], np.int64)},
                 "node 'unsq' (Unsqueeze): the axes repeat")


@pytest.mark.parametrize("x_shape,shape", [((20, 1), (20, 20)), ((1, 20), (20, 20)),
                                           ((5, 1, 3), (2, 5, 4, 3)), ((1, 1), (3, 1)),
                                           ((4, 4), (4, 4))])
def test_expand_of_run_time_sizes_that_are_1(amp_run, tmp_path, x_shape, shape):
    """Expand of an input whose sizes are only known at run time (the
    anchor grids of torchvision's detection models): a size that is 1 at
    run time is broadcast to the shape's (amp returned the input unexpanded
    before)."""
    rank = len(x_shape)
    model = make([helper.make_node("Expand", ["x", "s"], ["y"])],
                 [vi("x", TensorProto.FLOAT, [f"d{i}" for i in range(rank)]),
                  vi("s", I64, [len(shape)])],
                 [vi("y", TensorProto.FLOAT, None)])
    feeds = {"x": RNG.standard_normal(x_shape).astype(np.float32),
             "s": np.array(shape, np.int64)}
    check_against_ort(amp_run, tmp_path, model, feeds)
