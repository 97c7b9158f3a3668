"""Every gradient rule against float64 central finite differences.

Each case is a small float64 amp program whose parameters (constants
marked ``amp.initializer``) feed one op; its scalar output is
``sum(op(...) * R)`` for a fixed random ``R``, so the gradient is the op's
vector-Jacobian product with ``R``. ``amp-opt --train --loss=output
--split-step`` builds ``@compute_gradients`` (the rules under test), which
``amp-run --entry`` evaluates; ``@main`` (the same forward, parameters as
arguments) gives the loss at ``p + h v`` and ``p - h v`` for a random
direction ``v``. The directional derivative ``<grad, v>`` must match the
central difference.
"""

import os
import re
import subprocess

import numpy as np
import pytest

RNG_SEED = 7
H = 1e-6


def _literal(array):
    """An f64 dense literal (hex: exact bits, any shape)."""
    raw = np.ascontiguousarray(array, dtype="<f8").tobytes().hex().upper()
    return f'dense<"0x{raw}"> : {_type(array.shape)}'


def _type(shape, dtype="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


class Case:
    """One op under test: its params, inputs and MLIR body.

    ``body`` uses %p0.. for parameters and %x0.. for inputs and must
    define %out of type ``out_shape`` (f64).
    """

    def __init__(self, name, params, body, out_shape, inputs=(), positive=False,
                 h=H, rtol=1e-5, values=None):
        self.name = name
        self.values = values          # fixed parameter arrays (else random)
        self.h = h
        self.rtol = rtol
        self.params = params          # list of shapes
        self.inputs = list(inputs)    # list of arrays
        self.body = body
        self.out_shape = out_shape
        self.positive = positive


def _params(case, rng):
    if case.values is not None:
        return [np.asarray(v, dtype=np.float64) for v in case.values]
    values = []
    for shape in case.params:
        v = rng.uniform(0.5, 1.5, size=shape) if case.positive else \
            rng.uniform(-1.0, 1.0, size=shape)
        # Keep values away from the kinks of Relu/Abs/Clip/pools.
        v = np.where(np.abs(v) < 0.05, 0.05 * np.sign(v) + v, v)
        values.append(v.astype(np.float64))
    return values


def _module(case, params, weights):
    lines = []
    args = ", ".join(f"%x{i}: {_type(x.shape, _dtype(x))}"
                     for i, x in enumerate(case.inputs))
    lines.append(f"func.func @main({args}) -> tensor<f64> {{")
    for i, p in enumerate(params):
        lines.append(f'  %p{i} = amp.constant {{amp.initializer}} {_literal(p)} loc("p{i}")')
    lines.append("  " + case.body.strip().replace("\n", "\n  "))
    out_type = _type(case.out_shape)
    lines.append(f"  %r = amp.constant {_literal(weights)}")
    lines.append(f"  %m = amp.mul %out, %r : ({out_type}, {out_type}) -> {out_type}")
    lines.append("  %none_r = amp.none")
    lines.append(f"  %loss = amp.reduce_sum %m, %none_r {{keepdims = 0 : i64}} : "
                 f"({out_type}, none) -> tensor<f64>")
    lines.append("  return %loss : tensor<f64>")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dtype(array):
    return {np.dtype(np.float64): "f64", np.dtype(np.int64): "i64",
            np.dtype(np.bool_): "i1"}[array.dtype]


def _run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _check(case, amp_opt, amp_run, tmp_path):
    rng = np.random.default_rng(RNG_SEED)
    params = _params(case, rng)
    weights = rng.standard_normal(case.out_shape).astype(np.float64)
    if not case.out_shape:
        weights = np.array(weights, dtype=np.float64)
    src = tmp_path / f"{case.name}.mlir"
    src.write_text(_module(case, params, weights))
    train = tmp_path / f"{case.name}.train.mlir"
    _run([amp_opt.path, str(src), "--train", "--amp-opt-level=0", "--loss=output",
          "--split-step", "-o", str(train)])

    def save(name, array):
        path = tmp_path / f"{name}.npy"
        np.save(path, array)
        return str(path)

    inputs = [save(f"x{i}", x) for i, x in enumerate(case.inputs)]
    # @compute_gradients(params, grads = 0, grad_scale = 1, inputs).
    args = [save(f"p{i}", p) for i, p in enumerate(params)]
    args += [save(f"g{i}", np.zeros_like(p)) for i, p in enumerate(params)]
    args += [save("scale", np.array(1.0, dtype=np.float32))] + inputs
    out = tmp_path / "grads"
    _run([amp_run, str(train), "--entry", "compute_gradients", "--output-dir", str(out)]
         + [a for path in args for a in ("-i", path)])
    grads = [np.load(out / f"p{i}.grad.npy") for i in range(len(params))]

    directions = [rng.standard_normal(p.shape) for p in params]
    zeros = args[len(params):len(args) - len(inputs)]  # grads and scale

    def loss_at(sign):
        # The training-mode forward (BatchNormalization with batch
        # statistics), as @compute_gradients computes it: its f64 loss.
        shifted = [save(f"q{i}_{sign}", p + sign * case.h * v)
                   for i, (p, v) in enumerate(zip(params, directions))]
        folder = tmp_path / f"loss{sign}"
        _run([amp_run, str(train), "--entry", "compute_gradients",
              "--output-dir", str(folder)]
             + [a for path in shifted + zeros + inputs for a in ("-i", path)])
        return float(np.load(folder / "loss.npy"))

    numeric = (loss_at(+1) - loss_at(-1)) / (2 * case.h)
    analytic = sum(float(np.sum(g * v)) for g, v in zip(grads, directions))
    assert analytic == pytest.approx(numeric, rel=case.rtol, abs=1e-7), \
        f"{case.name}: <grad, v> = {analytic}, finite difference {numeric}"


def _t(*shape):
    return _type(shape)


def _unary(op, shape=(2, 3), attrs="", positive=False):
    t = _t(*shape)
    return Case(op.replace(".", "_") + (attrs and "_attrs"), [shape],
                f"%out = amp.{op} %p0 {attrs} : ({t}) -> {t}", shape, positive=positive)


def _binary(op, a, b, out, positive=False):
    return Case(f"{op}_{'x'.join(map(str, a))}_{'x'.join(map(str, b))}", [a, b],
                f"%out = amp.{op} %p0, %p1 : ({_t(*a)}, {_t(*b)}) -> {_t(*out)}", out,
                positive=positive)


def _unary_on(op, scale, shift, shape=(2, 3), attrs=""):
    """``op`` of ``scale * p + shift`` (keeps p, uniform in [-1, 1], inside
    the op's domain and away from its poles)."""
    t = _t(*shape)
    return Case(f"{op}_on_{scale}x{shift:+}", [shape], f"""
%a = amp.constant dense<{scale}> : tensor<f64>
%b = amp.constant dense<{shift}> : tensor<f64>
%s = amp.mul %p0, %a : ({t}, tensor<f64>) -> {t}
%x = amp.add %s, %b : ({t}, tensor<f64>) -> {t}
%out = amp.{op} %x {attrs} : ({t}) -> {t}""", shape)


def _variadic(op, shapes, out):
    types = ", ".join(_t(*shape) for shape in shapes)
    operands = ", ".join(f"%p{i}" for i in range(len(shapes)))
    return Case(f"{op}_{len(shapes)}", list(shapes),
                f"%out = amp.{op} {operands} : ({types}) -> {_t(*out)}", out)


def _reduce(op, shape, axes, out, keepdims=1, positive=False, values=None, name=None):
    axes_type = f"tensor<{len(axes)}xi64>"
    return Case(name or f"{op}_{'_'.join(map(str, axes))}_keep{keepdims}", [shape], f"""
%axes = amp.constant dense<{list(axes)}> : {axes_type}
%out = amp.{op} %p0, %axes {{keepdims = {keepdims} : i64}} : ({_t(*shape)}, {axes_type}) -> {_t(*out)}""",
                out, positive=positive, values=values)


def _einsum(equation, shapes, out):
    types = ", ".join(_t(*shape) for shape in shapes)
    operands = ", ".join(f"%p{i}" for i in range(len(shapes)))
    name = "einsum_" + "".join(c if c.isalpha() else "_" for c in equation.replace(" ", ""))
    return Case(name, list(shapes), f'%out = amp.einsum {operands} {{equation = "{equation}"}} : '
                f"({types}) -> {_t(*out)}", out)


ROW = np.arange(6, dtype=np.float64).reshape(2, 3) / 7.0

CASES = [
    _unary("relu"), _unary("neg"), _unary("identity"), _unary("sigmoid"), _unary("tanh"),
    _unary("exp"), _unary("log", positive=True), _unary("sqrt", positive=True),
    _unary("reciprocal", positive=True), _unary("abs"), _unary("sin"), _unary("cos"),
    _unary("softplus"), _unary("erf"), _unary("gelu"),
    _unary("gelu", attrs='{approximate = "tanh"}'),
    _unary("leaky_relu", attrs="{alpha = 0.1 : f32}"),
    _unary("hard_sigmoid", attrs="{alpha = 0.3 : f32, beta = 0.4 : f32}"),
    _unary("hard_swish", shape=(2, 3)),
    _unary("tan"), _unary("sinh"), _unary("cosh"), _unary("atan"), _unary("asinh"),
    _unary_on("asin", 0.5, 0.0), _unary_on("acos", 0.5, 0.0), _unary_on("atanh", 0.5, 0.0),
    _unary_on("acosh", 0.5, 2.0), _unary("softsign"), _unary("mish"),
    _unary("swish", attrs="{alpha = 1.7 : f32}"), _unary("elu", attrs="{alpha = 0.6 : f32}"),
    _unary("celu", attrs="{alpha = 0.7 : f32}"),
    _unary("selu", attrs="{alpha = 1.5 : f32, gamma = 1.2 : f32}"),
    _unary("thresholded_relu", attrs="{alpha = 0.3 : f32}"),
    _unary("shrink", attrs="{bias = 0.2 : f32, lambd = 0.4 : f32}"),
    # Piecewise constant: zero gradients (the random values are away from
    # the jumps at integers and halves).
    _unary_on("ceil", 2.0, 0.0), _unary_on("floor", 2.0, 0.0), _unary_on("round", 2.0, 0.0),
    _unary("sign"),
    _binary("prelu", (2, 3), (3,), (2, 3)),
    _variadic("max", [(2, 3), (3,), (2, 1)], (2, 3)),
    _variadic("min", [(2, 3), (2, 3)], (2, 3)),
    _variadic("mean", [(2, 3), (1, 3), (2, 1)], (2, 3)),
    # Ties split the gradient evenly: p0 == p1 everywhere in the forward.
    Case("max_tied", [(2, 3)], f"""
%out = amp.max %p0, %p0 : ({_t(2, 3)}, {_t(2, 3)}) -> {_t(2, 3)}""", (2, 3)),
    _reduce("reduce_max", (2, 3, 4), (1,), (2, 4), keepdims=0),
    _reduce("reduce_min", (2, 3, 4), (0, 2), (1, 3, 1)),
    _reduce("reduce_l1", (2, 3, 4), (2,), (2, 3), keepdims=0),
    _reduce("reduce_l2", (2, 3, 4), (1, 2), (2, 1, 1)),
    _reduce("reduce_sum_square", (2, 3, 4), (0,), (3, 4), keepdims=0),
    _reduce("reduce_log_sum", (2, 3, 4), (1,), (2, 1, 4), positive=True),
    _reduce("reduce_log_sum_exp", (2, 3, 4), (2,), (2, 3), keepdims=0),
    _reduce("reduce_prod", (2, 3, 4), (1,), (2, 1, 4)),
    # Rows with no, one and two zeros (PyTorch's prod_backward cases); the
    # product is multilinear, so central differences are exact at zero.
    _reduce("reduce_prod", (3, 3), (1,), (3,), keepdims=0, name="reduce_prod_zeros",
            values=[[[0.7, -1.2, 0.9], [0.0, 1.3, -0.8], [0.0, 0.6, 0.0]]]),
    _binary("add", (2, 3), (3,), (2, 3)), _binary("sub", (1, 3), (2, 3), (2, 3)),
    _binary("mul", (2, 3), (2, 1), (2, 3)), _binary("div", (2, 3), (3,), (2, 3), positive=True),
    Case("pow_const", [(2, 3)], f"""
%e = amp.constant dense<3.0> : tensor<f64>
%out = amp.pow %p0, %e : ({_t(2, 3)}, tensor<f64>) -> {_t(2, 3)}""", (2, 3), positive=True),
    Case("sum3", [(2, 3), (3,), (2, 1)],
         f"%out = amp.sum %p0, %p1, %p2 : ({_t(2, 3)}, {_t(3)}, {_t(2, 1)}) -> {_t(2, 3)}", (2, 3)),
    Case("where", [(2, 3), (3,)], f"""
%c = amp.constant dense<[[true, false, true], [false, true, false]]> : tensor<2x3xi1>
%out = amp.where %c, %p0, %p1 : (tensor<2x3xi1>, {_t(2, 3)}, {_t(3)}) -> {_t(2, 3)}""", (2, 3)),
    Case("clip", [(2, 3)], f"""
%lo = amp.constant dense<-0.5> : tensor<f64>
%hi = amp.constant dense<0.5> : tensor<f64>
%out = amp.clip %p0, %lo, %hi : ({_t(2, 3)}, tensor<f64>, tensor<f64>) -> {_t(2, 3)}""", (2, 3)),
    Case("cast_f32_roundtrip", [(2, 3)], f"""
%a = amp.cast %p0 {{to = f32}} : ({_t(2, 3)}) -> tensor<2x3xf32>
%b = amp.exp %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
%out = amp.cast %b {{to = f64}} : (tensor<2x3xf32>) -> {_t(2, 3)}""", (2, 3),
         h=1e-2, rtol=1e-3),
]

for ta in (0, 1):
    for tb in (0, 1):
        a = (3, 2) if ta else (2, 3)
        b = (4, 3) if tb else (3, 4)
        CASES.append(Case(f"gemm_tA{ta}_tB{tb}", [a, b, (4,)],
                          f"%out = amp.gemm %p0, %p1, %p2 {{alpha = 0.5 : f32, beta = 2.0 : f32, "
                          f"transA = {ta} : i64, transB = {tb} : i64}} : "
                          f"({_t(*a)}, {_t(*b)}, {_t(4)}) -> {_t(2, 4)}", (2, 4)))
CASES += [
    _einsum("ij,jk->ik", [(2, 3), (3, 4)], (2, 4)),
    _einsum("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)], (2, 2, 3, 5)),
    _einsum("ij->i", [(3, 4)], (3,)),
    _einsum("ij,jk", [(2, 3), (3, 4)], (2, 4)),
    _einsum("ij->ji", [(2, 3)], (3, 2)),
    _einsum("... ij, jk -> ...ik", [(2, 3, 4, 5), (5, 2)], (2, 3, 4, 2)),
    _einsum("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)], (2, 2)),
    _einsum("bij,bj->b", [(2, 3, 4), (2, 4)], (2,)),
    Case("matmul_batched_broadcast", [(2, 3, 4), (4, 5)],
         f"%out = amp.matmul %p0, %p1 : ({_t(2, 3, 4)}, {_t(4, 5)}) -> {_t(2, 3, 5)}", (2, 3, 5)),
    Case("matmul_batch_both", [(1, 3, 4), (2, 4, 2)],
         f"%out = amp.matmul %p0, %p1 : ({_t(1, 3, 4)}, {_t(2, 4, 2)}) -> {_t(2, 3, 2)}", (2, 3, 2)),
    Case("matmul_vector_right", [(2, 3), (3,)],
         f"%out = amp.matmul %p0, %p1 : ({_t(2, 3)}, {_t(3)}) -> {_t(2)}", (2,)),
    Case("matmul_vector_left", [(3,), (3, 2)],
         f"%out = amp.matmul %p0, %p1 : ({_t(3)}, {_t(3, 2)}) -> {_t(2)}", (2,)),
]


def _conv(name, x, w, out, attrs, bias=True):
    params = [x, w] + ([(w[0],)] if bias else [])
    b = "%p2" if bias else "%nb"
    pre = "" if bias else "%nb = amp.none\n"
    bt = _t(w[0]) if bias else "none"
    return Case(name, params, pre + f"%out = amp.conv %p0, %p1, {b} {{{attrs}}} : "
                f"({_t(*x)}, {_t(*w)}, {bt}) -> {_t(*out)}", out)


def _resize(name, x, out, attrs, scales=None, sizes=None, roi=None):
    pre = ""
    if roi is not None:
        pre += f"%roi = amp.constant dense<{roi}> : tensor<{len(roi)}xf32>\n"
        roi_type = f"tensor<{len(roi)}xf32>"
    else:
        pre += "%roi = amp.none\n"
        roi_type = "none"
    if scales is not None:
        pre += f"%scales = amp.constant dense<{scales}> : tensor<{len(scales)}xf32>\n%sizes = amp.none\n"
        types = f"tensor<{len(scales)}xf32>, none"
    else:
        pre += f"%scales = amp.none\n%sizes = amp.constant dense<{sizes}> : tensor<{len(sizes)}xi64>\n"
        types = f"none, tensor<{len(sizes)}xi64>"
    return Case(name, [x], pre + f"%out = amp.resize %p0, %roi, %scales, %sizes {{{attrs}}} : "
                f"({_t(*x)}, {roi_type}, {types}) -> {_t(*out)}", out)


def _conv_transpose(name, x, w, out, attrs, bias=True):
    channels = out[1]
    params = [x, w] + ([(channels,)] if bias else [])
    b = "%p2" if bias else "%nb"
    pre = "" if bias else "%nb = amp.none\n"
    bt = _t(channels) if bias else "none"
    return Case(name, params, pre + f"%out = amp.conv_transpose %p0, %p1, {b} {{{attrs}}} : "
                f"({_t(*x)}, {_t(*w)}, {bt}) -> {_t(*out)}", out)


CASES += [
    _conv("conv_basic", (2, 2, 5, 5), (3, 2, 3, 3), (2, 3, 5, 5),
          "pads = array<i64: 1, 1, 1, 1>"),
    _conv("conv_strided", (2, 2, 6, 5), (3, 2, 3, 3), (2, 3, 3, 3),
          "pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>"),
    _conv("conv_dilated", (1, 2, 7, 7), (2, 2, 3, 3), (1, 2, 3, 3),
          "dilations = array<i64: 2, 2>"),
    _conv("conv_grouped", (2, 4, 5, 5), (6, 2, 3, 3), (2, 6, 3, 3),
          "group = 2 : i64", bias=False),
    _conv("conv_depthwise_strided", (2, 3, 6, 6), (3, 1, 3, 3), (2, 3, 3, 3),
          "group = 3 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>"),
    _conv("conv_1d", (2, 2, 7), (3, 2, 3), (2, 3, 3),
          "strides = array<i64: 2>"),
    _conv_transpose("conv_transpose_strided_padded", (2, 2, 3, 3), (2, 3, 3, 3), (2, 3, 5, 5),
                    "pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>"),
    _conv_transpose("conv_transpose_output_padding", (1, 2, 3, 3), (2, 2, 3, 3), (1, 2, 6, 6),
                    "output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, "
                    "strides = array<i64: 2, 2>", bias=False),
    _conv_transpose("conv_transpose_grouped_dilated", (1, 4, 3, 3), (4, 1, 2, 2), (1, 2, 5, 5),
                    "dilations = array<i64: 2, 2>, group = 2 : i64"),
    _conv_transpose("conv_transpose_output_shape", (1, 2, 3), (2, 2, 3), (1, 2, 6),
                    "output_shape = array<i64: 6>, strides = array<i64: 2>", bias=False),
    _conv_transpose("conv_transpose_same_upper", (1, 2, 4), (2, 3, 3), (1, 3, 8),
                    'auto_pad = "SAME_UPPER", strides = array<i64: 2>'),
    _conv_transpose("conv_transpose_asymmetric_pads", (1, 1, 4, 3), (1, 2, 3, 2), (1, 2, 7, 3),
                    "pads = array<i64: 0, 1, 2, 0>, strides = array<i64: 2, 1>"),
    _resize("resize_nearest_up", (1, 2, 3, 3), (1, 2, 6, 6), "", scales=[1.0, 1.0, 2.0, 2.0]),
    _resize("resize_nearest_floor_down", (1, 1, 5, 6), (1, 1, 3, 4),
            'coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"',
            sizes=[1, 1, 3, 4]),
    _resize("resize_linear_half_pixel", (1, 2, 3, 4), (1, 2, 5, 7), 'mode = "linear"',
            sizes=[1, 2, 5, 7]),
    _resize("resize_linear_align_corners", (2, 1, 4, 3), (2, 1, 7, 5),
            'coordinate_transformation_mode = "align_corners", mode = "linear"',
            sizes=[2, 1, 7, 5]),
    _resize("resize_linear_pytorch_down", (1, 1, 6, 5), (1, 1, 3, 2),
            'coordinate_transformation_mode = "pytorch_half_pixel", mode = "linear"',
            scales=[1.0, 1.0, 0.5, 0.5]),
    _resize("resize_cubic_axes", (1, 2, 4, 5), (1, 2, 4, 8),
            'axes = array<i64: 3>, cubic_coeff_a = -0.5 : f32, mode = "cubic"', sizes=[8]),
    _resize("resize_cubic_exclude_outside", (1, 1, 4, 4), (1, 1, 6, 6),
            'exclude_outside = 1 : i64, mode = "cubic"', scales=[1.0, 1.0, 1.5, 1.5]),
    _resize("resize_tf_crop", (1, 1, 4, 5), (1, 1, 3, 3),
            'axes = array<i64: 2, 3>, coordinate_transformation_mode = "tf_crop_and_resize", '
            'extrapolation_value = 2.0 : f32, mode = "linear"',
            sizes=[3, 3], roi=[0.2, -0.1, 0.9, 1.2]),
    Case("max_pool", [(2, 2, 4, 4)],
         f"%out, %idx = amp.max_pool %p0 {{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : "
         f"({_t(2, 2, 4, 4)}) -> ({_t(2, 2, 2, 2)}, tensor<2x2x2x2xi64>)", (2, 2, 2, 2)),
    Case("max_pool_overlapping_padded", [(1, 2, 5, 5)],
         f"%out, %idx = amp.max_pool %p0 {{kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}} : "
         f"({_t(1, 2, 5, 5)}) -> ({_t(1, 2, 3, 3)}, tensor<1x2x3x3xi64>)", (1, 2, 3, 3)),
    Case("average_pool", [(2, 2, 4, 4)],
         f"%out = amp.average_pool %p0 {{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : "
         f"({_t(2, 2, 4, 4)}) -> {_t(2, 2, 2, 2)}", (2, 2, 2, 2)),
    Case("average_pool_padded_exclude", [(1, 2, 5, 5)],
         f"%out = amp.average_pool %p0 {{kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}} : "
         f"({_t(1, 2, 5, 5)}) -> {_t(1, 2, 3, 3)}", (1, 2, 3, 3)),
    Case("average_pool_padded_include", [(1, 2, 5, 4)],
         f"%out = amp.average_pool %p0 {{count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 2>, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 1>}} : "
         f"({_t(1, 2, 5, 4)}) -> {_t(1, 2, 3, 4)}", (1, 2, 3, 4)),
    Case("pad_constant", [(2, 3)], f"""
%pads = amp.constant dense<[1, 0, 0, 2]> : tensor<4xi64>
%cv = amp.constant dense<0.5> : tensor<f64>
%n = amp.none
%out = amp.pad %p0, %pads, %cv, %n : ({_t(2, 3)}, tensor<4xi64>, tensor<f64>, none) -> {_t(3, 5)}""",
         (3, 5)),
    Case("pad_reflect", [(3, 5)], f"""
%pads = amp.constant dense<[1, 2, 2, 1]> : tensor<4xi64>
%cv = amp.none
%n = amp.none
%out = amp.pad %p0, %pads, %cv, %n {{mode = "reflect"}} : ({_t(3, 5)}, tensor<4xi64>, none, none) -> {_t(6, 8)}""",
         (6, 8)),
    Case("pad_reflect_axes", [(2, 4)], f"""
%pads = amp.constant dense<[2, 1]> : tensor<2xi64>
%cv = amp.none
%n = amp.none
%ax = amp.constant dense<[-1]> : tensor<1xi64>
%out = amp.pad %p0, %pads, %cv, %ax {{mode = "reflect"}} : ({_t(2, 4)}, tensor<2xi64>, none, tensor<1xi64>) -> {_t(2, 7)}""",
         (2, 7)),
    Case("pad_edge", [(3, 4)], f"""
%pads = amp.constant dense<[2, 0, 1, 3]> : tensor<4xi64>
%cv = amp.none
%n = amp.none
%out = amp.pad %p0, %pads, %cv, %n {{mode = "edge"}} : ({_t(3, 4)}, tensor<4xi64>, none, none) -> {_t(6, 7)}""",
         (6, 7)),
    Case("pad_wrap", [(3, 4)], f"""
%pads = amp.constant dense<[1, 2, 2, 3]> : tensor<4xi64>
%cv = amp.none
%n = amp.none
%out = amp.pad %p0, %pads, %cv, %n {{mode = "wrap"}} : ({_t(3, 4)}, tensor<4xi64>, none, none) -> {_t(6, 9)}""",
         (6, 9)),
    Case("pad_constant_negative", [(4, 5)], f"""
%pads = amp.constant dense<[-1, 2, 1, -2]> : tensor<4xi64>
%cv = amp.none
%n = amp.none
%out = amp.pad %p0, %pads, %cv, %n {{mode = "constant"}} : ({_t(4, 5)}, tensor<4xi64>, none, none) -> {_t(4, 5)}""",
         (4, 5)),
    Case("global_average_pool", [(2, 3, 2, 2)],
         f"%out = amp.global_average_pool %p0 : ({_t(2, 3, 2, 2)}) -> {_t(2, 3, 1, 1)}", (2, 3, 1, 1)),
    Case("batch_norm_training", [(4, 3, 2, 2), (3,), (3,)], f"""
%mean = amp.constant dense<0.0> : {_t(3)}
%var = amp.constant dense<1.0> : {_t(3)}
%out, %rm, %rv = amp.batch_normalization %p0, %p1, %p2, %mean, %var {{training_mode = 1 : i64}} : ({_t(4, 3, 2, 2)}, {_t(3)}, {_t(3)}, {_t(3)}, {_t(3)}) -> ({_t(4, 3, 2, 2)}, {_t(3)}, {_t(3)})""",
         (4, 3, 2, 2)),
    Case("batch_norm_eval", [(2, 3, 2), (3,), (3,)], f"""
%mean = amp.constant dense<[0.1, -0.2, 0.3]> : {_t(3)}
%var = amp.constant dense<[0.5, 1.5, 2.0]> : {_t(3)}
%out = amp.batch_normalization %p0, %p1, %p2, %mean, %var : ({_t(2, 3, 2)}, {_t(3)}, {_t(3)}, {_t(3)}, {_t(3)}) -> {_t(2, 3, 2)}""",
         (2, 3, 2)),
    Case("layer_norm", [(2, 3, 4), (4,), (4,)],
         f"%out, %mu, %inv = amp.layer_normalization %p0, %p1, %p2 : "
         f"({_t(2, 3, 4)}, {_t(4)}, {_t(4)}) -> ({_t(2, 3, 4)}, tensor<2x3x1xf32>, tensor<2x3x1xf32>)",
         (2, 3, 4)),
    Case("layer_norm_axis1", [(2, 3, 4), (3, 4)],
         f"%nb = amp.none\n%out, %mu, %inv = amp.layer_normalization %p0, %p1, %nb {{axis = 1 : i64}} : "
         f"({_t(2, 3, 4)}, {_t(3, 4)}, none) -> ({_t(2, 3, 4)}, tensor<2x1x1xf32>, tensor<2x1x1xf32>)",
         (2, 3, 4)),
    Case("instance_norm", [(2, 3, 2, 3), (3,), (3,)],
         f"%out = amp.instance_normalization %p0, %p1, %p2 {{epsilon = 0.01 : f32}} : "
         f"({_t(2, 3, 2, 3)}, {_t(3)}, {_t(3)}) -> {_t(2, 3, 2, 3)}", (2, 3, 2, 3)),
    Case("group_norm_per_channel", [(2, 4, 3), (4,), (4,)],
         f"%out = amp.group_normalization %p0, %p1, %p2 {{num_groups = 2 : i64}} : "
         f"({_t(2, 4, 3)}, {_t(4)}, {_t(4)}) -> {_t(2, 4, 3)}", (2, 4, 3)),
    Case("group_norm_per_group", [(2, 6, 2, 2), (3,), (3,)],
         f"%out = amp.group_normalization %p0, %p1, %p2 {{epsilon = 0.001 : f32, num_groups = 3 : i64}} : "
         f"({_t(2, 6, 2, 2)}, {_t(3)}, {_t(3)}) -> {_t(2, 6, 2, 2)}", (2, 6, 2, 2)),
    Case("rms_norm", [(2, 3, 4), (4,)],
         f"%out = amp.rms_normalization %p0, %p1 : ({_t(2, 3, 4)}, {_t(4)}) -> {_t(2, 3, 4)}",
         (2, 3, 4)),
    Case("rms_norm_axis1", [(2, 3, 4), (3, 1)],
         f"%out = amp.rms_normalization %p0, %p1 {{axis = 1 : i64, epsilon = 0.01 : f32}} : "
         f"({_t(2, 3, 4)}, {_t(3, 1)}) -> {_t(2, 3, 4)}", (2, 3, 4)),
    Case("softmax", [(2, 5)], f"%out = amp.softmax %p0 : ({_t(2, 5)}) -> {_t(2, 5)}", (2, 5)),
    Case("softmax_axis0", [(3, 2)],
         f"%out = amp.softmax %p0 {{axis = 0 : i64}} : ({_t(3, 2)}) -> {_t(3, 2)}", (3, 2)),
    Case("log_softmax", [(2, 5)], f"%out = amp.log_softmax %p0 : ({_t(2, 5)}) -> {_t(2, 5)}", (2, 5)),
    Case("reduce_mean_keep", [(2, 3, 4)], f"""
%axes = amp.constant dense<[1]> : tensor<1xi64>
%out = amp.reduce_mean %p0, %axes : ({_t(2, 3, 4)}, tensor<1xi64>) -> {_t(2, 1, 4)}""", (2, 1, 4)),
    Case("reduce_mean_drop", [(2, 3, 4)], f"""
%axes = amp.constant dense<[0, 2]> : tensor<2xi64>
%out = amp.reduce_mean %p0, %axes {{keepdims = 0 : i64}} : ({_t(2, 3, 4)}, tensor<2xi64>) -> {_t(3)}""", (3,)),
    Case("reduce_sum_all", [(2, 3)], f"""
%n = amp.none
%out = amp.reduce_sum %p0, %n : ({_t(2, 3)}, none) -> {_t(1, 1)}""", (1, 1)),
    Case("softmax_cross_entropy", [(4, 3)], f"""
%labels = amp.constant dense<[0, 2, 1, 2]> : tensor<4xi64>
%nw = amp.none
%l, %lp = amp.softmax_cross_entropy_loss %p0, %labels, %nw : ({_t(4, 3)}, tensor<4xi64>, none) -> (tensor<f64>, {_t(4, 3)})
%s = amp.constant dense<[1]> : tensor<1xi64>
%out = amp.reshape %l, %s : (tensor<f64>, tensor<1xi64>) -> {_t(1)}""", (1,)),
    Case("softmax_cross_entropy_log_prob", [(4, 3)], f"""
%labels = amp.constant dense<[0, 2, 1, 2]> : tensor<4xi64>
%nw = amp.none
%l, %out = amp.softmax_cross_entropy_loss %p0, %labels, %nw {{reduction = "sum"}} : ({_t(4, 3)}, tensor<4xi64>, none) -> (tensor<f64>, {_t(4, 3)})""",
         (4, 3)),
    Case("nll_loss", [(4, 3)], f"""
%labels = amp.constant dense<[0, 2, 1, 2]> : tensor<4xi64>
%nw = amp.none
%out = amp.negative_log_likelihood_loss %p0, %labels, %nw {{reduction = "none"}} : ({_t(4, 3)}, tensor<4xi64>, none) -> {_t(4)}""",
         (4,)),
    Case("reshape", [(2, 6)], f"""
%s = amp.constant dense<[3, 4]> : tensor<2xi64>
%out = amp.reshape %p0, %s : ({_t(2, 6)}, tensor<2xi64>) -> {_t(3, 4)}""", (3, 4)),
    Case("flatten", [(2, 3, 2)],
         f"%out = amp.flatten %p0 : ({_t(2, 3, 2)}) -> {_t(2, 6)}", (2, 6)),
    Case("transpose", [(2, 3, 4)],
         f"%out = amp.transpose %p0 {{perm = array<i64: 2, 0, 1>}} : ({_t(2, 3, 4)}) -> {_t(4, 2, 3)}",
         (4, 2, 3)),
    Case("squeeze_unsqueeze", [(2, 1, 3)], f"""
%a = amp.constant dense<[1]> : tensor<1xi64>
%s = amp.squeeze %p0, %a : ({_t(2, 1, 3)}, tensor<1xi64>) -> {_t(2, 3)}
%b = amp.constant dense<[0]> : tensor<1xi64>
%out = amp.unsqueeze %s, %b : ({_t(2, 3)}, tensor<1xi64>) -> {_t(1, 2, 3)}""", (1, 2, 3)),
    Case("concat", [(2, 3), (2, 1)],
         f"%out = amp.concat %p0, %p1 {{axis = 1 : i64}} : ({_t(2, 3)}, {_t(2, 1)}) -> {_t(2, 4)}", (2, 4)),
    Case("slice", [(4, 5)], f"""
%st = amp.constant dense<[1, 0]> : tensor<2xi64>
%en = amp.constant dense<[3, 4]> : tensor<2xi64>
%ax = amp.constant dense<[0, 1]> : tensor<2xi64>
%n = amp.none
%out = amp.slice %p0, %st, %en, %ax, %n : ({_t(4, 5)}, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, none) -> {_t(2, 4)}""",
         (2, 4)),
    Case("slice_steps", [(5, 7, 2)], f"""
%st = amp.constant dense<[0, 1]> : tensor<2xi64>
%en = amp.constant dense<[5, 7]> : tensor<2xi64>
%ax = amp.constant dense<[0, 1]> : tensor<2xi64>
%sp = amp.constant dense<[2, 3]> : tensor<2xi64>
%out = amp.slice %p0, %st, %en, %ax, %sp : ({_t(5, 7, 2)}, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> {_t(3, 2, 2)}""",
         (3, 2, 2)),
    Case("slice_negative_steps", [(6, 7, 2)], f"""
%st = amp.constant dense<[5, -2]> : tensor<2xi64>
%en = amp.constant dense<[-9223372036854775807, 0]> : tensor<2xi64>
%ax = amp.constant dense<[0, 1]> : tensor<2xi64>
%sp = amp.constant dense<[-2, -1]> : tensor<2xi64>
%out = amp.slice %p0, %st, %en, %ax, %sp : ({_t(6, 7, 2)}, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> {_t(3, 5, 2)}""",
         (3, 5, 2)),
    Case("slice_reverse_step3", [(8, 3)], f"""
%st = amp.constant dense<[6]> : tensor<1xi64>
%en = amp.constant dense<[0]> : tensor<1xi64>
%ax = amp.constant dense<[0]> : tensor<1xi64>
%sp = amp.constant dense<[-3]> : tensor<1xi64>
%out = amp.slice %p0, %st, %en, %ax, %sp : ({_t(8, 3)}, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> {_t(2, 3)}""",
         (2, 3)),
    Case("gather_embedding", [(5, 3)], f"""
%i = amp.constant dense<[[0, 4], [4, 2], [-1, 0]]> : tensor<3x2xi64>
%out = amp.gather %p0, %i : ({_t(5, 3)}, tensor<3x2xi64>) -> {_t(3, 2, 3)}""", (3, 2, 3)),
    Case("gather_axis1", [(2, 4, 3)], f"""
%i = amp.constant dense<[3, 1, 3]> : tensor<3xi64>
%out = amp.gather %p0, %i {{axis = 1 : i64}} : ({_t(2, 4, 3)}, tensor<3xi64>) -> {_t(2, 3, 3)}""",
         (2, 3, 3)),
    Case("expand", [(3, 1)], f"""
%s = amp.constant dense<[2, 3, 4]> : tensor<3xi64>
%out = amp.expand %p0, %s : ({_t(3, 1)}, tensor<3xi64>) -> {_t(2, 3, 4)}""", (2, 3, 4)),
    Case("tile", [(2, 3)], f"""
%reps = amp.constant dense<[2, 3]> : tensor<2xi64>
%out = amp.tile %p0, %reps : ({_t(2, 3)}, tensor<2xi64>) -> {_t(4, 9)}""", (4, 9)),
    Case("cumsum", [(3, 4)], f"""
%a = amp.constant dense<1> : tensor<i64>
%out = amp.cumsum %p0, %a : ({_t(3, 4)}, tensor<i64>) -> {_t(3, 4)}""", (3, 4)),
    Case("cumsum_exclusive_reverse", [(3, 4)], f"""
%a = amp.constant dense<0> : tensor<i64>
%out = amp.cumsum %p0, %a {{exclusive = 1 : i64, reverse = 1 : i64}} : ({_t(3, 4)}, tensor<i64>) -> {_t(3, 4)}""",
         (3, 4)),
    # Index 0 of row 0 twice, a negative index: both land.
    Case("gather_elements", [(3, 4)], f"""
%i = amp.constant dense<[[0, 0, 3], [1, -1, 2], [3, 2, 0]]> : tensor<3x3xi64>
%out = amp.gather_elements %p0, %i {{axis = 1 : i64}} : ({_t(3, 4)}, tensor<3x3xi64>) -> {_t(3, 3)}""",
         (3, 3)),
    Case("gather_nd", [(3, 4, 2)], f"""
%i = amp.constant dense<[[0, 1], [2, 3], [0, 1]]> : tensor<3x2xi64>
%out = amp.gather_nd %p0, %i : ({_t(3, 4, 2)}, tensor<3x2xi64>) -> {_t(3, 2)}""", (3, 2)),
    Case("scatter_nd", [(4, 3), (2, 3)], f"""
%i = amp.constant dense<[[2], [0]]> : tensor<2x1xi64>
%out = amp.scatter_nd %p0, %i, %p1 : ({_t(4, 3)}, tensor<2x1xi64>, {_t(2, 3)}) -> {_t(4, 3)}""",
         (4, 3)),
    Case("scatter_nd_add", [(4, 3), (3, 3)], f"""
%i = amp.constant dense<[[2], [0], [2]]> : tensor<3x1xi64>
%out = amp.scatter_nd %p0, %i, %p1 {{reduction = "add"}} : ({_t(4, 3)}, tensor<3x1xi64>, {_t(3, 3)}) -> {_t(4, 3)}""",
         (4, 3)),
    Case("scatter_elements", [(3, 4), (3, 2)], f"""
%i = amp.constant dense<[[1, 3], [0, 2], [-1, 1]]> : tensor<3x2xi64>
%out = amp.scatter_elements %p0, %i, %p1 {{axis = 1 : i64}} : ({_t(3, 4)}, tensor<3x2xi64>, {_t(3, 2)}) -> {_t(3, 4)}""",
         (3, 4)),
    Case("scatter_elements_add", [(3, 4), (2, 4)], f"""
%i = amp.constant dense<[[0, 2, 2, 1], [0, 1, 2, 1]]> : tensor<2x4xi64>
%out = amp.scatter_elements %p0, %i, %p1 {{reduction = "add"}} : ({_t(3, 4)}, tensor<2x4xi64>, {_t(2, 4)}) -> {_t(3, 4)}""",
         (3, 4)),
    Case("split", [(2, 5)], f"""
%sz = amp.constant dense<[2, 3]> : tensor<2xi64>
%a, %b = amp.split %p0, %sz {{axis = 1 : i64, num_outputs = 2 : i64}} : ({_t(2, 5)}, tensor<2xi64>) -> ({_t(2, 2)}, {_t(2, 3)})
%out = amp.mul %b, %b : ({_t(2, 3)}, {_t(2, 3)}) -> {_t(2, 3)}""", (2, 3)),
]


def _attention_case(name, shapes, result_types, out, attrs="", mask=None, inputs=(),
                    past=False, result=0):
    """ONNX Attention (amp-decompose's graph, differentiated through).

    ``shapes`` are Q, K, V (then past_key, past_value with ``past``), all
    parameters; a ``mask`` shape adds a float attn_mask parameter;
    ``inputs`` are (operand slot, array) pairs fed as inputs (a bool mask,
    nonpad_kv_seqlen). ``result`` picks the output: 0 = Y, 3 = qk output."""
    params = list(shapes)
    operands = {i: (f"%p{i}", _t(*shapes[i])) for i in range(3)}
    if past:
        operands[4] = ("%p3", _t(*shapes[3]))
        operands[5] = ("%p4", _t(*shapes[4]))
    if mask is not None:
        params.append(mask)
        operands[3] = (f"%p{len(params) - 1}", _t(*mask))
    for index, (slot, array) in enumerate(inputs):
        operands[slot] = (f"%x{index}", _type(array.shape, _dtype(array)))
    values, types = zip(*[operands.get(slot, ("%n", "none")) for slot in range(7)])
    results = ", ".join(_t(*r) for r in result_types)
    picked = ["%y", "%pk", "%pv", "%qk"][result]
    body = (f"%n = amp.none\n%y, %pk, %pv, %qk = amp.attention {', '.join(values)} "
            f"{attrs} : ({', '.join(types)}) -> ({results})\n"
            f"%out = amp.identity {picked} : ({_t(*out)}) -> {_t(*out)}")
    return Case(name, params, body, out, inputs=[array for _, array in inputs])


CASES += [
    # Q (1, 2, 3, 4), K (1, 2, 5, 4), V (1, 2, 5, 3): plain scaled attention.
    _attention_case("attention_4d", [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)],
                    [(1, 2, 3, 3), (1, 2, 5, 4), (1, 2, 5, 3), (1, 2, 3, 5)], (1, 2, 3, 3)),
    # 3-d inputs, 4 query heads over 2 key/value heads, a KV cache and the
    # causal mask offset by the past (2 keys).
    _attention_case("attention_3d_gqa_causal_past",
                    [(1, 3, 8), (1, 3, 4), (1, 3, 6), (1, 2, 2, 2), (1, 2, 2, 3)],
                    [(1, 3, 12), (1, 2, 5, 2), (1, 2, 5, 3), (1, 4, 3, 5)], (1, 3, 12),
                    attrs="{is_causal = 1 : i64, kv_num_heads = 2 : i64, q_num_heads = 4 : i64}",
                    past=True),
    # A float mask (a parameter too), softcap, and the biased scores out.
    _attention_case("attention_mask_softcap_qk_biased",
                    [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)],
                    [(1, 2, 3, 3), (1, 2, 5, 4), (1, 2, 5, 3), (1, 2, 3, 5)], (1, 2, 3, 5),
                    attrs="{qk_matmul_output_mode = 2 : i64, softcap = 2.0 : f32}",
                    mask=(3, 5), result=3),
    # A bool mask shorter than the keys (padded with "masked"), a sliding
    # window and an explicit scale; P (mode 3) out.
    _attention_case("attention_bool_mask_window_scale",
                    [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)],
                    [(1, 2, 3, 3), (1, 2, 5, 4), (1, 2, 5, 3), (1, 2, 3, 5)], (1, 2, 3, 5),
                    attrs="{left_window_size = 2 : i64, qk_matmul_output_mode = 3 : i64, "
                          "right_window_size = 1 : i64, scale = 0.5 : f32}",
                    inputs=[(3, np.array([[1, 1, 0, 1], [1, 1, 1, 1], [0, 1, 1, 1]], dtype=np.bool_))],
                    result=3),
    # An external cache: per-batch valid lengths (3 and 5) with the causal
    # frontier at nonpad - q_len.
    _attention_case("attention_causal_nonpad",
                    [(2, 2, 2, 4), (2, 2, 5, 4), (2, 2, 5, 4)],
                    [(2, 2, 2, 4), (2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 2, 5)], (2, 2, 2, 4),
                    attrs="{is_causal = 1 : i64}",
                    inputs=[(6, np.array([3, 5], dtype=np.int64))]),
    # A fully masked query row: Y is 0 there and the gradients stay finite.
    _attention_case("attention_fully_masked_row",
                    [(1, 1, 2, 4), (1, 1, 3, 4), (1, 1, 3, 2)],
                    [(1, 1, 2, 2), (1, 1, 3, 4), (1, 1, 3, 2), (1, 1, 2, 3)], (1, 1, 2, 2),
                    inputs=[(3, np.array([[False, False, False], [True, False, True]]))]),
]



@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gradient_matches_finite_differences(case, amp_opt, amp_run, tmp_path):
    _check(case, amp_opt, amp_run, tmp_path)


def _ods_mnemonics(repo):
    ods = open(os.path.join(repo, "include", "amp", "Dialect", "Amp", "IR",
                            "AmpOps.td")).read()
    return {f"{m.group(1)}Op": m.group(2) for m in re.finditer(
        r'def Amp_(\w+)Op\s*:\s*\w+<\s*"[^"]*",\s*"(\w+)"', ods)}, ods


def _registered_rules(repo):
    """The ops with a gradient rule: the C++ ``attachGradientModels<...>``
    lists and the TableGen ``GradientRule<"...">`` records."""
    registered = set()
    folder = os.path.join(repo, "lib", "Dialect", "Amp", "Gradients")
    for name in os.listdir(folder):
        text = open(os.path.join(folder, name)).read()
        for block in re.findall(r"attachGradientModels<([^>]*)>", text, re.S):
            registered |= {op.strip() for op in block.split(",") if op.strip()}
        if name.endswith(".td"):
            registered |= set(re.findall(r'GradientRule<"(\w+)"', text))
    return registered


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def test_every_rule_is_covered():
    """Each op with a rule (C++ or TableGen, lib/Dialect/Amp/Gradients) has a case."""
    registered = _registered_rules(REPO)
    # The scan must see both kinds of rule (a broken pattern would make
    # this test pass vacuously).
    assert {"ReluOp", "PReluOp", "ConvOp", "GemmOp"} <= registered, registered
    mnemonic, _ = _ods_mnemonics(REPO)
    mnemonic = {name: mnemonic[name] for name in registered}
    tested = " ".join(c.body for c in CASES)
    untested = sorted(name for name, m in mnemonic.items()
                      if f"amp.{m} " not in tested and f"amp.{m}\n" not in tested)
    # Dropout's rule is the identity of eval mode (tested in lit).
    assert untested == ["DropoutOp"], untested


# Unary ops that are not differentiable activations: boolean/bitwise ops
# and the normalisations, which are listed with the normalisation rules.
NOT_ACTIVATIONS = {"BitwiseNotOp", "NotOp", "LpNormalizationOp",
                   "MeanVarianceNormalizationOp", "LRNOp"}


def test_every_elementwise_activation_has_a_rule():
    """Every unary op of the dialect (AmpOps.td's Amp_UnaryOp defs) but the
    listed non-activations has a gradient rule."""
    _, ods = _ods_mnemonics(REPO)
    unary = {f"{name}Op" for name in re.findall(r"def Amp_(\w+)Op\s*:\s*Amp_UnaryOp<", ods)}
    assert len(unary) > 30, unary
    missing = sorted(unary - NOT_ACTIVATIONS - _registered_rules(REPO))
    assert missing == [], f"unary ops without a gradient rule: {missing}"
