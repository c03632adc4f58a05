# Timing helpers shared by the preflight benchmarks (sourced; RUNS must be set by the caller).
now_ns() { date +%s%N; }
# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# time_runs CMD...: prints RUNS wall times in ms, one per line (first a discarded warm-up run)
time_runs() {
  "$@" >/dev/null 2>&1 || true
  for _ in $(seq "$RUNS"); do
    local t0 t1
    t0=$(now_ns); "$@" >/dev/null 2>&1 || true; t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) / 1e6}'
  done
}
# (a command that exits non-zero, as preflight does on a FAIL, is still measured)
peak_rss_kib() { { /usr/bin/time -f %M "$@" 2>&1 >/dev/null || true; } | tail -1; }
# cpu_runs CMD...: RUNS user+sys CPU times in ms, 0.1 ms resolution (the child's getrusage, read by
# python3 before and after: a python3 started through a wrapper such as pyenv's shim already holds
# the wrapper's children in its counts; GNU time prints 10 ms steps, which made a 5 ms run "0 ms")
# - robust on a busy box
cpu_runs() {
  for _ in $(seq "$RUNS"); do
    python3 -c 'import resource, subprocess, sys
cpu = lambda r: r.ru_utime + r.ru_stime
before = cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("%.1f" % ((cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - before) * 1000))' "$@"
  done
}

mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# measure_pair: runs SP_CMD and PY_CMD (arrays set by the caller) and sets sp_ms py_ms (median wall),
# sp_cpu py_cpu (median user+sys ms) and sp_rss py_rss (peak RSS KiB), after printing SP_CMD's output once.
measure_pair() {
  echo "sparkops preflight output (first run):"
  "${SP_CMD[@]}" | sed 's/^/  /' || true
  sp_ms=$(time_runs "${SP_CMD[@]}" | median)
  py_ms=$(time_runs "${PY_CMD[@]}" | median)
  sp_cpu=$(cpu_runs "${SP_CMD[@]}" | median)
  py_cpu=$(cpu_runs "${PY_CMD[@]}" | median)
  sp_rss=$(peak_rss_kib "${SP_CMD[@]}")
  py_rss=$(peak_rss_kib "${PY_CMD[@]}")
}
