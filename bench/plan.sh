#!/usr/bin/env bash
# bench/plan.sh - how long `sparkops plan` (accounting + fit search over seq and batch + anchor)
# takes per invocation, against peers measured in the same run:
#   - /bin/true         : process start-up floor
#   - python3 -S        : the same weights+states+logits formula in Python (no fit search) - what a
#                         worksheet script costs before it computes anything useful
# Then the accuracy table (bench/plan_accuracy.py): every validation row measured / predicted /
# error, with accelerate's estimate and a textbook formula on the same rows, summary by method.
# Usage: bench/plan.sh [path/to/sparkops] [runs]   (default build/sparkops, 50 runs)
set -euo pipefail
BIN=${1:-build/sparkops}
N=${2:-50}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FIX="$ROOT/tests/fixtures/gb10"
[ -x "$BIN" ] || { echo "no binary at $BIN (build first)" >&2; exit 2; }

PY='P=70.55e9;V=128256;s=4096;b=1
w=P*0.5159;ad=207e6*8;lg=s*b*V*10
print((w+ad+lg)/2**30)'

time_ms() {  # runs "$@" N times, prints mean ms per run
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < N; i++)); do "$@" >/dev/null || [ $? -eq 1 ]; done
  end=$(date +%s%N)
  printf '%.3f' "$(echo "scale=6; ($end - $start) / 1000000 / $N" | bc)"
}

t_true=$(time_ms /bin/true)
PYBIN=$(python3 -c 'import sys; print(sys.executable)')  # the interpreter itself, not a pyenv shim
t_py=$(time_ms "$PYBIN" -S -c "$PY")
t_plan=$(time_ms "$BIN" plan llama-3.3-70b --method qlora --seq 4096 --root "$FIX")
t_json=$(time_ms "$BIN" --json plan gemma-2-27b --root "$FIX")
t_full=$(time_ms "$BIN" plan llama-3.1-8b --method full --seq 65536 --root "$FIX")

echo "runs per case: $N ($(nproc) CPUs, $(uname -m))"
printf '%-58s %8s ms\n' "/bin/true (process start-up floor)" "$t_true"
printf '%-58s %8s ms\n' "python3 -S, same formula, no fit search (peer)" "$t_py"
printf '%-58s %8s ms\n' "sparkops plan llama-3.3-70b --method qlora --seq 4096" "$t_plan"
printf '%-58s %8s ms\n' "sparkops --json plan gemma-2-27b" "$t_json"
printf '%-58s %8s ms\n' "sparkops plan llama-3.1-8b --method full --seq 65536 (no-fit)" "$t_full"
printf 'ratios: plan / python3 = %.3f, plan / true = %.1f\n' "$(echo "scale=6; $t_plan / $t_py" | bc)" \
  "$(echo "scale=6; $t_plan / $t_true" | bc)"
echo
"$PYBIN" "$ROOT/bench/plan_accuracy.py" "$BIN"
echo
awk -v t="$t_plan" 'BEGIN { if (t > 20) { print "FAIL: plan took " t " ms (> 20 ms)"; exit 1 } else print "OK: plan incl. fit search <= 20 ms" }'
