"""amp-autocast on TOSA programs written for the test (an MLP, a CNN, an
attention block), run on amp's CPU backend.

Each program is generated with seeded weights (``tosa.const``), then

- fp32: lowered by upstream ``mlir-opt`` (``tosa-to-linalg-named``,
  ``tosa-to-linalg``, ``tosa-to-arith``, ``tosa-to-tensor``) and run by
  ``amp-run``; must match a float64 numpy implementation of the same
  program within 1e-5 (relative L2);
- f16 / bf16: ``amp-opt --pass-pipeline=builtin.module(amp-autocast{type=T})``
  first (the TOSA precision models: tosa.cast at the boundaries, fp32
  accumulators for matmul, conv2d and fully_connected), then the same
  lowering and run; the relative L2 error against float64 must lie between
  1e-5 (something ran in low precision) and the bound below (f16 and bf16
  rounding of O(1) activations: a few ulps after accumulation), and the
  autocast output must contain TOSA casts and no amp op.
"""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

MLIR_OPT = shutil.which("mlir-opt-19") or "/usr/lib/llvm-19/bin/mlir-opt"
TOSA_TO_LINALG = ("--pass-pipeline=builtin.module(func.func(tosa-to-linalg-named,"
                  "tosa-to-linalg,tosa-to-arith,tosa-to-tensor))")
# Relative L2 error bounds against float64: the largest measured (seed 0,
# 2026-12-06; test_tosa_table prints them) times about 1.5.
#   program    fp32      f16       bf16
#   mlp        8.9e-08   5.1e-04   4.3e-03
#   cnn        3.4e-07   1.3e-03   6.6e-03
#   attention  9.8e-08   5.6e-04   4.3e-03
BOUNDS = {"f16": 2e-3, "bf16": 1e-2}
FP32_BOUND = 1e-5
MIN_LOW = 1e-5


def dense(array):
    """An MLIR dense literal of a float32 array (its little-endian bytes)."""
    data = np.ascontiguousarray(array, dtype="<f4").tobytes().hex().upper()
    return f'dense<"0x{data}"> : {tensor(array.shape)}'


def const(name, array):
    return f'  %{name} = "tosa.const"() {{value = {dense(array)}}} : () -> {tensor(array.shape)}\n'


def tensor(shape, element="f32"):
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def mlp(rng):
    """x[1,8,16] @ w1[1,16,32] + b1, ReLU (clamp), @ w2[1,32,8] + b2."""
    x = rng.standard_normal((1, 8, 16)).astype(np.float32)
    w1 = (rng.standard_normal((1, 16, 32)) / 4).astype(np.float32)
    b1 = (rng.standard_normal((1, 1, 32)) / 4).astype(np.float32)
    w2 = (rng.standard_normal((1, 32, 8)) / 6).astype(np.float32)
    b2 = (rng.standard_normal((1, 1, 8)) / 4).astype(np.float32)
    text = ("func.func @main(%x: tensor<1x8x16xf32>) -> tensor<1x8x8xf32> {\n"
            + const("w1", w1) + const("b1", b1) + const("w2", w2) + const("b2", b2)
            + "  %h = tosa.matmul %x, %w1 : (tensor<1x8x16xf32>, tensor<1x16x32xf32>) -> tensor<1x8x32xf32>\n"
            "  %hb = tosa.add %h, %b1 : (tensor<1x8x32xf32>, tensor<1x1x32xf32>) -> tensor<1x8x32xf32>\n"
            "  %r = tosa.clamp %hb {min_fp = 0.0 : f32, max_fp = 3.4e38 : f32, min_int = 0 : i64, max_int = 0 : i64} : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>\n"
            "  %o = tosa.matmul %r, %w2 : (tensor<1x8x32xf32>, tensor<1x32x8xf32>) -> tensor<1x8x8xf32>\n"
            "  %ob = tosa.add %o, %b2 : (tensor<1x8x8xf32>, tensor<1x1x8xf32>) -> tensor<1x8x8xf32>\n"
            "  return %ob : tensor<1x8x8xf32>\n}\n")
    d = lambda a: a.astype(np.float64)  # noqa: E731
    ref = np.maximum(d(x) @ d(w1) + d(b1), 0) @ d(w2) + d(b2)
    return text, [x], ref


def cnn(rng):
    """conv2d 3x3 (NHWC, 3 -> 8 channels) + bias, ReLU6, 2x2 average pool,
    reshape, fully_connected to 4 outputs."""
    x = rng.standard_normal((1, 8, 8, 3)).astype(np.float32)
    w = (rng.standard_normal((8, 3, 3, 3)) / 4).astype(np.float32)
    b = (rng.standard_normal((8,)) / 4).astype(np.float32)
    fw = (rng.standard_normal((4, 72)) / 8).astype(np.float32)
    fb = (rng.standard_normal((4,)) / 4).astype(np.float32)
    text = ("func.func @main(%x: tensor<1x8x8x3xf32>) -> tensor<1x4xf32> {\n"
            + const("w", w) + const("b", b) + const("fw", fw) + const("fb", fb)
            + "  %c = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x6x6x8xf32>\n"
            "  %r = tosa.clamp %c {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>\n"
            "  %p = tosa.avg_pool2d %r {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x6x6x8xf32>) -> tensor<1x3x3x8xf32>\n"
            "  %f = tosa.reshape %p {new_shape = array<i64: 1, 72>} : (tensor<1x3x3x8xf32>) -> tensor<1x72xf32>\n"
            "  %o = tosa.fully_connected %f, %fw, %fb : (tensor<1x72xf32>, tensor<4x72xf32>, tensor<4xf32>) -> tensor<1x4xf32>\n"
            "  return %o : tensor<1x4xf32>\n}\n")
    d = lambda a: a.astype(np.float64)  # noqa: E731
    xd, wd = d(x), d(w)
    conv = np.zeros((1, 6, 6, 8))
    for i in range(6):
        for j in range(6):
            patch = xd[0, i:i + 3, j:j + 3, :]  # [3, 3, 3]
            conv[0, i, j, :] = np.einsum("hwc,ohwc->o", patch, wd)
    conv += d(b)
    act = np.clip(conv, 0, 6)
    pooled = act.reshape(1, 3, 2, 3, 2, 8).mean(axis=(2, 4))
    ref = pooled.reshape(1, 72) @ d(fw).T + d(fb)
    return text, [x], ref


def attention(rng):
    """softmax(q k^T / sqrt(d)) v for q, k, v [1, 8, 16], the softmax as TOSA
    writes it (reduce_max, sub, exp, reduce_sum, reciprocal, mul)."""
    q, k, v = (rng.standard_normal((1, 8, 16)).astype(np.float32) for _ in range(3))
    scale = np.full((1, 1, 1), 0.25, np.float32)
    text = ("func.func @main(%q: tensor<1x8x16xf32>, %k: tensor<1x16x8xf32>, %v: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {\n"
            + const("scale", scale)
            + "  %s = tosa.matmul %q, %k : (tensor<1x8x16xf32>, tensor<1x16x8xf32>) -> tensor<1x8x8xf32>\n"
            "  %ss = tosa.mul %s, %scale {shift = 0 : i8} : (tensor<1x8x8xf32>, tensor<1x1x1xf32>) -> tensor<1x8x8xf32>\n"
            "  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<1x8x8xf32>) -> tensor<1x8x1xf32>\n"
            "  %d = tosa.sub %ss, %m : (tensor<1x8x8xf32>, tensor<1x8x1xf32>) -> tensor<1x8x8xf32>\n"
            "  %e = tosa.exp %d : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>\n"
            "  %z = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<1x8x8xf32>) -> tensor<1x8x1xf32>\n"
            "  %rz = tosa.reciprocal %z : (tensor<1x8x1xf32>) -> tensor<1x8x1xf32>\n"
            "  %p = tosa.mul %e, %rz {shift = 0 : i8} : (tensor<1x8x8xf32>, tensor<1x8x1xf32>) -> tensor<1x8x8xf32>\n"
            "  %o = tosa.matmul %p, %v : (tensor<1x8x8xf32>, tensor<1x8x16xf32>) -> tensor<1x8x16xf32>\n"
            "  return %o : tensor<1x8x16xf32>\n}\n")
    kt = np.ascontiguousarray(np.transpose(k, (0, 2, 1)))
    s = q.astype(np.float64) @ kt.astype(np.float64) * 0.25
    e = np.exp(s - s.max(axis=2, keepdims=True))
    ref = (e / e.sum(axis=2, keepdims=True)) @ v.astype(np.float64)
    return text, [q, kt, v], ref


PROGRAMS = {"mlp": mlp, "cnn": cnn, "attention": attention}
RESULTS = {}


def run(command, **kwargs):
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)
    assert proc.returncode == 0, (f"{' '.join(map(str, command))}: exit {proc.returncode}\n"
                                  f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return proc


def rel_l2(got, ref):
    return float(np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref))


@pytest.mark.parametrize("amp_type", ["fp32", "f16", "bf16"])
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_tosa_program(amp_opt, amp_run, tmp_path, program, amp_type):
    assert os.access(MLIR_OPT, os.X_OK), f"upstream mlir-opt not found at {MLIR_OPT}"
    text, inputs, ref = PROGRAMS[program](np.random.default_rng(0))
    source = tmp_path / f"{program}.mlir"
    source.write_text(text)
    tosa = source
    if amp_type != "fp32":
        tosa = tmp_path / f"{program}.{amp_type}.mlir"
        run([amp_opt.path, str(source),
             f"--pass-pipeline=builtin.module(amp-autocast{{type={amp_type}}},canonicalize)",
             "-o", str(tosa)])
        low = tosa.read_text()
        assert "tosa.cast" in low, f"{program}: autocast changed nothing:\n{low}"
        assert not re.findall(r"= amp\.(\w+)", low), f"{program}: amp ops in TOSA output:\n{low}"
        assert "tensor<1x" in low and ("xf16>" in low or "xbf16>" in low)
    linalg = tmp_path / f"{program}.{amp_type}.linalg.mlir"
    run([MLIR_OPT, str(tosa), TOSA_TO_LINALG, "-o", str(linalg)])
    command = [amp_run, str(linalg)]
    for index, array in enumerate(inputs):
        path = tmp_path / f"input{index}.npy"
        np.save(path, array)
        command += ["-i", str(path)]
    out = tmp_path / "out"
    run(command + [f"--output-dir={out}"])
    got = np.load(out / "output_0.npy")
    assert got.shape == ref.shape and np.isfinite(got).all()
    error = rel_l2(got, ref)
    RESULTS[(program, amp_type)] = error
    if amp_type == "fp32":
        assert error <= FP32_BOUND, f"{program} fp32: relative L2 error {error:.3g}"
    else:
        assert MIN_LOW <= error <= BOUNDS[amp_type], (
            f"{program} {amp_type}: relative L2 error {error:.3g} not in "
            f"[{MIN_LOW:g}, {BOUNDS[amp_type]:g}]")


def test_tosa_table(capsys):
    """Prints the errors measured above (runs last in the module)."""
    lines = ["", "TOSA programs on amp's CPU backend: relative L2 error vs float64",
             f"{'program':10s} {'fp32':>9s} {'f16':>9s} {'bf16':>9s}"]
    for program in PROGRAMS:
        cells = [RESULTS.get((program, t)) for t in ("fp32", "f16", "bf16")]
        lines.append(f"{program:10s} " + " ".join(
            f"{c:9.2e}" if c is not None else f"{'-':>9s}" for c in cells))
    with capsys.disabled():
        print("\n".join(lines))
    assert RESULTS, "no program was run"
