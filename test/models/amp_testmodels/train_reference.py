"""Training references from PyTorch (runs under Debian's /usr/bin/python3).

Builds one of the small training test models with fixed seeds, exports it to
ONNX in training mode (the model amp-opt/amp-run --train start from), and
trains the same weights in PyTorch eager mode on the same batches, so the
tests can compare amp's losses, gradients and parameters with PyTorch's.

    python3 train_reference.py --model mlp --out DIR --steps 20 \
        --optimizer sgd --lr 0.1 --batch 16 [--momentum 0.9] [--nesterov] \
        [--weight-decay 0] [--clip-grad-norm 0] [--loss cross-entropy]

Writes DIR/model.onnx, DIR/x.npy, DIR/y.npy (the data, consumed in order,
batch after batch), DIR/reference.npz with `losses` (per step), `grad.<name>`
(the gradients of the first step) and `param.<name>` (after the last step).
"""

import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, inputs=64, hidden=32, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(inputs, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class SmallCNN(nn.Module):
    """Conv-BN-ReLU twice (one strided), max pooling, global average, linear:
    the layers ResNet-style networks are made of."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(x.mean((2, 3)))


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


MODELS = {
    "mlp": (MLP, (64,), "cross-entropy"),
    "cnn": (SmallCNN, (1, 8, 8), "cross-entropy"),
    "regressor": (Regressor, (8,), "mse"),
}


def build(name, seed=0):
    torch.manual_seed(seed)
    cls, sample_shape, loss = MODELS[name]
    return cls(), sample_shape, loss


def export(model, sample_shape, path):
    example = torch.zeros((2,) + tuple(sample_shape))
    torch.onnx.export(model, example, path, input_names=["x"], output_names=["y"],
                      opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False,
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})


def make_data(name, sample_shape, count, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count,) + tuple(sample_shape)).astype(np.float32)
    if MODELS[name][2] == "mse":
        w = rng.standard_normal(sample_shape).astype(np.float32)
        y = (x @ w)[:, None].astype(np.float32) * 0.5
    else:
        y = rng.integers(0, 10, size=count).astype(np.int64)
    return x, y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--optimizer", choices=["sgd", "momentum", "adamw"], default="sgd")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=None)
    parser.add_argument("--nesterov", action="store_true")
    parser.add_argument("--weight-decay", type=float, default=None)
    parser.add_argument("--clip-grad-norm", type=float, default=0.0)
    parser.add_argument("--beta1", type=float, default=0.9)
    parser.add_argument("--beta2", type=float, default=0.999)
    parser.add_argument("--eps", type=float, default=1e-8)
    parser.add_argument("--lr-schedule", choices=["constant", "linear", "cosine", "step"],
                        default="constant")
    parser.add_argument("--warmup-steps", type=int, default=0)
    parser.add_argument("--total-steps", type=int, default=0)
    parser.add_argument("--lr-step-size", type=int, default=1)
    parser.add_argument("--lr-gamma", type=float, default=0.1)
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)
    model, sample_shape, loss_kind = build(args.model)
    export(model, sample_shape, os.path.join(args.out, "model.onnx"))
    x, y = make_data(args.model, sample_shape, args.steps * args.batch)
    np.save(os.path.join(args.out, "x.npy"), x)
    np.save(os.path.join(args.out, "y.npy"), y)

    # Train the exported module itself: exporting in training mode ran it
    # once, which moved BatchNorm's running statistics, and the ONNX file
    # holds the moved ones (a rebuilt module would start from others).
    model.train()
    if args.optimizer == "adamw":
        wd = 0.01 if args.weight_decay is None else args.weight_decay
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=wd,
                                betas=(args.beta1, args.beta2), eps=args.eps)
    else:
        momentum = args.momentum if args.momentum is not None else (
            0.9 if args.optimizer == "momentum" else 0.0)
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=momentum,
                              nesterov=args.nesterov,
                              weight_decay=args.weight_decay or 0.0)
    scheduler = make_scheduler(opt, args)
    criterion = nn.CrossEntropyLoss() if loss_kind == "cross-entropy" else nn.MSELoss()
    losses, grads, lrs = [], {}, []
    for step in range(args.steps):
        xb = torch.from_numpy(x[step * args.batch:(step + 1) * args.batch])
        yb = torch.from_numpy(y[step * args.batch:(step + 1) * args.batch])
        opt.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        if step == 0:
            grads = {f"grad.{n}": p.grad.detach().numpy().copy()
                     for n, p in model.named_parameters()}
        if args.clip_grad_norm > 0:
            nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        if scheduler is not None:
            scheduler.step()
        losses.append(loss.item())
    params = {f"param.{n}": p.detach().numpy() for n, p in model.named_parameters()}
    # BatchNorm's running statistics (num_batches_tracked is not exported).
    buffers = {f"buffer.{n}": b.detach().numpy() for n, b in model.named_buffers()
               if b.is_floating_point()}
    np.savez(os.path.join(args.out, "reference.npz"), losses=np.array(losses),
             lrs=np.array(lrs), **grads, **params, **buffers)


def make_scheduler(opt, args):
    """PyTorch's StepLR, or a LambdaLR with Hugging Face's warm-up, linear
    and cosine formulas (transformers' get_*_schedule_with_warmup), stepped
    after every optimizer step."""
    warmup, total = args.warmup_steps, args.total_steps
    if args.lr_schedule == "step":
        return torch.optim.lr_scheduler.StepLR(opt, args.lr_step_size, args.lr_gamma)
    if args.lr_schedule == "constant" and not warmup:
        return None

    def factor(t):
        if t < warmup:
            return t / max(1, warmup)
        if args.lr_schedule == "linear":
            return max(0.0, (total - t) / max(1, total - warmup))
        if args.lr_schedule == "cosine":
            progress = min(1.0, (t - warmup) / max(1, total - warmup))
            return 0.5 * (1.0 + math.cos(math.pi * progress))
        return 1.0

    return torch.optim.lr_scheduler.LambdaLR(opt, factor)


if __name__ == "__main__":
    main()
