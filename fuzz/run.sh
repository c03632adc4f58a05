#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 16, -fsanitize=fuzzer,address,undefined) and runs each for
# SECONDS (default 10), seeded from fuzz/corpus/<target>. Prints executions and crashes per target
# and exits 1 when any target crashed (the input is kept in build-fuzz/artifacts/<target>/).
#   fuzz/run.sh 15              every target, 15 s each
#   fuzz/run.sh 600 meminfo     one target
#   FUZZ_RUNS=5000000 fuzz/run.sh 36000 catalogue
#                               stops after 5 M executions (or 10 h, whichever comes first)
# Environment: FUZZ_BUILD_DIR (default build-fuzz), CXX16 (default clang++-16), JOBS,
# FUZZ_RUNS (an execution goal per target: passes -runs=N; SECONDS still bounds the time).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-10}
shift || true
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
CXX16=${CXX16:-clang++-16}
JOBS=${JOBS:-$(nproc)}
RUNS=${FUZZ_RUNS:-}
if [[ -n $RUNS && ! $RUNS =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz/run.sh: FUZZ_RUNS must be a positive number of executions, not '$RUNS'" >&2
  exit 2
fi
if ! command -v "$CXX16" >/dev/null; then
  echo "fuzz/run.sh: $CXX16 not found (Debian packages clang-16 libclang-rt-16-dev; scripts/setup.sh installs them)" >&2
  exit 1
fi
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S fuzz -B "$BUILD" "${GEN[@]}" -DCMAKE_CXX_COMPILER="$CXX16" -DCMAKE_C_COMPILER="${CXX16/clang++/clang}" >/dev/null
cmake --build "$BUILD" -j"$JOBS"

targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in fuzz/*_fuzz.cc; do n=$(basename "$f" _fuzz.cc); targets+=("$n"); done
fi
printf '%-16s %12s %8s %8s %8s\n' target executions exec/s wall_s crashes
failed=0
for t in "${targets[@]}"; do
  work="$BUILD/corpus/$t" art="$BUILD/artifacts/$t/" log="$BUILD/logs/$t.log"
  mkdir -p "$work" "$art" "$(dirname "$log")" "fuzz/corpus/$t"
  rc=0
  runs=(); [[ -n $RUNS ]] && runs=(-runs="$RUNS")
  start=$(date +%s)
  # Generated inputs go to the build dir; fuzz/corpus/<t> (committed seeds) is only read.
  "$BUILD/fuzz_$t" -max_total_time="$SECONDS_EACH" "${runs[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$art" "$work" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  wall=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  crashes=0
  if ((rc != 0)); then
    crashes=1 failed=1
  fi
  printf '%-16s %12s %8s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "$wall" "$crashes"
  if ((rc != 0)); then
    echo "  $t failed (rc $rc); log $log; input:" $(ls "$art" 2>/dev/null | head -3)
    grep -m5 -E 'ERROR|FUZZ_CHECK|runtime error|SUMMARY' "$log" | sed 's/^/  /'
  fi
done
exit $failed
