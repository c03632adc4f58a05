#!/usr/bin/env bash
# Benchmark: the exporter under abuse, this build against a named peer build (default: the
# previous server, cpp-httplib with a bounded thread pool, in /work/main/build) in the same run.
#   1. SLOW clients (default 300) each send one header byte per second, and are replaced as soon as
#      the server cuts them, for DURATION seconds (default 60), while a scrape from a fresh
#      connection is timed every 250 ms: scrapes, failures, p50/p99/max latency, scrapes >= 200 ms.
#   2. IDLE connections (default 1000, from 127.0.0.1..4) held open (re-opened when cut) plus one
#      client streaming a header block of up to 1 GiB: peak RSS (VmHWM) and what the stream got
#      through before the server closed it.
# usage: bench/exporter_abuse.sh [BUILD_DIR] [PEER_BINARY]   (env: DURATION=60 SLOW=300 IDLE=1000)
# needs: python3. Both servers read the gb10 fixture (tests/fixtures), preflight off.
set -euo pipefail
BUILD=${1:-build}
PEER=${2:-/work/main/build/sparkops}
DURATION=${DURATION:-60}
SLOW=${SLOW:-300}
IDLE=${IDLE:-1000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
for need in "$BUILD/sparkops" "$PEER"; do
  [ -x "$need" ] || { echo "bench/exporter_abuse.sh: $need is not an executable (build it first)" >&2; exit 2; }
done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# start BIN -> sets PORT and PID
start() {
  local fifo
  fifo=$(mktemp -u)
  mkfifo "$fifo"
  "$1" --root "$SRC/tests/fixtures/gb10" exporter --listen 127.0.0.1:0 --preflight-interval 0 >"$fifo" 2>/dev/null &
  PID=$!
  PIDS+=("$PID")
  PORT=$(head -1 "$fifo" | sed -E 's#.*127\.0\.0\.1:([0-9]+)/.*#\1#')
  rm -f "$fifo"
}

load() {  # load MODE PORT PID -> one line of figures
  python3 - "$@" "$DURATION" "$SLOW" "$IDLE" <<'PY'
import selectors, socket, sys, time
mode, port, pid, duration, n_slow, n_idle = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])

def rss_kib(key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0

def connect(src="127.0.0.1"):
    s = socket.socket()
    s.bind((src, 0))
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    return s

def scrape():
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        ok = data.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return ok, (time.monotonic() - t0) * 1000

sel = selectors.DefaultSelector()
if mode == "slow":
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 4000
    conns = {}
    def add():
        s = connect()
        conns[s] = [0, 0.0]
        sel.register(s, selectors.EVENT_READ)
    for _ in range(n_slow):
        add()
    lat, fails, cut = [], 0, 0
    end = time.monotonic() + duration
    next_scrape = time.monotonic() + 0.5
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.05):
            s = key.fileobj
            try:
                gone = s.recv(4096) == b""
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone:
                sel.unregister(s); s.close(); del conns[s]; cut += 1; add()
        now = time.monotonic()
        for s, st in list(conns.items()):
            if now >= st[1] and st[0] < len(req):
                try:
                    s.send(req[st[0]:st[0] + 1]); st[0] += 1
                except OSError:
                    pass
                st[1] = now + 1.0
        if now >= next_scrape:
            ok, ms = scrape()
            if ok: lat.append(ms)
            else: fails += 1
            next_scrape = time.monotonic() + 0.25
    lat.sort()
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
    print(f"{len(lat) + fails} scrapes, {fails} failed, p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, "
          f"max {lat[-1] if lat else float('nan'):.1f} ms, >=200 ms: {sum(1 for x in lat if x >= 200)}; "
          f"slow clients cut and replaced: {cut}")
else:
    before = rss_kib("VmRSS")
    idle = []
    for i in range(n_idle):
        idle.append(connect(f"127.0.0.{1 + i % 4}"))
    time.sleep(0.5)
    flood = socket.create_connection(("127.0.0.1", port))
    flood.settimeout(5)
    flood.sendall(b"GET /metrics HTTP/1.1\r\nX-Flood: ")
    chunk, sent, t0 = b"f" * (1 << 20), 0, time.monotonic()
    try:
        while sent < (1 << 30):
            sent += flood.send(chunk)
    except OSError:
        pass
    reply = b""
    try:
        reply = flood.recv(100)
    except OSError:
        pass
    flood.close()
    ok, ms = scrape()
    peak = rss_kib("VmHWM")
    for s in idle: s.close()
    print(f"RSS before {before / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB after {n_idle} idle connections were opened; "
          f"header stream: {sent / 1048576:.1f} MiB accepted in {time.monotonic() - t0:.1f} s before the close "
          f"(reply: {reply[:12].decode(errors='replace') or 'none'}); scrape after: {'ok' if ok else 'FAILED'} {ms:.1f} ms")
PY
}

echo "exporter abuse: ${SLOW} slow clients for ${DURATION} s; ${IDLE} idle connections + a 1 GiB header stream"
for who in this peer; do
  bin=$BUILD/sparkops
  [ $who = peer ] && bin=$PEER
  start "$bin"
  echo "== $who ($bin), idle RSS $(awk '/^VmRSS/ {printf "%.1f MiB", $2/1024}' /proc/$PID/status)"
  echo "   slow: $(load slow "$PORT" "$PID")"
  kill "$PID"; wait "$PID" 2>/dev/null || true
  start "$bin"
  echo "   idle+flood: $(load idle "$PORT" "$PID")"
  kill "$PID"; wait "$PID" 2>/dev/null || true
done
