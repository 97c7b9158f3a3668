"""The library layers of docs/Design.md, checked on the #include lines.

Each folder of lib/ (and its headers under include/amp/) may include only
what its layer allows: the runtime layer no MLIR or LLVM, the semantics
helpers no amp dialect, the backend-neutral lowering no CPU pass, nothing
below the execution layer anything above it. A violation names the file,
the line and the rule.
"""

import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)

# Layer name -> (source folders, header folders).
LAYERS = {
    "runtime-host": (["lib/Runtime/Host"], ["include/amp/Runtime/HostTensor.h",
                                            "include/amp/Runtime/FloatConversion.h",
                                            "include/amp/Runtime/MemRefABI.h",
                                            "include/amp/Runtime/Npz.h",
                                            "include/amp/Runtime/BatchOrder.h",
                                            "include/amp/Runtime/MpiLaunch.h"]),
    "runtime-cpu": (["lib/Runtime/Cpu"], ["include/amp/Runtime/CpuRuntime.h"]),
    "runtime-cuda": (["runtime/cuda/src", "runtime/cuda/tools"], ["runtime/cuda/include"]),
    "support": ([], ["include/amp/Support"]),
    "semantics": (["lib/Dialect/Amp/Semantics"], ["include/amp/Dialect/Amp/Semantics"]),
    "dialect": (["lib/Dialect/Amp/IR"], ["include/amp/Dialect"]),
    "gradients": (["lib/Dialect/Amp/Gradients"], ["include/amp/Dialect/Amp/Gradients"]),
    "decompositions": (["lib/Dialect/Amp/Decompositions"],
                       ["include/amp/Dialect/Amp/Decompositions"]),
    "target": (["lib/Target/ONNX"], ["include/amp/Target/ONNX"]),
    "target-torch": (["lib/Target/Torch"], ["include/amp/Target/Torch"]),
    "transforms": (["lib/Transforms"], ["include/amp/Transforms"]),
    "amp-to-linalg": (["lib/Conversion/AmpToLinalg"], ["include/amp/Conversion/AmpToLinalg"]),
    "linalg-to-cpu": (["lib/Conversion/LinalgToCpu"], ["include/amp/Conversion/LinalgToCpu"]),
    "linalg-to-cuda": (["lib/Conversion/LinalgToCUDA"], ["include/amp/Conversion/LinalgToCUDA"]),
    "pipelines": (["lib/Pipelines"], ["include/amp/Pipelines"]),
    "target-cuda": (["lib/Target/CUDA"], ["include/amp/Target/CUDA"]),
    "training": (["lib/Training"], ["include/amp/Training"]),
    "execution": (["lib/Execution"], ["include/amp/Execution"]),
    # The embedding API: its header is free of LLVM and MLIR (bindings built
    # with RTTI and exceptions include it), its sources are above execution.
    "api-header": ([], ["include/amp/API"]),
    "api": (["lib/API"], []),
    # The C API: its header is C over MLIR's C API (mlir-c/ only).
    "capi-header": ([], ["include/amp-c"]),
    "capi": (["lib/CAPI"], []),
    "python-binding": (["python/src"], []),
}

# amp headers each layer may include (prefixes), besides its own.
AMP_ALLOWED = {
    "runtime-host": ["amp/Runtime/HostTensor.h", "amp/Runtime/FloatConversion.h",
                     "amp/Runtime/MemRefABI.h", "amp/Runtime/Npz.h",
                     "amp/Runtime/BatchOrder.h", "amp/Runtime/MpiLaunch.h"],
    "runtime-cpu": ["amp/Runtime/"],
    # amp-train-gpu reads data and state files and batches as amp-run does.
    "runtime-cuda": ["amp/Runtime/HostTensor.h", "amp/Runtime/FloatConversion.h",
                     "amp/Runtime/BatchOrder.h", "amp/Runtime/Npz.h",
                     "amp/Runtime/MpiLaunch.h"],
    "support": ["amp/Support/"],
    "semantics": ["amp/Dialect/Amp/Semantics/"],
    "dialect": ["amp/Support/", "amp/Dialect/"],
    "gradients": ["amp/Support/", "amp/Dialect/"],
    "decompositions": ["amp/Support/", "amp/Dialect/"],
    "target": ["amp/Support/", "amp/Dialect/", "amp/Target/", "amp/Runtime/"],
    # The Torch importer builds amp ops; it knows nothing of ONNX.
    "target-torch": ["amp/Dialect/", "amp/Target/Torch/"],
    "transforms": ["amp/Support/", "amp/Dialect/", "amp/Transforms/", "amp/Runtime/"],
    "amp-to-linalg": ["amp/Support/", "amp/Dialect/", "amp/Conversion/AmpToLinalg/"],
    "linalg-to-cpu": ["amp/Support/", "amp/Dialect/", "amp/Conversion/"],
    "linalg-to-cuda": ["amp/Support/", "amp/Dialect/", "amp/Conversion/LinalgToCUDA/"],
    "target-cuda": ["amp/Support/", "amp/Dialect/", "amp/Conversion/LinalgToCUDA/", "amp/Pipelines/",
                    "amp/Target/CUDA/", "amp/Runtime/FloatConversion.h"],
    "pipelines": ["amp/Support/", "amp/Dialect/", "amp/Conversion/", "amp/Transforms/", "amp/Target/",
                  "amp/Pipelines/", "amp/InitAllDialects.h"],
    "training": ["amp/Support/", "amp/Dialect/", "amp/Pipelines/", "amp/Target/ONNX/ONNXImporter.h",
                 "amp/Training/", "amp/Transforms/"],
    "execution": ["amp/"],
    "api-header": ["amp/API/", "amp/Runtime/HostTensor.h"],
    "api": ["amp/"],
    "capi-header": [],
    "capi": ["amp/"],
    "python-binding": ["amp/API/", "amp/Runtime/HostTensor.h"],
}

# Non-amp headers a layer must not include (prefixes).
FORBIDDEN = {
    "support": ["mlir/", "onnx/", "dnnl"],
    "runtime-host": ["mlir/", "llvm/", "onnx/", "dnnl"],
    "runtime-cpu": ["mlir/", "llvm/", "onnx/"],
    "runtime-cuda": ["mlir/", "llvm/", "onnx/", "dnnl"],
    "linalg-to-cuda": ["dnnl"],
    "semantics": ["mlir/Pass/", "mlir/Transforms/", "mlir/Conversion/",
                  "mlir/Dialect/Func", "mlir/Dialect/Linalg", "onnx/"],
    "amp-to-linalg": ["dnnl"],
    "target-torch": ["onnx/", "dnnl"],
    "api-header": ["mlir/", "llvm/", "onnx/", "dnnl"],
    "capi-header": ["mlir/", "llvm/", "onnx/", "dnnl"],
    "python-binding": ["mlir/", "llvm/", "onnx/", "dnnl"],
}


def _files(paths):
    for rel in paths:
        path = REPO / rel
        if path.is_file():
            yield path
        elif path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".h", ".cpp"))


def _violations():
    found = []
    for layer, (sources, headers) in LAYERS.items():
        for path in _files(sources + headers):
            text = path.read_text()
            for match in INCLUDE.finditer(text):
                header = match.group(1)
                line = text.count("\n", 0, match.start()) + 1
                where = f"{path.relative_to(REPO)}:{line}: #include <{header}>"
                if header.startswith("amp/"):
                    if not any(header.startswith(p) for p in AMP_ALLOWED[layer]):
                        found.append(f"{where}: layer '{layer}' may not use it")
                elif any(header.startswith(p) for p in FORBIDDEN.get(layer, [])):
                    found.append(f"{where}: layer '{layer}' must not depend on it")
    return found


def test_every_library_folder_has_a_layer():
    """A new folder under lib/ must be placed in the layer table."""
    known = {src for sources, _ in LAYERS.values() for src in sources}
    folders = set()
    for cmake in (REPO / "lib").rglob("CMakeLists.txt"):
        text = cmake.read_text()
        if "add_mlir_library(" in text or "add_library(" in text or \
                "add_mlir_dialect_library(" in text:
            folders.add(str(cmake.parent.relative_to(REPO)))
    unplaced = sorted(f for f in folders if not any(
        f == k or f.startswith(k + "/") for k in known))
    assert not unplaced, f"library folders without a layer: {unplaced}"


def test_includes_respect_the_layers():
    violations = _violations()
    assert not violations, "\n".join(violations)


def test_checker_catches_a_violation(tmp_path, monkeypatch):
    """The check can fail: a runtime file that includes MLIR is reported."""
    fake = tmp_path / "lib" / "Runtime" / "Host"
    fake.mkdir(parents=True)
    (fake / "Bad.cpp").write_text('#include "mlir/IR/Value.h"\n'
                                  '#include "amp/Execution/CpuProgram.h"\n')
    monkeypatch.setattr(__import__(__name__), "REPO", tmp_path)
    violations = _violations()
    assert any("mlir/IR/Value.h" in v for v in violations), violations
    assert any("amp/Execution/CpuProgram.h" in v for v in violations), violations


def test_tools_are_thin():
    """The drivers keep flags and printing; library code lives in lib/."""
    for tool in ("amp-opt/amp-opt.cpp", "amp-run/amp-run.cpp"):
        lines = len((REPO / "tools" / tool).read_text().splitlines())
        assert lines <= 400, f"tools/{tool} has {lines} lines"
