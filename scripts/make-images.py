#!/usr/bin/env python3
"""Draws the PNG images that PushCore embeds (Sources/RichPushImages/Images/).

Pure Python (zlib only), so anyone can regenerate them byte for byte with the same zlib:
    python3 scripts/make-images.py
The images are small on purpose: SwiftPM's `.embedInCode` turns every byte into an array-literal
element, and compile time grows with it (a 64 KiB file costs ~12 s, 1 MiB ~4 min on the dev VM).
"""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "Sources", "RichPushImages", "Images")


def png(width, height, channels, pixel):
    """PNG bytes for an 8-bit RGB (3) or RGBA (4) image; pixel(x, y) returns a channel tuple."""
    color_type = {3: 2, 4: 6}[channels]
    raw = bytearray()
    previous = bytes(width * channels)
    for y in range(height):
        row = bytes(b for x in range(width) for b in pixel(x, y))
        # Per row, the filter (None, Sub or Up) with the smallest sum of absolute residues: the
        # usual heuristic; gradients then compress to almost nothing.
        candidates = [
            (0, row),
            (1, bytes((row[i] - (row[i - channels] if i >= channels else 0)) & 0xFF for i in range(len(row)))),
            (2, bytes((row[i] - previous[i]) & 0xFF for i in range(len(row)))),
        ]
        kind, filtered = min(candidates, key=lambda c: sum(min(b, 256 - b) for b in c[1]))
        raw.append(kind)
        raw.extend(filtered)
        previous = row

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))


def logo(x, y):
    """96x96: a blue rounded square holding a white bell with a red badge dot."""
    size, radius = 96, 20
    cx, cy = min(max(x, radius), size - 1 - radius), min(max(y, radius), size - 1 - radius)
    if (x - cx) ** 2 + (y - cy) ** 2 > radius ** 2:
        return (0, 0, 0, 0)
    bell_body = 30 <= y <= 62 and abs(x - 48) <= 12 + (y - 30) * 0.4
    bell_top = (x - 48) ** 2 + (y - 32) ** 2 <= 14 ** 2 and y <= 32
    clapper = (x - 48) ** 2 + (y - 68) ** 2 <= 6 ** 2
    if (x - 70) ** 2 + (y - 24) ** 2 <= 10 ** 2:
        return (235, 64, 52, 255)
    if bell_body or bell_top or clapper:
        return (255, 255, 255, 255)
    return (30, 110 + y // 3, 230, 255)


def sunset(x, y):
    """240x135: a sky gradient, a sun and waves; the image a rich push shows."""
    width, height = 240, 135
    horizon = 90
    if y < horizon:
        t = y / horizon
        sky = (int(40 + 200 * t), int(60 + 90 * t), int(140 - 60 * t))
        d = math.hypot(x - 160, y - 70)
        if d < 22:
            return (255, 220, 90)
        glow = max(0.0, 1 - d / 90)
        return tuple(min(255, int(c + 80 * glow)) for c in sky)
    wave = math.sin(x / 9.0 + (y - horizon) * 0.9) * 0.5 + 0.5
    depth = (y - horizon) / (height - horizon)
    return (int(20 + 40 * wave * (1 - depth)), int(50 + 50 * wave), int(110 + 60 * (1 - depth)))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in [("pushcore-logo.png", png(96, 96, 4, logo)), ("sunset.png", png(240, 135, 3, sunset))]:
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
