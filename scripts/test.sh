#!/usr/bin/env bash
# Builds sparkops and runs every test: three build stages,
#   1. build/          native build, whole suite (incl. the .deb package test)
#   2. build-asan/     the same suite under -fsanitize=address,undefined  (SPARKOPS_SKIP_SANITIZE=1 skips)
#   3. build-aarch64/  cross build for aarch64 (DGX Spark), whole suite under qemu-aarch64, arm64 .deb
#                      (needs scripts/setup.sh --cross; SPARKOPS_SKIP_AARCH64=1 skips)
# then the lint stage (scripts/lint.sh; SPARKOPS_SKIP_LINT=1 skips) and a short fuzzing pass.
# Used by the README's test command and by .ci/run. Each stage prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
stage_start() { STAGE=$1; T0=$(date +%s); echo "=== stage $STAGE"; }
stage_end() { echo "=== stage $STAGE done in $(($(date +%s) - T0)) s"; }
# Line tables only (-g1) in the three test builds: backtraces, ASan reports and gdb still give
# file:line, and full debug information (-g) cost about 30 % of each file's compile time
# (docs/building.md). scripts/build.sh keeps -g for the binary users run.
G1=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

stage_start native
cmake -S . -B build "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${G1[@]}" -DSPARKOPS_TESTS=ON  # ON: build.sh may have turned it off
cmake --build build -j"$JOBS"
ctest --test-dir build --output-on-failure -j"$JOBS"
stage_end

if [ "${SPARKOPS_SKIP_SANITIZE:-0}" != 1 ]; then
  stage_start sanitize
  cmake -S . -B build-asan "${GEN[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
    -DSPARKOPS_SANITIZE=ON
  cmake --build build-asan -j"$JOBS"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j"$JOBS"
  stage_end
fi

if [ "${SPARKOPS_SKIP_AARCH64:-0}" != 1 ]; then
  stage_start aarch64
  cmake -S . -B build-aarch64 "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${G1[@]}" \
    -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
  cmake --build build-aarch64 -j"$JOBS"
  ctest --test-dir build-aarch64 --output-on-failure -j"$JOBS"
  stage_end
fi

# Lint stage: the format check (.clang-format) and clang-tidy with .clang-tidy over src/
# (scripts/lint.sh). SPARKOPS_SKIP_LINT=1 skips it.
if [ "${SPARKOPS_SKIP_LINT:-0}" != 1 ]; then
  stage_start lint
  JOBS="$JOBS" scripts/lint.sh format tidy
  stage_end
fi

# Fuzz stage: every libFuzzer target (fuzz/*_fuzz.cc) for FUZZ_SECONDS each (default 10), from its
# seed corpus. SPARKOPS_SKIP_FUZZ=1 skips it locally.
if [ "${SPARKOPS_SKIP_FUZZ:-0}" != 1 ]; then
  JOBS="$JOBS" fuzz/run.sh "${FUZZ_SECONDS:-10}"
fi
