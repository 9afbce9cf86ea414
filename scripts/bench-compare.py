#!/usr/bin/env python3
"""Compares PushCore's rows of two builds measured in alternation: `bench --json` runs of a build
before a change and after it, in the order they ran (before, after, before, after, …).

usage: scripts/bench-compare.py BEFORE1.jsonl AFTER1.jsonl [BEFORE2.jsonl AFTER2.jsonl …]

Prints, per workload, each run's median (min–max) and the change of after against before, pair by
pair; only PushCore's own rows (the baselines did not change)."""
import json
import sys


def load(path):
    with open(path) as f:
        rows = (json.loads(line) for line in f if line.startswith("{"))
        # A *.corpus workload has a row per corpus.
        return {(row["benchmark"], row.get("corpus", "")): row for row in rows if row["implementation"] == "pushcore"}


def cell(row):
    return "%.0f (%.0f–%.0f)" % (row["ns_per_op"], row["ns_per_op_min"], row["ns_per_op_max"])


paths = sys.argv[1:]
if len(paths) < 2 or len(paths) % 2:
    sys.exit(__doc__)
pairs = [(load(paths[i]), load(paths[i + 1])) for i in range(0, len(paths), 2)]
header = "| workload |" + "".join(f" before {n} ns | after {n} ns | change {n} |" for n in range(1, len(pairs) + 1))
print(header)
print("| --- |" + " ---: | ---: | ---: |" * len(pairs))
for workload in pairs[0][0]:
    cells = []
    for before, after in pairs:
        if workload not in before or workload not in after:
            cells += ["–", "–", "–"]
            continue
        change = after[workload]["ns_per_op"] / before[workload]["ns_per_op"] - 1
        cells += [cell(before[workload]), cell(after[workload]), "%+.1f%%" % (100 * change)]
    name = " ".join(part for part in workload if part)
    print(f"| {name} | " + " | ".join(cells) + " |")
