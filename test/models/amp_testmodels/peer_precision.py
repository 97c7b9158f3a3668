"""A peer's low-precision error on the models of test_cpu_real_models.py.

    /usr/bin/python3 test/models/amp_testmodels/peer_precision.py [--models a,b]
    ~/.cache/amp/torch-venv/bin/python test/models/amp_testmodels/peer_precision.py

For each model (the same seeded weights as export_torch.py, calibrated
BatchNorm for its ``--fp16-range`` models, and the same seeded inputs as
the test: numpy's default_rng(0), standard normal images, token ids below
the vocabulary), prints PyTorch's own relative L2 error
``||y_low - y_fp32|| / ||y_fp32||`` under CPU autocast (convolutions, linear
layers and matmuls in the low type, the rest in fp32), the peer's answer to
the question the test's bounds ask.

- Debian's torch 1.13 (``torch.cpu.amp.autocast``) has bfloat16 only: its
  CPU has no fp16 convolutions or matmuls, so its fp16 column is derived
  (bf16 keeps 8 significant bits and fp16 11: rounding errors scale by 2^-3
  where fp16's range is not the limit).
- PyPI's torch 2.x (the Torch tests' virtual environment) autocasts the CPU
  to float16 as well (``torch.autocast("cpu", dtype=...)``): both columns are
  measured. Its torchvision builds the same seeded weights (the fp32 outputs'
  norms printed as ``fp32_norm`` agree with torch 1.13's to 1e-8).

For ViT, the measured output is the classification head's input (its head
is zero-initialised, so the logits are 0; the test does the same).

Prints one JSON object per line: {"model", "torch", "fp32_norm", "bf16",
"f16"} ("f16_derived" instead of "f16" under torch 1.13).
"""

import argparse
import json
import sys

import numpy as np
import torch

import export_torch

# The models of test_cpu_real_models.FP32_MODELS.
MODELS = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small",
          "efficientnet_b0", "regnet_y_400mf", "densenet121", "squeezenet1_0",
          "shufflenet_v2_x1_0", "convnext_tiny", "vit_b_16", "swin_t",
          "bert_encoder", "gpt2_decoder")
VOCAB = 1000  # gpt2_decoder's vocabulary (export_torch._gpt2_decoder)


def seeded_inputs(examples):
    """The test's inputs: default_rng(0), in graph-input order."""
    rng = np.random.default_rng(0)
    inputs = []
    for example in examples:
        if example.dtype == torch.int64:
            inputs.append(torch.from_numpy(rng.integers(0, VOCAB, tuple(example.shape))
                                           .astype(np.int64)))
        else:
            inputs.append(torch.from_numpy(rng.standard_normal(tuple(example.shape))
                                           .astype(np.float32)))
    return inputs


def measured_output(name, model, inputs):
    if name != "vit_b_16":
        return model(*inputs)
    captured = {}
    handle = model.heads.register_forward_pre_hook(
        lambda module, args: captured.setdefault("features", args[0]))
    model(*inputs)
    handle.remove()
    return captured["features"]


def float_norm_inputs(model):
    """Torch 1.13's CPU autocast leaves layer_norm out of its lists, so a
    bf16 activation meets fp32 weights and fails; later releases run it in
    fp32 (autocast's fp32 list). Do the same with pre-hooks."""
    for module in model.modules():
        if isinstance(module, (torch.nn.LayerNorm, torch.nn.GroupNorm)):
            module.register_forward_pre_hook(
                lambda m, args: tuple(a.float() if torch.is_tensor(a) else a for a in args))


def cpu_autocasts_fp16():
    """Whether this torch autocasts the CPU to float16 (2.x; not 1.13)."""
    if not hasattr(torch, "autocast"):
        return False
    try:
        with torch.autocast("cpu", dtype=torch.float16):
            out = torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 3, 3))
        return out.dtype == torch.float16
    except (RuntimeError, TypeError):
        return False


LOW_TYPES = [("bf16", torch.bfloat16)] + ([("f16", torch.float16)]
                                          if cpu_autocasts_fp16() else [])


def autocast(dtype):
    if dtype == torch.float16:
        return torch.autocast("cpu", dtype=dtype)
    return torch.cpu.amp.autocast(dtype=dtype)


def relative_l2(actual, expected):
    actual, expected = actual.double(), expected.double()
    return float(torch.linalg.norm(actual - expected) / torch.linalg.norm(expected))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    for name in args.models.split(","):
        model, examples = export_torch.build_model(name, fp16_range=True)
        inputs = seeded_inputs(examples)
        float_norm_inputs(model)
        # With gradients enabled: nn.MultiheadAttention's inference fast path
        # (taken under no_grad) does not take autocast's bf16 activations in 1.13.
        with torch.enable_grad():
            reference = measured_output(name, model, inputs).float().detach()
            errors = {}
            for key, dtype in LOW_TYPES:
                with autocast(dtype):
                    low = measured_output(name, model, inputs).float().detach()
                errors[key] = float(f"{relative_l2(low, reference):.3g}")
        if "f16" not in errors:
            errors["f16_derived"] = float(f"{errors['bf16'] / 8:.3g}")
        print(json.dumps({"model": name, "torch": torch.__version__,
                          "fp32_norm": float(torch.linalg.norm(reference.double())),
                          **errors}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
