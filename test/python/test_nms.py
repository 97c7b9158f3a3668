"""NonMaxSuppression on amp's CPU backend against onnxruntime (the result
rows must be equal, in order) and against the ONNX reference
implementation where onnxruntime is not the point (onnx.reference).

Cases: random boxes in clusters (so that many overlap), both box formats,
corners given in either order, several batches and classes, with and
without score_threshold, max_output_boxes_per_class absent (nothing
selected), 0, smaller and larger than the number of boxes, iou_threshold
absent (any overlap suppresses) and at the boundary, tied scores (the
lower box index first), no boxes, symbolic sizes at run time, and the
run-time error for boxes and scores that disagree; plus NMS inside an
fp16-autocast detection head (boxes and scores stay fp32)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from amp_test_utils import require_module
from test_amp_run import describe, ort_run, run_amp_on

ort = require_module("onnxruntime")  # missing: a failure, not a skip


def clustered_boxes(rng, batches, count, center_format=False, flip=False):
    """Boxes around a few centres, so that IoUs cover (0, 1)."""
    centres = rng.uniform(0, 50, size=(batches, 4, 2))
    pick = rng.integers(0, 4, size=(batches, count))
    xy = np.take_along_axis(centres, pick[..., None], axis=1) + rng.normal(0, 2, (batches, count, 2))
    wh = rng.uniform(2, 12, size=(batches, count, 2))
    if center_format:
        return np.concatenate([xy, wh], axis=-1).astype(np.float32)
    y1, x1 = xy[..., 1] - wh[..., 1] / 2, xy[..., 0] - wh[..., 0] / 2
    y2, x2 = y1 + wh[..., 1], x1 + wh[..., 0]
    boxes = np.stack([y1, x1, y2, x2], axis=-1)
    if flip:
        swap = rng.random((batches, count)) < 0.5
        boxes[swap] = boxes[swap][:, [2, 3, 0, 1]]
    return boxes.astype(np.float32)


def nms_model(max_out=None, iou=None, score=None, center=0, shapes=None, opset=11):
    """NMS with boxes and scores as graph inputs and the parameters as
    initializers (None: absent)."""
    shapes = shapes or (["b", "n", 4], ["b", "c", "n"])
    names, inits = ["boxes", "scores"], []
    for name, value, dtype in [("max", max_out, np.int64), ("iou", iou, np.float32),
                               ("score", score, np.float32)]:
        if value is None:
            names.append("")
            continue
        names.append(name)
        inits.append(numpy_helper.from_array(np.array([value], dtype), name))
    while names[-1] == "":
        names.pop()
    node = helper.make_node("NonMaxSuppression", names, ["selected"],
                            center_point_box=center)
    graph = helper.make_graph(
        [node], "nms",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, shapes[0]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, shapes[1])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=5 if opset == 10 else 7)


def run_amp(amp_run, tmp_path, model, feeds):
    proc, outputs = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode == 0, describe(proc)
    return outputs[0]


def check(amp_run, tmp_path, model, boxes, scores):
    feeds = {"boxes": boxes, "scores": scores}
    got = run_amp(amp_run, tmp_path, model, feeds)
    want = ort_run(model, feeds)[0]
    assert got.dtype == np.int64 and got.shape[1:] == (3,)
    np.testing.assert_array_equal(got, want.reshape(-1, 3))
    # onnx.reference fails on absent optional inputs (onnx 1.23).
    if len(model.graph.node[0].input) == 5 and all(model.graph.node[0].input):
        reference = ReferenceEvaluator(model).run(None, feeds)[0]
        np.testing.assert_array_equal(got, reference.reshape(-1, 3))
    return got


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("max_out,iou,score", [(5, 0.5, None), (100, 0.3, 0.4), (3, 0.7, 0.2),
                                               (1000, None, None), (0, 0.5, None),
                                               (None, 0.5, 0.1)])
def test_random_clusters(amp_run, tmp_path, center, max_out, iou, score):
    rng = np.random.default_rng(100 * center + (max_out or 0))
    boxes = clustered_boxes(rng, 2, 40, center_format=bool(center))
    scores = rng.random((2, 3, 40)).astype(np.float32)
    got = check(amp_run, tmp_path, nms_model(max_out, iou, score, center), boxes, scores)
    if not max_out:
        assert got.shape == (0, 3)


def test_flipped_corners(amp_run, tmp_path):
    rng = np.random.default_rng(3)
    boxes = clustered_boxes(rng, 1, 60, flip=True)
    scores = rng.random((1, 2, 60)).astype(np.float32)
    check(amp_run, tmp_path, nms_model(20, 0.45, 0.05), boxes, scores)


def test_tied_scores_take_the_lower_index_first(amp_run, tmp_path):
    """Equal scores: onnxruntime and the reference visit the lower box
    index first; identical boxes suppress all but that one."""
    boxes = np.array([[[0, 0, 1, 1]] * 4 + [[5, 5, 6, 6]] * 3], np.float32)
    scores = np.array([[[0.5, 0.7, 0.7, 0.1, 0.7, 0.7, 0.2]]], np.float32)
    got = check(amp_run, tmp_path, nms_model(10, 0.5), boxes, scores)
    assert got.tolist() == [[0, 0, 1], [0, 0, 4]]


def test_iou_at_the_threshold_does_not_suppress(amp_run, tmp_path):
    """IoU exactly 0.5 (two unit squares overlapping by a third of their
    union): suppressed only above the threshold."""
    boxes = np.array([[[0, 0, 1, 1], [0, 1 / 3, 1, 4 / 3], [0, 0.5, 1, 1.5]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7]]], np.float32)
    check(amp_run, tmp_path, nms_model(10, 0.5), boxes, scores)


def test_no_boxes(amp_run, tmp_path):
    boxes = np.zeros((1, 0, 4), np.float32)
    scores = np.zeros((1, 2, 0), np.float32)
    got = run_amp(amp_run, tmp_path, nms_model(10, 0.5), {"boxes": boxes, "scores": scores})
    assert got.shape == (0, 3)


def test_static_shapes_many_classes(amp_run, tmp_path):
    """A detection-sized case with static shapes: 300 boxes, 20 classes."""
    rng = np.random.default_rng(9)
    boxes = clustered_boxes(rng, 1, 300)
    scores = rng.random((1, 20, 300)).astype(np.float32) ** 3
    model = nms_model(50, 0.5, 0.05, shapes=([1, 300, 4], [1, 20, 300]), opset=10)
    got = check(amp_run, tmp_path, model, boxes, scores)
    assert 100 < got.shape[0] <= 1000


@pytest.mark.parametrize("boxes_count,scores_count", [(8, 6), (6, 8)])
def test_boxes_and_scores_disagree_at_run_time(amp_run, tmp_path, boxes_count, scores_count):
    """Symbolic sizes that differ only at run time: an error naming the
    node, not a wrong answer or a read past the boxes."""
    model = nms_model(5, 0.5, shapes=(["b", "n", 4], ["b2", "c", "n2"]))
    model.graph.node[0].name = "nms_head"
    rng = np.random.default_rng(1)
    feeds = {"boxes": clustered_boxes(rng, 1, boxes_count),
             "scores": rng.random((1, 2, scores_count)).astype(np.float32)}
    proc, _ = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode != 0, describe(proc)
    assert (f"node 'nms_head' (NonMaxSuppression): boxes have {boxes_count} boxes per batch "
            f"but scores {scores_count}") in proc.stderr, describe(proc)


@pytest.mark.parametrize("change,message", [
    (dict(shapes=([1, 6, 3], [1, 1, 6])), "NonMaxSuppression boxes must be [num_batches, num_boxes, 4]"),
    (dict(shapes=([2, 6, 4], [1, 1, 6])), "NonMaxSuppression boxes have 2 batches but scores 1"),
    (dict(shapes=([1, 6, 4], [1, 1, 5])),
     "NonMaxSuppression boxes hold 6 boxes per batch but scores score 5"),
    (dict(center=2), "NonMaxSuppression center_point_box must be 0 or 1, not 2"),
])
def test_invalid_models(amp_run, tmp_path, change, message):
    args = dict(max_out=3, iou=0.5, shapes=([1, 6, 4], [1, 1, 6]))
    args.update(change)
    model = nms_model(**args)
    boxes_shape, scores_shape = args["shapes"]
    feeds = {"boxes": np.zeros(boxes_shape, np.float32),
             "scores": np.zeros(scores_shape, np.float32)}
    proc, _ = run_amp_on(amp_run, tmp_path, model, feeds)
    assert proc.returncode != 0, describe(proc)
    assert message in proc.stderr, describe(proc)
    assert "NonMaxSuppression" in proc.stderr


def test_detection_head_under_fp16_autocast(amp_run, tmp_path):
    """A box-regression MatMul and a Sigmoid class head feeding NMS, run
    with --amp-type f16: the head computes in f16 and NMS reads its boxes
    and scores in fp32 (NMS's operands keep their type). The boxes and
    scores are graph outputs too (the same fp32 values NMS reads), so the
    selection must be exactly the reference NMS of them; and they are
    within f16 rounding of onnxruntime's fp32 ones."""
    rng = np.random.default_rng(21)
    n, features, classes = 64, 16, 4
    w_box = rng.normal(0, 0.3, (features, 4)).astype(np.float32)
    w_cls = rng.normal(0, 0.5, (features, classes)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["feat", "w_box"], ["delta"]),
        helper.make_node("Add", ["anchors", "delta"], ["boxes2d"]),
        helper.make_node("Unsqueeze", ["boxes2d", "axis0"], ["boxes"]),
        helper.make_node("MatMul", ["feat", "w_cls"], ["logits"]),
        helper.make_node("Sigmoid", ["logits"], ["probs"]),
        helper.make_node("Transpose", ["probs"], ["probs_t"], perm=[1, 0]),
        helper.make_node("Unsqueeze", ["probs_t", "axis0"], ["scores"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"],
                         ["selected"]),
    ]
    anchors = clustered_boxes(rng, 1, n)[0]
    inits = [numpy_helper.from_array(w_box, "w_box"), numpy_helper.from_array(w_cls, "w_cls"),
             numpy_helper.from_array(anchors, "anchors"),
             numpy_helper.from_array(np.array([0], np.int64), "axis0"),
             numpy_helper.from_array(np.array([10], np.int64), "max"),
             numpy_helper.from_array(np.array([0.5], np.float32), "iou"),
             numpy_helper.from_array(np.array([0.3], np.float32), "score")]
    graph = helper.make_graph(
        nodes, "head", [helper.make_tensor_value_info("feat", TensorProto.FLOAT, [n, features])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3]),
         helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, n, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, classes, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    feat = rng.normal(0, 1, (n, features)).astype(np.float32)
    proc, outputs = run_amp_on(amp_run, tmp_path, model, {"feat": feat}, "--amp-type", "f16")
    assert proc.returncode == 0, describe(proc)
    selected, boxes, scores = outputs
    assert len(selected) > 5
    _, want_boxes, want_scores = ort_run(model, {"feat": feat})
    assert np.abs(scores - want_scores).max() < 2e-3
    assert np.abs(boxes - want_boxes).max() < 0.1  # coordinates up to ~60
    assert not np.array_equal(scores, want_scores)  # the head did run in f16
    nms = helper.make_model(helper.make_graph(
        [nodes[-1]], "nms",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, n, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, classes, n])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])], inits[-3:]),
        opset_imports=[helper.make_opsetid("", 13)])
    reference = ReferenceEvaluator(nms).run(None, {"boxes": boxes, "scores": scores})[0]
    np.testing.assert_array_equal(selected, reference.reshape(-1, 3))
