#!/usr/bin/env python3
"""The layer check: no file under src/ includes from a higher layer (docs/architecture.md).

Reads every `#include "room/..."` line of src/**/*.{h,cc,in} and fails (exit 1, one line per fault)
when a room includes a room of a higher tier, a room of its own tier other than those listed in
SAME_TIER, or a room no tier names (a new room must be placed here first).

  scripts/check_layers.py [--src DIR]   check DIR (default: src/ beside this script's folder)
  scripts/check_layers.py --self-test   check the checker on small planted trees
Python 3 standard library only.
"""
import argparse
import os
import re
import sys
import tempfile

# Lowest first. A room may include any room of a lower tier.
TIERS = [
    ["base"],
    ["host"],
    ["guard", "workloads", "telemetry", "analysis", "memory", "checks", "notify"],
    ["report", "run", "exporter"],
    ["cli"],
    ["main.cc"],  # src/main.cc, the program
]

# Includes between rooms of one tier: only these, and they must stay acyclic (checked below).
SAME_TIER = {
    ("telemetry", "workloads"),  # the sampler attributes GPU memory to the job's processes
    ("analysis", "telemetry"),   # analysis reads the CSV and event formats telemetry writes
    ("memory", "analysis"),      # the OOM ladder starts from an OOM signature found in a log
    ("checks", "telemetry"),     # G4 reads throttle reasons and power events
    ("checks", "workloads"),     # G6/G10 look at the running workloads
    ("exporter", "report"),      # the exporter serves the Prometheus text report/ renders
}

# Quoted includes without a room: generated headers and the room that owns them.
GENERATED = {"build_info.h": "base"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def tier_of(room):
    for i, rooms in enumerate(TIERS):
        if room in rooms:
            return i
    return None


def cycle_in(edges):
    """A cycle among `edges` as a list of rooms, or None."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
    state = {}

    def visit(n, path):
        state[n] = 1
        for m in graph.get(n, []):
            if state.get(m) == 1:
                return path + [n, m]
            if m not in state:
                found = visit(m, path + [n])
                if found:
                    return found
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n, [])
            if found:
                return found
    return None


def room_of(src, path):
    rel = os.path.relpath(path, src)
    parts = rel.split(os.sep)
    return parts[0], rel


def check(src):
    """Faults found under `src`, one line each; empty when the layering holds."""
    faults = []
    cycle = cycle_in(SAME_TIER)
    if cycle:
        faults.append("SAME_TIER has a cycle: " + " -> ".join(cycle))
    for a, b in sorted(SAME_TIER):
        if tier_of(a) is None or tier_of(a) != tier_of(b):
            faults.append(f"SAME_TIER ({a}, {b}): not two rooms of one tier")
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith((".h", ".cc", ".in")):
                continue
            path = os.path.join(dirpath, name)
            room, rel = room_of(src, path)
            mine = tier_of(room)
            if mine is None:
                faults.append(f"{rel}: room '{room}' is in no tier (scripts/check_layers.py TIERS)")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                target = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                other = GENERATED.get(target, target.split("/")[0] if "/" in target else None)
                if other is None:
                    faults.append(f"{rel}:{line}: #include \"{target}\" names no room")
                    continue
                if other == room:
                    continue
                theirs = tier_of(other)
                if theirs is None:
                    faults.append(f"{rel}:{line}: #include \"{target}\": room '{other}' is in no tier")
                elif theirs > mine:
                    faults.append(f"{rel}:{line}: {room} (tier {mine}) includes \"{target}\" "
                                  f"from {other} (tier {theirs}), a higher layer")
                elif theirs == mine and (room, other) not in SAME_TIER:
                    faults.append(f"{rel}:{line}: {room} includes \"{target}\" from {other}, "
                                  f"same tier and not in SAME_TIER")
    return faults


def self_test():
    """Plants trees with and without faults; returns the number of expectations that failed."""
    def tree(files):
        d = tempfile.mkdtemp(prefix="layers-")
        for rel, text in files.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        return d

    clean = {
        "base/a.h": "#pragma once\n#include <string>\n",
        "host/h.h": '#include "base/a.h"\n#include "build_info.h"\n',
        "telemetry/t.cc": '#include "host/h.h"\n#include "workloads/w.h"\n',
        "workloads/w.h": '#include "base/a.h"\n',
        "cli/c.cc": '#include "telemetry/t.h"\n#include "report/r.h"\n',
        "main.cc": '#include "cli/c.h"\n',
    }
    cases = [
        ("clean tree", {}, None),
        ("host includes cli", {"host/bad.h": '#pragma once\n#include "cli/context.h"\n'},
         'host/bad.h:2: host (tier 1) includes "cli/context.h" from cli (tier 4), a higher layer'),
        ("same tier, not listed", {"workloads/bad.cc": '#include "telemetry/t.h"\n'},
         'workloads/bad.cc:1: workloads includes "telemetry/t.h" from telemetry, same tier'),
        ("room in no tier", {"output/o.cc": '#include "base/a.h"\n'},
         "output/o.cc: room 'output' is in no tier"),
        ("include of no room", {"base/b.cc": '#include "stray.h"\n'},
         'base/b.cc:1: #include "stray.h" names no room'),
    ]
    failed = 0
    for label, extra, expect in cases:
        faults = check(tree({**clean, **extra}))
        ok = (not faults) if expect is None else (len(faults) == 1 and faults[0].startswith(expect))
        print(f"{'ok  ' if ok else 'FAIL'} {label}: {faults or 'no faults'}")
        failed += not ok
    if cycle_in({("a", "b"), ("b", "c"), ("c", "a")}) is None or cycle_in(SAME_TIER) is not None:
        print("FAIL cycle detection")
        failed += 1
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return 1 if self_test() else 0
    faults = check(os.path.normpath(a.src))
    for f in faults:
        print(f)
    if faults:
        print(f"{len(faults)} layering fault(s); the order is in docs/architecture.md", file=sys.stderr)
        return 1
    print("layers ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
