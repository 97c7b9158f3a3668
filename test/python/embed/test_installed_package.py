"""The installed package: ``cmake --install`` into a temporary prefix, the
out-of-tree example (examples/embed) configured against it with
``find_package(Amp CONFIG REQUIRED)``, built and run, and the installed
plugin loaded by upstream mlir-opt.

The build tree is the one the tools under test come from (``$AMP_OPT``'s
``build/bin/..``). The example's ONNX result is checked with onnx's checker
and against onnxruntime's fp32 run of the original model; its linalg result
for the FileCheck input of test/Transforms/PrecisionModels/linalg.mlir must
hold low-precision matmuls and no amp op; an unreadable input must fail with
exit status 1 and leave no output file.
"""

import os
import re
import shutil
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MLIR_OPT = shutil.which("mlir-opt-19") or "/usr/lib/llvm-19/bin/mlir-opt"
TIMEOUT = 900


def run(command, **kwargs):
    proc = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, **kwargs)
    assert proc.returncode == 0, (f"{' '.join(map(str, command))}: exit {proc.returncode}\n"
                                  f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture(scope="module")
def installed(amp_opt, tmp_path_factory):
    """(prefix, example binary): the build tree installed and the example
    built against it (once per module)."""
    build = os.path.dirname(os.path.dirname(amp_opt.path))
    assert os.path.exists(os.path.join(build, "CMakeCache.txt")), f"{build} is not a build tree"
    root = tmp_path_factory.mktemp("installed")
    prefix = root / "prefix"
    run(["cmake", "--install", build, "--prefix", str(prefix)])
    example = root / "embed-build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run(["cmake", *generator, "-S", os.path.join(REPO, "examples", "embed"), "-B", str(example),
         f"-DAmp_DIR={prefix}/lib/cmake/amp", "-DCMAKE_BUILD_TYPE=Release"])
    run(["cmake", "--build", str(example), "-j", "2"])
    binary = example / "amp-embed-compile"
    assert os.access(binary, os.X_OK)
    return prefix, binary


def test_install_layout(installed, amp_opt):
    """Headers (with the generated .inc and the .td files), the CMake
    package, the tools and the plugin are where the docs say, and the
    package does not point back into the build or source tree."""
    prefix, _ = installed
    build = os.path.dirname(os.path.dirname(amp_opt.path))
    for path in ["include/amp/Transforms/Passes.h", "include/amp/Transforms/Passes.h.inc",
                 "include/amp/Transforms/PrecisionModels.h",
                 "include/amp/Dialect/Amp/IR/AmpOps.td", "include/amp/Dialect/Amp/IR/AmpOps.h.inc",
                 "include/amp/Dialect/Amp/IR/AmpInterfaces.td",
                 "include/amp/Dialect/Amp/IR/AmpPrecisionInterface.h", "include/amp-c/Amp.h",
                 "lib/libAmpCAPI.a",
                 "lib/cmake/amp/AmpConfig.cmake", "lib/cmake/amp/AmpConfigVersion.cmake",
                 "lib/cmake/amp/AmpTargets.cmake", "lib/libAmpTransforms.a",
                 "lib/libAmpPrecisionModels.a", "lib/libAmpPlugin.so", "bin/amp-opt",
                 "bin/amp-run"]:
        assert (prefix / path).exists(), f"{path} is not installed"
    targets = (prefix / "lib/cmake/amp/AmpTargets.cmake").read_text()
    for name in ["Amp::AmpTransforms", "Amp::AmpPipelines", "Amp::MLIRAmpDialect",
                 "Amp::AmpPrecisionModels", "Amp::AmpONNXImport"]:
        assert name in targets, f"{name} is not exported"
    for name in ["AmpConfig.cmake", "AmpTargets.cmake", "AmpTargets-release.cmake"]:
        text = (prefix / "lib/cmake/amp" / name).read_text()
        for tree in (build, REPO):
            assert tree not in text, f"{name} refers to {tree}"


def test_example_compiles_onnx(installed, tmp_path):
    """amp-embed-compile onnx: the bundled example model, imported, through
    amp-front-end, written as mixed-precision ONNX that onnxruntime runs
    within 1e-3 of the fp32 model (its outputs are probabilities)."""
    _, binary = installed
    source = tmp_path / "small_convnet.onnx"
    run(["python3", os.path.join(REPO, "test", "lit-tools", "onnx-encode.py"),
         os.path.join(REPO, "examples", "small_convnet.onnxtxt"), str(source)])
    mixed = tmp_path / "small_convnet.mp.onnx"
    run([binary, "onnx", str(source), str(mixed)])
    model = onnx.load(str(mixed))
    onnx.checker.check_model(model, full_check=True)
    assert any(t.data_type == onnx.TensorProto.FLOAT16 for t in model.graph.initializer), \
        "no f16 weight in the example's output"
    x = np.random.default_rng(0).random((1, 3, 16, 16), dtype=np.float32)
    ref = ort.InferenceSession(str(source), providers=["CPUExecutionProvider"]).run(None, {"image": x})[0]
    out = ort.InferenceSession(str(mixed), providers=["CPUExecutionProvider"]).run(None, {"image": x})[0]
    assert out.dtype == np.float32 and out.shape == ref.shape
    assert 0 < np.abs(out - ref).max() <= 1e-3


@pytest.mark.parametrize("amp_type", ["f16", "bf16"])
def test_example_autocasts_linalg(installed, tmp_path, amp_type):
    """amp-embed-compile linalg: amp-autocast with the upstream models on a
    linalg program, no amp op in the result, the matmul in the low type."""
    _, binary = installed
    out = tmp_path / "linalg.out.mlir"
    proc = run([binary, "linalg", os.path.join(REPO, "test", "Transforms", "PrecisionModels",
                                                "linalg.mlir"), str(out), amp_type])
    assert re.search(rf"% of FLOPs in {amp_type}", proc.stderr), proc.stderr
    text = out.read_text()
    assert not re.findall(r"= amp\.(\w+)", text), text
    assert re.search(rf"linalg\.matmul ins\(%\S+, %\S+ : tensor<4x16x{amp_type}>, "
                     rf"tensor<16x8x{amp_type}>\) outs\(%\S+ : tensor<4x8xf32>\)", text), text


def test_example_errors_leave_no_output(installed, tmp_path):
    _, binary = installed
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07\x12\xff\xff\xff\xff")
    for mode, source in [("onnx", tmp_path / "missing.onnx"), ("onnx", bad),
                         ("linalg", tmp_path / "missing.mlir")]:
        out = tmp_path / f"out.{mode}"
        proc = subprocess.run([binary, mode, str(source), str(out)], capture_output=True,
                              text=True, timeout=TIMEOUT)
        assert proc.returncode == 1, (mode, source, proc.returncode, proc.stderr)
        assert "error" in proc.stderr and source.name in proc.stderr, proc.stderr
        assert not out.exists(), f"{out} left behind"


def test_installed_plugin_loads_into_mlir_opt(installed, tmp_path):
    """The installed libAmpPlugin.so (its libLLVM found through its RUNPATH)
    gives upstream mlir-opt amp-autocast on TOSA."""
    prefix, _ = installed
    plugin = prefix / "lib" / "libAmpPlugin.so"
    proc = run([MLIR_OPT, f"--load-dialect-plugin={plugin}", f"--load-pass-plugin={plugin}",
                os.path.join(REPO, "test", "Transforms", "PrecisionModels", "tosa.mlir"),
                "--pass-pipeline=builtin.module(amp-autocast)"],
               env={**os.environ, "LD_BIND_NOW": "1"})
    assert "Failed to load" not in proc.stderr, proc.stderr
    assert "tosa.cast" in proc.stdout and "xf16>" in proc.stdout
