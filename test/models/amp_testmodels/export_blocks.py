#!/usr/bin/python3
"""Export small multi-op torch blocks to ONNX: the opset-sensitive operator
forms that the ONNX writer must write back correctly at every target opset.

Runs under Debian's interpreter (``/usr/bin/python3``) with Debian's
``python3-torch`` (1.13), like ``export_torch.py``; the ``onnx`` package is
not needed. Every block is built after ``torch.manual_seed(0)``, put in eval
mode (BatchNorm gets non-trivial running statistics first) and exported with
static shapes, ``do_constant_folding=True``, inputs ``input_0``, ... and
outputs ``output_0``, ... to ``OUT/<name>_opset<N>.onnx`` for each requested
opset. A ``manifest.json`` in ``OUT`` lists ``name -> {opset: file}``.

Blocks (each a few ops that torch exports differently per opset):

- ``attention``: a post-norm encoder block, ``nn.MultiheadAttention`` with a
  ``key_padding_mask`` input (bool), LayerNorm and a ReLU feed-forward layer
  (issue 10: at opset 11 the attention's ``Softmax(axis=2)`` on a rank-3
  tensor must keep its axis).
- ``layernorm``, ``batchnorm``, ``groupnorm``, ``instancenorm``: a norm
  between two convolutions / linear layers.
- ``pooling``: MaxPool and AvgPool with ``ceil_mode`` and padding
  (``count_include_pad`` both ways), global max and average pools.
- ``softmax_axes``: Softmax and LogSoftmax over non-last axes of rank-3 and
  rank-4 tensors (and the last axis, for contrast).
- ``resize``: nearest upsampling, bilinear with and without
  ``align_corners``, bicubic, and a downscale by a fractional factor.

Example::

    /usr/bin/python3 test/models/amp_testmodels/export_blocks.py \
        --out /tmp/amp-models/blocks --opsets 11,13,17
"""

import argparse
import os
import sys
import warnings

import torch

from export_torch import load_manifest, save_manifest
import torch.nn.functional as F
from torch import nn

MIN_OPSET = 11
MAX_OPSET = 17  # torch 1.13's TorchScript exporter


class AttentionBlock(nn.Module):
    """nn.TransformerEncoderLayer written out: MHA with key_padding_mask,
    post-norm LayerNorms and a ReLU feed-forward layer (batch first)."""

    def __init__(self, d_model=64, n_heads=4, d_ff=128):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, key_padding_mask):
        attended, _ = self.attn(x, x, x, key_padding_mask=key_padding_mask,
                                need_weights=False)
        x = self.norm1(x + attended)
        return self.norm2(x + self.ff(x))


def _attention():
    x = torch.randn(2, 10, 64)
    mask = torch.zeros(2, 10, dtype=torch.bool)
    mask[0, 7:] = True  # first sequence padded after 7 tokens
    mask[1, 9:] = True
    return AttentionBlock(), (x, mask)


class ConvNorm(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.norm = norm
        self.conv2 = nn.Conv2d(16, 8, 3, padding=1)

    def forward(self, x):
        return self.conv2(torch.relu(self.norm(self.conv1(x))))


def _layernorm():
    model = nn.Sequential(nn.Linear(32, 48), nn.LayerNorm(48), nn.GELU(), nn.Linear(48, 16),
                          nn.LayerNorm(16, eps=1e-3))
    # (torch 1.13 writes an invalid LayerNormalization at opset 17 for
    # elementwise_affine=False: an empty scale input.)
    return model, (torch.randn(2, 5, 32),)


def _batchnorm():
    norm = nn.BatchNorm2d(16)
    with torch.no_grad():
        norm.running_mean.uniform_(-0.5, 0.5)
        norm.running_var.uniform_(0.5, 2.0)
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.2, 0.2)
    return ConvNorm(norm), (torch.randn(2, 3, 12, 12),)


def _groupnorm():
    return ConvNorm(nn.GroupNorm(4, 16)), (torch.randn(2, 3, 12, 12),)


def _instancenorm():
    return ConvNorm(nn.InstanceNorm2d(16, affine=True)), (torch.randn(2, 3, 12, 12),)


class Pooling(nn.Module):
    def forward(self, x):
        a = F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)
        b = F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        c = F.avg_pool2d(x, 2, stride=2, padding=1, ceil_mode=False, count_include_pad=True)
        d = F.max_pool2d(x, 2, stride=2, ceil_mode=True)  # 8x7, floor: 7x6
        g = F.adaptive_avg_pool2d(x, 1) + F.adaptive_max_pool2d(x, 1)
        return a + b + g, c, d


def _pooling():
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())
    pool = Pooling()

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.features, self.pool = model, pool

        def forward(self, x):
            return self.pool(self.features(x))

    return Block(), (torch.randn(1, 3, 17, 15),)


class SoftmaxAxes(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)

    def forward(self, x3, x4):
        h = self.proj(x3)  # (2, 5, 6)
        return (torch.softmax(h, dim=1), torch.log_softmax(h, dim=0),
                torch.softmax(x4, dim=1), torch.log_softmax(x4, dim=2),
                torch.softmax(x4, dim=-1))


def _softmax_axes():
    return SoftmaxAxes(), (torch.randn(2, 5, 6), torch.randn(2, 3, 4, 5))


class ResizeBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        h = self.conv(x)
        return (F.interpolate(h, scale_factor=2, mode="nearest"),
                F.interpolate(h, size=(13, 11), mode="bilinear", align_corners=False),
                F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=True),
                F.interpolate(h, size=(16, 14), mode="bicubic", align_corners=False),
                F.interpolate(h, size=(5, 4), mode="nearest"))


def _resize():
    return ResizeBlock(), (torch.randn(1, 3, 8, 7),)


BLOCKS = {
    "attention": _attention,
    "layernorm": _layernorm,
    "batchnorm": _batchnorm,
    "groupnorm": _groupnorm,
    "instancenorm": _instancenorm,
    "pooling": _pooling,
    "softmax_axes": _softmax_axes,
    "resize": _resize,
}


def export_block(name, out_dir, opset):
    """Export ``name`` at ``opset`` to ``out_dir``; return the file name."""
    torch.manual_seed(0)
    model, inputs = BLOCKS[name]()
    model.eval()
    with torch.no_grad():
        outputs = model(*inputs)
    count = len(outputs) if isinstance(outputs, tuple) else 1
    file = f"{name}_opset{opset}.onnx"
    torch.onnx.export(model, inputs, os.path.join(out_dir, file), opset_version=opset,
                      do_constant_folding=True,
                      input_names=[f"input_{i}" for i in range(len(inputs))],
                      output_names=[f"output_{i}" for i in range(count)])
    return file


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output folder (created if missing)")
    parser.add_argument("--opsets", default="11,13,17", help="comma-separated opsets")
    parser.add_argument("--blocks", help="comma-separated subset (default: all)")
    args = parser.parse_args(argv)
    opsets = [int(o) for o in args.opsets.split(",")]
    if not all(MIN_OPSET <= o <= MAX_OPSET for o in opsets):
        parser.error(f"opsets must be in {MIN_OPSET}..{MAX_OPSET}")
    names = args.blocks.split(",") if args.blocks else list(BLOCKS)
    unknown = sorted(set(names) - set(BLOCKS))
    if unknown:
        parser.error(f"unknown block(s): {', '.join(unknown)}")

    warnings.filterwarnings("ignore")
    os.makedirs(args.out, exist_ok=True)
    manifest = load_manifest(args.out)
    failed = False
    for name in names:
        for opset in opsets:
            try:
                file = export_block(name, args.out, opset)
            except Exception as err:  # report, export the rest
                print(f"{name} opset {opset}: FAILED: {type(err).__name__}: {err}")
                failed = True
                continue
            manifest.setdefault(name, {})[str(opset)] = file
            print(f"{name} opset {opset}: {file}")
    save_manifest(args.out, manifest)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
