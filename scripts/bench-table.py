#!/usr/bin/env python3
"""Turns two `bench --json` runs into the README's markdown table.

usage: scripts/bench-table.py RUN1.jsonl RUN2.jsonl
"""
import json, sys

def load(path):
    with open(path) as f:
        return {(r["benchmark"], r["implementation"]): r for r in map(json.loads, (l for l in f if l.startswith("{")))}

def cell(row):
    return "%.0f (%.0f–%.0f)" % (row["ns_per_op"], row["ns_per_op_min"], row["ns_per_op_max"])

first, second = load(sys.argv[1]), load(sys.argv[2])
print("| workload | implementation | run 1 ns | run 2 ns | allocs/op | speedup (run 1 / run 2) |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for key, row in first.items():
    other = second.get(key)
    speedup = ""
    if "pushcore_speedup" in row:
        speedup = "%.1f× / %s" % (row["pushcore_speedup"], ("%.1f×" % other["pushcore_speedup"]) if other else "–")
    allocations = row["allocations_per_op"]
    print("| %s | %s | %s | %s | %s | %s |" % (
        key[0], key[1], cell(row), cell(other) if other else "–",
        "n/a" if allocations is None else "%.2f" % allocations, speedup))
