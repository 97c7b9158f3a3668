#!/usr/bin/env bash
# amp's libFuzzer targets (test/fuzz), built with clang 19 and
# -fsanitize=fuzzer,address,undefined, each run for a time box on its corpus
# (test/fuzz/corpus/<target>, small and minimised; new inputs found go to a
# scratch folder, not into the repository).
#
#   scripts/fuzz.sh [--seconds N] [TARGET...]   (default 20 s each, all)
#
# Targets over the MLIR-free runtime, compiled here directly:
#   artifact (.ampgpu reading), npy (amp-run -i .npy files), npz (training
#   state files).
# Targets over amp's MLIR code, built in a second CMake tree ($FUZZ_BUILD,
# default build-fuzz; -DAMP_FUZZ=ON: every amp source with coverage, ASan,
# UBSan and assertions; Debian's MLIR libraries uninstrumented):
#   onnx-import     any bytes -> ONNX importer + verifier + shape inference
#   onnx-mutate     the same on structurally mutated models (dims,
#                   attributes, data types, edges, op types, opsets, nodes)
#   onnx-roundtrip  mutated models -> import -> autocast -> ONNX writer ->
#                   re-import
#   policy          policy files (YAML/JSON) and --amp-node-rule patterns
#   tensor-pb       amp-run's .pb tensor reader
# A crash, hang (-timeout 10 s), leak, sanitizer report, assertion or an
# allocation over 2 GiB fails the run and leaves the input in $FUZZ_OUT
# (default /tmp/amp-fuzz); fix it, then add the input to the corpus as a
# regression test. A longer run: scripts/fuzz.sh --seconds 3600 onnx-mutate.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${FUZZ_OUT:-/tmp/amp-fuzz}"
FUZZ_BUILD="${FUZZ_BUILD:-$ROOT/build-fuzz}"
SECONDS_EACH=20
TARGETS=()
while (($#)); do
  case "$1" in
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
((${#TARGETS[@]})) || TARGETS=(artifact npy npz onnx-import onnx-mutate
                               onnx-roundtrip policy tensor-pb)
CXX="${FUZZ_CXX:-clang++-19}"
CC="${FUZZ_CC:-clang-19}"
FLAGS=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$ROOT/include"
       -I"$ROOT/runtime/cuda/include")
HOST="$ROOT/lib/Runtime/Host"
mkdir -p "$OUT"

# The CMake tree of the MLIR targets, configured once.
cmake_fuzzer() {
  if [[ ! -f "$FUZZ_BUILD/build.ninja" ]]; then
    cmake -G Ninja -S "$ROOT" -B "$FUZZ_BUILD" -DAMP_FUZZ=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_C_COMPILER="$CC" \
      -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir
  fi
  ninja -C "$FUZZ_BUILD" -j "${AMP_JOBS:-2}" "$1-fuzzer"
  ln -sf "$FUZZ_BUILD/fuzz/$1-fuzzer" "$OUT/$1-fuzzer"
}

build() {
  local target="$1" binary="$OUT/$1-fuzzer"
  case "$target" in
    artifact) "$CXX" "${FLAGS[@]}" "$ROOT/test/fuzz/ArtifactFuzzer.cpp" \
                "$ROOT/runtime/cuda/src/Artifact.cpp" -o "$binary" ;;
    npy) "$CXX" "${FLAGS[@]}" "$ROOT/test/fuzz/NpyFuzzer.cpp" \
           "$HOST/HostTensor.cpp" "$HOST/Float8.cpp" "$HOST/FloatConversion.cpp" \
           -o "$binary" ;;
    npz) "$CXX" "${FLAGS[@]}" "$ROOT/test/fuzz/NpzFuzzer.cpp" "$HOST/Npz.cpp" \
           "$HOST/HostTensor.cpp" "$HOST/Float8.cpp" "$HOST/FloatConversion.cpp" \
           -lzip -o "$binary" ;;
    onnx-import|onnx-mutate|onnx-roundtrip|policy|tensor-pb)
      cmake_fuzzer "$target" ;;
    *) echo "unknown fuzz target '$target'" >&2; return 2 ;;
  esac
}

# The seed corpus of a target: the ONNX targets share test/fuzz/corpus/onnx
# (node-test models and the regression inputs of every ONNX target).
corpus_of() {
  case "$1" in
    onnx-import|onnx-mutate|onnx-roundtrip) echo "$ROOT/test/fuzz/corpus/onnx" ;;
    *) echo "$ROOT/test/fuzz/corpus/$1" ;;
  esac
}

# A small quarantine keeps ASan's own memory below the RSS limit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=64:detect_leaks=1}"
status=0
for target in "${TARGETS[@]}"; do
  printf '== fuzz %s (%s s)\n' "$target" "$SECONDS_EACH" >&2
  if ! build "$target" > "$OUT/$target-build.log" 2>&1; then
    status=1
    echo "fuzz target '$target' does not build; see $OUT/$target-build.log" >&2
    grep -E "error|FAILED" "$OUT/$target-build.log" | head -5 >&2 || true
    continue
  fi
  scratch="$OUT/$target-corpus"
  mkdir -p "$scratch" "$OUT/$target-crashes"
  # Corpus: the repository's seeds (read only) and the scratch folder.
  if ! "$OUT/$target-fuzzer" -max_total_time="$SECONDS_EACH" -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$OUT/$target-crashes/" \
      "$scratch" "$(corpus_of "$target")" \
      > "$OUT/$target.log" 2>&1; then
    status=1
    echo "fuzz target '$target' FAILED; see $OUT/$target.log and $OUT/$target-crashes" >&2
    grep -E "ERROR|SUMMARY|Assertion|Test unit written" "$OUT/$target.log" | head -5 >&2 || true
  else
    grep -E "stat::number_of_executed_units|cov:" "$OUT/$target.log" | tail -2 >&2 || true
  fi
done
exit $status
