#!/usr/bin/env python3
"""Turns two `bench --json` runs into Benchmarks/README.md's markdown table.

usage: scripts/bench-table.py RUN1.jsonl RUN2.jsonl
"""
import json, sys


def load(path):
    with open(path) as f:
        rows = map(json.loads, (line for line in f if line.startswith("{")))
        return {(r["benchmark"], r.get("corpus", ""), r["implementation"]): r for r in rows}


def cell(row):
    return "{:,.0f} ({:,.0f}–{:,.0f})".format(row["ns_per_op"], row["ns_per_op_min"], row["ns_per_op_max"])


def ratio(value):
    return ("%.2f×" if value < 10 else "%.1f×") % value


first, second = load(sys.argv[1]), load(sys.argv[2])
print("| workload | corpus | implementation | run 1 ns | run 2 ns | allocs/op | speedup (run 1 / run 2) |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
for key, row in first.items():
    other = second.get(key)
    speedup = ""
    if "pushcore_speedup" in row:
        speedup = "%s / %s" % (ratio(row["pushcore_speedup"]), ratio(other["pushcore_speedup"]) if other else "–")
    allocations = row["allocations_per_op"]
    print("| %s | %s | %s | %s | %s | %s | %s |" % (
        key[0], key[1], key[2], cell(row), cell(other) if other else "–",
        "n/a" if allocations is None else "%.2f" % allocations, speedup))
