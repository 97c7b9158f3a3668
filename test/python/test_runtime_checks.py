"""Run-time checks of the CPU backend: values that only the data decides.

A Gather index past the end of its axis, a ScatterND index tuple outside the
data, a run-time ReduceSum axis outside the rank, a loss target that is not
a class: onnxruntime refuses each with an error. Before the checks, amp-run
read (Gather) or wrote (Scatter) outside the tensor: a crash or a silent
wrong answer. Now the lowering reduces the operand to its extremes, calls
the runtime when one is out of range, clamps the indices so that nothing is
read or written outside a tensor, and amp-run reports the first failed check
("run-time check failed in 'main': node 'emb' (Gather): index 10 is outside
[-10, 10)"), exits 1 and writes no output file.

Every case runs the model twice: in range (negative indices included), the
results must equal onnxruntime's (exactly for gathers and scatters, rtol
1e-5 for the reductions and losses); out of range, onnxruntime must refuse
it too (the reference's own verdict), and amp-run must fail as described.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from amp_test_utils import require_module
from test_amp_run import describe, make_model, ort_run, run_amp, save_model, vi

ort = require_module("onnxruntime")  # missing: a failure, not a skip

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(7)


def run_case(amp_run, tmp_path, model, feeds, rtol=0.0):
    """amp-run on `feeds`; in range, compares with onnxruntime and returns
    None; out of range, returns amp-run's process for the caller's checks."""
    folder = tmp_path / f"case{len(list(tmp_path.glob('case*')))}"
    path = save_model(model, folder)
    inputs = []
    for i, (name, value) in enumerate(feeds.items()):
        inputs += ["-i", folder / f"in{i}.npy"]
        np.save(folder / f"in{i}.npy", value)
    out = folder / "out"
    proc = run_amp(amp_run, path, *inputs, "--output-dir", out)
    try:
        want = ort_run(model, feeds)
    except Exception as error:  # onnxruntime refuses the data too
        assert proc.returncode == 1, (f"onnxruntime refused it ({error}) but amp-run "
                                      f"did not fail\n{describe(proc)}")
        assert "Traceback" not in proc.stderr and "LLVM ERROR" not in proc.stderr
        assert not out.exists() or not list(out.iterdir()), "an output was written"
        return proc
    assert proc.returncode == 0, describe(proc)
    for o, expected in zip(model.graph.output, want):
        got = np.load(out / f"{o.name}.npy")
        assert got.shape == expected.shape, o.name
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, err_msg=o.name)
    return None


def expect_failure(proc, *fragments):
    assert proc is not None, "onnxruntime accepted data that should be out of range"
    assert "error: run-time check failed in 'main': " in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, f"{fragment!r} not in\n{proc.stderr}"


def embedding_model(rows=10):
    table = numpy_helper.from_array(
        RNG.standard_normal((rows, 4)).astype(np.float32), "table")
    return make_model([helper.make_node("Gather", ["table", "ids"], ["y"], name="emb")],
                      [vi("ids", INT64, [2, 3])], [vi("y", FLOAT, [2, 3, 4])], [table])


def test_gather_in_range_with_negative_indices(amp_run, tmp_path):
    ids = np.array([[0, 9, -1], [-10, 3, 4]], np.int64)
    assert run_case(amp_run, tmp_path, embedding_model(), {"ids": ids}) is None


@pytest.mark.parametrize("bad", [10, -11, 2**40])
def test_gather_index_out_of_range(amp_run, tmp_path, bad):
    ids = np.array([[0, 1, 2], [3, bad, 4]], np.int64)
    proc = run_case(amp_run, tmp_path, embedding_model(), {"ids": ids})
    expect_failure(proc, "node 'emb' (Gather)", f"index {bad} is outside [-10, 10)")


def test_gather_from_a_run_time_empty_axis(amp_run, tmp_path):
    """The data's axis is 0 at run time: no index is valid, nothing is read."""
    model = make_model([helper.make_node("Gather", ["x", "ids"], ["y"], axis=0, name="g")],
                       [vi("x", FLOAT, ["n", 3]), vi("ids", INT64, [2])],
                       [vi("y", FLOAT, [2, 3])])
    proc = run_case(amp_run, tmp_path, model,
                    {"x": np.zeros((0, 3), np.float32), "ids": np.array([0, 0], np.int64)})
    expect_failure(proc, "node 'g' (Gather)", "index 0 is outside [-0, 0)")


def gather_elements_model():
    return make_model(
        [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1, name="ge")],
        [vi("x", FLOAT, [3, 5]), vi("i", INT64, [3, 2])], [vi("y", FLOAT, [3, 2])])


def test_gather_elements(amp_run, tmp_path):
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    good = np.array([[0, 4], [-5, -1], [2, 2]], np.int64)
    assert run_case(amp_run, tmp_path, gather_elements_model(), {"x": x, "i": good}) is None
    bad = np.array([[0, 4], [5, -1], [2, 2]], np.int64)
    proc = run_case(amp_run, tmp_path, gather_elements_model(), {"x": x, "i": bad})
    expect_failure(proc, "node 'ge' (GatherElements)", "index 5 is outside [-5, 5)")


def gather_nd_model():
    return make_model([helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd")],
                      [vi("x", FLOAT, [4, 3, 2]), vi("i", INT64, [5, 2])],
                      [vi("y", FLOAT, [5, 2])])


def test_gather_nd(amp_run, tmp_path):
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)
    good = np.array([[0, 0], [3, 2], [-4, -3], [1, -1], [2, 1]], np.int64)
    assert run_case(amp_run, tmp_path, gather_nd_model(), {"x": x, "i": good}) is None
    bad = good.copy()
    bad[3, 1] = 3  # the second component indexes an axis of size 3
    proc = run_case(amp_run, tmp_path, gather_nd_model(), {"x": x, "i": bad})
    expect_failure(proc, "node 'gnd' (GatherND)", "index component 1 = 3 is outside [-3, 3)")


def scatter_nd_model():
    return make_model([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="snd")],
                      [vi("x", FLOAT, [6, 2]), vi("i", INT64, [3, 1]),
                       vi("u", FLOAT, [3, 2])], [vi("y", FLOAT, [6, 2])])


def test_scatter_nd_writes_nothing_outside(amp_run, tmp_path):
    x = RNG.standard_normal((6, 2)).astype(np.float32)
    u = RNG.standard_normal((3, 2)).astype(np.float32)
    good = np.array([[0], [5], [-2]], np.int64)
    assert run_case(amp_run, tmp_path, scatter_nd_model(), {"x": x, "i": good, "u": u}) is None
    # Far outside: before the checks this wrote 8 bytes a gigabyte away.
    bad = np.array([[0], [2**27], [1]], np.int64)
    proc = run_case(amp_run, tmp_path, scatter_nd_model(), {"x": x, "i": bad, "u": u})
    expect_failure(proc, "node 'snd' (ScatterND)",
                   f"index component 0 = {2**27} is outside [-6, 6)")


def test_scatter_elements(amp_run, tmp_path):
    model = make_model(
        [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0,
                          reduction="add", name="se")],
        [vi("x", FLOAT, [4, 3]), vi("i", INT64, [2, 3]), vi("u", FLOAT, [2, 3])],
        [vi("y", FLOAT, [4, 3])], opset=18)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    u = RNG.standard_normal((2, 3)).astype(np.float32)
    good = np.array([[0, 3, -1], [1, -4, 2]], np.int64)
    assert run_case(amp_run, tmp_path, model, {"x": x, "i": good, "u": u}, rtol=1e-6) is None
    bad = np.array([[0, 3, -1], [1, -5, 2]], np.int64)
    proc = run_case(amp_run, tmp_path, model, {"x": x, "i": bad, "u": u})
    expect_failure(proc, "node 'se' (ScatterElements)", "index -5 is outside [-4, 4)")


def test_reduce_axes_outside_the_rank(amp_run, tmp_path):
    """Before the check, the axis named no dimension and the sum was the input."""
    model = make_model(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1, name="sum")],
        [vi("x", FLOAT, [2, 3]), vi("axes", INT64, [1])], [vi("y", FLOAT, ["a", "b"])],
        opset=18)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for axis in (1, -2):
        assert run_case(amp_run, tmp_path, model,
                        {"x": x, "axes": np.array([axis], np.int64)}, rtol=1e-5) is None
    proc = run_case(amp_run, tmp_path, model, {"x": x, "axes": np.array([2], np.int64)})
    expect_failure(proc, "node 'sum' (ReduceSum)", "axis 2 is outside [-2, 2)")


def loss_model(ignore_index=None):
    attrs = {"reduction": "mean"}
    if ignore_index is not None:
        attrs["ignore_index"] = ignore_index
    return make_model(
        [helper.make_node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["loss"],
                          name="xent", **attrs)],
        [vi("scores", FLOAT, [4, 3]), vi("labels", INT64, [4])], [vi("loss", FLOAT, [])])


def test_loss_target_that_is_not_a_class(amp_run, tmp_path):
    scores = RNG.standard_normal((4, 3)).astype(np.float32)
    good = np.array([0, 2, 1, 2], np.int64)
    assert run_case(amp_run, tmp_path, loss_model(), {"scores": scores, "labels": good},
                    rtol=1e-5) is None
    proc = run_case(amp_run, tmp_path, loss_model(),
                    {"scores": scores, "labels": np.array([0, 3, 1, 2], np.int64)})
    expect_failure(proc, "node 'xent' (SoftmaxCrossEntropyLoss)",
                   "target 3 is outside [0, 3)")


def test_loss_over_no_class(amp_run, tmp_path):
    """Log-probabilities with 0 classes: every target is out of range and
    nothing is read (the per-element loss is guarded)."""
    model = make_model(
        [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], name="nll")],
        [vi("x", FLOAT, [3, "c"]), vi("t", INT64, [3])], [vi("y", FLOAT, [])])
    proc = run_case(amp_run, tmp_path, model,
                    {"x": np.zeros((3, 0), np.float32), "t": np.array([0, 1, 2], np.int64)})
    expect_failure(proc, "node 'nll' (NegativeLogLikelihoodLoss)", "target 2 is outside [0, 0)")


def test_loss_ignore_index_is_not_checked(amp_run, tmp_path):
    scores = RNG.standard_normal((4, 3)).astype(np.float32)
    labels = np.array([0, -100, 1, 2], np.int64)
    assert run_case(amp_run, tmp_path, loss_model(ignore_index=-100),
                    {"scores": scores, "labels": labels}, rtol=1e-5) is None


def test_training_stops_at_the_step_that_meets_a_bad_index(amp_run, tmp_path):
    """An embedding model trained on ids: an id past the table stops training
    at the step whose batch holds it (labels are checked before training;
    ids are the model's own business, so the check is the run-time one)."""
    table = numpy_helper.from_array(RNG.standard_normal((10, 3)).astype(np.float32), "table")
    model = make_model(
        [helper.make_node("Gather", ["table", "ids"], ["e"], name="emb"),
         helper.make_node("ReduceSum", ["e", "axes"], ["logits"], keepdims=0, name="pool")],
        [vi("ids", INT64, ["n", 2])], [vi("logits", FLOAT, ["n", 3])],
        [table, numpy_helper.from_array(np.array([1], np.int64), "axes")])
    path = save_model(model, tmp_path)
    ids = RNG.integers(0, 10, (8, 2)).astype(np.int64)
    np.save(tmp_path / "good.npy", ids)
    ids[6, 1] = 12
    np.save(tmp_path / "bad.npy", ids)
    np.save(tmp_path / "y.npy", RNG.integers(0, 3, 8).astype(np.int64))
    common = ["--train", "--labels", tmp_path / "y.npy", "--batch-size", "4", "--steps", "2",
              "--lr", "0.1", "--no-shuffle"]
    proc = run_amp(amp_run, path, *common, "--data", tmp_path / "good.npy")
    assert proc.returncode == 0, describe(proc)
    state = tmp_path / "state.npz"
    proc = run_amp(amp_run, path, *common, "--data", tmp_path / "bad.npy",
                   "--save-state", state)
    assert proc.returncode == 1, describe(proc)
    assert ("step 2: run-time check failed in 'train_step': node 'emb' (Gather): "
            "index 12 is outside [-10, 10)") in proc.stderr, proc.stderr
    assert not state.exists()


@pytest.mark.parametrize("rows", [4, 6, 3])
def test_concat_sizes_off_the_axis(amp_run, tmp_path, rows):
    """Concat of symbolic sizes that differ off the axis at run time: an
    error naming the node and the sizes (onnxruntime refuses it too), never
    a write past the result; equal sizes concatenate."""
    model = make_model([helper.make_node("Concat", ["a", "b"], ["y"], axis=1, name="cat")],
                       [vi("a", FLOAT, ["n", 2]), vi("b", FLOAT, ["m", "k"])],
                       [vi("y", FLOAT, ["n", None])])
    feeds = {"a": RNG.standard_normal((4, 2)).astype(np.float32),
             "b": RNG.standard_normal((rows, 3)).astype(np.float32)}
    proc = run_case(amp_run, tmp_path, model, feeds)
    if rows == 4:
        assert proc is None
    else:
        expect_failure(proc, f"node 'cat' (Concat): input 1 has {rows} elements along "
                             "dimension 0 but input 0 has 4 (only the axis 1 may differ)")
