"""If, Loop and Scan on amp's CPU backend, against onnxruntime.

- If: branches of different shapes (the result is dynamic), outer-scope
  values in the branches, nested Ifs, a condition computed in the graph,
  and a condition whose size is known only at run time (one element
  required: an empty one is a run-time error naming the node).
- Loop: a for loop (M), a while loop (cond, early exit), both; scan
  outputs (growing by doubling: more iterations than any initial
  capacity); a loop-carried value that grows every iteration; zero
  iterations (the carried values are the initial ones, the scan outputs
  empty); the iteration number and outer-scope values in the body.
- Scan: several states and scan inputs, scan input/output axes and
  directions (reversed), a scan output whose slice size is known only at
  run time, symbolic lengths; scan inputs of different lengths at run time
  are an error naming the node.
- Autocast: fp16 and bf16 runs of a loop model within tolerance.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")
RNG = np.random.default_rng(83)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def check(amp_run, folder, model, feeds, atol=1e-6, flags=()):
    proc, got = run_amp_on(amp_run, folder, model, feeds, *flags)
    assert proc.returncode == 0, describe(proc)
    want = ort_run(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), atol=atol)
    return got


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array))


# --------------------------------------------------------------------------
# If
# --------------------------------------------------------------------------

def if_model():
    """y = x[:2] * w if sum(x) > 0 else concat(x, x)[:3] + 1: branches of
    shapes [2] and [3], both using outer-scope values."""
    then_branch = helper.make_graph(
        [const("s0", np.array([0], np.int64)), const("s2", np.array([2], np.int64)),
         helper.make_node("Slice", ["x", "s0", "s2"], ["xs"]),
         helper.make_node("Mul", ["xs", "w"], ["t"])],
        "then", [], [vi("t", F, [2])])
    else_branch = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["xx"], axis=0),
         const("e0", np.array([0], np.int64)), const("e3", np.array([3], np.int64)),
         helper.make_node("Slice", ["xx", "e0", "e3"], ["xe"]),
         const("one", np.array(1, np.float32)),
         helper.make_node("Add", ["xe", "one"], ["e"])],
        "else", [], [vi("e", F, [3])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             const("zero", np.array(0, np.float32)),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_branch,
                              else_branch=else_branch)]
    w = numpy_helper.from_array(np.array([2.0, -3.0], np.float32), "w")
    return model_of(nodes, [vi("x", F, [4])], [vi("y", F, None)], [w])


@pytest.mark.parametrize("sign", [1, -1])
def test_if_branches_of_different_shapes(amp_run, tmp_path, sign):
    x = (np.abs(RNG.standard_normal(4)) * sign).astype(np.float32)
    got = check(amp_run, tmp_path, if_model(), {"x": x})
    assert got[0].shape == ((2,) if sign > 0 else (3,))


def test_nested_if(amp_run, tmp_path):
    """if a: (if b: x + 1 else x - 1) else x * 2."""
    inner = helper.make_node(
        "If", ["b"], ["r"],
        then_branch=helper.make_graph([const("o1", np.array(1, np.float32)),
                                       helper.make_node("Add", ["x", "o1"], ["p"])],
                                      "t2", [], [vi("p", F, [3])]),
        else_branch=helper.make_graph([const("o2", np.array(1, np.float32)),
                                       helper.make_node("Sub", ["x", "o2"], ["m"])],
                                      "e2", [], [vi("m", F, [3])]))
    outer = helper.make_node(
        "If", ["a"], ["y"],
        then_branch=helper.make_graph([inner], "t1", [], [vi("r", F, [3])]),
        else_branch=helper.make_graph([const("two", np.array(2, np.float32)),
                                       helper.make_node("Mul", ["x", "two"], ["d"])],
                                      "e1", [], [vi("d", F, [3])]))
    model = model_of([outer], [vi("a", B, []), vi("b", B, []), vi("x", F, [3])],
                     [vi("y", F, [3])])
    x = RNG.standard_normal(3).astype(np.float32)
    for a in (True, False):
        for b in (True, False):
            check(amp_run, tmp_path / f"{a}{b}", model,
                  {"a": np.array(a), "b": np.array(b), "x": x})


def test_if_condition_size_checked(amp_run, tmp_path):
    """A condition of dynamic size must hold one element at run time."""
    branch = lambda name, v: helper.make_graph(
        [const(name, np.array([v], np.float32))], name, [], [vi(name, F, [1])])
    model = model_of([helper.make_node("If", ["c"], ["y"], name="choose",
                                       then_branch=branch("t", 1.0),
                                       else_branch=branch("e", 2.0))],
                     [vi("c", B, ["n"])], [vi("y", F, [1])])
    check(amp_run, tmp_path / "ok", model, {"c": np.array([False])})
    proc, _ = run_amp_on(amp_run, tmp_path / "empty", model, {"c": np.zeros(0, bool)})
    assert proc.returncode != 0, describe(proc)
    assert ("node 'choose' (If): the condition holds 0 elements instead of 1"
            in proc.stderr), describe(proc)


# --------------------------------------------------------------------------
# Loop
# --------------------------------------------------------------------------

def loop_model(with_m, with_cond, scan=True, limit=None):
    """Carried: s (float [2]) += x * i, h (float [k]) grows by one element
    per iteration (concat); scan output: s at each iteration. The body's
    condition is `i + 1 < limit` (a while loop when cond is given)."""
    body_nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Mul", ["x", "fi"], ["xi"]),          # outer-scope x
        helper.make_node("Add", ["s_in", "xi"], ["s_out"]),
        helper.make_node("Unsqueeze", ["fi", "axis0"], ["fi1"]),
        helper.make_node("Concat", ["h_in", "fi1"], ["h_out"], axis=0),
        const("one", np.array(1, np.int64)),
        helper.make_node("Add", ["i", "one"], ["i1"]),
        helper.make_node("Less", ["i1", "limit"], ["c_out"]),
        helper.make_node("Identity", ["s_out"], ["scan_s"]),
    ]
    body = helper.make_graph(
        body_nodes, "body",
        [vi("i", I64, []), vi("c_in", B, []), vi("s_in", F, [2]), vi("h_in", F, None)],
        [vi("c_out", B, []), vi("s_out", F, [2]), vi("h_out", F, None)]
        + ([vi("scan_s", F, [2])] if scan else []))
    outputs = ["s_final", "h_final"] + (["scans"] if scan else [])
    node = helper.make_node("Loop", ["M" if with_m else "", "cond" if with_cond else "",
                                     "s0", "h0"], outputs, body=body, name="loop")
    inputs = [vi("x", F, [2]), vi("s0", F, [2]), vi("h0", F, [1]), vi("limit", I64, [])]
    if with_m:
        inputs.append(vi("M", I64, []))
    if with_cond:
        inputs.append(vi("cond", B, []))
    axis = numpy_helper.from_array(np.array([0], np.int64), "axis0")
    return model_of([node], inputs, [vi(o, F, None) for o in outputs], [axis])


@pytest.mark.parametrize("with_m,with_cond,m,limit", [
    (True, False, 5, 100),      # for loop: 5 iterations
    (True, False, 37, 100),     # 37 scan slices: the capacity doubles 6 times
    (False, True, None, 6),     # while loop: stops when i + 1 >= 6
    (True, True, 9, 4),         # both: the condition stops it first
    (True, True, 3, 100),       # both: M stops it first
    (True, False, 0, 100),      # no iteration
    (True, True, 5, 0),         # stops after the first iteration
])
def test_loop(amp_run, tmp_path, with_m, with_cond, m, limit):
    model = loop_model(with_m, with_cond)
    feeds = {"x": np.array([0.5, -1.5], np.float32),
             "s0": np.array([1.0, 2.0], np.float32),
             "h0": np.array([7.0], np.float32), "limit": np.array(limit, np.int64)}
    if with_m:
        feeds["M"] = np.array(m, np.int64)
    if with_cond:
        feeds["cond"] = np.array(True)
    if m == 0:
        # onnxruntime gives an empty scan output a scalar shape; amp [0, 2].
        proc, got = run_amp_on(amp_run, tmp_path, model, feeds)
        assert proc.returncode == 0, describe(proc)
        np.testing.assert_array_equal(got[0], feeds["s0"])
        np.testing.assert_array_equal(got[1], feeds["h0"])
        assert got[2].shape == (0, 2)
        return
    check(amp_run, tmp_path, model, feeds)


def test_loop_initial_condition_false(amp_run, tmp_path):
    model = loop_model(False, True, scan=False)
    feeds = {"x": np.ones(2, np.float32), "s0": np.zeros(2, np.float32),
             "h0": np.ones(1, np.float32), "limit": np.array(5, np.int64),
             "cond": np.array(False)}
    check(amp_run, tmp_path, model, feeds)


def test_loop_autocast(amp_run, tmp_path):
    """A loop whose body does a MatMul and Tanh, under fp16 and bf16."""
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "w"], ["hw"]),
         helper.make_node("Tanh", ["hw"], ["h_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Identity", ["h_out"], ["trace"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("h_in", F, [3, 8])],
        [vi("c_out", B, []), vi("h_out", F, [3, 8]), vi("trace", F, [3, 8])])
    w = numpy_helper.from_array((RNG.standard_normal((8, 8)) * 0.5).astype(np.float32), "w")
    model = model_of([helper.make_node("Loop", ["M", "", "h0"], ["h", "traces"], body=body)],
                     [vi("M", I64, []), vi("h0", F, [3, 8])],
                     [vi("h", F, [3, 8]), vi("traces", F, None)], [w])
    feeds = {"M": np.array(6, np.int64),
             "h0": RNG.standard_normal((3, 8)).astype(np.float32)}
    check(amp_run, tmp_path / "fp32", model, feeds)
    check(amp_run, tmp_path / "f16", model, feeds, atol=1e-2, flags=("--amp-type", "f16"))
    check(amp_run, tmp_path / "bf16", model, feeds, atol=6e-2, flags=("--amp-type", "bf16"))


# --------------------------------------------------------------------------
# Scan
# --------------------------------------------------------------------------

def scan_model(in_axes=None, in_dirs=None, out_axes=None, out_dirs=None, x_shape=(5, 3),
               y_shape=(5, 3), dynamic=False):
    """States: sum (float [3]) and count (float []); scan inputs x, y
    (slices [3]); scan outputs: sum after each step and x * y."""
    body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "xs"], ["sum_out"]),
         const("one", np.array(1, np.float32)),
         helper.make_node("Add", ["count_in", "one"], ["count_out"]),
         helper.make_node("Identity", ["sum_out"], ["trace"]),
         helper.make_node("Mul", ["xs", "ys"], ["prod"])],
        "body",
        [vi("sum_in", F, [3]), vi("count_in", F, []), vi("xs", F, [3]), vi("ys", F, [3])],
        [vi("sum_out", F, [3]), vi("count_out", F, []), vi("trace", F, [3]),
         vi("prod", F, [3])])
    attrs = {"num_scan_inputs": 2}
    for name, value in (("scan_input_axes", in_axes), ("scan_input_directions", in_dirs),
                        ("scan_output_axes", out_axes), ("scan_output_directions", out_dirs)):
        if value is not None:
            attrs[name] = value
    node = helper.make_node("Scan", ["sum0", "count0", "x", "y"],
                            ["sum", "count", "traces", "prods"], body=body, name="scan",
                            **attrs)
    xs = ["L", 3] if dynamic and x_shape == (5, 3) else list(x_shape)
    ys = ["L2", 3] if dynamic and y_shape == (5, 3) else list(y_shape)
    return model_of([node], [vi("sum0", F, [3]), vi("count0", F, []), vi("x", F, xs),
                             vi("y", F, ys)],
                    [vi(o, F, None) for o in ("sum", "count", "traces", "prods")], opset=16)


def scan_feeds(x_shape=(5, 3), y_shape=(5, 3)):
    return {"sum0": np.zeros(3, np.float32), "count0": np.array(0, np.float32),
            "x": RNG.standard_normal(x_shape).astype(np.float32),
            "y": RNG.standard_normal(y_shape).astype(np.float32)}


@pytest.mark.parametrize("attrs,x_shape,y_shape", [
    ({}, (5, 3), (5, 3)),
    ({"in_dirs": [1, 0]}, (5, 3), (5, 3)),
    ({"in_axes": [1, 0]}, (3, 5), (5, 3)),
    ({"in_axes": [-1, 0], "in_dirs": [0, 1]}, (3, 5), (5, 3)),
    ({"out_axes": [1, 0], "out_dirs": [0, 1]}, (5, 3), (5, 3)),
    ({"out_axes": [-1, -2], "out_dirs": [1, 1]}, (5, 3), (5, 3)),
])
def test_scan(amp_run, tmp_path, attrs, x_shape, y_shape):
    model = scan_model(x_shape=x_shape, y_shape=y_shape, **attrs)
    check(amp_run, tmp_path, model, scan_feeds(x_shape, y_shape), atol=2e-6)


def test_scan_symbolic_length(amp_run, tmp_path):
    model = scan_model(dynamic=True)
    for length in (1, 4, 9):
        check(amp_run, tmp_path / str(length), model,
              scan_feeds((length, 3), (length, 3)), atol=2e-6)


def test_scan_lengths_differ_at_run_time(amp_run, tmp_path):
    model = scan_model(dynamic=True)
    proc, _ = run_amp_on(amp_run, tmp_path, model, scan_feeds((4, 3), (6, 3)))
    assert proc.returncode != 0, describe(proc)
    assert ("node 'scan' (Scan): scan input #1 has length 6, scan input #0 4"
            in proc.stderr), describe(proc)


def test_scan_output_of_dynamic_size(amp_run, tmp_path):
    """The scan output's slice is Slice(x_t, 0, n) with n a graph input:
    its size is known only when the body runs."""
    body = helper.make_graph(
        [const("z", np.array([0], np.int64)),
         helper.make_node("Slice", ["xs", "z", "n"], ["part"]),
         helper.make_node("ReduceSum", ["part"], ["total"], keepdims=1),
         helper.make_node("Add", ["acc_in", "total"], ["acc_out"])],
        "body", [vi("acc_in", F, [1]), vi("xs", F, [6])],
        [vi("acc_out", F, [1]), vi("part", F, None)])
    model = model_of(
        [helper.make_node("Scan", ["acc0", "x"], ["acc", "parts"], body=body,
                          num_scan_inputs=1)],
        [vi("acc0", F, [1]), vi("x", F, [4, 6]), vi("n", I64, [1])],
        [vi("acc", F, [1]), vi("parts", F, None)], opset=16)
    feeds = {"acc0": np.zeros(1, np.float32),
             "x": RNG.standard_normal((4, 6)).astype(np.float32),
             "n": np.array([4], np.int64)}
    got = check(amp_run, tmp_path, model, feeds, atol=2e-6)
    assert got[1].shape == (4, 4)
