#!/usr/bin/env bash
# Benchmark: `sparkops exporter` against Debian's prometheus-node-exporter on this machine, under
# the same loopback load (wrk, keep-alive). Prints scrapes/s, p99 latency and RSS side by side with
# the ratios. Targets (issue 6): >= 5x node_exporter's scrapes/s and <= 1/2 of its RSS.
#
# usage: bench/exporter.sh [BUILD_DIR]   (env: DURATION=10s CONNECTIONS=4 THREADS=2)
# needs: wrk, prometheus-node-exporter (Debian packages of those names).
# Both servers read the real host (/proc; NVML when present). sparkops serves a body cached for at
# most 1 s (its default --min-interval) — node_exporter collects on every scrape — so the script
# also measures sparkops with --min-interval 0 (a full collection per scrape) for an honest peer row.
set -euo pipefail
BUILD=${1:-build}
SPARKOPS=$BUILD/sparkops
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-4}
THREADS=${THREADS:-2}
NODE_EXPORTER=$(command -v prometheus-node-exporter || command -v node_exporter || true)
for need in wrk "$SPARKOPS" "$NODE_EXPORTER"; do
  if [ -z "$need" ] || ! command -v "$need" >/dev/null 2>&1; then
    echo "bench/exporter.sh: missing ${need:-node_exporter} (apt-get install wrk prometheus-node-exporter; build sparkops first)" >&2
    exit 2
  fi
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
kib() { awk -v k="$2" '$1==k":" {print $2}' "/proc/$1/status"; }
to_ms() {  # wrk latency token (e.g. 812.00us, 1.23ms, 2.00s) -> milliseconds
  awk -v t="$1" 'BEGIN { v=t+0; if (t ~ /us$/) v/=1000; else if (t ~ /ms$/) v=v; else if (t ~ /s$/) v*=1000; printf "%.3f", v }'
}
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# run NAME PORT CMD...: starts the server, waits for /metrics, loads it, prints one result row.
run() {
  local name=$1 port=$2
  shift 2
  "$@" >/dev/null 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/metrics" 2>/dev/null && break
    sleep 0.1
  done
  local idle_rss series
  idle_rss=$(kib "$pid" VmRSS)
  series=$(curl -fsS "http://127.0.0.1:$port/metrics" | grep -vc '^#')
  local out
  out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "http://127.0.0.1:$port/metrics")
  local rps p99 non2xx rss hwm
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p99=$(to_ms "$(awk '$1=="99%" {print $2}' <<<"$out")")
  non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  rss=$(kib "$pid" VmRSS)
  hwm=$(kib "$pid" VmHWM)
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  printf '%-28s %10.0f %10s %10.1f %10.1f %10.1f %8s %s\n' "$name" "$rps" "$p99" "$(echo "$idle_rss/1024" | bc -l)" \
    "$(echo "$rss/1024" | bc -l)" "$(echo "$hwm/1024" | bc -l)" "$series" "${non2xx:+non-2xx=$non2xx}"
  eval "R_${name//[^a-zA-Z0-9]/_}=\"$rps $p99 $hwm\""
}

echo "machine: $(nproc) CPUs, $(uname -m), kernel $(uname -r); load: wrk -t$THREADS -c$CONNECTIONS -d$DURATION (keep-alive)"
echo "sparkops: $("$SPARKOPS" --version | head -1)"
echo "node_exporter: $("$NODE_EXPORTER" --version 2>&1 | head -1)"
printf '%-28s %10s %10s %10s %10s %10s %8s\n' target "scrapes/s" "p99 ms" "idle MiB" "RSS MiB" "peak MiB" series
P=$(free_port); run sparkops_cached "$P" "$SPARKOPS" exporter --listen "127.0.0.1:$P"
P=$(free_port); run sparkops_uncached "$P" "$SPARKOPS" exporter --listen "127.0.0.1:$P" --min-interval 0
P=$(free_port); run node_exporter "$P" "$NODE_EXPORTER" --web.listen-address="127.0.0.1:$P"
# Like for like: node_exporter reduced to the sources sparkops reads without a GPU (meminfo, PSI).
P=$(free_port); run node_exporter_meminfo "$P" "$NODE_EXPORTER" --web.listen-address="127.0.0.1:$P" \
  --collector.disable-defaults --collector.meminfo --collector.pressure

ratio() {  # ratio A B FIELD(1 rps, 2 p99, 3 peak rss)
  local a b
  a=$(cut -d' ' -f"$3" <<<"$1")
  b=$(cut -d' ' -f"$3" <<<"$2")
  printf "%.2f" "$(echo "$a / $b" | bc -l)"
}
echo
echo "ratios (same run):"
for peer in node_exporter node_exporter_meminfo; do
  for n in sparkops_cached sparkops_uncached; do
    v="R_$n"
    w="R_$peer"
    printf '  %-18s vs %-22s scrapes/s x%s   p99 x%s   peak RSS x%s\n' "$n" "$peer" "$(ratio "${!v}" "${!w}" 1)" \
      "$(ratio "${!v}" "${!w}" 2)" "$(ratio "${!v}" "${!w}" 3)"
  done
done
echo "targets: scrapes/s >= x5.00, peak RSS <= x0.50"
