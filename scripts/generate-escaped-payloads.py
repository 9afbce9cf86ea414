#!/usr/bin/env python3
"""Writes Benchmarks/escaped-payloads: the 320 international payloads (Benchmarks/international-payloads)
written the way `ensure_ascii` serializers write them, where every character outside ASCII is a
`\\uXXXX` escape and an astral one (emoji, some CJK) a surrogate pair.

Backends in Python send what `json.dumps` writes by default (`ensure_ascii=True`, `", "` and
`": "` between items), PHP's `json_encode` writes the same escapes compactly and `/` as `\\/`.
Half the files are each: `NNN-SHAPE-python.json` and `NNN-SHAPE-php.json`, alternating. The
payloads are the international ones, so the two corpora hold the same text, unescaped and escaped.

Deterministic: the folder only changes when this script or the international payloads do.

Run from the repository root: python3 scripts/generate-escaped-payloads.py
Then: swift run -c release bench --corpus Benchmarks/escaped-payloads
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "Benchmarks", "international-payloads")
ROOT = os.path.join(HERE, "..", "Benchmarks", "escaped-payloads")


def python_style(value):
    return json.dumps(value, ensure_ascii=True)


def php_style(value):
    # json_encode's defaults: compact, every non-ASCII character escaped, `/` escaped.
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("/", "\\/")


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    names = sorted(name for name in os.listdir(SOURCE) if name.endswith(".json"))
    escapes = 0
    for index, name in enumerate(names):
        with open(os.path.join(SOURCE, name), encoding="utf-8") as f:
            value = json.load(f)
        number, shape = name.split("-", 1)[0], name.split("-", 1)[1].rsplit("-", 1)[0]
        for style in ("pretty", "escaped", "utf8"):
            if shape.endswith("-" + style):
                shape = shape[: -len(style) - 1]
        style, write = ("python", python_style) if index % 2 == 0 else ("php", php_style)
        text = write(value)
        assert text.isascii() and json.loads(text) == value
        escapes += text.count("\\u")
        with open(os.path.join(ROOT, f"{number}-{shape}-{style}.json"), "w", encoding="ascii") as f:
            f.write(text)
    print(f"wrote {len(names)} payloads to {os.path.normpath(ROOT)}, {escapes} \\u escapes in all")


if __name__ == "__main__":
    main()
