"""fp32 convolution gradients through the CPU runtime against numpy float64.

test_gradient_rules.py checks the rules in float64, where the CPU backend
runs generated loops. In fp32 the backend hands the forward convolution,
the input gradient (a ConvTranspose) and the weight gradient
(``amp.conv_weight_grad``) to oneDNN (``amp_cpu_conv_f32``,
``amp_cpu_conv_weight_grad_f32``), with padding folded into the calls.
Each case trains ``sum(Conv(X, W, B) * R)`` for one step's gradients
(``--split-step``, ``@compute_gradients``) and compares dX, dW and dB with
a float64 numpy reference, once through oneDNN and once through the
runtime's reference loops (``AMP_CPU_NAIVE_CONV=1``).
"""

import itertools
import os
import subprocess

import numpy as np
import pytest

# (name, X shape, W shape, attributes as {name: list or int}, bias)
CASES = [
    ("basic", (2, 3, 6, 6), (4, 3, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    ("strided_asymmetric_pads", (2, 3, 7, 6), (4, 3, 3, 3),
     {"pads": [0, 1, 1, 0], "strides": [2, 2]}, False),
    ("dilated", (1, 2, 9, 9), (3, 2, 3, 3), {"dilations": [2, 2], "pads": [2, 2, 2, 2]}, True),
    ("grouped", (2, 4, 5, 5), (6, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, False),
    ("depthwise_strided", (3, 4, 8, 8), (4, 1, 3, 3),
     {"group": 4, "pads": [1, 1, 1, 1], "strides": [2, 2]}, True),
    ("pointwise_strided", (2, 8, 6, 6), (5, 8, 1, 1), {"strides": [2, 2]}, False),
    ("conv_1d", (2, 3, 11), (4, 3, 3), {"strides": [2], "pads": [1, 1]}, True),
    ("conv_3d", (1, 2, 5, 4, 4), (3, 2, 2, 3, 3), {"pads": [0, 1, 1, 1, 1, 0]}, False),
]


def _window(x_shape, w_shape, attrs):
    spatial = len(x_shape) - 2
    strides = attrs.get("strides", [1] * spatial)
    dilations = attrs.get("dilations", [1] * spatial)
    pads = attrs.get("pads", [0] * 2 * spatial)
    kernel = w_shape[2:]
    out = [(x_shape[2 + i] + pads[i] + pads[spatial + i]
            - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(spatial)]
    return strides, dilations, pads, out


def _taps(x_pad, kernel, strides, dilations, out):
    """Yields (kernel index, the X window it multiplies: (N, C, out...))."""
    for k in itertools.product(*[range(s) for s in kernel]):
        index = tuple(slice(k[i] * dilations[i],
                            k[i] * dilations[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                      for i in range(len(kernel)))
        yield k, (slice(None), slice(None)) + index


def reference(x, w, b, r, attrs):
    """Y = Conv(X, W, B) and the gradients of sum(Y * R), in float64."""
    group = attrs.get("group", 1)
    strides, dilations, pads, out = _window(x.shape, w.shape, attrs)
    spatial = x.ndim - 2
    x_pad = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[spatial + i]) for i in range(spatial)])
    n, c = x.shape[:2]
    m = w.shape[0]
    cg, mg = c // group, m // group
    y = np.zeros((n, m) + tuple(out))
    dx_pad = np.zeros_like(x_pad)
    dw = np.zeros_like(w)
    for k, index in _taps(x_pad, w.shape[2:], strides, dilations, out):
        window = x_pad[index]                       # (N, C, out...)
        for g in range(group):
            xs = window[:, g * cg:(g + 1) * cg]     # (N, Cg, out...)
            ws = w[(slice(g * mg, (g + 1) * mg), slice(None)) + k]  # (Mg, Cg)
            rs = r[:, g * mg:(g + 1) * mg]          # (N, Mg, out...)
            y[:, g * mg:(g + 1) * mg] += np.moveaxis(
                np.tensordot(xs, ws, axes=([1], [1])), -1, 1)
            summed = [0] + list(range(2, 2 + spatial))
            dw[(slice(g * mg, (g + 1) * mg), slice(None)) + k] += \
                np.tensordot(rs, xs, axes=(summed, summed))
            dx_window = np.moveaxis(np.tensordot(rs, ws, axes=([1], [0])), -1, 1)
            target = (index[0], slice(g * cg, (g + 1) * cg)) + index[2:]
            dx_pad[target] += dx_window
    if b is not None:
        y += b.reshape((1, m) + (1,) * spatial)
    crop = (slice(None), slice(None)) + tuple(
        slice(pads[i], pads[i] + x.shape[2 + i]) for i in range(spatial))
    db = r.sum(axis=(0,) + tuple(range(2, 2 + spatial))) if b is not None else None
    return y, dx_pad[crop], dw, db


def _literal(array):
    raw = np.ascontiguousarray(array, dtype="<f4").tobytes().hex().upper()
    return f'dense<"0x{raw}"> : {_type(array.shape)}'


def _type(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def _attr_text(attrs):
    parts = []
    for name, value in sorted(attrs.items()):
        if isinstance(value, int):
            parts.append(f"{name} = {value} : i64")
        else:
            parts.append(f"{name} = array<i64: {', '.join(str(v) for v in value)}>")
    return ", ".join(parts)


def _module(x, w, b, r, attrs, out_shape):
    bias = "%b" if b is not None else "%nb"
    bias_type = _type(b.shape) if b is not None else "none"
    out = _type(out_shape)
    lines = ["func.func @main() -> tensor<f32> {",
             f'  %x = amp.constant {{amp.initializer}} {_literal(x)} loc("x")',
             f'  %w = amp.constant {{amp.initializer}} {_literal(w)} loc("w")']
    if b is not None:
        lines.append(f'  %b = amp.constant {{amp.initializer}} {_literal(b)} loc("b")')
    else:
        lines.append("  %nb = amp.none")
    lines += [
        f"  %y = amp.conv %x, %w, {bias} {{{_attr_text(attrs)}}} : "
        f"({_type(x.shape)}, {_type(w.shape)}, {bias_type}) -> {out}",
        f"  %r = amp.constant {_literal(r)}",
        f"  %m = amp.mul %y, %r : ({out}, {out}) -> {out}",
        "  %none = amp.none",
        f"  %loss = amp.reduce_sum %m, %none {{keepdims = 0 : i64}} : ({out}, none) -> tensor<f32>",
        "  return %loss : tensor<f32>",
        "}"]
    return "\n".join(lines) + "\n"


def _run(cmd, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _rel(got, want):
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)


@pytest.mark.parametrize("library", ["onednn", "reference-loops"])
@pytest.mark.parametrize("name,x_shape,w_shape,attrs,has_bias", CASES,
                         ids=[c[0] for c in CASES])
def test_fp32_conv_gradients(name, x_shape, w_shape, attrs, has_bias, library,
                             amp_opt, amp_run, tmp_path):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    b = rng.uniform(-1, 1, (w_shape[0],)).astype(np.float32) if has_bias else None
    _, _, _, out = _window(x_shape, w_shape, attrs)
    out_shape = (x_shape[0], w_shape[0]) + tuple(out)
    r = rng.standard_normal(out_shape).astype(np.float32)
    src = tmp_path / "conv.mlir"
    src.write_text(_module(x, w, b, r, attrs, out_shape))
    train = tmp_path / "conv.train.mlir"
    _run([amp_opt.path, str(src), "--train", "--amp-opt-level=0", "--loss=output",
          "--split-step", "-o", str(train)])
    text = train.read_text()
    assert "amp.conv_weight_grad" in text

    params = [x, w] + ([b] if b is not None else [])
    names = ["x", "w", "b"][:len(params)]
    args = []
    for i, p in enumerate(params):
        np.save(tmp_path / f"p{i}.npy", p)
        args.append(tmp_path / f"p{i}.npy")
    for i, p in enumerate(params):
        np.save(tmp_path / f"g{i}.npy", np.zeros_like(p))
        args.append(tmp_path / f"g{i}.npy")
    np.save(tmp_path / "scale.npy", np.array(1.0, dtype=np.float32))
    args.append(tmp_path / "scale.npy")
    env = dict(os.environ, AMP_CPU_PROFILE="1")
    if library == "reference-loops":
        env["AMP_CPU_NAIVE_CONV"] = "1"
    out_dir = tmp_path / "grads"
    proc = _run([amp_run, str(train), "--entry", "compute_gradients", "--output-dir",
                 str(out_dir)] + [a for path in args for a in ("-i", str(path))], env=env)
    # The forward convolution, dX and dW all ran in the runtime library.
    calls = [line for line in proc.stderr.splitlines() if "conv calls" in line]
    assert calls and int(calls[-1].split(" conv calls")[0].split()[-1]) >= 3, proc.stderr

    want = reference(x.astype(np.float64), w.astype(np.float64),
                     None if b is None else b.astype(np.float64), r.astype(np.float64), attrs)
    for pname, expected in zip(names, want[1:]):
        got = np.load(out_dir / f"{pname}.grad.npy")
        assert got.shape == expected.shape, pname
        assert _rel(got.astype(np.float64), expected) < 1e-5, \
            f"d{pname}: relative L2 error {_rel(got.astype(np.float64), expected):.2e}"
