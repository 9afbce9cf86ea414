#!/usr/bin/env python3
"""Writes Benchmarks/international-payloads: 320 APNs payloads the way apps outside the ASCII world
send them.

The rich payloads (Benchmarks/rich-payloads) are mostly ASCII and compact. Many real payloads are
not: text in accented Latin, Cyrillic, Greek, Arabic, Hebrew, Chinese, Japanese and Korean, emoji
with ZWJ sequences, flags and skin tones; `\\u` escapes (surrogate pairs included) from servers
that escape everything outside ASCII, and `\\/` as PHP and .NET write it; pretty-printed bodies,
some with CRLF line ends and tabs. Shapes: alerts, silent rich and secure pushes, Live Activity
updates and custom data. Sizes from 100 B to 4 KB, median about 700 B.

Deterministic (seeded), so the folder only changes when this script does. Each file's name says
its shape and how it is written: `NNN-SHAPE-STYLE.json`, STYLE one of `utf8`, `escaped`,
`escaped-slashes`, `pretty`, `pretty-crlf`, `pretty-tabs`.

Run from the repository root: python3 scripts/generate-international-payloads.py
Then: swift run -c release bench --corpus Benchmarks/international-payloads
"""
import json
import math
import os
import random
import shutil
import statistics

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks", "international-payloads")
COUNT = 320

ASCII_WORDS = (
    "your order has shipped and arrives today photo from the hike summit lake coupon twenty percent "
    "off next purchase meeting moved to room please confirm the match starts in ten minutes"
).split()
SCRIPTS = {
    "latin": "café naïve résumé Ångström Zürich São Paulo mañana Łódź Dvořák façade crème brûlée über straße".split(),
    "cyrillic": "Привет ваш заказ доставлен сегодня Москва скидка двадцать процентов встреча перенесена".split(),
    "greek": "Καλημέρα η παραγγελία σας στάλθηκε Αθήνα έκπτωση σήμερα συνάντηση".split(),
    "arabic": "مرحبا طلبك في الطريق اليوم خصم عشرين بالمئة الاجتماع".split(),
    "hebrew": "שלום ההזמנה שלך נשלחה היום הנחה של עשרים אחוז פגישה".split(),
    "cjk": "東京 駅 ご注文 発送しました 本日 お届け 订单 已发货 今天 주문 배송 완료 오늘".split(),
}
EMOJI = [
    "🚚", "📦", "☀️", "🎉", "❤️", "👍🏽", "👋🏿", "🙌🏼", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🧑🏻‍🚀",
    "🇯🇵", "🇫🇷", "🇧🇷", "🇺🇦", "🇮🇱", "🇸🇦",
]


def words(rng, count, international):
    if not international:
        return " ".join(rng.choice(ASCII_WORDS) for _ in range(count))
    vocabulary = SCRIPTS[rng.choice(sorted(SCRIPTS))] + ASCII_WORDS[:6]
    picked = [rng.choice(vocabulary) for _ in range(count)]
    # An emoji in about one word in six, at least one per text.
    for index in range(0, count, 6):
        picked.insert(index, rng.choice(EMOJI))
    return " ".join(picked)


def alert(rng, index, size, intl):
    return {
        "aps": {
            "alert": {"title": words(rng, 3, intl), "subtitle": words(rng, 2, intl), "body": words(rng, size, intl)},
            "badge": rng.randint(1, 99), "sound": "default", "thread-id": "thread-%d" % index,
            "category": "MESSAGE", "mutable-content": 1,
        },
        "senderId": "u-%06d" % rng.randrange(10**6),
        "url": "https://example.com/m/%d?lang=%s" % (index, rng.choice(["fr", "ru", "el", "ar", "he", "ja"])),
    }


def silent_rich(rng, index, size, intl):
    return {
        "aps": {"content-available": 1},
        "richId": "%032x" % rng.getrandbits(128), "richType": "img",
        "richMessage": words(rng, size, intl),
        "resource": "https://cdn.example.com/images/%d/full.jpg" % index,
    }


def silent_secure(rng, index, size, intl):
    return {
        "aps": {"content-available": 1},
        "secureId": "%032x" % rng.getrandbits(128),
        "preview": words(rng, max(1, size // 4), intl),
        "ciphertext": "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                              for _ in range(size * 4)) + "==",
    }


def live_activity(rng, index, size, intl):
    return {
        "aps": {
            "timestamp": 1_700_000_000 + index, "event": "update", "stale-date": 1_700_003_600,
            "content-state": {
                "status": words(rng, 3, intl),
                "driver": {"name": words(rng, 2, intl), "etaMinutes": 5 + index % 40, "lat": 35.6812, "lon": 139.7671},
                "steps": [words(rng, max(1, size // 6), intl) for _ in range(4)],
                "progress": round(rng.random(), 2),
            },
            "alert": {"title": words(rng, 3, intl), "body": words(rng, max(1, size // 3), intl)},
        }
    }


def custom_data(rng, index, size, intl):
    return {
        "aps": {"alert": words(rng, 4, intl), "sound": "chime.caf"},
        "match": {
            "id": index, "league": words(rng, 2, intl), "home": words(rng, 2, intl), "away": words(rng, 2, intl),
            "score": [rng.randint(0, 5), rng.randint(0, 5)], "minute": rng.randint(1, 90), "live": True,
            "commentary": [{"minute": minute, "text": words(rng, max(1, size // 5), intl)} for minute in range(3)],
            "venue": None,
        },
    }


SHAPES = [("alert", alert), ("silent-rich", silent_rich), ("silent-secure", silent_secure),
          ("live-activity", live_activity), ("custom-data", custom_data)]


def encode(payload, style):
    if style == "utf8":
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if style.startswith("escaped"):
        text = json.dumps(payload, ensure_ascii=True, separators=(",", ":"))
        # "/" only appears inside strings in JSON, where "\/" is a valid escape of it.
        return (text.replace("/", "\\/") if style == "escaped-slashes" else text).encode("ascii")
    indent = "\t" if style == "pretty-tabs" else 2
    text = json.dumps(payload, ensure_ascii=False, indent=indent) + "\n"
    if style == "pretty-crlf":
        text = text.replace("\n", "\r\n")
    return text.encode("utf-8")


def style_for(index):
    # 30% escaped (half of them with "\/"), 20% pretty-printed (a quarter each with CRLF and with
    # tabs), the rest compact UTF-8.
    slot = index % 20
    if slot < 6:
        return "escaped-slashes" if slot % 2 else "escaped"
    if slot < 10:
        return {6: "pretty", 7: "pretty-crlf", 8: "pretty-tabs", 9: "pretty"}[slot]
    return "utf8"


def make(rng_seed, index, shape, style, intl, target):
    """The payload whose encoding comes closest to `target` bytes without passing 4 KB."""
    best = None
    for size in range(1, 400):
        encoded = encode(shape(random.Random(rng_seed), index, size, intl), style)
        if len(encoded) > 4096:
            break
        best = encoded
        if len(encoded) >= target:
            break
    return best


def main():
    rng = random.Random(20261125)
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    sizes = []
    for index in range(COUNT):
        name, shape = SHAPES[index % len(SHAPES)]
        style = style_for(index)
        # Escaped payloads always carry text outside ASCII (so they hold \u escapes); of the others,
        # half do.
        intl = style.startswith("escaped") or rng.random() < 0.5
        target = min(4000, max(100, int(math.exp(rng.gauss(math.log(700), 0.6)))))
        encoded = make(rng.getrandbits(32), index, shape, style, intl, target)
        json.loads(encoded)
        sizes.append(len(encoded))
        with open(os.path.join(ROOT, "%03d-%s-%s.json" % (index + 1, name, style)), "wb") as f:
            f.write(encoded)
    files = [open(os.path.join(ROOT, name), "rb").read() for name in sorted(os.listdir(ROOT))]
    escaped = sum(1 for data in files if b"\\u" in data)
    international = sum(1 for data in files if b"\\u" in data or any(byte > 127 for byte in data))
    surrogates = sum(1 for data in files if b"\\ud83" in data)
    slashes = sum(1 for data in files if b"\\/" in data)
    pretty = sum(1 for data in files if b"\n" in data)
    print("wrote %d payloads: %d–%d bytes, median %d; %d with text outside ASCII, %d with \\u escapes "
          "(%d with surrogate pairs), %d with \\/, %d pretty-printed"
          % (COUNT, min(sizes), max(sizes), statistics.median(sizes), international, escaped, surrogates, slashes,
             pretty))

if __name__ == "__main__":
    main()
