"""Training-mode Dropout: a seeded counter-based mask (``amp.dropout_mask``).

- a float64/uint64 numpy Philox4x32-10, checked against Random123's
  published known-answer vectors, predicts every bit of amp's masks
  (``amp.dropout_mask`` run through ``amp-run``), for several counters
  (above 2^32 too), streams, seeds, ratios and a dynamic shape;
- three SGD steps of ``amp-run --train`` on a Gemm-ReLU-Dropout-Gemm model
  equal a float64 numpy forward/backward that uses those masks (counter =
  step, stream = the Dropout's position); ``--accumulate 2`` uses counter
  step * 2 + k per micro-batch;
- the eval-mode ``@main`` and the exported ONNX model do not drop;
- a Dropout whose training_mode is a graph input is a clear error;
- under ``mpirun -np 2`` each rank draws its own masks (replica index =
  rank) and rank 0 a single process's.
"""

import os
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Vectorised Philox4x32-10 (uint32 arrays in, the 4 output words out)."""
    c = [np.asarray(v, np.uint64) & MASK32 for v in (c0, c1, c2, c3)]
    k0, k1 = np.uint64(k0) & MASK32, np.uint64(k1) & MASK32
    for r in range(10):
        if r:
            k0 = (k0 + np.uint64(W0)) & MASK32
            k1 = (k1 + np.uint64(W1)) & MASK32
        p0 = np.uint64(M0) * c[0]
        p1 = np.uint64(M1) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & MASK32, p1 & MASK32,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & MASK32, p0 & MASK32]
    return [v.astype(np.uint32) for v in c]


def keep_mask(shape, ratio, counter, stream=0, seed=0):
    """amp's Dropout keep-mask (see amp.dropout_mask's description)."""
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    w = philox4x32_10(i & MASK32, i >> np.uint64(32),
                      np.full(i.shape, stream & 0xFFFFFFFF, np.uint64),
                      np.full(i.shape, seed & 0xFFFFFFFF, np.uint64),
                      counter & 0xFFFFFFFF, counter >> 32)[0]
    u = (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)
    return (u >= np.float32(ratio)).reshape(shape)


def test_reference_philox_known_answers():
    """Random123's kat_vectors for philox4x32_10."""
    cases = [
        ((0, 0, 0, 0), (0, 0),
         (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2,
         (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
         (0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ]
    for ctr, key, want in cases:
        got = philox4x32_10(*[np.array([v]) for v in ctr], *key)
        assert [int(v[0]) for v in got] == list(want)


# --------------------------------------------------------------------------
# The op, bit for bit
# --------------------------------------------------------------------------

MASK_PROGRAM = """\
func.func @main(%x: tensor<?x5x7xf16>, %c: tensor<i64>) -> (tensor<?x5x7xi1>, tensor<?x5x7xi1>) {{
  %r = amp.constant dense<{ratio:.9e}> : tensor<f32>
  %m = amp.dropout_mask %x, %r, %c {{stream = {stream} : i64, seed = {seed} : i64}} : (tensor<?x5x7xf16>, tensor<f32>, tensor<i64>) -> tensor<?x5x7xi1>
  %m2 = amp.dropout_mask %x, %r, %c {{stream = {stream2} : i64}} : (tensor<?x5x7xf16>, tensor<f32>, tensor<i64>) -> tensor<?x5x7xi1>
  return %m, %m2 : tensor<?x5x7xi1>, tensor<?x5x7xi1>
}}
"""


@pytest.mark.parametrize("ratio,counter,stream,seed", [
    (0.5, 0, 0, 0), (0.1, 7, 3, 0), (0.9, 2**33 + 5, 1, 12345),
    (0.25, 2**40 - 1, 2**31, 2**32 + 9), (0.0, 3, 0, 0)])
def test_mask_bits(amp_run, tmp_path, ratio, counter, stream, seed):
    program = tmp_path / "mask.mlir"
    program.write_text(MASK_PROGRAM.format(ratio=ratio, stream=stream, seed=seed,
                                           stream2=stream + 1))
    np.save(tmp_path / "x.npy", np.zeros((4, 5, 7), np.float16))
    np.save(tmp_path / "c.npy", np.array(counter, np.int64))
    out = tmp_path / "out"
    proc = subprocess.run([amp_run, program, "-i", tmp_path / "x.npy", "-i",
                           tmp_path / "c.npy", "--output-dir", out],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = np.load(out / "output_0.npy").astype(bool)
    other = np.load(out / "output_1.npy").astype(bool)
    assert got.shape == (4, 5, 7)
    np.testing.assert_array_equal(got, keep_mask((4, 5, 7), ratio, counter,
                                                 stream, seed))
    np.testing.assert_array_equal(other, keep_mask((4, 5, 7), ratio, counter,
                                                   stream + 1, 0))
    if 0 < ratio < 1:
        assert (got != other).any(), "streams must draw different masks"


def test_mask_keep_rate(amp_run, tmp_path):
    """Over 2^16 elements the kept fraction is 1 - ratio within 4 sigma."""
    n = 1 << 16
    program = tmp_path / "rate.mlir"
    program.write_text(
        f"func.func @main(%x: tensor<{n}xf32>, %c: tensor<i64>) -> tensor<{n}xi1> {{\n"
        "  %r = amp.constant dense<0.3> : tensor<f32>\n"
        f"  %m = amp.dropout_mask %x, %r, %c : (tensor<{n}xf32>, tensor<f32>, tensor<i64>) -> tensor<{n}xi1>\n"
        f"  return %m : tensor<{n}xi1>\n}}\n")
    np.save(tmp_path / "x.npy", np.zeros(n, np.float32))
    np.save(tmp_path / "c.npy", np.array(11, np.int64))
    proc = subprocess.run([amp_run, program, "-i", tmp_path / "x.npy", "-i",
                           tmp_path / "c.npy", "--output-dir", tmp_path / "o"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kept = np.load(tmp_path / "o" / "output_0.npy").astype(bool).mean()
    sigma = np.sqrt(0.3 * 0.7 / n)
    assert abs(kept - 0.7) < 4 * sigma, kept


# --------------------------------------------------------------------------
# Training with Dropout against a float64 numpy reference
# --------------------------------------------------------------------------

D_IN, HIDDEN, CLASSES, BATCH, RATIO = 12, 24, 5, 8, 0.25


def dropout_model(path, mode_input=False):
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((HIDDEN, D_IN)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(HIDDEN) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((CLASSES, HIDDEN)) * 0.3).astype(np.float32)
    b2 = (rng.standard_normal(CLASSES) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w1, "fc1.weight"), (b1, "fc1.bias"), (w2, "fc2.weight"),
              (b2, "fc2.bias"), (np.array(RATIO, np.float32), "ratio")]]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", D_IN])]
    if mode_input:
        inputs.append(helper.make_tensor_value_info("train", TensorProto.BOOL, []))
        mode = "train"
    else:
        inits.append(numpy_helper.from_array(np.array(True), "mode"))
        mode = "mode"
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Dropout", ["r", "ratio", mode], ["d"], name="drop"),
        helper.make_node("Gemm", ["d", "fc2.weight", "fc2.bias"], ["y"], transB=1),
    ]
    graph = helper.make_graph(nodes, "mlp_dropout", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             ["N", CLASSES])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return {"fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2, "fc2.bias": b2}


def reference_step(p, x, labels, masks, lr):
    """Mean cross-entropy over the micro-batches (each with its mask),
    float64 backward, one SGD step; returns the new parameters."""
    grads = {k: np.zeros_like(v, np.float64) for k, v in p.items()}
    for xb, yb, mask in zip(x, labels, masks):
        h = xb @ p["fc1.weight"].T + p["fc1.bias"]
        r = np.maximum(h, 0)
        d = r * mask / (1 - RATIO)
        y = d @ p["fc2.weight"].T + p["fc2.bias"]
        e = np.exp(y - y.max(1, keepdims=True))
        soft = e / e.sum(1, keepdims=True)
        dy = soft.copy()
        dy[np.arange(len(yb)), yb] -= 1
        dy /= len(yb) * len(x)
        grads["fc2.weight"] += dy.T @ d
        grads["fc2.bias"] += dy.sum(0)
        dd = dy @ p["fc2.weight"]
        dh = dd * mask / (1 - RATIO) * (h > 0)
        grads["fc1.weight"] += dh.T @ xb
        grads["fc1.bias"] += dh.sum(0)
    return {k: p[k] - lr * grads[k] for k in p}


@pytest.fixture(scope="module")
def dropout_data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dropout")
    params = dropout_model(folder / "model.onnx")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6 * BATCH, D_IN)).astype(np.float32)
    y = rng.integers(0, CLASSES, 6 * BATCH).astype(np.int64)
    np.save(folder / "x.npy", x)
    np.save(folder / "y.npy", y)
    return folder, params, x, y


@pytest.mark.parametrize("accumulate,replica", [(1, 0), (2, 0), (1, 1), (2, 3)])
def test_train_with_dropout_matches_reference(amp_run, dropout_data, accumulate, replica):
    """Counter = micro-batch number + replica * 2^32: replica 0 draws a
    single process's masks bit for bit, replica r its own."""
    folder, params, x, y = dropout_data
    steps, lr = 3, 0.5
    micro = BATCH // accumulate
    state = folder / f"state{accumulate}-{replica}.npz"
    proc = subprocess.run(
        [amp_run, folder / "model.onnx", "--train", "--amp-opt-level=0",
         "--optimizer=sgd", f"--lr={lr}", "--data", folder / "x.npy",
         "--labels", folder / "y.npy", "--batch-size", str(micro),
         "--accumulate", str(accumulate), "--steps", str(steps), "--no-shuffle",
         "--replica-index", str(replica), "--save-state", state],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    p = {k: v.astype(np.float64) for k, v in params.items()}
    xd = x.astype(np.float64)
    for step in range(steps):
        xs, ys, masks = [], [], []
        for k in range(accumulate):
            rows = slice((step * accumulate + k) * micro,
                         (step * accumulate + k + 1) * micro)
            xs.append(xd[rows])
            ys.append(y[rows])
            masks.append(keep_mask((micro, HIDDEN), RATIO,
                                   step * accumulate + k + (replica << 32)))
        p = reference_step(p, xs, ys, masks, lr)
    got = np.load(state)
    for name, want in p.items():
        err = np.linalg.norm(got[name] - want) / np.linalg.norm(want)
        assert err < 1e-5, f"{name}: relative error {err}"
    # The masks matter: without them the result is far off.
    q = {k: v.astype(np.float64) for k, v in params.items()}
    for step in range(steps):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        q = reference_step(q, [xd[rows]], [y[rows]],
                           [np.ones((BATCH, HIDDEN), bool)], lr)
    assert np.linalg.norm(got["fc1.weight"] - q["fc1.weight"]) > 1e-3


def test_data_parallel_ranks_draw_their_own_masks(amp_run, dropout_data, tmp_path):
    """mpirun -np 2: rank r's shard uses replica index r (counter step +
    r * 2^32), so rank 0 draws a single process's masks and rank 1 others;
    the step equals the float64 reference over both shards with those
    masks (docs/DataParallel.md)."""
    mpirun = shutil.which("mpirun")
    assert mpirun, "mpirun not found: install openmpi-bin"
    folder, params, x, y = dropout_data
    steps, lr, shard = 3, 0.5, BATCH // 2
    state = tmp_path / "state.npz"
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    proc = subprocess.run(
        [mpirun, "-np", "2", amp_run, folder / "model.onnx", "--train",
         "--amp-opt-level=0", "--optimizer=sgd", f"--lr={lr}", "--data",
         folder / "x.npy", "--labels", folder / "y.npy", "--batch-size", str(BATCH),
         "--steps", str(steps), "--no-shuffle", "--save-state", state],
        capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    p = {k: v.astype(np.float64) for k, v in params.items()}
    xd = x.astype(np.float64)
    for step in range(steps):
        xs, ys, masks = [], [], []
        for rank in range(2):
            rows = slice(step * BATCH + rank * shard, step * BATCH + (rank + 1) * shard)
            xs.append(xd[rows])
            ys.append(y[rows])
            masks.append(keep_mask((shard, HIDDEN), RATIO, step + (rank << 32)))
        assert not np.array_equal(masks[0], masks[1])
        p = reference_step(p, xs, ys, masks, lr)
    got = np.load(state)
    for name, want in p.items():
        err = np.linalg.norm(got[name] - want) / np.linalg.norm(want)
        assert err < 1e-5, f"{name}: relative error {err}"


def test_eval_and_export_do_not_drop(amp_opt, amp_run, dropout_data, tmp_path):
    """@main (eval mode) and the exported ONNX model are the plain forward."""
    folder, params, x, _ = dropout_data
    train = tmp_path / "train.mlir"
    proc = amp_opt.run(folder / "model.onnx", "--train", "--amp-opt-level=0",
                       "-o", train)
    assert proc.returncode == 0, proc.stderr
    text = train.read_text()
    main = text[text.index("func.func @main"):]
    main = main[:main.index("\n  }")]
    assert "dropout" not in main
    assert text.count("amp.dropout_mask") == 1
    xb = x[:BATCH]
    want = (np.maximum(xb @ params["fc1.weight"].T + params["fc1.bias"], 0)
            @ params["fc2.weight"].T + params["fc2.bias"])
    exported = tmp_path / "trained.onnx"
    proc = subprocess.run(
        [amp_run, folder / "model.onnx", "--train", "--amp-opt-level=0",
         "--optimizer=sgd", "--lr=0", "--data", folder / "x.npy", "--labels",
         folder / "y.npy", "--batch-size", str(BATCH), "--steps", "1",
         "--export-onnx", exported], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import onnxruntime as ort
    sess = ort.InferenceSession(str(exported), providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, {"x": xb})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_training_mode_input_is_an_error(amp_opt, tmp_path):
    dropout_model(tmp_path / "m.onnx", mode_input=True)
    proc = amp_opt.run(tmp_path / "m.onnx", "--train", "-o", tmp_path / "t.mlir")
    assert proc.returncode != 0
    assert "training_mode that is not a constant" in proc.stderr
    assert "drop" in proc.stderr
    assert not (tmp_path / "t.mlir").exists()
