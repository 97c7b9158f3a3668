#!/usr/bin/env bash
# The CUDA backend's one GPU script. On the GPU machine (CUDA toolkit, cmake,
# ninja, Python 3 with numpy and torch; no LLVM/MLIR), from the repository
# root, with the artifacts that bench/gpu/prepare.py made on a CPU machine:
#
#   bash bench/gpu/run.sh [ARTIFACTS]     (default bench/gpu/artifacts)
#
# 1. builds the runtime (runtime/cuda, its own CMake project);
# 2. runs every check artifact against the CPU path's outputs (per-dtype
#    tolerance, NaN never passes) and compute-sanitizer memcheck on one;
# 3. benchmarks: cuBLASLt GEMMs vs torch.matmul, generated kernels vs the
#    copy bandwidth, end-to-end models vs PyTorch (when prepared with --e2e);
# 4. prints the table last. Logs and the table go to $OUT (default
#    /tmp/amp-gpu-out).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ARTIFACTS="$(cd "${1:-$ROOT/bench/gpu/artifacts}" && pwd)"
OUT="${OUT:-/tmp/amp-gpu-out}"
BUILD="${AMP_GPU_BUILD:-/tmp/amp-gpu-build}"
mkdir -p "$OUT"
log() { printf '== %s\n' "$*" | tee -a "$OUT/run.log" >&2; }

log "build the runtime ($BUILD)"
start=$(date +%s)
cmake -G Ninja -S "$ROOT/runtime/cuda" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  > "$OUT/cmake.log" 2>&1
ninja -C "$BUILD" > "$OUT/build.log" 2>&1
log "runtime built in $(( $(date +%s) - start )) s"
export AMP_GPU_LIB="$BUILD/lib/libamp_gpu.so" AMP_GPU_BIN="$BUILD"

status=0
log "checks against the CPU path"
python3 "$ROOT/bench/gpu/gpu_check.py" "$ARTIFACTS" --out "$OUT" 2>&1 | tee "$OUT/check.log" \
  || status=1

SANITIZER="$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")"
if [[ -x "$SANITIZER" ]]; then
  log "compute-sanitizer memcheck (mlp_f16)"
  "$SANITIZER" --tool memcheck --error-exitcode 9 \
    "$BUILD/amp-run-gpu" "$ARTIFACTS/mlp_f16.ampgpu" --random-inputs \
    > "$OUT/memcheck.log" 2>&1 || { status=1; log "memcheck FAILED (see memcheck.log)"; }
  tail -2 "$OUT/memcheck.log" | tee -a "$OUT/run.log"
else
  log "compute-sanitizer not found: memcheck skipped"
fi

log "benchmarks"
python3 "$ROOT/bench/gpu/gpu_bench.py" "$ARTIFACTS" --out "$OUT" 2>&1 | tee "$OUT/bench.log" \
  || status=1

cat "$OUT/check.md" "$OUT/bench.md" 2>/dev/null || true
exit $status
