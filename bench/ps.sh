#!/usr/bin/env bash
# Wall time and peak RSS of `sparkops ps` over this machine's real process table, against procps
# `ps -eo pid,ppid,rss,args` (the peer: it reads the same /proc files, without classifying),
# median of N runs each, measured in the same run. Usage: bench/ps.sh [BUILD_DIR] [RUNS]
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-21}
BIN="$BUILD/sparkops"
[ -x "$BIN" ] || { echo "build first: cmake --build $BUILD --target sparkops" >&2; exit 2; }

median_ms() {  # runs "$@" RUNS times, prints the median wall time in ms
  local t=()
  for _ in $(seq "$RUNS"); do
    local s e
    s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
    t+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}
peak_kib() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

procs=$(ls -d /proc/[0-9]* | wc -l)
ours=$(median_ms "$BIN" ps)
peer=$(median_ms ps -eo pid,ppid,rss,args)
ours_rss=$(peak_kib "$BIN" ps)
peer_rss=$(peak_kib ps -eo pid,ppid,rss,args)
echo "processes on this machine: $procs; runs: $RUNS (median)"
echo "sparkops ps                  : ${ours} ms, peak RSS ${ours_rss} KiB"
echo "ps -eo pid,ppid,rss,args     : ${peer} ms, peak RSS ${peer_rss} KiB"
awk -v a="$ours" -v b="$peer" 'BEGIN {printf "ratio sparkops/ps (time)     : %.2f\n", a / b}'
awk -v a="$ours_rss" -v b="$peer_rss" 'BEGIN {printf "ratio sparkops/ps (peak RSS) : %.2f\n", a / b}'
