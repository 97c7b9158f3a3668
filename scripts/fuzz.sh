#!/usr/bin/env bash
# amp's libFuzzer targets (test/fuzz), built with clang and
# -fsanitize=fuzzer,address,undefined, each run for a time box on its corpus
# (test/fuzz/corpus/<target>, small and minimised; new inputs found go to a
# scratch folder, not into the repository).
#
#   scripts/fuzz.sh [--seconds N] [TARGET...]   (default 20 s each, all)
#
# Targets: artifact (.ampgpu reading), npy (amp-run -i .npy files), npz
# (training state files). A crash, hang (-timeout 10 s), leak, sanitizer
# report or an allocation over 2 GiB fails the run and leaves the input in
# $FUZZ_OUT (default /tmp/amp-fuzz); add it to the corpus as a regression
# test once fixed. A longer run: scripts/fuzz.sh --seconds 3600 npy.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${FUZZ_OUT:-/tmp/amp-fuzz}"
SECONDS_EACH=20
TARGETS=()
while (($#)); do
  case "$1" in
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
((${#TARGETS[@]})) || TARGETS=(artifact npy npz)
CXX="${FUZZ_CXX:-clang++}"
FLAGS=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$ROOT/include"
       -I"$ROOT/runtime/cuda/include")
HOST="$ROOT/lib/Runtime/Host"
mkdir -p "$OUT"

build() {
  local target="$1" binary="$OUT/$1-fuzzer"
  case "$target" in
    artifact) "$CXX" "${FLAGS[@]}" "$ROOT/test/fuzz/ArtifactFuzzer.cpp" \
                "$ROOT/runtime/cuda/src/Artifact.cpp" -o "$binary" ;;
    npy) "$CXX" "${FLAGS[@]}" "$ROOT/test/fuzz/NpyFuzzer.cpp" \
           "$HOST/HostTensor.cpp" "$HOST/FloatConversion.cpp" -o "$binary" ;;
    npz) "$CXX" "${FLAGS[@]}" "$ROOT/test/fuzz/NpzFuzzer.cpp" "$HOST/Npz.cpp" \
           "$HOST/HostTensor.cpp" "$HOST/FloatConversion.cpp" -lzip -o "$binary" ;;
    *) echo "unknown fuzz target '$target'" >&2; return 2 ;;
  esac
}

# A small quarantine keeps ASan's own memory below the RSS limit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=64:detect_leaks=1}"
status=0
for target in "${TARGETS[@]}"; do
  printf '== fuzz %s (%s s)\n' "$target" "$SECONDS_EACH" >&2
  build "$target"
  scratch="$OUT/$target-corpus"
  mkdir -p "$scratch" "$OUT/$target-crashes"
  # Corpus: the repository's seeds (read only) and the scratch folder.
  if ! "$OUT/$target-fuzzer" -max_total_time="$SECONDS_EACH" -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$OUT/$target-crashes/" \
      "$scratch" "$ROOT/test/fuzz/corpus/$target" \
      > "$OUT/$target.log" 2>&1; then
    status=1
    echo "fuzz target '$target' FAILED; see $OUT/$target.log and $OUT/$target-crashes" >&2
    grep -E "ERROR|SUMMARY|Test unit written" "$OUT/$target.log" | head -5 >&2 || true
  else
    grep -E "stat::number_of_executed_units|cov:" "$OUT/$target.log" | tail -2 >&2 || true
  fi
done
exit $status
