"""amp-autodiff on its own: @main_grad's gradients against numpy's
analytic gradient of sum(tanh(x @ w)) and against float64 central
differences of a LayerNorm + GELU + softmax cross-entropy-like scalar."""

import subprocess

import numpy as np

PROGRAM = """\
func.func @main(%x: tensor<3x4xf32> {amp.name = "x"}, %w: tensor<4x2xf32> {amp.name = "w"}) -> tensor<f32> {
  %y = amp.matmul %x, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %t = amp.tanh %y : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %none = amp.none
  %s = amp.reduce_sum %t, %none {keepdims = 0 : i64} : (tensor<3x2xf32>, none) -> tensor<f32>
  return %s : tensor<f32>
}
"""


def run_grad(amp_opt, amp_run, tmp_path, program, inputs, names):
    src = tmp_path / "f.mlir"
    src.write_text(program)
    grad = tmp_path / "grad.mlir"
    proc = amp_opt.run(src, "--amp-autodiff", "-o", grad)
    assert proc.returncode == 0, proc.stderr
    args = []
    for i, value in enumerate(inputs):
        np.save(tmp_path / f"in{i}.npy", value)
        args += ["-i", str(tmp_path / f"in{i}.npy")]
    out = tmp_path / "out"
    proc = subprocess.run([amp_run, grad, "--entry", "main_grad", *args,
                           "--output-dir", out], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    # Outputs are saved under their amp.name (unnamed: output_<i>).
    return [np.load(out / "output_0.npy")] + [np.load(out / f"{n}.grad.npy")
                                                for n in names]


def test_matmul_tanh_sum(amp_opt, amp_run, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    loss, dx, dw = run_grad(amp_opt, amp_run, tmp_path, PROGRAM, [x, w],
                            ["x", "w"])
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    t = np.tanh(x64 @ w64)
    g = 1 - t * t
    np.testing.assert_allclose(loss, t.sum(), rtol=1e-5)
    np.testing.assert_allclose(dx, g @ w64.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dw, x64.T @ g, rtol=1e-5, atol=1e-6)


NORM_PROGRAM = """\
func.func @main(%x: tensor<4x6xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<f32> {
  %n, %mean, %inv = amp.layer_normalization %x, %g, %b {axis = -1 : i64} : (tensor<4x6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<4x6xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %a = amp.gelu %n : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = amp.log_softmax %a {axis = 1 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %none = amp.none
  %m = amp.reduce_mean %l, %none {keepdims = 0 : i64} : (tensor<4x6xf32>, none) -> tensor<f32>
  return %m : tensor<f32>
}
"""


def test_against_finite_differences(amp_opt, amp_run, tmp_path):
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in [(4, 6), (6,), (6,)]]
    outs = run_grad(amp_opt, amp_run, tmp_path, NORM_PROGRAM, inputs,
                    ["arg0", "arg1", "arg2"])

    from math import erf, sqrt

    def f(x, g, b):
        mu = x.mean(1, keepdims=True)
        var = ((x - mu) ** 2).mean(1, keepdims=True)
        n = (x - mu) / np.sqrt(var + 1e-5) * g + b
        a = n * 0.5 * (1 + np.vectorize(erf)(n / sqrt(2)))
        l = a - a.max(1, keepdims=True)
        l = l - np.log(np.exp(l).sum(1, keepdims=True))
        return l.mean()

    args = [v.astype(np.float64) for v in inputs]
    for k, arg in enumerate(args):
        numeric = np.zeros_like(arg)
        for idx in np.ndindex(arg.shape):
            h = 1e-6
            plus = [a.copy() for a in args]
            minus = [a.copy() for a in args]
            plus[k][idx] += h
            minus[k][idx] -= h
            numeric[idx] = (f(*plus) - f(*minus)) / (2 * h)
        got = outs[1 + k]
        err = np.linalg.norm(got - numeric) / max(np.linalg.norm(numeric), 1e-12)
        assert err < 1e-4, f"input {k}: relative error {err}"
