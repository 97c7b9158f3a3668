"""Gradients of real architectures from PyTorch autograd (Debian python3).

    python3 grad_reference.py --model resnet18|bert_encoder|gpt2_decoder|unet_small|einsum_encoder|gqa_decoder --out DIR

Builds the model of export_torch.build_model, or one of the three below
(seeded random weights),
exports it (ResNet-18 in training mode, so BatchNormalization uses batch
statistics; the transformers in eval mode, which for them only removes
dropout), and computes the gradient of the mean squared error between the
first output and fixed random targets on a batch of 2. Writes
DIR/model.onnx (gqa_decoder: DIR/weights.npz, the test writes the ONNX
model), DIR/x.npy, DIR/y.npy (targets) and DIR/reference.npz with `loss`
and `grad.<parameter name>` for every parameter.
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from amp_testmodels.export_torch import build_model  # noqa: E402,F401

BATCH = 2


class SmallUNet(nn.Module):
    """A UNet-style block: GroupNorm (exported as InstanceNormalization at
    opset 17), a strided down convolution, a ConvTranspose and bilinear and
    nearest Resize up paths, and skip connections (an add and a concat)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.norm1 = nn.GroupNorm(2, 8)
        self.down = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.norm2 = nn.GroupNorm(4, 16)
        self.mid = nn.Conv2d(16, 16, 3, padding=1)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.lateral = nn.Conv2d(16, 8, 1)
        self.dec = nn.Conv2d(16, 8, 3, padding=1)
        self.norm3 = nn.GroupNorm(2, 8)
        self.out = nn.Conv2d(8, 3, 1)

    def forward(self, x):
        e = nn.functional.silu(self.norm1(self.enc(x)))
        d = nn.functional.silu(self.norm2(self.down(e)))
        m = nn.functional.silu(self.mid(d)) + d
        r = self.lateral(m)
        u = (self.up(m)
             + nn.functional.interpolate(r, scale_factor=2.0, mode="bilinear",
                                         align_corners=False)
             + 0.5 * nn.functional.interpolate(r, scale_factor=2.0, mode="nearest"))
        h = nn.functional.silu(self.norm3(self.dec(torch.cat([u, e], 1))))
        return self.out(h)


class EinsumEncoder(nn.Module):
    """A transformer encoder layer whose attention is written with
    torch.einsum (exported as Einsum), post-LayerNorm, GELU feed-forward."""

    def __init__(self, width=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln1 = nn.LayerNorm(width)
        self.ff1 = nn.Linear(width, 2 * width)
        self.ff2 = nn.Linear(2 * width, width)
        self.ln2 = nn.LayerNorm(width)

    def forward(self, x):
        batch, seq, width = x.shape
        head = width // self.heads
        q, k, v = self.qkv(x).reshape(batch, seq, 3, self.heads, head).unbind(2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / head ** 0.5
        attended = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)
        x = self.ln1(x + self.proj(attended.reshape(batch, seq, width)))
        return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))


class GQADecoderLayer(nn.Module):
    """A decoder layer with grouped-query causal attention (4 query heads
    over 2 key/value heads), written out in torch ops. torch 1.13 cannot
    export ONNX's opset-23 Attention: the ONNX model of this layer, with
    one Attention node, is written by the test from weights.npz
    (test_train_vs_torch.attention_decoder_onnx)."""

    def __init__(self, width=16, q_heads=4, kv_heads=2):
        super().__init__()
        self.q_heads, self.kv_heads = q_heads, kv_heads
        head = width // q_heads
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, kv_heads * head)
        self.v = nn.Linear(width, kv_heads * head)
        self.o = nn.Linear(width, width)
        self.ln = nn.LayerNorm(width)

    def forward(self, x):
        batch, seq, width = x.shape
        head = width // self.q_heads
        group = self.q_heads // self.kv_heads

        def heads(t, n):
            return t.reshape(batch, seq, n, head).transpose(1, 2)

        q = heads(self.q(x), self.q_heads)
        k = heads(self.k(x), self.kv_heads).repeat_interleave(group, 1)
        v = heads(self.v(x), self.kv_heads).repeat_interleave(group, 1)
        scores = q @ k.transpose(-1, -2) / head ** 0.5
        causal = torch.ones(seq, seq, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, width)
        return self.ln(x + self.o(attended))


LOCAL_MODELS = {
    "unet_small": (SmallUNet, (1, 3, 16, 16)),
    "einsum_encoder": (EinsumEncoder, (1, 6, 16)),
    "gqa_decoder": (GQADecoderLayer, (1, 6, 16)),
}
# Models whose ONNX form the test writes (weights.npz instead of model.onnx).
WEIGHTS_ONLY = {"gqa_decoder"}


def build_local(name):
    torch.manual_seed(0)
    cls, shape = LOCAL_MODELS[name]
    return cls().eval(), (torch.zeros(shape),)


def build(name):
    """The model with every parameter perturbed: torch.onnx.export merges
    initializers with equal values (LayerNorm weights start as all ones),
    which would tie parameters that PyTorch trains separately."""
    model, example = build_local(name) if name in LOCAL_MODELS else build_model(name)
    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=gen))
    return model, example


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True,
                        choices=["resnet18", "bert_encoder", "gpt2_decoder"]
                        + sorted(LOCAL_MODELS))
    parser.add_argument("--out", required=True)
    parser.add_argument("--float64", action="store_true",
                        help="export and differentiate in double precision")
    parser.add_argument("--conditioning", action="store_true",
                        help="also write spread.<name>: the relative L2 change of "
                        "PyTorch's own gradients when every weight moves by a "
                        "random 1e-6 relative perturbation")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    model, (example,) = build(args.model)
    torch.manual_seed(1)
    if args.model == "resnet18":
        # 128x128: layer4 runs at 4x4 (at 64x64 its BatchNorms see 8 values
        # per channel, where amp's fp32 statistics differ from PyTorch's
        # double-accumulated ones by up to 5e-3 in the gradients).
        x = torch.randn(BATCH, 3, 128, 128)
        model.train()
        mode = torch.onnx.TrainingMode.TRAINING
    elif example.dtype == torch.int64:
        x = torch.randint(0, 1000, (BATCH,) + tuple(example.shape[1:]))
        model.eval()
        mode = torch.onnx.TrainingMode.EVAL
    else:
        x = torch.randn((BATCH,) + tuple(example.shape[1:]))
        model.eval()
        mode = torch.onnx.TrainingMode.EVAL
    dtype = torch.float64 if args.float64 else torch.float32
    if x.is_floating_point():
        x = x.to(dtype)
    model = model.to(dtype)
    if args.model in WEIGHTS_ONLY:
        np.savez(os.path.join(args.out, "weights.npz"),
                 **{n: p.detach().numpy() for n, p in model.named_parameters()})
    else:
        torch.onnx.export(model, (x,), os.path.join(args.out, "model.onnx"),
                          input_names=["x"], output_names=["y"], opset_version=17,
                          training=mode, do_constant_folding=False,
                          dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
    # The export ran the model once (BatchNorm statistics moved): rebuild.
    model, _ = build(args.model)
    model = model.to(dtype)
    model.train() if args.model == "resnet18" else model.eval()
    with torch.no_grad():
        target = torch.randn_like(model(x)) * 0.1
    model, _ = build(args.model)
    model = model.to(dtype)
    model.train() if args.model == "resnet18" else model.eval()
    loss = nn.functional.mse_loss(model(x), target)
    loss.backward()
    np.save(os.path.join(args.out, "x.npy"), x.numpy())
    np.save(os.path.join(args.out, "y.npy"), target.numpy())
    grads = {f"grad.{n}": p.grad.numpy() for n, p in model.named_parameters()}
    if args.conditioning:
        grads.update(conditioning(args.model, dtype, x, target, grads))
    np.savez(os.path.join(args.out, "reference.npz"), loss=loss.item(), **grads)


def conditioning(name, dtype, x, target, grads):
    """spread.<name>: how far PyTorch's gradients move when the weights move
    by 1e-6 relative (random signs); exact.<name>: the same gradients in
    float64 (same weights and data), against which both PyTorch's and
    amp's fp32 rounding can be measured."""
    exact = {}
    model, _ = build(name)
    model = model.double()
    model.train() if name == "resnet18" else model.eval()
    nn.functional.mse_loss(model(x.double()), target.double()).backward()
    for n, p in model.named_parameters():
        exact[f"exact.{n}"] = p.grad.numpy()
    model, _ = build(name)
    model = model.to(dtype)
    model.train() if name == "resnet18" else model.eval()
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for p in model.parameters():
            sign = torch.randint(0, 2, p.shape, generator=gen).to(p.dtype) * 2 - 1
            p.mul_(1 + 1e-6 * sign)
    nn.functional.mse_loss(model(x), target).backward()
    spread = {}
    for n, p in model.named_parameters():
        ref = grads[f"grad.{n}"]
        norm = max(float(np.linalg.norm(ref)), 1e-30)
        spread[f"spread.{n}"] = np.array(
            float(np.linalg.norm(p.grad.numpy() - ref)) / norm)
    spread.update(exact)
    return spread


if __name__ == "__main__":
    main()
