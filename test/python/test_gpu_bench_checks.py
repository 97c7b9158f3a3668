"""bench/gpu/gpu_bench.py's output checks, on the CPU.

The GPU benchmark used to time its artifacts without looking at their
outputs and turned load or run errors into "—" with exit 0. Its checks
are plain numpy functions; each is shown here to catch a planted wrong
result (a transposed operand, a shifted row, NaN, a constant output) and to
pass the right one, so that the GPU run can fail for the right reasons.
"""

import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench", "gpu"))

import gpu_bench  # noqa: E402  (needs the path above; imports no torch or CUDA)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_gemm_check(dtype):
    rng = np.random.default_rng(0)
    (a_stored, a), (b_stored, b) = (gpu_bench.rounded_normal(rng, (1, 64, 96), dtype),
                                    gpu_bench.rounded_normal(rng, (1, 96, 64), dtype))
    assert a_stored.dtype == (np.uint16 if dtype == "bf16" else np.float16)
    expected = (a.astype(np.float64) @ b.astype(np.float64))
    # fp32 accumulation in another order: well inside the bound.
    actual = (a @ b).astype(np.float32)
    assert gpu_bench.check_gemm(actual, expected, dtype) is None
    # Planted: B read transposed (a wrong transpose flag or leading dimension).
    wrong = a[0, :, :64] @ np.swapaxes(b, 1, 2)[0, :64, :64]
    assert "relative L2" in gpu_bench.check_gemm(wrong[None], expected, dtype)
    # Planted: one 8x8 tile (of 64x64) scaled by 1.5, as a wrong epilogue
    # on one thread block would.
    off = actual.copy()
    off[0, :8, :8] *= 1.5
    assert gpu_bench.check_gemm(off, expected, dtype) is not None
    nan = actual.copy()
    nan[0, 3, 3] = np.nan
    assert gpu_bench.check_gemm(nan, expected, dtype) is not None
    assert gpu_bench.check_gemm(actual[:, :32], expected, dtype) is not None


def test_bf16_rounding():
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5, 3.0e38], dtype=np.float32)
    bits = gpu_bench.bf16_bits(x)
    # Ties go to even; 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
    assert list(bits[:4]) == [0x3F80, 0x3F80, 0x3F82, 0xC020]
    back = gpu_bench.from_bf16_bits(bits)
    assert back[0] == 1.0 and back[2] == 1 + 2 ** -6
    assert np.all(np.abs(back - x) <= np.abs(x) * 2 ** -8)


def test_kernel_check():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 256)).astype(np.float32)
    softmax = np.exp(x - x.max(-1, keepdims=True))
    softmax /= softmax.sum(-1, keepdims=True)
    assert gpu_bench.check_elementwise(softmax.astype(np.float16), softmax) is None
    # Planted: the rows of the result shifted by one.
    message = gpu_bench.check_elementwise(np.roll(softmax, 1, axis=0).astype(np.float16),
                                          softmax)
    assert message and "out of tolerance" in message
    inf = softmax.astype(np.float16)
    inf[2, 2] = np.inf
    assert gpu_bench.check_elementwise(inf, softmax) is not None
    assert gpu_bench.check_elementwise(softmax[:8], softmax) is not None


def test_outputs_without_reference():
    rng = np.random.default_rng(0)
    assert gpu_bench.check_plausible([rng.standard_normal((4, 10))]) is None
    assert "every value" in gpu_bench.check_plausible([np.zeros((4, 10))])
    bad = rng.standard_normal((4, 10))
    bad[1, 1] = np.nan
    assert "non-finite" in gpu_bench.check_plausible([bad])


def test_failures_are_in_the_table():
    table = gpu_bench.markdown([], 1000.0, [], [], "test", ["GEMM f16 8x8x8: boom"])
    assert "Failures (wrong results, load or run errors): 1" in table
    assert "- GEMM f16 8x8x8: boom" in table
