#!/usr/bin/python3
"""Export reference PyTorch models to ONNX with random weights.

Runs under Debian's interpreter (``/usr/bin/python3``) with Debian's
``python3-torch`` (1.13) and ``python3-torchvision`` (0.14); see
``scripts/deps-torch.txt``. The ``onnx`` Python package is *not* required:
the exported file is summarised with a minimal protobuf wire-format reader.

Every model is built after ``torch.manual_seed(0)``, put in eval mode and
exported with batch 1, static shapes and ``do_constant_folding=True`` to
``OUT/<name>.onnx``. A ``manifest.json`` in ``OUT`` records, per model, the
opset, file size, top-level node count and op-type histogram, the two
options below, and the keys ``export_cache.py`` checks before a test reuses
the file (the exporter's sources, torch's version, the options, the
file's sha256).

``--dynamic-batch`` exports the first axis of every input and output as the
dynamic ``batch`` axis (``dynamic_axes``), traced with the example input
repeated to batch 2. ``--fp16-range`` recalibrates the BatchNorm statistics of the
models in ``FP16_RANGE_MODELS`` (see :func:`calibrate_batchnorm`): with
torchvision's random initialisation their activations shrink layer by
layer to 1e-9 .. 1e-14 at the logits, below fp16's range, so a
mixed-precision run of them says nothing; calibrated, their activations
stay O(1) like a trained network's.

Example::

    /usr/bin/python3 test/models/amp_testmodels/export_torch.py \
        --out /tmp/amp-models/opset17 --opset 17 --models resnet18,bert_encoder
"""

import argparse
import collections
import json
import math
import os
import sys
import time
import warnings

import torch
import torchvision
from torch import nn

import export_cache

MIN_OPSET = 13
MAX_OPSET = 17  # Highest opset supported by the torch 1.13 TorchScript exporter.

IMAGE_SHAPE = (1, 3, 224, 224)

# torchvision architectures, in export order. Each is built with weights=None.
TORCHVISION_MODELS = (
    "resnet18",
    "resnet50",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "efficientnet_b0",
    "regnet_y_400mf",
    "densenet121",
    "squeezenet1_0",
    "shufflenet_v2_x1_0",
    "convnext_tiny",
    "vit_b_16",
    "swin_t",
)


# --------------------------------------------------------------------------
# Hand-written models
# --------------------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    """GPT-2 style multi-head causal self-attention written with plain ops."""

    def __init__(self, d_model, n_heads, max_seq):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        causal = torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool))
        self.register_buffer("causal", causal.view(1, 1, max_seq, max_seq))

    def forward(self, x):
        b, t, c = x.shape
        head_dim = c // self.n_heads
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.n_heads, head_dim).transpose(1, 2)
        k = k.view(b, t, self.n_heads, head_dim).transpose(1, 2)
        v = v.view(b, t, self.n_heads, head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
        scores = scores.masked_fill(~self.causal[:, :, :t, :t], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        y = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class GPT2Block(nn.Module):
    """Pre-norm transformer decoder block: attention then a GELU MLP."""

    def __init__(self, d_model, n_heads, max_seq):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, max_seq)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model),
            nn.GELU(approximate="tanh"),
            nn.Linear(4 * d_model, d_model),
        )

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Decoder(nn.Module):
    """Tiny GPT-2: token + learned position embeddings, blocks, LM head."""

    def __init__(self, vocab=1000, d_model=128, n_heads=4, n_layers=2, max_seq=32):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(max_seq, d_model)
        self.blocks = nn.ModuleList(
            GPT2Block(d_model, n_heads, max_seq) for _ in range(n_layers)
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def _bert_encoder():
    layer = nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dim_feedforward=1024, activation="gelu", batch_first=True
    )
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    return model, (torch.randn(1, 32, 256),)


def _gpt2_decoder():
    model = GPT2Decoder(vocab=1000, d_model=128, n_heads=4, n_layers=2, max_seq=32)
    return model, (torch.randint(0, 1000, (1, 32), dtype=torch.int64),)


def _mlp_logsoftmax():
    model = nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10), nn.LogSoftmax(dim=-1)
    )
    return model, (torch.randn(4, 64),)


# Models whose random-weight activations leave fp16's range (--fp16-range).
FP16_RANGE_MODELS = ("mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0")
CALIBRATION_SEED = 1
CALIBRATION_BATCH = 8


def calibrate_batchnorm(model, example):
    """Set every BatchNorm's running mean and variance to the statistics of
    one seeded batch of ``CALIBRATION_BATCH`` standard-normal inputs shaped
    like ``example`` (a cumulative average over that one batch), so that the
    activations stay O(1) instead of shrinking layer by layer (BatchNorm's eps
    still dominates for channels whose variance is below it). The weights are
    unchanged;
    the rest of the model stays in eval mode (no dropout, no stochastic depth)."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    generator = torch.Generator().manual_seed(CALIBRATION_SEED)
    batch = torch.randn((CALIBRATION_BATCH,) + tuple(example.shape[1:]), generator=generator)
    model.eval()
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # cumulative average: after one batch, its statistics
        norm.train()
    with torch.no_grad():
        model(batch)
    return model.eval()


HAND_WRITTEN_MODELS = {
    "bert_encoder": _bert_encoder,
    "gpt2_decoder": _gpt2_decoder,
    "mlp_logsoftmax": _mlp_logsoftmax,
}

ALL_MODELS = TORCHVISION_MODELS + tuple(HAND_WRITTEN_MODELS)


def build_model(name, fp16_range=False):
    """Return ``(module, example_inputs)`` for ``name`` with seeded random weights.

    ``fp16_range``: calibrate the BatchNorm statistics of the models in
    ``FP16_RANGE_MODELS`` (:func:`calibrate_batchnorm`).
    Raises ``LookupError`` if the installed torchvision lacks the architecture.
    """
    torch.manual_seed(0)
    if name in HAND_WRITTEN_MODELS:
        model, inputs = HAND_WRITTEN_MODELS[name]()
    else:
        ctor = getattr(torchvision.models, name, None)
        if ctor is None:
            raise LookupError(
                f"torchvision {torchvision.__version__} has no models.{name}"
            )
        model, inputs = ctor(weights=None), (torch.randn(*IMAGE_SHAPE),)
    if fp16_range and name in FP16_RANGE_MODELS:
        calibrate_batchnorm(model, inputs[0])
    return model.eval(), inputs


# --------------------------------------------------------------------------
# Minimal ONNX protobuf reader (avoids depending on the onnx package)
# --------------------------------------------------------------------------

_MODEL_GRAPH = 7  # ModelProto.graph
_GRAPH_NODE = 1  # GraphProto.node
_NODE_OP_TYPE = 4  # NodeProto.op_type
_NODE_DOMAIN = 7  # NodeProto.domain


def _read_varint(buf, pos):
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(buf):
    """Yield ``(field_number, value)`` for each field of a protobuf message.

    Length-delimited values are memoryview slices; others are ints (fixed-width
    values are skipped and yielded as None).
    """
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _read_varint(buf, pos)
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, pos = _read_varint(buf, pos)
        elif wire_type == 2:
            length, pos = _read_varint(buf, pos)
            value, pos = buf[pos : pos + length], pos + length
        elif wire_type in (1, 5):
            value, pos = None, pos + (8 if wire_type == 1 else 4)
        else:
            raise ValueError(f"unsupported protobuf wire type {wire_type}")
        yield field, value


def op_histogram(path):
    """Count top-level graph nodes of an ONNX file by ``domain::op_type``."""
    with open(path, "rb") as f:
        model = memoryview(f.read())
    histogram = collections.Counter()
    for field, graph in _fields(model):
        if field != _MODEL_GRAPH:
            continue
        for gfield, node in _fields(graph):
            if gfield != _GRAPH_NODE:
                continue
            op_type, domain = "", ""
            for nfield, value in _fields(node):
                if nfield == _NODE_OP_TYPE:
                    op_type = bytes(value).decode()
                elif nfield == _NODE_DOMAIN:
                    domain = bytes(value).decode()
            histogram[f"{domain}::{op_type}" if domain else op_type] += 1
    return histogram


# --------------------------------------------------------------------------
# Export driver
# --------------------------------------------------------------------------


def export_model(name, out_dir, opset, dynamic_batch=False, fp16_range=False):
    """Export one model to ``out_dir/<name>.onnx`` and return its manifest entry."""
    model, inputs = build_model(name, fp16_range=fp16_range)
    input_names = [f"input_{i}" for i in range(len(inputs))]
    path = os.path.join(out_dir, f"{name}.onnx")
    dynamic_axes = None
    if dynamic_batch:
        # Traced with batch 2, so that no size-1 special case of the batch
        # (a squeeze, a broadcast) gets into the graph.
        inputs = tuple(torch.cat([x, x]) for x in inputs)
        dynamic_axes = {n: {0: "batch"} for n in input_names + ["output"]}
    start = time.perf_counter()
    torch.onnx.export(
        model,
        inputs,
        path,
        opset_version=opset,
        do_constant_folding=True,
        input_names=input_names,
        output_names=["output"],
        dynamic_axes=dynamic_axes,
    )
    histogram = op_histogram(path)
    entry = {
        "opset": opset,
        "dynamic_batch": dynamic_batch,
        "fp16_range": fp16_range and name in FP16_RANGE_MODELS,
        "file": os.path.basename(path),
        "bytes": os.path.getsize(path),
        "nodes": sum(histogram.values()),
        "export_seconds": round(time.perf_counter() - start, 2),
        "op_types": dict(sorted(histogram.items())),
    }
    return export_cache.stamp(entry, path, "export_torch", name,
                              cache_options(opset, dynamic_batch, fp16_range and
                                            name in FP16_RANGE_MODELS))


def cache_options(opset, dynamic_batch=False, fp16_range=False):
    """The options an export's cache key covers (see export_cache.py)."""
    return {"opset": opset, "dynamic_batch": bool(dynamic_batch),
            "fp16_range": bool(fp16_range)}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="output folder (created if missing)")
    parser.add_argument(
        "--opset",
        type=int,
        default=MAX_OPSET,
        help=f"ONNX opset, {MIN_OPSET}..{MAX_OPSET} (default {MAX_OPSET})",
    )
    parser.add_argument(
        "--models",
        help="comma-separated subset of models (default: all); see --list",
    )
    parser.add_argument(
        "--dynamic-batch",
        action="store_true",
        help="export axis 0 of the inputs and the output as the dynamic axis 'batch'",
    )
    parser.add_argument(
        "--fp16-range",
        action="store_true",
        help="calibrate the BatchNorm statistics of " + ", ".join(FP16_RANGE_MODELS)
        + " so that their activations stay inside fp16's range",
    )
    parser.add_argument(
        "--list", action="store_true", help="print the known model names and exit"
    )
    args = parser.parse_args(argv)
    if args.list:
        return args
    if not args.out:
        parser.error("--out is required")
    if not MIN_OPSET <= args.opset <= MAX_OPSET:
        parser.error(f"--opset must be in {MIN_OPSET}..{MAX_OPSET}")
    args.models = args.models.split(",") if args.models else list(ALL_MODELS)
    unknown = sorted(set(args.models) - set(ALL_MODELS))
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)} (see --list)")
    return args



def load_manifest(out):
    """The manifest.json of an export folder ({} when there is none)."""
    path = os.path.join(out, "manifest.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def save_manifest(out, manifest):
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)

def main(argv=None):
    args = parse_args(argv)
    if args.list:
        print("\n".join(ALL_MODELS))
        return 0

    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    os.makedirs(args.out, exist_ok=True)
    manifest = load_manifest(args.out)

    failed = []
    print(
        f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
        f"opset {args.opset} -> {args.out}"
    )
    for name in args.models:
        try:
            entry = export_model(name, args.out, args.opset, args.dynamic_batch,
                                 args.fp16_range)
        except LookupError as err:
            print(f"{name:20s} SKIPPED: {err}")
            continue
        except Exception as err:  # Report and keep exporting the rest.
            print(f"{name:20s} FAILED: {type(err).__name__}: {err}")
            failed.append(name)
            continue
        manifest[name] = entry
        print(
            f"{name:20s} {entry['bytes'] / 2**20:9.2f} MiB  "
            f"{entry['nodes']:5d} nodes  {len(entry['op_types']):3d} op types"
        )
        sys.stdout.flush()

    save_manifest(args.out, manifest)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
