#!/usr/bin/env bash
# Benchmark: `sparkops top` beside btop and nvtop (Debian packages) and procps top, in the same run on
# this machine: each drawn in its own pseudo-terminal (200x60, TERM=xterm-256color) refreshing every
# INTERVAL seconds for DURATION seconds. Prints CPU per frame (utime+stime / frames) and RSS (VmHWM,
# VmRSS) side by side. Targets (issue 37): less CPU per refresh than each, RSS <= nvtop's.
# A tool that is not installed is reported as such and skipped (nvtop is in Debian's contrib).
#
# usage: bench/top.sh [BUILD_DIR]   (env: DURATION=20 INTERVAL=0.5)
set -euo pipefail
BUILD=${1:-build}
BIN=$BUILD/sparkops
[ -x "$BIN" ] || { echo "bench/top.sh: $BIN not found (build sparkops first)" >&2; exit 2; }
DURATION=${DURATION:-20} INTERVAL=${INTERVAL:-0.5} python3 - "$BIN" <<'PY'
import os, pty, sys, time, select, signal, shutil, struct, fcntl, termios, tempfile

duration, interval = float(os.environ["DURATION"]), float(os.environ["INTERVAL"])
hz = os.sysconf("SC_CLK_TCK")
btop_cfg = tempfile.mkdtemp()
os.makedirs(btop_cfg + "/btop", exist_ok=True)
with open(btop_cfg + "/btop/btop.conf", "w") as f:
    f.write(f"update_ms = {int(interval * 1000)}\n")
tools = [
    ("sparkops top", [sys.argv[1], "top", "--interval", str(interval)], {}),
    ("btop", ["btop"], {"XDG_CONFIG_HOME": btop_cfg}),
    ("nvtop", ["nvtop", "-d", str(max(1, int(interval * 10)))], {}),
    ("procps top", ["top", "-d", str(interval)], {}),
]

def measure(argv, extra):
    if not shutil.which(argv[0]):
        return None
    pid, fd = pty.fork()
    if pid == 0:
        env = dict(os.environ, TERM="xterm-256color", **extra)
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    end, out, text = time.time() + duration, 0, b""
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            out += len(chunk)
            text = (text + chunk)[-200:]
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:  # it gave up (nvtop without a GPU: "No GPU to monitor.")
            os.close(fd)
            said = text.decode(errors="replace").strip().splitlines()
            return "exited at once: " + (said[-1] if said else "no output")
    stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = int(stat[11]) + int(stat[12])
    status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status") if ":" in l)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(fd)
    frames = duration / interval
    return ticks / hz / frames * 1000, status["VmHWM"].strip(), status["VmRSS"].strip(), out

print(f"{duration:g} s at {interval:g} s per frame ({duration / interval:.0f} frames), 200x60 pty, {os.cpu_count()} CPUs")
print(f"{'tool':<14} {'CPU ms/frame':>13} {'VmHWM':>12} {'VmRSS':>12} {'bytes out':>10}")
for name, argv, extra in tools:
    m = measure(argv, extra)
    if m is None:
        print(f"{name:<14} not installed")
        continue
    if isinstance(m, str):
        print(f"{name:<14} {m}")
        continue
    print(f"{name:<14} {m[0]:>13.2f} {m[1]:>12} {m[2]:>12} {m[3]:>10}")
PY
