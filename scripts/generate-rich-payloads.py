#!/usr/bin/env python3
"""Writes Benchmarks/rich-payloads: 24 APNs payloads of about 1 KB with rich custom data.

`Corpus/valid` is mostly small payloads (mean 165 bytes), where fixed per-payload costs decide
the bench's ratios. These are about the size of a real rich payload (~1 KB): alerts
with order details, Live Activity updates with nested content state, silent rich pushes with
metadata, localized invitations with a critical sound and a player list. Deterministic (seeded),
so the folder only changes when this script does.

Run from the repository root: python3 scripts/generate-rich-payloads.py
Then: swift run -c release bench --corpus Benchmarks/rich-payloads
"""
import json, os, random, shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks", "rich-payloads")
WORDS = (
    "the quick brown fox jumps over a lazy dog your order has shipped and arrives today photo from "
    "the hike summit lake coupon twenty percent off next purchase meeting moved to room 4B please "
    "confirm café naïve résumé 東京 駅 🚚 📦 ☀️"
).split()


def text(rng, count):
    return " ".join(rng.choice(WORDS) for _ in range(count))


def order_alert(rng, index):
    return {
        "aps": {
            "alert": {"title": text(rng, 5), "subtitle": text(rng, 4), "body": text(rng, 55)},
            "badge": rng.randint(0, 99), "sound": "default", "thread-id": "order-%d" % index,
            "category": "ORDER_UPDATE", "interruption-level": "time-sensitive", "relevance-score": 0.75,
            "mutable-content": 1,
        },
        "orderId": "A-%06d" % index,
        "items": [
            {"sku": "SKU-%d" % item, "name": text(rng, 4), "qty": item + 1, "price": round(19.99 + item * 3.5, 2)}
            for item in range(5)
        ],
        "trackingUrl": "https://example.com/track/%d?ref=push&campaign=winter" % index,
        "richMessage": text(rng, 25),
    }


def live_activity_update(rng, index):
    return {
        "aps": {
            "timestamp": 1_700_000_000 + index, "event": "update", "stale-date": 1_700_003_600,
            "relevance-score": 75,
            "content-state": {
                "status": text(rng, 3),
                "driver": {"name": text(rng, 2), "etaMinutes": 12 + index, "lat": 47.6062, "lon": -122.3321},
                "steps": [text(rng, 6) for _ in range(8)],
                "progress": 0.42,
            },
            "alert": {"title": text(rng, 4), "body": text(rng, 40)},
        }
    }


def silent_rich_push(rng, index):
    return {
        "aps": {"content-available": 1},
        "richId": "%032x" % rng.getrandbits(128), "richType": "img", "richMessage": text(rng, 80),
        "meta": {"width": 1024, "height": 768, "tags": [text(rng, 1) for _ in range(12)], "caption": text(rng, 55)},
    }


def game_invitation(rng, index):
    return {
        "aps": {
            "alert": {
                "title-loc-key": "GAME_INVITE_TITLE", "title-loc-args": [text(rng, 1), text(rng, 1)],
                "loc-key": "GAME_INVITE_BODY", "loc-args": [text(rng, 2), text(rng, 3), str(index)],
            },
            "badge": 3, "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.8},
        },
        "gameId": "g-%d" % index,
        "players": [
            {"id": player, "name": text(rng, 2), "score": rng.randint(0, 10_000),
             "avatar": "https://cdn.example.com/a/%d.png" % player}
            for player in range(6)
        ],
        "note": text(rng, 45),
    }


def main():
    rng = random.Random(7)
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    kinds = [("order-alert", order_alert), ("live-activity-update", live_activity_update),
             ("silent-rich-push", silent_rich_push), ("game-invitation", game_invitation)]
    sizes = []
    for index in range(24):
        name, make = kinds[index % len(kinds)]
        encoded = json.dumps(make(rng, index), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        assert len(encoded) <= 4096, (name, len(encoded))
        sizes.append(len(encoded))
        with open(os.path.join(ROOT, "%03d-%s.json" % (index + 1, name)), "wb") as f:
            f.write(encoded)
    print("wrote %d payloads, mean %d bytes, %d–%d" % (len(sizes), sum(sizes) / len(sizes), min(sizes), max(sizes)))


if __name__ == "__main__":
    main()
