#!/usr/bin/env bash
# Benchmark for `sparkops analyze` (issue #5): a generated ~1 GB training log (train.log format,
# tqdm bars from 4 ranks + HF dicts + warnings) and a 100,000-row thermal CSV, under /tmp.
# Peers measured in the same run over the same bytes:
#   - pandas: read_csv(thermal) + a compiled-regex pass over the log (what a notebook would do)
#   - wc -l: the floor for touching every byte of the log
# Prints times, the ratios and peak RSS. Targets: >= 10x faster than pandas, within 3x of wc -l.
# Usage: bench/analyze.sh [BUILD_DIR] [SIZE_MB]   (default build, 1024)
set -euo pipefail
BUILD=${1:-build}
SIZE_MB=${2:-1024}
BIN=$BUILD/sparkops
# needs: python3-pandas, bc, taskset (Debian packages python3-pandas, bc, util-linux)
if ! "${PANDAS_PYTHON:-/usr/bin/python3}" -c 'import pandas' 2>/dev/null; then
  echo "bench/analyze.sh: pandas is missing (apt-get install python3-pandas): it is the peer this benchmark measures against" >&2
  exit 2
fi
[ -x "$BIN" ] || { echo "bench/analyze.sh: $BIN not found (build sparkops first)" >&2; exit 2; }
DATA=${BENCH_DIR:-/tmp/sparkops-bench-analyze}
mkdir -p "$DATA/run"
LOG=$DATA/run/train.log
CSV=$DATA/run/thermal.csv

if [ ! -s "$LOG" ] || [ "$(( $(stat -c %s "$LOG") / 1048576 ))" -lt "$SIZE_MB" ]; then
  echo "generating ${SIZE_MB} MB log + 100,000-row CSV in $DATA ..."
  python3 - "$LOG" "$CSV" "$SIZE_MB" <<'PY'
import sys, datetime
log, csv, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = datetime.datetime(2026, 11, 29, 0, 0, 0)
target = size_mb * 1048576
def ts(ms):
    t = t0 + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)
total = 2_000_000
written = 0
with open(log, "w") as f:
    ms = 0
    step = 0
    buf = []
    while written < target:
        step += 1
        dt = 500 if step < total // 2 else 1000         # step time doubles halfway
        ms += dt
        s = ts(ms)
        rate = 1000.0 / dt
        pct = step * 100 // total
        bar = "%3d%%|%-10s| %d/%d [12:34<56:07, %.2fit/s]" % (pct, "#" * (pct // 10), step, total, rate)
        buf.append("%s\te\t%s\n" % (s, bar))
        for r in (1, 2, 3):
            buf.append("%s\te\t[rank%d]:%s\n" % (s, r, bar))
        if step % 10 == 0:
            buf.append("%s\to\t{'loss': %.4f, 'grad_norm': 1.2345, 'learning_rate': 0.0002, 'epoch': %.4f}\n" % (s, 2.0 - step / total, step / total))
        if step % 3 == 0:
            buf.append("%s\te\t/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have requires_grad=True. Gradients will be None\n" % s)
        if len(buf) > 20000:
            chunk = "".join(buf); f.write(chunk); written += len(chunk); buf = []
    f.write("".join(buf))
span_ms = ms
with open(csv, "w") as f:
    f.write("timestamp,gpu_temp_c,power_w,power_limit_w,sm_clock_mhz,sm_clock_max_mhz,util_pct,clock_event_reasons,throttle,mem_total_gib,mem_available_gib,page_cache_gib,swap_used_gib,mem_pressure_some_avg10,gpu_attributed_gib,event\n")
    rows = 100_000
    for i in range(rows):
        m = span_ms * i // rows
        hot = i >= rows // 2
        f.write("%s,%d,%.1f,,%d,3003,97,%s,%s,119.7,95.2,12.1,0.0,0.00,40.5,\n" % (
            ts(m), 88 if hot else 72, 84.0 if hot else 86.0, 1650 if hot else 2410,
            "0x20" if hot else "0x0", "sw_thermal" if hot else ""))
PY
fi
BYTES=$(stat -c %s "$LOG")
echo "log: $((BYTES / 1048576)) MiB, $(wc -l < "$CSV") CSV lines"
cat "$LOG" "$CSV" > /dev/null   # warm the page cache for every contender

# seconds and peak RSS (KiB) of a command
run_time() { /usr/bin/time -f "%e %M %U %S" "$@" 2>&1 >/dev/null | tail -1; }
cpu() { echo "$1 + $2" | bc; }

read -r T_WC M_WC U_WC S_WC < <(run_time wc -l "$LOG")
read -r T_SO M_SO U_SO S_SO < <(run_time "$BIN" analyze --tz UTC --log "$LOG" --thermal "$CSV")
read -r T_SO2 M_SO2 U_SO2 S_SO2 < <(run_time "$BIN" analyze --tz UTC --log "$LOG" --thermal "$CSV")
if [ "$(echo "$T_SO2 < $T_SO" | bc)" = 1 ]; then T_SO=$T_SO2; M_SO=$M_SO2; U_SO=$U_SO2; S_SO=$S_SO2; fi
# The same pinned to one CPU: analyze parses the log on one thread per CPU, so this is its
# one-thread figure (what a machine with a single free core gets).
read -r T_S1 M_S1 U_S1 S_S1 < <(run_time taskset -c 0 "$BIN" analyze --tz UTC --log "$LOG" --thermal "$CSV")
read -r T_PD M_PD U_PD S_PD < <(run_time "${PANDAS_PYTHON:-/usr/bin/python3}" -c '
import re, sys, pandas as pd
df = pd.read_csv(sys.argv[2])
rx = re.compile(r"\|\s*(\d+)/(\d+)\s*\[([\d:]+)<([\d:?]+),\s*([\d.]+|\?)\s*(it/s|s/it)")
steps = []
with open(sys.argv[1], errors="replace") as f:
    for line in f:
        m = rx.search(line)
        if m and "[rank" not in line:
            steps.append((int(m.group(1)), float(m.group(5))))
print(len(steps), len(df))
' "$LOG" "$CSV")

echo
"$BIN" analyze --tz UTC --log "$LOG" --thermal "$CSV" | head -12
echo
C_WC=$(cpu "$U_WC" "$S_WC"); C_SO=$(cpu "$U_SO" "$S_SO"); C_PD=$(cpu "$U_PD" "$S_PD")
printf "%-26s %8s s wall %8s s cpu %6s MiB peak RSS\n" "wc -l (same log)" "$T_WC" "$C_WC" "$((M_WC / 1024))"
printf "%-26s %8s s wall %8s s cpu %6s MiB peak RSS\n" "sparkops analyze ($(nproc) CPUs)" "$T_SO" "$C_SO" "$((M_SO / 1024))"
printf "%-26s %8s s wall %8s s cpu %6s MiB peak RSS\n" "sparkops analyze (1 CPU)" "$T_S1" "$(cpu "$U_S1" "$S_S1")" "$((M_S1 / 1024))"
printf "%-26s %8s s wall %8s s cpu %6s MiB peak RSS\n" "pandas read_csv + regex" "$T_PD" "$C_PD" "$((M_PD / 1024))"
echo "analyze throughput: $(echo "scale=0; $BYTES / 1048576 / $T_SO" | bc) MiB/s wall, $(echo "scale=0; $BYTES / 1048576 / $C_SO" | bc) MiB/s cpu"
echo "ratio analyze / wc -l:   $(echo "scale=2; $T_SO / $T_WC" | bc)x wall, $(echo "scale=2; $C_SO / $C_WC" | bc)x cpu   (target <= 3x)"
echo "ratio pandas / analyze:  $(echo "scale=1; $T_PD / $T_SO" | bc)x wall, $(echo "scale=1; $C_PD / $C_SO" | bc)x cpu   (target >= 10x)"
echo "(wall times on a shared machine include waiting for the CPU; cpu = user + sys)"
