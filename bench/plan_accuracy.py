#!/usr/bin/env python3
"""Per-row accuracy of `sparkops plan` on tests/data/memory-validation.csv, beside two peers on the
same rows: accelerate's `estimate-memory` training figure (max of its components = 8 B/param for
bf16, nothing for LoRA/QLoRA; research A1) and a textbook model-states formula (16-bit frozen
weights 2 B/param, NF4 0.5 B/param, 16 B per trainable param for mixed-precision AdamW; no
activations). Rows are in two halves (the CSV's `half` column): `tuned`, the rows the accounting was
checked against while it was built, and `held-out`, rows added and never used to change the
accounting; the summary is printed for each half and for all rows.
Usage: bench/plan_accuracy.py path/to/sparkops"""
import csv, json, os, statistics, subprocess, sys

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/sparkops"
CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "memory-validation.csv")
GIB_GB = 1.073741824


def pct(x):
    return f"{100 * x:+.1f}%"


rows = []
for r in csv.DictReader(open(CSV, newline="")):
    if not r.get("sparkops_args"):
        continue
    out = subprocess.run([BIN, "--json", "plan", *r["sparkops_args"].split(), "--budget-gib", "1000"],
                         capture_output=True, text=True, check=True).stdout
    j = json.loads(out)
    key = "reserved_peak_gib" if "reserved" in r["what_measured"] else "allocated_peak_gib"
    meas = float(r["measured_peak_gb"])
    ours, high = j[key] * GIB_GB, j["range"][key]["high"] * GIB_GB
    method, P, T = j["options"]["method"], j["params"], j["trainable_params"]
    acc = 8 * P / 1e9 if method == "full" else None
    frozen = 0 if method == "full" else (0.5 if method == "qlora" else 2) * P
    text = (frozen + 16 * T) / 1e9
    rows.append((r["id"], method, meas, key.split("_")[0], ours, high, acc, text, r.get("half") or "tuned"))

print(f"{'id':6} {'half':8} {'method':6} {'measured GB':>12} {'counter':9} {'sparkops':>9} {'err':>7} {'high':>7} {'err':>7}"
      f" {'accelerate':>10} {'err':>7} {'textbook':>9} {'err':>7}")
for i, m, meas, c, o, h, a, t, half in rows:
    a_s = f"{a:10.2f} {pct(a / meas - 1):>7}" if a else f"{'n/a':>10} {'':>7}"
    print(f"{i:6} {half:8} {m:6} {meas:12.2f} {c:9} {o:9.2f} {pct(o / meas - 1):>7} {h:7.2f} {pct(h / meas - 1):>7} {a_s}"
          f" {t:9.2f} {pct(t / meas - 1):>7}")

def summary(name, idx, rows):
    errs = [(r[idx] / r[2] - 1) for r in rows if r[idx]]
    if not errs:
        return
    ab = sorted(abs(e) for e in errs)
    p90 = statistics.quantiles(ab, n=10, method="inclusive")[-1] if len(ab) > 1 else ab[0]
    per = "  ".join(f"{m} {pct(statistics.median([r[idx] / r[2] - 1 for r in rows if r[1] == m and r[idx]]))}"
                    for m in ("full", "lora", "qlora") if any(r[1] == m and r[idx] for r in rows))
    under = sum(1 for e in errs if e < 0)
    print(f"  {name:20} rows {len(errs):2}  median |err| {100 * statistics.median(ab):5.1f}%  p90 {100 * p90:5.1f}%"
          f"  under-predicted {under:2}  by method: {per}")
for half in ("tuned", "held-out", "all"):
    part = [r for r in rows if half == "all" or r[8] == half]
    print(f"\nsummary, {half} rows (signed median error by method; median and p90 of |error|; "
          f"under-predicted = below the measurement)")
    summary("sparkops (central)", 4, part)
    summary("sparkops (high end)", 5, part)
    summary("accelerate", 6, part)
    summary("textbook", 7, part)
