#!/usr/bin/env bash
# Benchmark: the sampler's cost per sample and peak RSS over N samples at a 10 ms interval (stub
# NVML, GB10 mode), against Debian's prometheus-node-exporter scraped at the same rate on the same
# machine (its CPU per scrape and peak RSS). Prints both side by side with the ratios. Also `run`'s
# cost per sample (its job-tree and process-watch /proc reads) against `cat /proc/[0-9]*/stat`.
#   bench/sampler.sh [BUILD_DIR (default build)] [N (default 1000)]
# Needs: a built tree (sparkops + tests/libnvidia-ml-stub.so), GNU time, python3, and
# prometheus-node-exporter (installed with apt-get when missing and we are root).
set -euo pipefail
BUILD=${1:-build}
N=${2:-1000}
BIN=$BUILD/sparkops
STUB=$BUILD/tests/libnvidia-ml-stub.so
[ -x "$BIN" ] && [ -f "$STUB" ] || { echo "build first: cmake --build $BUILD --target sparkops_tests" >&2; exit 2; }
NE=$(command -v prometheus-node-exporter || true)
if [ -z "$NE" ] && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-node-exporter >/dev/null
  NE=$(command -v prometheus-node-exporter)
fi
[ -n "$NE" ] || { echo "prometheus-node-exporter not installed (apt-get install prometheus-node-exporter)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'kill $NE_PID 2>/dev/null || true; rm -rf "$TMP"' EXIT
NE_PID=

# --- sparkops sample: whole process, start-up included, amortised over N samples -------------
/usr/bin/time -f '%U %S %M' -o "$TMP/time" \
  "$BIN" --nvml "$STUB" --nvidia-smi none sample --interval 0.01 --count "$N" --out "$TMP/t.csv" 2>/dev/null
read -r su ss srss < "$TMP/time"
rows=$(($(wc -l < "$TMP/t.csv") - 1))
s_us=$(python3 -c "print(f'{($su+$ss)*1e6/$rows:.1f}')")
# The same without the per-row fdatasync (to /dev/null): separates our own work from the disk sync.
/usr/bin/time -f '%U %S %M' -o "$TMP/time0" \
  "$BIN" --nvml "$STUB" --nvidia-smi none sample --interval 0.01 --count "$N" --out /dev/null 2>/dev/null
read -r nu ns nrss < "$TMP/time0"
n_us=$(python3 -c "print(f'{($nu+$ns)*1e6/$N:.1f}')")

# --- sparkops run: the same sampler plus run's own per-sample /proc work (every /proc/*/stat for
# the job's tree and CPU share, the top consumers' cmdline and io, the process watch), memory
# guard off; whole process amortised over its rows, as above. Peer: one `cat` of every
# /proc/PID/stat (process start included), 100 passes.
/usr/bin/time -f '%U %S %M' -o "$TMP/timer" \
  "$BIN" --nvml "$STUB" --nvidia-smi none run --no-guard --out "$TMP/run" --interval 0.01 -- \
  sleep "$(python3 -c "print($N * 0.01)")" >/dev/null 2>&1
read -r ru rs rrss < "$TMP/timer"
rrows=$(($(wc -l < "$TMP/run/thermal.csv") - 1))
r_us=$(python3 -c "print(f'{($ru+$rs)*1e6/$rrows:.1f}')")
procs=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
/usr/bin/time -f '%U %S' -o "$TMP/timec" bash -c 'for i in $(seq 100); do cat /proc/[0-9]*/stat > /dev/null; done'
read -r cu cs < "$TMP/timec"
c_us=$(python3 -c "print(f'{($cu+$cs)*1e6/100:.1f}')")

# --- node_exporter: scrape N times at 10 ms over one keep-alive connection ------------------
scrape() {  # $1 = label, rest = node_exporter flags; prints "cpu_us_per_scrape rss_kib"
  local port=$((20000 + RANDOM % 20000))
  "$NE" --web.listen-address=127.0.0.1:$port "${@:2}" >/dev/null 2>&1 &
  NE_PID=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/metrics" >/dev/null && break; sleep 0.05; done
  python3 - "$NE_PID" "$port" "$N" <<'PY'
import http.client, os, sys, time
pid, port, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
c = http.client.HTTPConnection("127.0.0.1", port)
c0, t0 = cpu(), time.monotonic()
for i in range(n):
    c.request("GET", "/metrics"); c.getresponse().read()
    time.sleep(max(0.0, t0 + (i + 1) * 0.01 - time.monotonic()))
used = cpu() - c0
hwm = [l for l in open(f"/proc/{pid}/status") if l.startswith("VmHWM")][0].split()[1]
print(f"{used * 1e6 / n:.1f} {hwm}")
PY
  kill "$NE_PID"; wait "$NE_PID" 2>/dev/null || true; NE_PID=
}
read -r ne_us ne_rss < <(scrape default)
read -r nm_us nm_rss < <(scrape minimal --collector.disable-defaults --collector.meminfo --collector.pressure)

ratio() { python3 -c "print(f'{$1/$2:.1f}x')"; }
echo "sampler benchmark: $rows samples at 10 ms, $(uname -m), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-58s %16s %14s\n' "" "CPU per sample" "peak RSS"
printf '%-58s %13s us %10s KiB\n' "sparkops sample (stub NVML, GB10 mode; start-up incl.)" "$s_us" "$srss"
printf '%-58s %13s us %10s KiB\n' "sparkops sample to /dev/null (no fdatasync)" "$n_us" "$nrss"
printf '%-58s %13s us %10s KiB\n' "sparkops run (job tree, top consumers, process watch)" "$r_us" "$rrss"
printf '%-58s %13s us\n' "cat /proc/[0-9]*/stat ($procs processes), one pass" "$c_us"
printf '%-58s %13s us %10s KiB\n' "prometheus-node-exporter $($NE --version 2>&1 | head -1 | awk '{print $3}') (default collectors)" "$ne_us" "$ne_rss"
printf '%-58s %13s us %10s KiB\n' "prometheus-node-exporter (meminfo + pressure only)" "$nm_us" "$nm_rss"
echo "ratios (node_exporter / sparkops): CPU $(ratio "$ne_us" "$s_us") (default), $(ratio "$nm_us" "$s_us") (minimal);" \
     "RSS $(ratio "$ne_rss" "$srss") (default), $(ratio "$nm_rss" "$srss") (minimal)"
echo "run's own /proc work per sample: $(python3 -c "print(f'{$r_us-$s_us:.0f}')") us = $(python3 -c "print(f'{($r_us-$s_us)/$c_us:.2f}')")x one cat pass"
echo "targets: sparkops <= 200 us CPU per sample, RSS <= 1/2 of node_exporter's"
