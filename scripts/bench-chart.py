#!/usr/bin/env python3
"""Draws a `bench --json` run as an SVG picture: per workload (and corpus), PushCore's speedup over
Foundation on a log scale, and its time over simdjson's where simdjson ran too, each with whiskers
from the samples' min–max. Given an earlier run as well, each workload has two bars, the earlier
one lighter, so the two runs read side by side. Plain SVG written by hand: no plotting package.

usage: scripts/bench-chart.py RUN.jsonl [EARLIER.jsonl] > chart.svg
"""
import html
import json
import math
import sys

ROW = 22  # pixels per bar
LABEL = 300  # the workload names' column
PANEL = 360  # each panel's width
GAP = 70
TOP = 70
SPEEDUP_RANGE = (0.1, 1000.0)  # log scale
SIMDJSON_RANGE = (0.0, 3.0)  # PushCore's time over simdjson's, linear


def load(path):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.startswith("{")]
    by_workload = {}
    for row in rows:
        key = (row["benchmark"], row.get("corpus", ""))
        by_workload.setdefault(key, {})[row["implementation"]] = row
    return by_workload


def ratio(top, bottom):
    """top's time over bottom's: (median, low, high), the whiskers from the samples' extremes."""
    return (
        top["ns_per_op"] / bottom["ns_per_op"],
        top["ns_per_op_min"] / bottom["ns_per_op_max"],
        top["ns_per_op_max"] / bottom["ns_per_op_min"],
    )


def speedup(implementations):
    """PushCore against the first Foundation baseline, or None."""
    ours = implementations.get("pushcore")
    foundation = next((row for name, row in implementations.items() if name.startswith("foundation")), None)
    return ratio(foundation, ours) if ours and foundation else None


def over_simdjson(implementations):
    """PushCore's time over simdjson's, or None."""
    ours, anchor = implementations.get("pushcore"), implementations.get("anchor.simdjson")
    return ratio(ours, anchor) if ours and anchor else None


def log_x(value):
    low, high = SPEEDUP_RANGE
    value = min(max(value, low), high)
    return PANEL * (math.log10(value) - math.log10(low)) / (math.log10(high) - math.log10(low))


def linear_x(value):
    low, high = SIMDJSON_RANGE
    return PANEL * (min(max(value, low), high) - low) / (high - low)


def bar(out, left, y, scale, figure, origin, colour, label):
    median, low, high = figure
    start, end = sorted((scale(origin), scale(median)))
    out.append(f'<rect x="{left + start:.1f}" y="{y:.1f}" width="{max(end - start, 1):.1f}" height="{ROW - 8}" fill="{colour}"/>')
    middle = y + (ROW - 8) / 2
    out.append(f'<line x1="{left + scale(low):.1f}" x2="{left + scale(high):.1f}" y1="{middle:.1f}" y2="{middle:.1f}" stroke="#222"/>')
    for end_value in (low, high):
        x = left + scale(end_value)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{middle - 4:.1f}" y2="{middle + 4:.1f}" stroke="#222"/>')
    out.append(f'<text x="{left + max(scale(high), end) + 4:.1f}" y="{middle + 4:.1f}">{label}</text>')


def main(paths):
    if not 1 <= len(paths) <= 2:
        sys.exit(__doc__)
    runs = [load(path) for path in paths]
    current, earlier = runs[0], (runs[1] if len(runs) > 1 else None)
    keys = [key for key, implementations in current.items() if speedup(implementations) or over_simdjson(implementations)]
    bars_per_row = 2 if earlier else 1
    height = TOP + len(keys) * ROW * bars_per_row + 40
    width = LABEL + 2 * PANEL + GAP + 80
    left_speedup, left_simdjson = LABEL, LABEL + PANEL + GAP
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left_speedup}" y="20" font-size="13" font-weight="bold">speedup over Foundation (log scale; higher is faster)</text>',
        f'<text x="{left_simdjson}" y="20" font-size="13" font-weight="bold">time ÷ simdjson\'s (1 is level; lower is faster)</text>',
        f'<text x="{LABEL}" y="38" font-size="11">bars: median; whiskers: min–max of the samples'
        + ("; light: the earlier run" if earlier else "")
        + "</text>",
    ]
    for tick in (0.1, 1, 10, 100, 1000):
        x = left_speedup + log_x(tick)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 20}" y2="{height - 30}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{TOP - 24}" text-anchor="middle">{tick:g}×</text>')
    for tick in (0, 0.5, 1, 1.5, 2, 2.5, 3):
        x = left_simdjson + linear_x(tick)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 20}" y2="{height - 30}" stroke="{"#999" if tick == 1 else "#ddd"}"/>')
        out.append(f'<text x="{x:.1f}" y="{TOP - 24}" text-anchor="middle">{tick:g}</text>')
    y = TOP
    for key in keys:
        name = " ".join(part for part in key if part)
        out.append(f'<text x="{LABEL - 8}" y="{y + ROW * bars_per_row / 2 + 2:.1f}" text-anchor="end">{html.escape(name)}</text>')
        shown = [(earlier.get(key, {}), "#9ecae1", "#fdd0a2")] if earlier else []
        shown.append((current[key], "#3182bd", "#e6550d"))
        for implementations, speedup_colour, simdjson_colour in shown:
            figure = speedup(implementations)
            if figure:
                bar(out, left_speedup, y, log_x, figure, 1, speedup_colour, ("%.2f×" if figure[0] < 10 else "%.0f×") % figure[0])
            figure = over_simdjson(implementations)
            if figure:
                bar(out, left_simdjson, y, linear_x, figure, 0, simdjson_colour, "%.2f" % figure[0])
            y += ROW
    out.append(f'<text x="10" y="{height - 10}">{html.escape(" vs ".join(paths))}</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
