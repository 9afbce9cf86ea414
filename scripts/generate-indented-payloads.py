#!/usr/bin/env python3
"""Writes Benchmarks/indented-payloads: the rich and international payloads
(Benchmarks/rich-payloads, Benchmarks/international-payloads) written as people and pretty printers
write them, so that whitespace between tokens is most of what sets them apart from the originals.

Six styles, in turn, named in each file's name:
- `python`:  `json.dumps(indent=2)`: 2 spaces, `", "` never at a line end, `": "`, LF, no final newline
- `php`:     `JSON_PRETTY_PRINT`: 4 spaces, `": "`, LF, no final newline
- `dotnet`:  `WriteIndented` on Windows: 2 spaces, `": "`, CRLF, no final newline
- `jackson`: `DefaultPrettyPrinter`: 2 spaces, `" : "`, arrays on one line as `[ 1, 2 ]`, LF
- `tabs`:    an editor's tab indentation, `": "`, LF and a final newline
- `hand`:    4 spaces, `": "`, CRLF and a final newline, as typed into a file on Windows

Text stays as it is in the originals (non-ASCII unescaped), so that only the whitespace differs:
the escaped corpus (Benchmarks/escaped-payloads) measures escapes. Empty objects and arrays are
written `{}` and `[]`, as the serializers above write them (Jackson: `{ }` and `[ ]`).

Deterministic: the folder only changes when this script or the source corpora do.

Run from the repository root: python3 scripts/generate-indented-payloads.py
Then: swift run -c release bench --corpus Benchmarks/indented-payloads
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = [os.path.join(HERE, "..", "Benchmarks", name) for name in ("rich-payloads", "international-payloads")]
ROOT = os.path.join(HERE, "..", "Benchmarks", "indented-payloads")

# name: (indent unit, key separator, newline, final newline, arrays inline, empty container spacing)
STYLES = [
    ("python", "  ", ": ", "\n", False, False, ""),
    ("php", "    ", ": ", "\n", False, False, ""),
    ("dotnet", "  ", ": ", "\r\n", False, False, ""),
    ("jackson", "  ", " : ", "\n", False, True, " "),
    ("tabs", "\t", ": ", "\n", True, False, ""),
    ("hand", "    ", ": ", "\r\n", True, False, ""),
]


def scalar(value):
    return json.dumps(value, ensure_ascii=False)


def write(value, style, depth=0):
    _, unit, separator, newline, _, inline_arrays, empty = style
    inner = newline + unit * (depth + 1)
    outer = newline + unit * depth
    if isinstance(value, dict):
        if not value:
            return "{" + empty + "}"
        members = [scalar(key) + separator + write(item, style, depth + 1) for key, item in value.items()]
        return "{" + inner + ("," + inner).join(members) + outer + "}"
    if isinstance(value, list):
        if not value:
            return "[" + empty + "]"
        if inline_arrays:
            return "[ " + ", ".join(write(item, style, depth + 1) for item in value) + " ]"
        return "[" + inner + ("," + inner).join(write(item, style, depth + 1) for item in value) + outer + "]"
    return scalar(value)


def main():
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    count = 0
    whitespace = 0
    total = 0
    for source in SOURCES:
        corpus = os.path.basename(source).split("-")[0]
        for name in sorted(name for name in os.listdir(source) if name.endswith(".json")):
            with open(os.path.join(source, name), encoding="utf-8") as f:
                value = json.load(f)
            style = STYLES[count % len(STYLES)]
            text = write(value, style) + (style[3] if style[4] else "")
            assert json.loads(text) == value
            count += 1
            whitespace += sum(text.count(c) for c in " \t\r\n") - sum(scalar(s).count(" ") for s in strings(value))
            total += len(text.encode("utf-8"))
            stem = name[: -len(".json")]
            with open(os.path.join(ROOT, f"{count:03d}-{corpus}-{stem}-{style[0]}.json"), "w", encoding="utf-8", newline="") as f:
                f.write(text)
    print(f"wrote {count} payloads to {os.path.normpath(ROOT)}: {total} bytes, {whitespace} of them whitespace between tokens")


def strings(value):
    """Every string in `value`, keys included (their spaces are text, not whitespace between tokens)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


if __name__ == "__main__":
    main()
