"""The amp_mlir package on programs in upstream dialects: ``load_mlir`` of a
linalg or TOSA program, ``autocast`` through the precision models (the same
rules as amp-opt, docs/Embedding.md), and, for linalg, ``compile()`` on the
CPU against a float64 numpy reference.
"""

import pathlib

import numpy as np

import amp_mlir

REPO = pathlib.Path(__file__).resolve().parents[3]


def dense(array):
    data = np.ascontiguousarray(array, dtype="<f4").tobytes().hex().upper()
    return f'dense<"0x{data}"> : tensor<{"x".join(map(str, array.shape))}xf32>'


def linalg_mlp(w, b):
    """y = relu(x @ w + b) for x[4,16], as linalg.matmul and a generic."""
    return f"""
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {{
  %w = arith.constant {dense(w)}
  %b = arith.constant {dense(b)}
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}} ins(%mm, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {{
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }} -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}}
"""


def test_linalg_program_autocasts_and_runs():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((16, 8)) / 4).astype(np.float32)
    b = (rng.standard_normal(8) / 4).astype(np.float32)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    ref = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0)

    fp32 = amp_mlir.load_mlir(linalg_mlp(w, b))
    got32 = np.asarray(fp32.compile()(x))
    assert np.linalg.norm(got32 - ref) / np.linalg.norm(ref) < 1e-6

    module = amp_mlir.load_mlir(linalg_mlp(w, b))
    report = amp_mlir.autocast(module, "fp16")
    assert report.summary["flops_low_precision_share"] > 0.9, report.summary
    text = module.to_mlir()
    assert "tensor<4x16xf16>" in text and "arith.truncf" in text and "amp.cast" not in text
    got16 = np.asarray(module.compile()(x))
    error = np.linalg.norm(got16 - ref) / np.linalg.norm(ref)
    # f16 inputs and weights, fp32 accumulation: a few f16 ulps.
    assert 1e-5 < error < 2e-3, error


def test_tosa_program_autocasts():
    source = (REPO / "test" / "Transforms" / "PrecisionModels" / "tosa.mlir").read_text()
    module = amp_mlir.load_mlir(source)
    report = amp_mlir.autocast(module, "bf16")
    text = module.to_mlir()
    assert "tosa.cast" in text and "xbf16>" in text and "amp.cast" not in text
    assert report.summary["ops"]["bf16"] > 0
