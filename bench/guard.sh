#!/usr/bin/env bash
# Benchmark: the memory guard's cost while watching (CPU seconds per hour, peak RSS) in both poll
# regimes (1 s far from the floor, 100 ms within twice the floor), and its reaction time from the
# floor being crossed to SIGTERM (median and max of N trials, fixture meminfo rewritten by rename),
# beside earlyoom (Debian package; its CPU and RSS while watching this machine at its 1 s/100 ms
# adaptive poll). earlyoom is installed with `apt-get install earlyoom` when missing and we are root;
# without it the earlyoom columns say "not installed".
# Then the victim-selection time (read every /proc/PID, pick) with GUARD_BENCH_PROCS (default 5000)
# extra `sleep` processes on the machine: a --dry-run guard's first line carries `selection_ms`.
#   bench/guard.sh [BUILD_DIR (default build)] [SECONDS per cost run (default 60)] [N trials (default 20)]
# Needs: a built tree (sparkops), GNU date, python3 for the arithmetic.
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-60}
N=${3:-20}
BIN=$BUILD/sparkops
[ -x "$BIN" ] || { echo "build first: cmake --build $BUILD" >&2; exit 2; }
EO=$(command -v earlyoom || true)
if [ -z "$EO" ] && [ "$(id -u)" -eq 0 ] && [ "${GUARD_BENCH_NO_INSTALL:-}" != 1 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends earlyoom >/dev/null 2>&1 || true
  EO=$(command -v earlyoom || true)
fi
TMP=$(mktemp -d)
export SPARKOPS_GUARD_LEDGER=$TMP/ledger  # the guards' ledgers stay in the scratch dir, not /run
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"' EXIT
TICK=$(getconf CLK_TCK)

# meminfo for a fixture root: 32 GiB total, MemAvailable in MiB.
meminfo() { printf 'MemTotal: 33554432 kB\nMemAvailable: %d kB\nCached: 0 kB\nBuffers: 0 kB\nShmem: 0 kB\n' $(($1 * 1024)); }
put() { meminfo "$2" > "$1/proc/meminfo.tmp" && mv "$1/proc/meminfo.tmp" "$1/proc/meminfo"; }

# cost PID SECONDS -> "cpu_s_per_hour peak_rss_kib"
cost() {
  local pid=$1 s=$2 a b
  sleep 1
  a=$(awk '{print $14+$15}' "/proc/$pid/stat")
  sleep "$s"
  b=$(awk '{print $14+$15}' "/proc/$pid/stat")
  local hwm; hwm=$(awk '/VmHWM/{print $2}' "/proc/$pid/status")
  python3 -c "print(f'{($b-$a)/$TICK*3600/$s:.2f} {$hwm}')"
}

mkdir -p "$TMP/far/proc" "$TMP/near/proc"
put "$TMP/far" 20480    # 20 GiB free, floor 4 GiB: 1 s poll
put "$TMP/near" 6144    # 6 GiB free, floor 4 GiB: within 2x, 100 ms poll
"$BIN" --root "$TMP/far" guard --only '^sparkops-bench-none$' > /dev/null & PIDS+=($!); far_pid=$!
"$BIN" --root "$TMP/near" guard --only '^sparkops-bench-none$' > /dev/null & PIDS+=($!); near_pid=$!
read -r far_cpu far_rss < <(cost "$far_pid" "$SECS")
read -r near_cpu near_rss < <(cost "$near_pid" "$SECS")
kill "$far_pid" "$near_pid"

eo_cpu="not installed" eo_rss="not installed"
if [ -n "$EO" ]; then
  # -m 1 -s 1: act only below 1 % RAM and 1 % swap (this machine is far from it): watching cost only.
  "$EO" -m 1 -s 1 -r 0 > /dev/null 2>&1 & PIDS+=($!); eo_pid=$!
  read -r eo_cpu eo_rss < <(cost "$eo_pid" "$SECS")
  kill "$eo_pid"
  eo_version=$("$EO" -v 2>&1 | head -1)
fi

# Reaction: a victim, the guard watching a fixture 6 GiB free (100 ms poll), meminfo renamed to
# 1 GiB free at t0; the guard's memory_guard line carries the time of its SIGTERM (ms).
react=()
for i in $(seq "$N"); do
  mkdir -p "$TMP/r$i/proc"
  put "$TMP/r$i" 6144
  bash -c "exec -a sparkops-bench-victim-$$ sleep 600" & PIDS+=($!); victim=$!
  "$BIN" --root "$TMP/r$i" guard --only "sparkops-bench-victim-$$" --grace 1 > "$TMP/r$i.out" & PIDS+=($!); g=$!
  sleep 0.5
  t0=$(date +%s%3N)
  put "$TMP/r$i" 1024
  for _ in $(seq 200); do grep -q '"memory_guard"' "$TMP/r$i.out" && break; sleep 0.02; done
  kill "$g" 2>/dev/null || true; kill "$victim" 2>/dev/null || true; wait "$victim" 2>/dev/null || true
  t1=$(python3 -c "
import json,sys,datetime
for l in open('$TMP/r$i.out'):
    j=json.loads(l)
    if j.get('type')=='memory_guard':
        t=datetime.datetime.strptime(j['time'],'%Y-%m-%dT%H:%M:%S.%fZ').replace(tzinfo=datetime.timezone.utc)
        print(int(t.timestamp()*1000)); break")
  [ -n "$t1" ] && react+=($((t1 - t0)))
done
stats=$(printf '%s\n' "${react[@]}" | python3 -c "
import sys,statistics
v=[int(x) for x in sys.stdin if x.strip()]
print(f'{statistics.median(v):.0f} {max(v)} {len(v)}' if v else 'n/a n/a 0')")
read -r r_med r_max r_n <<< "$stats"

# Victim selection with P more processes (dry run: nothing is signalled).
P=${GUARD_BENCH_PROCS:-5000}
SL=()
for _ in $(seq "$P"); do sleep 600 & SL+=($!); done
mkdir -p "$TMP/sel/proc"
put "$TMP/sel" 1024
sel=()
for i in 1 2 3 4 5; do
  "$BIN" --root "$TMP/sel" guard --dry-run --grace 0.2 > "$TMP/sel$i.out" & g=$!
  for _ in $(seq 500); do grep -q '"memory_guard"' "$TMP/sel$i.out" && break; sleep 0.02; done
  kill "$g" 2>/dev/null || true; wait "$g" 2>/dev/null || true
  sel+=("$(python3 -c "
import json
for l in open('$TMP/sel$i.out'):
    j=json.loads(l)
    if j.get('type')=='memory_guard' and 'selection_ms' in j: print(j['selection_ms'], j['candidates']); break")")
done
kill "${SL[@]}" 2>/dev/null || true; wait "${SL[@]}" 2>/dev/null || true
read -r s_med s_n <<< "$(printf '%s\n' "${sel[@]}" | python3 -c "
import sys,statistics
v=[l.split() for l in sys.stdin if l.strip()]
print(f'{statistics.median(float(a) for a,_ in v):.1f} {v[0][1]}' if v else 'n/a 0')")"

echo "memory guard benchmark ($(nproc) CPUs, ${SECS} s per cost run, $(uname -r))"
printf '%-34s %16s %14s\n' "" "CPU s/hour" "peak RSS KiB"
printf '%-34s %16s %14s\n' "sparkops guard, far (1 s poll)" "$far_cpu" "$far_rss"
printf '%-34s %16s %14s\n' "sparkops guard, near (100 ms poll)" "$near_cpu" "$near_rss"
printf '%-34s %16s %14s\n' "earlyoom ${eo_version:-}" "$eo_cpu" "$eo_rss"
if [ -n "$EO" ]; then
  python3 -c "print(f'ratio sparkops far / earlyoom: CPU {$far_cpu/max($eo_cpu,1e-9):.2f}x, RSS {$far_rss/$eo_rss:.2f}x')"
fi
echo "reaction, floor crossed -> SIGTERM (fixture, 100 ms poll): median ${r_med} ms, max ${r_max} ms over ${r_n} trials"
echo "victim selection (read /proc, choose): median ${s_med} ms over 5 scans of ${s_n} processes"
