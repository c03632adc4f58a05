#!/usr/bin/env bash
# Benchmark: `sparkops preflight` (all ten checks, reading files only) against the usual G1
# check, `python3 -c "import torch; print(torch.version.cuda)"`, over the same real Python
# environment (Debian's python3-torch, installed here if missing). Prints the median wall time of
# RUNS runs each, the ratio, and peak RSS (GNU time). Targets (issue 2): >= 20x faster,
# <= 50 ms median, <= 10 MiB peak RSS.
#   usage: bench/preflight.sh [BUILD_DIR]     (RUNS=N to change the number of runs, default 9)
set -euo pipefail
BUILD=${1:-build}
RUNS=${RUNS:-9}
PY=/usr/bin/python3
SPARKOPS="$BUILD/sparkops"

need_pkgs=()
"$PY" -c 'import importlib.util,sys; sys.exit(importlib.util.find_spec("torch") is None)' 2>/dev/null \
  || need_pkgs+=(python3-torch)
[ -x /usr/bin/time ] || need_pkgs+=(time)
if ((${#need_pkgs[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "installing ${need_pkgs[*]} (Debian packages) ..." >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2
fi
if [ ! -x "$SPARKOPS" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARKOPS_TESTS=OFF >/dev/null
  cmake --build "$BUILD" --target sparkops >/dev/null
fi

# shellcheck source=bench/timing.sh
. "$(dirname "$0")/timing.sh"
SP_CMD=("$SPARKOPS" preflight --python "$PY")
PY_CMD=("$PY" -c "import torch; print(torch.version.cuda)")

echo "environment: $("$PY" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null) at $PY, torch $("${PY_CMD[@]}" 2>/dev/null | sed 's/^/version.cuda=/') ($(dpkg-query -W -f='${Version}' python3-torch 2>/dev/null || echo '?'))"
echo "machine: $(uname -m), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs each after one warm-up"
measure_pair
ratio=$(awk -v a="$py_ms" -v b="$sp_ms" 'BEGIN {printf "%.1f", a / b}')

printf '\n%-56s %10s %12s %13s\n' "command" "median ms" "median CPU" "peak RSS MiB"
printf '%-56s %10.1f %9s ms %13.1f\n' "sparkops preflight --python $PY (10 checks)" "$sp_ms" "$sp_cpu" "$(mib "$sp_rss")"
printf '%-56s %10.1f %9s ms %13.1f\n' "python3 -c 'import torch; print(torch.version.cuda)'" "$py_ms" "$py_cpu" "$(mib "$py_rss")"
echo "ratio: sparkops is ${ratio}x faster than importing torch"
echo "targets: >= 20x faster, <= 50 ms median, <= 10 MiB peak RSS"
