#!/usr/bin/env bash
# Opt-in check on a machine with a real NVIDIA GPU (never part of the test suite): sparkops reads
# the real NVML, and each reading is put beside nvidia-smi's. Then a real GPU job (bf16 matrix
# products through PyTorch, printing like the HF Trainer) runs under `sparkops run`; from 40 % to
# 80 % of it a second GPU job runs on the same GPU (contention), and `analyze` says what it finds.
# Environment: GPU_CHECK_JOB_S (the job's seconds, default 100).
#   scripts/gpu-check.sh [SPARKOPS (default build/sparkops)] [OUT_DIR (default gpu-check)]
# Needs: nvidia-smi; python3 with torch for the job part (skipped without it). Changes nothing on
# the GPU (no clocks, limits or modes); the jobs take < 1 GiB of GPU memory each for ~100 s.
set -uo pipefail
BIN=$(realpath "${1:-build/sparkops}")
OUT=$(realpath -m "${2:-gpu-check}")
mkdir -p "$OUT"
JOB_S=${GPU_CHECK_JOB_S:-100}
Q=timestamp,name,driver_version,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,memory.total,memory.used,utilization.gpu,clocks_event_reasons.active
say() { printf '\n== %s\n' "$*"; }
smi() { nvidia-smi --query-gpu=$Q --format=csv,noheader 2>&1; }

say "machine"
uname -srm; nvidia-smi -L; grep -E 'MemTotal|MemAvailable' /proc/meminfo
say "preflight (real NVML)"
"$BIN" preflight | tee "$OUT/preflight.txt"; echo "exit $?"
"$BIN" --json preflight >"$OUT/preflight.json"
say "the same machine through the nvidia-smi fallback only"
"$BIN" --nvml none preflight | grep -E '^G(3|4|5|7)' ; true

say "sample: sparkops rows, then nvidia-smi at once (idle)"
"$BIN" sample --interval 0.5 --count 4 | tee "$OUT/idle.csv"
smi

say "sampler cost with real NVML: 400 rows at 10 ms to /dev/null, and 10 preflights"
python3 - "$BIN" <<'PY'
import resource, subprocess, sys, time
b = sys.argv[1]
def cost(args, n):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.monotonic()
    for _ in range(n): subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime), time.monotonic() - t0, r1.ru_maxrss
cpu, wall, rss = cost([b, "sample", "--interval", "0.01", "--count", "400", "--out", "/dev/null"], 1)
print(f"sample: {cpu * 1e6 / 400:.0f} us CPU per row (start-up included), wall {wall:.2f} s, max RSS {rss} KiB")
cpu, wall, _ = cost([b, "preflight"], 10)
print(f"preflight: {wall * 1000 / 10:.1f} ms wall, {cpu * 1000 / 10:.1f} ms CPU per run (mean of 10)")
PY

say "exporter --once (GPU metrics)"
"$BIN" exporter --once >"$OUT/metrics.txt"; echo "exit $?"
grep -E '^sparkops_gpu_' "$OUT/metrics.txt" | head -30

if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  say "no python3 torch with CUDA: job part skipped"; exit 0
fi
cat >"$OUT/job.py" <<'PY'
# A GPU job printing like the HF Trainer: a tqdm bar (carriage-return updates on stderr), one step
# per N bf16 8192^3 matrix products, and a loss dict every 10 steps.
import sys, time, torch
seconds, per_step, total = float(sys.argv[1]), int(sys.argv[2]), 100000
torch.manual_seed(0)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("Loading checkpoint shards: done", flush=True)
start = time.time(); end, step = start + seconds, 0
while time.time() < end:
    for _ in range(per_step): c = a @ b
    torch.cuda.synchronize(); step += 1
    rate = step / (time.time() - start)
    sys.stderr.write(f"\r{step * 100 // total:3d}%|#         | {step}/{total} [00:01<00:10, {rate:.2f}it/s]"); sys.stderr.flush()
    if step % 10 == 0:
        print(f"\n{{'loss': {2.0 / (1 + step) ** 0.1:.4f}, 'grad_norm': 1.0, 'learning_rate': 2e-05, 'epoch': {step / total:.4f}}}", flush=True)
PY
say "run: ${JOB_S} s GPU job; a second GPU job joins from $((JOB_S * 2 / 5)) s to $((JOB_S * 4 / 5)) s"
rm -rf "$OUT/run"
( sleep $((JOB_S * 2 / 5)); exec python3 "$OUT/job.py" $((JOB_S * 2 / 5)) 60 >/dev/null ) &
CONTENDER=$!
( sleep $((JOB_S / 2)); "$BIN" ps >"$OUT/ps.txt" 2>&1; "$BIN" --json ps >"$OUT/ps.json" 2>&1; smi >"$OUT/smi-load.txt";
  nvidia-smi >>"$OUT/smi-load.txt" 2>&1 ) &
"$BIN" run --interval 1 --out "$OUT/run" -- python3 "$OUT/job.py" "$JOB_S" 60 >"$OUT/run.stdout" 2>&1
echo "run exit $?"; wait
tr "\r" "\n" <"$OUT/run.stdout" | tail -3
say "ps while both jobs ran"; cat "$OUT/ps.txt"
say "nvidia-smi while both jobs ran"; head -1 "$OUT/smi-load.txt"
say "thermal.csv under load (every 10th row)"
awk -F, 'NR == 1 || NR % 10 == 0' "$OUT/run/thermal.csv" | cut -d, -f1-8,13-16
say "events"; cat "$OUT/run/events.jsonl"
say "analyze"
"$BIN" analyze "$OUT/run" --html "$OUT/report.html"; echo "analyze exit $?"
"$BIN" --json analyze "$OUT/run" >"$OUT/analyze.json"
