#!/usr/bin/env bash
# Builds sparkops and runs every test: the normal build, then the same suite under
# -fsanitize=address,undefined. Used by the README's test command and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)

cmake -S . -B build "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$JOBS"
ctest --test-dir build --output-on-failure -j"$JOBS"

if [ "${SPARKOPS_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan "${GEN[@]}" -DCMAKE_BUILD_TYPE=Debug -DSPARKOPS_SANITIZE=ON
  cmake --build build-asan -j"$JOBS"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j"$JOBS"
fi

# Fuzz stage: every libFuzzer target (fuzz/*_fuzz.cc) for FUZZ_SECONDS each (default 10), from its
# seed corpus. SPARKOPS_SKIP_FUZZ=1 skips it locally.
if [ "${SPARKOPS_SKIP_FUZZ:-0}" != 1 ]; then
  JOBS="$JOBS" fuzz/run.sh "${FUZZ_SECONDS:-10}"
fi
