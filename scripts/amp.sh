#!/usr/bin/env bash
# amp's one entry point for set-up, build, demo and tests.
#
#   scripts/amp.sh demo   install what is missing, build, import the bundled
#                         example model and print the result
#   scripts/amp.sh test   install what is missing, build, run every test
#                         (lit + FileCheck, GoogleTest, fuzzing, pytest)
#   scripts/amp.sh build  install what is missing and build only (with the
#                         Torch virtual environment below)
#   scripts/amp.sh sanitize
#                         build amp with ASan + UBSan (build-sanitize/) and
#                         run lit, GoogleTest and the tool-driving pytest
#                         files on it; any sanitizer report fails (a second
#                         build plus ~23 min of tests; not part of `test`)
#
# Installing needs root (apt-get, pip); without root the script prints what
# to install and stops if something is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${AMP_BUILD_DIR:-$ROOT/build}"
PYTHON="${PYTHON:-python3}"
LLVM_PREFIX=/usr/lib/llvm-19
JOBS="${AMP_JOBS:-2}"
# Let ccache share objects between clones of the repository.
export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1

APT_PACKAGES=(cmake ninja-build ccache g++ llvm-19-dev libmlir-19-dev
  mlir-19-tools llvm-19-tools libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libonnx-testdata time python3-torch python3-torchvision
  libdnnl-dev libzip-dev libzstd-dev clang-19 libclang-rt-19-dev chromium
  libopenmpi-dev openmpi-bin)
# onnx is pinned: the backend node tests and the operator version table
# (lib/Target/ONNX/OnnxOpVersions.inc) come from this release.
# pytest is pinned below 9.2: there pytest-xdist 3.8's --dist loadgroup no
# longer groups (pytest-dev/pytest-xdist#1386); test/python/xdist_groups.py
# fails the run if grouping does not take effect.
PIP_PACKAGES=(onnx==1.23.2 numpy pytest==9.1.1 pytest-xdist==3.8.0 onnxruntime
  scikit-learn nanobind scikit-build-core)
# amp_mlir.torch needs torch.export (PyPI's torch 2.x; Debian's torch 1.13,
# which the ONNX test exports use, has none). It lives in a virtual
# environment beside $PYTHON's packages (--system-site-packages: it sees the
# installed amp_mlir, numpy, pytest, onnx), outside the clone so that clones
# share it; pip's cache serves a reinstall.
TORCH_VENV="${AMP_TORCH_VENV:-$HOME/.cache/amp/torch-venv}"
TORCH_PACKAGES=(torch==2.15.0 torchvision==0.29.2)

log() { printf '== %s\n' "$*" >&2; }

install_deps() {
  local missing_apt=() missing_pip=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing_apt+=("$p")
  done
  for p in "${PIP_PACKAGES[@]}"; do
    local module="${p%%==*}" version=""
    # The import name where it differs from the package name.
    [[ "$module" == scikit-learn ]] && module=sklearn
    [[ "$module" == scikit-build-core ]] && module=scikit_build_core
    [[ "$module" == pytest-xdist ]] && module=xdist
    [[ "$p" == *==* ]] && version="${p#*==}"
    "$PYTHON" -c "import sys, $module
sys.exit(bool('$version') and $module.__version__ != '$version')" 2>/dev/null \
      || missing_pip+=("$p")
  done
  # amp-train-gpu's NCCL: the system's (CUDA's folder) or PyPI's wheel, only
  # where the CUDA toolkit is (the runtime needs nccl.h to build it).
  if [[ -x /usr/local/cuda/bin/nvcc ]] && ! compgen -G "/usr/include/nccl.h" >/dev/null \
    && ! compgen -G "/usr/local/include/nccl.h" >/dev/null \
    && ! compgen -G "/usr/local/cuda/include/nccl.h" >/dev/null \
    && ! "$PYTHON" -c "import nvidia.nccl" 2>/dev/null; then
    missing_pip+=(nvidia-nccl-cu13)
  fi
  if ((${#missing_apt[@]} + ${#missing_pip[@]} == 0)); then
    return
  fi
  if [[ $(id -u) -ne 0 ]]; then
    log "missing Debian packages: ${missing_apt[*]:-none}"
    log "missing Python packages: ${missing_pip[*]:-none}"
    log "install them (sudo apt-get install ...; $PYTHON -m pip install ...) and rerun"
    exit 1
  fi
  if ((${#missing_apt[@]})); then
    log "apt-get install ${missing_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_apt[@]}" >/dev/null
  fi
  if ((${#missing_pip[@]})); then
    log "pip install ${missing_pip[*]}"
    "$PYTHON" -m pip install -q "${missing_pip[@]}"
  fi
}

install_torch_venv() {
  if "$TORCH_VENV/bin/python" -c "import torch, torchvision, torch.export
import sys; sys.exit(torch.__version__.split('+')[0] != '${TORCH_PACKAGES[0]#*==}')" 2>/dev/null; then
    return
  fi
  if [[ $(id -u) -ne 0 && ! -w "$(dirname "$TORCH_VENV")" ]]; then
    log "the Torch tests need $TORCH_VENV: $PYTHON -m venv --system-site-packages $TORCH_VENV" \
      "&& $TORCH_VENV/bin/pip install ${TORCH_PACKAGES[*]}"
    exit 1
  fi
  log "virtual environment $TORCH_VENV with ${TORCH_PACKAGES[*]}"
  local start=$SECONDS
  mkdir -p "$(dirname "$TORCH_VENV")"
  "$PYTHON" -m venv --system-site-packages "$TORCH_VENV"
  "$TORCH_VENV/bin/python" -m pip install -q "${TORCH_PACKAGES[@]}"
  log "torch installed in $((SECONDS - start)) s"
}

build() {
  log "configure + build ($BUILD)"
  if [[ ! -f "$BUILD/build.ninja" ]]; then
    cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
      -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/build/utils/lit/lit.py" \
      -DPython3_EXECUTABLE="$(command -v "$PYTHON")" >/dev/null
  fi
  local targets=(amp-opt amp-run amp-unittests AmpPlugin)
  # The CUDA runtime's tools exist where CMake found the CUDA toolkit (no
  # grep -q: under pipefail, ninja's SIGPIPE would fail the test).
  if ninja -C "$BUILD" -t targets all 2>/dev/null | grep '^amp-run-gpu:' >/dev/null; then
    targets+=(amp-run-gpu amp-gpu-make-gemm amp-train-gpu)
  else
    log "no CUDA toolkit: amp-run-gpu is not built (its tests are skipped)"
  fi
  ninja -C "$BUILD" -j "$JOBS" "${targets[@]}"
  install_python_package
}

# The amp_mlir package (python/), built in the same tree (it reuses the
# libraries) and installed into $PYTHON's environment: the tests use the
# installed package, as a user would.
install_python_package() {
  log "pip install $ROOT/python (the amp_mlir package)"
  local start=$SECONDS
  CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" "$PYTHON" -m pip install -q \
    --root-user-action=ignore --no-build-isolation "$ROOT/python" \
    -C build-dir="$BUILD"
  log "amp_mlir installed in $((SECONDS - start)) s"
}

demo() {
  local out="$BUILD/demo"
  mkdir -p "$out"
  "$PYTHON" "$ROOT/test/lit-tools/onnx-encode.py" \
    "$ROOT/examples/small_convnet.onnxtxt" "$out/small_convnet.onnx"
  log "amp-opt $out/small_convnet.onnx -o $out/small_convnet.mp.mlir --amp-report=$out/report.json"
  "$BUILD/bin/amp-opt" "$out/small_convnet.onnx" -o "$out/small_convnet.mp.mlir" \
    --amp-report="$out/report.json"
  sed -n '1,/^}/p' "$out/small_convnet.mp.mlir"
  log "amp-opt $out/small_convnet.onnx -o $out/small_convnet.mp.onnx (mixed-precision ONNX)"
  "$BUILD/bin/amp-opt" "$out/small_convnet.onnx" -o "$out/small_convnet.mp.onnx"
  "$PYTHON" - "$out/small_convnet.onnx" "$out/small_convnet.mp.onnx" \
    "$out/image.npy" "$out/reference.npy" <<'PY'
import sys
import numpy as np
import onnx
import onnxruntime as ort
fp32, mixed = sys.argv[1], sys.argv[2]
onnx.checker.check_model(onnx.load(mixed), full_check=True)
x = np.random.default_rng(0).random((1, 3, 16, 16), dtype=np.float32)
ref = ort.InferenceSession(fp32, providers=["CPUExecutionProvider"]).run(None, {"image": x})[0]
out = ort.InferenceSession(mixed, providers=["CPUExecutionProvider"]).run(None, {"image": x})[0]
error = np.abs(out - ref).max()
# The outputs are probabilities (<= 1): fp16 keeps 11 bits, so a few ops
# of rounding stay far below 1e-3 (measured: 7.3e-5).
bound = 1e-3
print(f"onnxruntime, fp16 model vs fp32 model: max |error| = {error:.2e} (bound {bound:g})")
if not error <= bound:
    sys.exit(f"error: the fp16 model differs from fp32 by {error:.2e}, more than {bound:g}")
np.save(sys.argv[3], x)
np.save(sys.argv[4], ref)
PY
  log "amp-run: the same model on amp's CPU backend (fp32, then fp16), vs onnxruntime fp32"
  "$BUILD/bin/amp-run" "$out/small_convnet.onnx" -i "$out/image.npy" \
    --compare-to "$out/reference.npy"
  "$BUILD/bin/amp-run" "$out/small_convnet.onnx" --amp-type f16 -i "$out/image.npy" \
    --compare-to "$out/reference.npy" --rtol 1e-2 --atol 1e-3
}

run_tests() {
  local status=0
  log "lit + FileCheck"
  ninja -C "$BUILD" -j "$JOBS" check-amp-lit || status=1
  log "GoogleTest"
  "$BUILD/bin/amp-unittests" --gtest_brief=1 || status=1
  log "fuzzing (libFuzzer + ASan + UBSan, 20 s per target)"
  bash "$ROOT/scripts/fuzz.sh" --seconds 20 || status=1
  # $JOBS pytest-xdist workers: tests sharing a module fixture stay on one
  # (test/python/xdist_groups.py). Measured: 1.65x faster than one process
  # on two cores, where a worker's compile overlaps the other's run.
  log "pytest ($JOBS workers)"
  AMP_OPT="$BUILD/bin/amp-opt" AMP_RUN="$BUILD/bin/amp-run" \
    "$PYTHON" -m pytest -q -n "$JOBS" --dist loadgroup --durations=25 \
    --ignore="$ROOT/test/python/torch" "$ROOT/test/python" || status=1
  log "pytest, Torch front end ($TORCH_VENV, $JOBS workers)"
  AMP_OPT="$BUILD/bin/amp-opt" AMP_RUN="$BUILD/bin/amp-run" \
    "$TORCH_VENV/bin/python" -m pytest -q -p no:logging -n "$JOBS" --dist loadgroup \
    --durations=10 "$ROOT/test/python/torch" || status=1
  if ((status)); then
    log "some tests FAILED"
  else
    log "all tests passed"
  fi
  return $status
}

# The pytest files that drive amp-opt / amp-run on small inputs. Left out:
# the model zoo and conformance files (hours under ASan) and the files
# that cap the address space on purpose (test_resource_limits.py,
# test_large_external.py: ASan reserves terabytes of shadow space).
SANITIZE_PYTEST=(test_amp_run.py test_import_errors.py test_import_fuzz.py
  test_fuzz_regressions.py test_constant_folding.py test_check_numerics.py
  test_external_data.py test_import_builders.py test_import_old_opsets.py
  test_lit_roundtrip.py test_determinism.py test_demo_model.py
  test_runtime_checks.py training)

sanitize() {
  local san="${AMP_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}" status=0 start=$SECONDS
  log "configure + build with AMP_SANITIZE=address,undefined ($san)"
  if [[ ! -f "$san/build.ninja" ]]; then
    cmake -G Ninja -S "$ROOT" -B "$san" -DCMAKE_BUILD_TYPE=Release \
      -DAMP_SANITIZE=address,undefined \
      -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
      -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/build/utils/lit/lit.py" \
      -DPython3_EXECUTABLE="$(command -v "$PYTHON")" >/dev/null
  fi
  ninja -C "$san" -j "$JOBS" amp-opt amp-run amp-unittests
  # Any report is an error (exit 1 after the report); leaks are reported
  # too. The MLIR libraries are not instrumented, so no false positives
  # from half-instrumented containers.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86:halt_on_error=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"
  export AMP_SANITIZED=1
  log "lit + FileCheck (sanitized)"
  ninja -C "$san" -j "$JOBS" check-amp-lit || status=1
  log "GoogleTest (sanitized)"
  "$san/bin/amp-unittests" --gtest_brief=1 || status=1
  log "pytest (sanitized amp-opt / amp-run): ${SANITIZE_PYTEST[*]}"
  (cd "$ROOT/test/python" && AMP_OPT="$san/bin/amp-opt" AMP_RUN="$san/bin/amp-run" \
    "$PYTHON" -m pytest -q "${SANITIZE_PYTEST[@]}") || status=1
  log "sanitize: $((SECONDS - start)) s, $( ((status)) && echo FAILED || echo clean)"
  return $status
}

case "${1:-}" in
  demo) install_deps; build; demo ;;
  test) install_deps; build; install_torch_venv; run_tests ;;
  build) install_deps; build; install_torch_venv ;;
  sanitize) install_deps; sanitize ;;
  *) echo "usage: $0 {demo|test|build|sanitize}" >&2; exit 2 ;;
esac
