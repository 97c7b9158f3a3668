#!/usr/bin/env python3
"""Prepares bench/gpu/run.sh's inputs on a CPU machine with amp built:
artifacts (``amp-opt --amp-target=cuda``), their inputs and the CPU path's
outputs, listed in ``OUT/manifest.json``. Copy OUT to the GPU machine with
the repository (it is ``bench/gpu/artifacts`` by default; keep it under the
64 MiB a device call carries).

    python3 bench/gpu/prepare.py                  # checks + kernel benchmarks
    python3 bench/gpu/prepare.py --e2e            # + ResNet-50 and BERT-base
                                                  #   at batch 32 and 128

- ``check``: small models and three zoo architectures (resnet18,
  bert_encoder, gpt2_decoder; torch 1.13 exports), fp16 (and bf16),
  real weights; the reference is amp-run's CPU path on the same program.
- ``kernel``: Relu, Cast, Softmax, LayerNorm on large fp16 tensors (no
  weights), for the bandwidth table.
- ``train``: the split train step of a small model with BatchNorm buffers
  and training Dropout (fp16, AdamW, dynamic loss scaling) for
  ``amp-train-gpu``, with amp-run --train's logs and states (one micro-batch
  per step and ``--accumulate 2``) to follow.
- ``e2e``: ResNet-50 and BERT-base at batch 32 and 128 in fp16, bf16 and
  fp32, with random weights (``--amp-cuda-random-weights``), for timing.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(REPO, "build", "bin")
DEBIAN_PYTHON = "/usr/bin/python3"
sys.path.insert(0, os.path.join(REPO, "test", "models"))


def run(*command, **kwargs):
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run([str(c) for c in command], check=True, **kwargs)


def compile_model(source, artifact, amp_type, random_weights=False):
    flags = ["--amp-target=cuda", f"--amp-type={amp_type}"]
    if amp_type == "none":
        flags = ["--amp-target=cuda", "--amp-opt-level=0"]
    if random_weights:
        flags.append("--amp-cuda-random-weights")
    run(os.path.join(BIN, "amp-opt"), source, *flags, "-o", artifact)


def make_inputs(source, folder, stem):
    model = onnx.load(source, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    files = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        shape = [d.dim_value or 1 for d in value.type.tensor_type.shape.dim]
        if value.type.tensor_type.elem_type == TensorProto.INT64:
            array = rng.integers(0, 100, size=shape, dtype=np.int64)
        else:
            array = rng.standard_normal(shape).astype(np.float32)
        files.append(f"{stem}.in{len(files)}.npy")
        np.save(os.path.join(folder, files[-1]), array)
    return files


def cpu_references(source, amp_type, inputs, folder, stem):
    out = os.path.join(folder, f"{stem}.ref")
    run(os.path.join(BIN, "amp-run"), source, f"--amp-type={amp_type}",
        *[f"-i={os.path.join(folder, i)}" for i in inputs], "--output-dir", out)
    graph = onnx.load(source, load_external_data=False).graph
    return [os.path.join(f"{stem}.ref", f"{o.name}.npy") for o in graph.output]


def kernel_models(folder):
    """Large single-op graphs: bytes moved per run are in the manifest."""
    n = 8192
    shape = [n, n]
    models = {
        "relu": (helper.make_node("Relu", ["x"], ["y"]), TensorProto.FLOAT16, 2 * 2),
        "cast": (helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16),
                 TensorProto.FLOAT, 4 + 2),
        "softmax": (helper.make_node("Softmax", ["x"], ["y"], axis=-1),
                    TensorProto.FLOAT16, 2 * 2),
        "layernorm": (helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"],
                                       axis=-1), TensorProto.FLOAT16, 2 * 2),
    }
    entries = []
    for name, (node, in_type, bytes_per_element) in models.items():
        out_type = TensorProto.FLOAT16
        inits = []
        if name == "layernorm":
            inits = [helper.make_tensor("g", TensorProto.FLOAT16, [n],
                                        np.ones(n, np.float16).tobytes(), raw=True),
                     helper.make_tensor("b", TensorProto.FLOAT16, [n],
                                        np.zeros(n, np.float16).tobytes(), raw=True)]
        graph = helper.make_graph([node], name,
                                  [helper.make_tensor_value_info("x", in_type, shape)],
                                  [helper.make_tensor_value_info("y", out_type, shape)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        source = os.path.join(folder, f"kernel_{name}.onnx")
        onnx.save(model, source)
        artifact = f"kernel_{name}.ampgpu"
        # The graph is already in its storage types: no autocast.
        run(os.path.join(BIN, "amp-opt"), source, "--amp-target=cuda", "--amp-opt-level=0",
            "-o", os.path.join(folder, artifact))
        os.remove(source)
        entries.append({"kind": "kernel", "name": name, "artifact": artifact,
                        "bytes": n * n * bytes_per_element})
    return entries


def export_torch(name, folder, batch=None):
    """ONNX export under Debian's torch 1.13 (python3-torch)."""
    if batch is None:
        script = os.path.join(REPO, "test", "models", "amp_testmodels", "export_torch.py")
        run(DEBIAN_PYTHON, script, "--out", folder, "--opset", "17", "--models", name)
        return os.path.join(folder, f"{name}.onnx")
    path = os.path.join(folder, f"{name}_b{batch}.onnx")
    code = (f"import sys, torch; sys.path.insert(0, {os.path.dirname(__file__)!r});"
            f"import models; torch.manual_seed(0);"
            f"m, x = models.MODELS[{name!r}]({batch});"
            f"torch.onnx.export(m, (x,), {path!r}, opset_version=17,"
            f" input_names=['input'], output_names=['output'])")
    run(DEBIAN_PYTHON, "-c", code)
    return path


def train_entries(folder):
    """The data-parallel train step (amp-train-gpu): the three artifacts of
    a model with BatchNorm buffers and training Dropout (fp16, AdamW,
    dynamic loss scaling), its data, and amp-run --train's log and final
    state for one micro-batch per step and for --accumulate 2."""
    from amp_testmodels import build_onnx  # noqa: PLC0415
    source = os.path.join(folder, "train_bn_dropout.onnx")
    onnx.save(build_onnx.train_bn_dropout(), source)
    rng = np.random.default_rng(1)
    np.save(os.path.join(folder, "train_x.npy"), rng.standard_normal((32, 8)).astype(np.float32))
    np.save(os.path.join(folder, "train_y.npy"), rng.standard_normal((32, 4)).astype(np.float32))
    flags = ["--train", "--loss=mse", "--optimizer=adamw", "--amp-type=f16"]
    artifacts = {}
    for entry in ("initial_state", "compute_gradients", "apply_gradients"):
        artifacts[entry] = f"train_{entry}.ampgpu"
        run(os.path.join(BIN, "amp-opt"), source, *flags, "--split-step", "--static-batch=4",
            "--amp-target=cuda", f"--amp-cuda-entry={entry}", "-o",
            os.path.join(folder, artifacts[entry]))
    runs = []
    for accumulate, steps in ((1, 12), (2, 6)):
        stem = f"train_cpu_k{accumulate}"
        run(os.path.join(BIN, "amp-run"), source, *flags, "--data",
            os.path.join(folder, "train_x.npy"), "--labels", os.path.join(folder, "train_y.npy"),
            "--batch-size", "4", "--accumulate", str(accumulate), "--steps", str(steps),
            "--no-shuffle", "--log-csv", os.path.join(folder, stem + ".csv"),
            "--save-state", os.path.join(folder, stem + ".npz"))
        runs.append({"accumulate": accumulate, "steps": steps, "csv": stem + ".csv",
                     "state": stem + ".npz"})
    os.remove(source)
    return [{"kind": "train", "name": "train_bn_dropout", "dtype": "f16",
             "artifacts": artifacts, "data": "train_x.npy", "labels": "train_y.npy",
             "batch": 4, "runs": runs}]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "gpu", "artifacts"))
    parser.add_argument("--e2e", action="store_true", help="also ResNet-50 and BERT-base")
    parser.add_argument("--quick", action="store_true",
                        help="only the small models (a dry run of the preparation)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    from amp_testmodels import build_onnx  # noqa: PLC0415
    entries = []

    checks = []
    for name in ("mlp", "conv_block"):
        path = os.path.join(args.out, f"{name}.onnx")
        onnx.save(getattr(build_onnx, name)(17), path)
        checks.append((name, path, ("f16", "bf16")))
    path = os.path.join(args.out, "small_convnet.onnx")
    run(sys.executable, os.path.join(REPO, "test", "lit-tools", "onnx-encode.py"),
        os.path.join(REPO, "examples", "small_convnet.onnxtxt"), path)
    checks.append(("small_convnet", path, ("f16",)))
    if not args.quick:
        for name, types in (("resnet18", ("f16",)), ("bert_encoder", ("f16", "bf16")),
                            ("gpt2_decoder", ("f16",))):
            checks.append((name, export_torch(name, args.out), types))
    for name, source, types in checks:
        for amp_type in types:
            stem = f"{name}_{amp_type}"
            artifact = f"{stem}.ampgpu"
            compile_model(source, os.path.join(args.out, artifact), amp_type)
            inputs = make_inputs(source, args.out, stem)
            references = cpu_references(source, amp_type, inputs, args.out, stem)
            entries.append({"kind": "check", "name": name, "dtype": amp_type,
                            "artifact": artifact, "inputs": inputs,
                            "references": references})
        os.remove(source)

    entries += kernel_models(args.out)
    entries += train_entries(args.out)

    if args.e2e:
        for name in ("resnet50", "bert_base"):
            for batch in (32, 128):
                source = export_torch(name, args.out, batch)
                for amp_type in ("f16", "bf16", "none"):
                    artifact = f"{name}_b{batch}_{amp_type}.ampgpu"
                    compile_model(source, os.path.join(args.out, artifact), amp_type,
                                  random_weights=True)
                    entries.append({"kind": "e2e", "name": name, "batch": batch,
                                    "dtype": "fp32" if amp_type == "none" else amp_type,
                                    "artifact": artifact})
                for data in (source, source + ".data"):
                    if os.path.exists(data):
                        os.remove(data)

    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(entries, f, indent=1)
    size = sum(os.path.getsize(os.path.join(root, file))
               for root, _, files in os.walk(args.out) for file in files)
    print(f"{len(entries)} entries, {size / 2**20:.1f} MiB in {args.out}")


if __name__ == "__main__":
    main()
