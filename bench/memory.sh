#!/usr/bin/env bash
# Benchmark: memory of this build against a named peer build (default: /work/main/build/sparkops,
# the dynamically linked build with Debian's cpp-httplib), measured in the same run:
#   - `preflight` peak RSS (GNU time %M) over the gb10 fixture environment, median of RUNS;
#   - `exporter` RSS after start-up and 5 scrapes (VmRSS), with the stub NVML (GB10 mode);
#   - the binary's file size and its NEEDED libraries.
# Targets (issue 17): preflight <= 8 MiB, exporter idle <= 6 MiB (node_exporter: 14.3 MB).
# usage: bench/memory.sh [BUILD_DIR] [PEER_BINARY]     (env: RUNS=9)
set -euo pipefail
BUILD=${1:-build}
PEER=${2:-/work/main/build/sparkops}
RUNS=${RUNS:-9}
SRC=$(cd "$(dirname "$0")/.." && pwd)
FIX=$SRC/tests/fixtures/gb10
STUB=$BUILD/tests/libnvidia-ml-stub.so
THIS=$BUILD/release/sparkops
[ -x "$THIS" ] || THIS=$BUILD/sparkops
for need in "$THIS" "$PEER" "$STUB" /usr/bin/time; do
  [ -e "$need" ] || { echo "bench/memory.sh: missing $need (build with tests first; apt-get install time)" >&2; exit 2; }
done
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

preflight_kib() {
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f %M "$1" --root "$FIX" preflight 2>&1 >/dev/null | tail -1
  done | median
}

exporter_kib() {
  local fifo pid port
  fifo=$(mktemp -u)
  mkfifo "$fifo"
  SPARKOPS_STUB_NVML_MODE=gb10 "$1" --root "$FIX" --nvml "$STUB" exporter --listen 127.0.0.1:0 \
    --preflight-interval 0 >"$fifo" 2>/dev/null &
  pid=$!
  port=$(head -1 "$fifo" | sed -E 's#.*127\.0\.0\.1:([0-9]+)/.*#\1#')
  rm -f "$fifo"
  for _ in 1 2 3 4 5; do
    python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/metrics').read()"
    sleep 0.2
  done
  awk '/^VmRSS/ {print $2}' "/proc/$pid/status"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

printf '%-44s %12s %12s %10s  %s\n' binary "preflight" "exporter" "size" "NEEDED"
for bin in "$THIS" "$PEER"; do
  needed=$(objdump -p "$bin" | awk '$1=="NEEDED" {printf "%s ", $2}')
  printf '%-44s %8s MiB %8s MiB %6s MiB  %s\n' "$bin" "$(mib "$(preflight_kib "$bin")")" \
    "$(mib "$(exporter_kib "$bin")")" "$(mib $(($(stat -c %s "$bin") / 1024)))" "$needed"
done
echo "targets: preflight peak RSS <= 8 MiB, exporter idle RSS <= 6 MiB"
