"""amp_mlir.torch.train_step: amp's train step built from a torch module's
exported forward, against torch autograd and torch.optim on the same module
and batches."""

import copy

import numpy as np
import pytest
import torch
from torch import nn

import amp_mlir
import amp_mlir.torch as amp_torch

GRAD_REL = 1e-4
GRAD_ABS = 1e-6
TRAJECTORY_REL = 1e-4


def _rel(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        y = nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return self.fc(y.flatten(1))


class TinyEncoder(nn.Module):
    """A BERT-style block (no dropout) with a classifier on the first token."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                                dropout=0.0, activation="gelu",
                                                batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.layer(x)[:, 0])


def _case(name):
    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5))
        x = torch.randn(8, 12)
        y = torch.randint(0, 5, (8,))
    elif name == "cnn":
        model = SmallCNN()
        x = torch.randn(4, 3, 8, 8)
        y = torch.randint(0, 5, (4,))
    else:
        model = TinyEncoder()
        x = torch.randn(4, 6, 16)
        y = torch.randint(0, 3, (4,))
    return model, x, y


@pytest.mark.parametrize("name", ["mlp", "cnn", "bert_block"])
def test_gradients_match_autograd(name):
    """One SGD step with lr 1 and no weight decay moves each parameter by
    minus its gradient: amp's gradients are (before - after)."""
    model, x, y = _case(name)
    reference = copy.deepcopy(model).train()
    trainer = amp_torch.train_step(model, x, loss="cross_entropy", optimizer="sgd", lr=1.0,
                                   dtype=None)
    before = trainer.state_dict()
    result = trainer.step(x.numpy(), y.numpy())
    after = trainer.state_dict()
    loss = nn.functional.cross_entropy(reference(x), y)
    loss.backward()
    assert abs(result.loss - loss.item()) <= 1e-5 * abs(loss.item())
    checked = 0
    for pname, parameter in reference.named_parameters():
        got = before[pname] - after[pname]
        expected = parameter.grad.numpy()
        # A bias before a training-mode BatchNorm has a zero gradient (the
        # norm removes the mean): rounding noise, hence the absolute floor.
        error = float(np.linalg.norm(got.astype(np.float64) - expected))
        bound = GRAD_REL * float(np.linalg.norm(expected)) + GRAD_ABS
        assert error <= bound, f"{name} {pname}: gradient error {error:.3g} > {bound:.3g}"
        checked += 1
    assert checked == len(list(reference.parameters()))


def test_adamw_trajectory_matches_torch():
    model, x, y = _case("mlp")
    reference = copy.deepcopy(model).train()
    trainer = amp_torch.train_step(model, x, loss="cross_entropy", optimizer="adamw",
                                   lr=1e-2, dtype=None, weight_decay=0.01)
    optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-2, weight_decay=0.01)
    rng = np.random.default_rng(0)
    for step in range(20):
        xs = torch.from_numpy(rng.standard_normal(tuple(x.shape)).astype(np.float32))
        ys = torch.from_numpy(rng.integers(0, 5, tuple(y.shape)))
        result = trainer.step(xs, ys)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(reference(xs), ys)
        loss.backward()
        optimizer.step()
        assert abs(result.loss - loss.item()) <= TRAJECTORY_REL * abs(loss.item()), step
    state = trainer.state_dict()
    for pname, parameter in reference.named_parameters():
        assert _rel(state[pname], parameter.detach().numpy()) <= TRAJECTORY_REL, pname


def test_load_into_writes_the_trained_state_back():
    model, x, y = _case("cnn")
    trainer = amp_torch.train_step(model, x, optimizer="sgd", lr=0.1, dtype="bf16")
    for _ in range(3):
        trainer.step(x, y)
    written = trainer.load_into(model)
    state = trainer.state_dict()
    assert {"conv.weight", "fc.bias", "bn.running_mean", "bn.running_var"} <= set(written)
    for pname in written:
        np.testing.assert_array_equal(model.state_dict()[pname].numpy(), state[pname])
    model.eval()
    (predicted,) = trainer.predict(x.numpy())  # bf16 inference, fp32 in torch
    with torch.no_grad():
        reference = model(x).numpy()
    assert _rel(predicted, reference) <= 2e-2


def test_frozen_parameters_are_not_trained():
    model, x, y = _case("mlp")
    model[0].weight.requires_grad_(False)
    trainer = amp_torch.train_step(model, x, optimizer="sgd", lr=0.5, dtype=None)
    before = trainer.state_dict()
    trainer.step(x, y)
    after = trainer.state_dict()
    assert "0.weight" not in after  # a constant of the program, not state
    assert not np.array_equal(before["2.weight"], after["2.weight"])
    trainer.load_into(model)
    assert model[0].weight.requires_grad is False


def test_dropout_drops_in_training():
    """A training-mode export keeps dropout: two steps on the same batch
    draw different masks, so the losses differ; with p = 0 they would not
    (the first step changes weights, so compare against a p = 0 twin)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Dropout(0.5), nn.Linear(64, 4))
    x = torch.randn(8, 16)
    y = torch.randint(0, 4, (8,))
    twin = copy.deepcopy(model)
    twin[1].p = 0.0
    with_dropout = amp_torch.train_step(model, x, optimizer="sgd", lr=0.0, dtype=None)
    without = amp_torch.train_step(twin, x, optimizer="sgd", lr=0.0, dtype=None)
    dropped = [with_dropout.step(x, y).loss for _ in range(2)]
    plain = [without.step(x, y).loss for _ in range(2)]
    assert plain[0] == plain[1]
    assert dropped[0] != dropped[1] and dropped[0] != plain[0]


def test_fp16_trains_digits_like_fp32():
    """fp16 with dynamic loss scaling reaches fp32's accuracy within 1
    point on scikit-learn's digits (as the ONNX path does)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    data = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int64)
    train, test = slice(0, 1400), slice(1400, None)
    accuracy = {}
    for dtype in (None, "fp16"):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
        batch = 50
        trainer = amp_torch.train_step(model, torch.from_numpy(data[:batch]), optimizer="adamw",
                                       lr=1e-2, dtype=dtype)
        rng = np.random.default_rng(0)
        for _ in range(10):
            order = rng.permutation(1400)
            for start in range(0, 1400, batch):
                rows = order[start:start + batch]
                trainer.step(data[train][rows], labels[train][rows])
        trainer.load_into(model)
        with torch.no_grad():
            predicted = model(torch.from_numpy(data[test])).argmax(1).numpy()
        accuracy[dtype] = float((predicted == labels[test]).mean())
    assert accuracy[None] > 0.9, accuracy
    assert abs(accuracy["fp16"] - accuracy[None]) <= 0.01, accuracy
