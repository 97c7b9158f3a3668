"""The CUDA backend (``amp-opt --amp-target=cuda``, ``amp-run-gpu``) on
real models.

Every model is compiled into a ``.ampgpu`` artifact (fp16 autocast, and
bf16 for some), whose listing (``amp-run-gpu --describe``, no GPU needed)
must show its GEMMs as cuBLASLt calls with fp16/bf16 operands and fp32
accumulation. The kernels cannot run without a GPU, so the CUDA lowering is
also checked through its CPU emulation: ``amp-run --amp-cuda-emulate`` runs
the artifact itself (its memory plan in a NaN-filled arena, its GEMMs with
the settings the runtime gives cuBLASLt, its copies and kernel parameters)
with the kernels compiled for the CPU (each launch's blocks and threads, the
reordered reductions, the narrowed GEMM operands, the folded fills); its
outputs must match the plain CPU path's (the same
fp16 program, summed in another order: relative L2 error below 2e-3) and
onnxruntime's fp32 results within the fp16 bound of the model.

Compiling and emulating need neither the CUDA toolkit nor a GPU, so those
tests always run. The listing needs ``amp-run-gpu`` (built where CMake
finds the toolkit; the listing tests skip without it). Where a GPU is
present the artifact also runs on it (``amp-run-gpu --compare-to`` the
emulation's outputs); elsewhere that test is skipped with the message "no
GPU". The torch exports (resnet18, bert_encoder,
gpt2_decoder; Debian's torch 1.13, opset 17) come from
``/tmp/amp-models/opset17`` when its manifest lists them, else they are
exported here (about 40 s; skipped without python3-torch).
"""

import os
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from amp_test_utils import DEBIAN_PYTHON, SHARED_EXPORTS, has_debian_torch, plain_export
from amp_testmodels import build_onnx

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BUILD = os.path.join(REPO, "build", "bin")
EXPORT_SCRIPT = os.path.join(REPO, "test", "models", "amp_testmodels", "export_torch.py")
TORCH_MODELS = ("resnet18", "bert_encoder", "gpt2_decoder")
# ||amp f16 - onnxruntime fp32|| / ||ref|| bounds (test_cpu_real_models.py).
F16_BOUND = {"resnet18": 2e-3, "bert_encoder": 2e-3, "gpt2_decoder": 2e-3,
             "mlp": 2e-3, "conv_block": 2e-3, "small_convnet": 2e-3, "reductions": 2e-3}
EMULATION_BOUND = 2e-3
TIMEOUT = 900

pytestmark = pytest.mark.slow


def amp_run_gpu():
    path = os.environ.get("AMP_RUN_GPU") or os.path.join(BUILD, "amp-run-gpu")
    if not os.access(path, os.X_OK):
        pytest.skip("amp-run-gpu is not built (no CUDA toolkit)")
    return path


def run(command, **kwargs):
    proc = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          timeout=TIMEOUT, **kwargs)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, command))} exited {proc.returncode}\n"
        f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc


def rel_l2(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """``models(name)``: the path of an ONNX model (built or exported once)."""
    root = tmp_path_factory.mktemp("cuda-models")
    cache = {}

    def get(name):
        if name in cache:
            return cache[name]
        path = root / f"{name}.onnx"
        if name == "small_convnet":
            run(["python3", os.path.join(REPO, "test", "lit-tools", "onnx-encode.py"),
                 os.path.join(REPO, "examples", "small_convnet.onnxtxt"), path])
        elif name in ("mlp", "conv_block"):
            onnx.save(getattr(build_onnx, name)(17), path)
        elif name == "reductions":
            onnx.save(reductions_model(), path)
        else:
            cached = plain_export(SHARED_EXPORTS, name)
            if cached:
                path = cached
            else:
                if not has_debian_torch():
                    pytest.skip("Debian's python3-torch is missing")
                run([DEBIAN_PYTHON, EXPORT_SCRIPT, "--out", root, "--opset", "17",
                     "--models", ",".join(TORCH_MODELS)])
                for other in TORCH_MODELS:
                    cache[other] = str(root / f"{other}.onnx")
                path = cache[name]
        cache[name] = str(path)
        return cache[name]

    return get


def reductions_model():
    """Long reductions with few outputs, which the CUDA lowering splits
    across threads: row means of [8, 16384] and a full sum of squares."""
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16384])
    mean = helper.make_tensor_value_info("mean", TensorProto.FLOAT, [8, 1])
    total = helper.make_tensor_value_info("total", TensorProto.FLOAT, [])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["mean"], name="row_mean"),
             helper.make_node("ReduceSumSquare", ["x"], ["total"], keepdims=0,
                              name="sum_squares")]
    graph = helper.make_graph(nodes, "reductions", [x], [mean, total], [axes])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def onnxruntime_outputs(path, inputs):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {value.name: array for value, array in zip(session.get_inputs(), inputs)}
    return session.run(None, feeds)


def make_inputs(path, folder):
    """Seeded inputs (.npy files) for every graph input of the model."""
    model = onnx.load(path, load_external_data=False)
    initializers = {init.name for init in model.graph.initializer}
    rng = np.random.default_rng(0)
    files, arrays = [], []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        shape = [d.dim_value or 1 for d in value.type.tensor_type.shape.dim]
        if value.type.tensor_type.elem_type == onnx.TensorProto.INT64:
            array = rng.integers(0, 100, size=shape, dtype=np.int64)
        else:
            array = rng.standard_normal(shape).astype(np.float32)
        files.append(os.path.join(folder, f"input{len(files)}.npy"))
        np.save(files[-1], array)
        arrays.append(array)
    return files, arrays


CASES = [("reductions", "f16"), ("small_convnet", "f16"), ("mlp", "f16"), ("conv_block", "f16"),
         ("conv_block", "bf16"), ("resnet18", "f16"), ("bert_encoder", "f16"),
         ("bert_encoder", "bf16"), ("gpt2_decoder", "f16")]


@pytest.mark.parametrize("name,amp_type", CASES, ids=[f"{n}-{t}" for n, t in CASES])
def test_artifact_lists_cublaslt_gemms(amp_opt, models, tmp_path, name, amp_type):
    """The artifact's listing (amp-run-gpu, built with the CUDA toolkit)
    shows its GEMMs as cuBLASLt calls with fp32 accumulation."""
    runner = amp_run_gpu()
    source = models(name)
    artifact = tmp_path / f"{name}.ampgpu"
    run([amp_opt.path, source, "--amp-target=cuda", f"--amp-type={amp_type}",
         "-o", artifact])
    listing = run([runner, artifact, "--describe"]).stdout
    assert "step 0:" in listing
    graph = onnx.load(source, load_external_data=False).graph
    if any(node.op_type in ("MatMul", "Gemm") for node in graph.node):
        assert f"gemm {amp_type}x{amp_type}->f32" in listing, listing[:4000]


@pytest.mark.parametrize("name,amp_type", CASES, ids=[f"{n}-{t}" for n, t in CASES])
def test_compile_and_emulate(amp_opt, amp_run, models, tmp_path, name, amp_type):
    """The artifact compiles (no CUDA toolkit or GPU needed); the artifact
    run on the CPU computes what the CPU path computes (so its memory plan,
    GEMM settings and kernel parameters are right: a GEMM's beta set to 1,
    or overlapping arena buffers, fail here) and matches onnxruntime."""
    source = models(name)
    artifact = tmp_path / f"{name}.ampgpu"
    run([amp_opt.path, source, "--amp-target=cuda", f"--amp-type={amp_type}",
         "-o", artifact])
    assert artifact.read_bytes()[:6] == b"AMPGPU", artifact.read_bytes()[:16]
    graph = onnx.load(source, load_external_data=False).graph

    inputs, arrays = make_inputs(source, tmp_path)
    flags = [f"--amp-type={amp_type}"] + [f"-i={path}" for path in inputs]
    cpu_dir, emulated_dir = tmp_path / "cpu", tmp_path / "emulated"
    run([amp_run, source, *flags, "--output-dir", cpu_dir])
    run([amp_run, source, *flags, "--amp-cuda-emulate", "--output-dir", emulated_dir])
    reference = onnxruntime_outputs(source, arrays)
    outputs = sorted(os.listdir(cpu_dir))
    assert outputs and outputs == sorted(os.listdir(emulated_dir))
    for file, want in zip([o.name + ".npy" for o in graph.output], reference):
        cpu = np.load(cpu_dir / file)
        emulated = np.load(emulated_dir / file)
        assert cpu.shape == emulated.shape == want.shape
        assert np.all(np.isfinite(emulated))
        assert rel_l2(emulated, cpu) < EMULATION_BOUND, (file, rel_l2(emulated, cpu))
        bound = F16_BOUND[name] * (8 if amp_type == "bf16" else 1)
        if np.linalg.norm(want) > 1e-6:
            assert rel_l2(emulated, want) < bound, (file, rel_l2(emulated, want))


def test_emulation_errors(amp_run, models, tmp_path):
    """What the emulation cannot run is a clean error (exit 1, no outputs):
    a dynamic batch (the CUDA target needs static shapes), and asking for
    the CPU program's LLVM dialect, which the emulation does not build."""
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 4])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 4])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"], name="r")],
                                   "dynamic", [x], [y])
    dynamic = tmp_path / "dynamic.onnx"
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]),
              dynamic)
    cases = [([dynamic, "--random-inputs"], "static"),
             ([models("mlp"), "--random-inputs", "--dump-llvm-dialect", tmp_path / "l.mlir"],
              "--dump-llvm-dialect writes the CPU program")]
    for args, message in cases:
        out = tmp_path / "out"
        proc = subprocess.run([amp_run, *map(str, args), "--amp-cuda-emulate",
                               "--output-dir", str(out)],
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.returncode == 1, (args, proc.returncode, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
        assert not out.exists()


def gpu_available(runner, artifact):
    proc = subprocess.run([runner, str(artifact), "--random-inputs"], capture_output=True,
                          text=True, timeout=TIMEOUT)
    if proc.returncode == 3 and "no CUDA device" in proc.stderr:
        return False, proc.stderr.strip()
    return True, ""


@pytest.mark.parametrize("name", ["mlp", "conv_block", "small_convnet"])
def test_gpu_matches_emulation(amp_opt, amp_run, models, tmp_path, name):
    """On a GPU, the artifact's outputs match the emulation's (fp16)."""
    runner = amp_run_gpu()
    source = models(name)
    artifact = tmp_path / f"{name}.ampgpu"
    run([amp_opt.path, source, "--amp-target=cuda", "-o", artifact])
    available, why = gpu_available(runner, artifact)
    if not available:
        pytest.skip(f"no GPU: {why}")
    inputs, _ = make_inputs(source, tmp_path)
    emulated = tmp_path / "emulated"
    run([amp_run, source, "--amp-type=f16", "--amp-cuda-emulate", "--output-dir", emulated,
         *[f"-i={path}" for path in inputs]])
    graph = onnx.load(source, load_external_data=False).graph
    references = [emulated / (o.name + ".npy") for o in graph.output]
    run([runner, artifact, *sum([["-i", p] for p in inputs], []),
         *sum([["--compare-to", str(r)] for r in references], []),
         "--rtol", "2e-2", "--atol", "1e-3"])


def test_artifact_shares_arena_bytes(amp_opt, models, tmp_path):
    """The memory plan reuses bytes: ResNet-18's arena is a fraction of the
    sum of its buffers (the listing prints both)."""
    source = models("resnet18")
    artifact = tmp_path / "resnet18.ampgpu"
    run([amp_opt.path, source, "--amp-target=cuda", "-o", artifact])
    listing = run([amp_run_gpu(), artifact, "--describe"]).stdout
    arena = int(listing.split("arena: ")[1].split(" bytes")[0])
    unshared = int(listing.split("buffers (")[1].split(" without reuse")[0])
    # 10.7 of 32.1 MiB (2026-12-05; each padding fills its own buffer, no
    # zero tensor shared and copied per padding).
    assert 0 < arena * 2.5 < unshared, listing[:400]


def test_python_bindings(models, amp_opt, tmp_path):
    """The ctypes bindings load the runtime; without a GPU creating a
    context raises AmpGpuError naming the missing device."""
    amp_run_gpu()
    library = os.path.join(REPO, "build", "lib", "libamp_gpu.so")
    import sys
    sys.path.insert(0, os.path.join(REPO, "runtime", "cuda", "python"))
    from amp_gpu import AmpGpuError, Runtime
    try:
        runtime = Runtime(library)
    except AmpGpuError as error:
        assert "no CUDA device" in str(error)
        pytest.skip(f"no GPU: {error}")
    source = models("mlp")
    artifact = tmp_path / "mlp.ampgpu"
    run([amp_opt.path, source, "--amp-target=cuda", "-o", artifact])
    program = runtime.load(str(artifact))
    outputs = program.run(program.random_inputs())
    assert all(np.all(np.isfinite(o)) for o in outputs)
    assert program.benchmark(iterations=5) > 0
    program.close()
    runtime.close()


def test_train_step_artifact_listing(amp_opt, models, tmp_path):
    """A fp16 train step with dynamic loss scaling compiles for CUDA
    (--amp-cuda-entry=train_step) with the scale in and found_inf out."""
    runner = amp_run_gpu()
    source = models("mlp")
    artifact = tmp_path / "train.ampgpu"
    run([amp_opt.path, source, "--train", "--loss=mse", "--amp-target=cuda",
         "--amp-cuda-entry=train_step", "-o", artifact])
    listing = run([runner, artifact, "--describe"]).stdout
    assert "input 'loss_scale': f32[]" in listing
    assert "output 'found_inf': f32[]" in listing
    assert "gemm f16xf16->f32" in listing


def test_train_step_compiles_and_trains_alike(amp_opt, amp_run, models, tmp_path):
    """The train step compiles for CUDA without a toolkit, and training with
    its kernels emulated follows the CPU path's trajectory step for step
    (losses, skipped steps, loss scale)."""
    source = models("mlp")
    artifact = tmp_path / "train.ampgpu"
    run([amp_opt.path, source, "--train", "--loss=mse", "--amp-target=cuda",
         "--amp-cuda-entry=train_step", "-o", artifact])
    assert artifact.stat().st_size > 0
    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.standard_normal((64, 64)).astype(np.float32))
    np.save(tmp_path / "y.npy", rng.standard_normal((64, 10)).astype(np.float32))
    command = [amp_run, source, "--train", "--loss=mse", "--amp-type=f16",
               "--data", tmp_path / "x.npy", "--labels", tmp_path / "y.npy",
               "--batch-size", "4", "--steps", "20", "--log-every", "1", "--no-shuffle"]
    cpu = run(command).stdout
    emulated = run(command + ["--amp-cuda-emulate"]).stdout

    def trajectory(text):
        return [line.split("steps/s")[0].rsplit(None, 1)[0] for line in text.splitlines()
                if line.startswith("step ")]
    assert len(trajectory(cpu)) == 20
    assert trajectory(emulated) == trajectory(cpu)
