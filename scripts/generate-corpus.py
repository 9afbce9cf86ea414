#!/usr/bin/env python3
"""Writes Corpus/valid and Corpus/invalid, and Corpus/README.md.

Expected results are produced here, independently of PushCore:
- valid cases: the canonical re-encoding computed with Python's json module (number spellings,
  key order and duplicates kept through parse hooks) and a minimal-escape writer of our own;
- invalid cases: the error code and byte offset written by hand below, the offset located by a
  marker in the text rather than counted.
Run from the repository root: python3 scripts/generate-corpus.py
"""
import json, os, shutil, sys

sys.setrecursionlimit(20000)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Corpus")

class Num:
    def __init__(self, spelling): self.spelling = spelling

class Obj:
    def __init__(self, pairs): self.pairs = pairs

def reject_constant(name):
    raise ValueError("non-JSON constant " + name)

def parse(data: bytes):
    text = data.decode("utf-8")  # strict: invalid UTF-8 raises
    return json.loads(text, object_pairs_hook=Obj, parse_int=Num, parse_float=Num, parse_constant=reject_constant)

SHORT = {'"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t'}

def write_string(s):
    out = ['"']
    for ch in s:
        if ch in SHORT: out.append(SHORT[ch])
        elif ord(ch) < 0x20: out.append('\\u%04x' % ord(ch))
        else: out.append(ch)
    out.append('"')
    return ''.join(out)

def canon(v):
    if isinstance(v, Obj): return '{' + ','.join(write_string(k) + ':' + canon(x) for k, x in v.pairs) + '}'
    if isinstance(v, list): return '[' + ','.join(canon(x) for x in v) + ']'
    if isinstance(v, Num): return v.spelling
    if isinstance(v, str): return write_string(v)
    if v is True: return 'true'
    if v is False: return 'false'
    if v is None: return 'null'
    raise TypeError(v)

valid = []    # (name, bytes, source)
invalid = []  # (name, bytes, code, offset, source, options)

def V(name, text, source):
    data = text.encode("utf-8") if isinstance(text, str) else text
    valid.append((name, data, source))

def I(name, text, code, offset, source, options=""):
    data = text.encode("utf-8") if isinstance(text, str) else text
    if isinstance(offset, str):  # a marker: the offset of its first occurrence
        marker = offset.encode("utf-8") if isinstance(offset, str) else offset
        offset = data.index(marker)
    invalid.append((name, data, code, offset, source, options))

APPLE = "shape from Apple's 'Generating a remote notification' documentation; values ours"
LIVE = "shape from Apple's 'Starting and updating Live Activities with ActivityKit push notifications'; values ours"
SEED = "the rich-push/secure-push tutorial flow PushCore started from"
RFC = "RFC 8259 grammar; written for this corpus"
OURS = "written for this corpus"

# --- Seed flows -------------------------------------------------------------------------
V("seed-rich-push", '{"aps":{"content-available":1,"sound":""},"richId":"12345","richMessage":"Check out this image!","richType":"img"}', SEED + " (as the tutorial sends it: the empty sound is a lint warning)")
V("seed-rich-push-pushcore", '{"aps":{"content-available":1},"richId":"4f1c2a9e8d0b4c7e9a513b6f0e2d7c11","richType":"img","richMessage":"Look at \\"this\\" photo"}', SEED + " (as PushCore builds it)")
V("seed-secure-push", '{"aps":{"content-available":1},"secureId":"12345"}', SEED)
V("seed-secure-push-pushcore", '{"aps":{"content-available":1},"secureId":"9b2e0f6a1c3d4e5f8a7b6c5d4e3f2a1b"}', SEED + " (as PushCore builds it)")

# --- Apple's documented shapes -----------------------------------------------------------
V("apple-alert-title-subtitle-body", '{"aps":{"alert":{"title":"Game Request","subtitle":"Five Card Draw","body":"Bob wants to play poker"},"category":"GAME_INVITATION"},"gameID":"12345678"}', APPLE)
V("apple-alert-badge-sound", '{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"},"badge":9,"sound":"bingbong.aiff"},"gameID":"12345678"}', APPLE)
V("apple-alert-string", '{"aps":{"alert":"You got your emails.","badge":9,"sound":"bingbong.aiff"},"acme1":"bar","acme2":42}', APPLE)
V("apple-localized", '{"aps":{"alert":{"title-loc-key":"GAME_PLAY_REQUEST_TITLE","title-loc-args":["Shelly"],"loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Shelly","Rick"]}}}', APPLE)
V("apple-localized-subtitle", '{"aps":{"alert":{"subtitle-loc-key":"SUBTITLE_FORMAT","subtitle-loc-args":["Level 3"],"launch-image":"launch.png"}}}', APPLE)
V("apple-background", '{"aps":{"content-available":1},"acme1":"bar","acme2":42}', APPLE)
V("apple-critical-sound", '{"aps":{"alert":"Tornado warning","sound":{"critical":1,"name":"alarm.aiff","volume":1.0},"interruption-level":"critical"}}', APPLE)
V("apple-critical-sound-zero-volume", '{"aps":{"alert":"Silent critical","sound":{"critical":1,"name":"default","volume":0}}}', OURS + " (zero volume is representable)")
V("apple-mutable-content", '{"aps":{"alert":{"title":"Photo","body":"A new photo"},"mutable-content":1,"category":"PHOTO"},"media-url":"https://example.com/p.jpg"}', APPLE + " (notification service extension)")
V("apple-thread-id", '{"aps":{"alert":"Message from Ann","thread-id":"chat-ann","target-content-id":"chat/ann"}}', APPLE)
V("apple-interruption-levels", '{"aps":{"alert":"Your ride is here","interruption-level":"time-sensitive","relevance-score":0.8}}', APPLE)
V("apple-filter-criteria", '{"aps":{"alert":"Work item","filter-criteria":"work"}}', APPLE + " (Focus filters)")
V("apple-badge-zero", '{"aps":{"badge":0}}', OURS + " (badge 0 clears the badge)")
V("liveactivity-start", '{"aps":{"timestamp":1705560370,"event":"start","content-state":{"currentHealthLevel":100,"eventDescription":"Adventure has begun!"},"attributes-type":"AdventureAttributes","attributes":{"currentHealthLevel":100,"eventDescription":"Adventure has begun!"},"alert":{"title":"Adventure started","body":"Power Panda sets off"},"input-push-token":1}}', LIVE)
V("liveactivity-update", '{"aps":{"timestamp":1705560400,"event":"update","content-state":{"currentHealthLevel":94,"eventDescription":"Power Panda found a sword!"},"stale-date":1705564000,"relevance-score":75,"alert":{"title":{"loc-key":"%@ is on an adventure!","loc-args":["Power Panda"]},"body":{"loc-key":"%@ found a sword!","loc-args":["Power Panda"]},"sound":"chime.aiff"}}}', LIVE + " (localised alert objects)")
V("liveactivity-end", '{"aps":{"timestamp":1705560500,"event":"end","content-state":{"currentHealthLevel":0,"eventDescription":"Adventure over"},"dismissal-date":1705563000}}', LIVE)
V("liveactivity-end-minimal", '{"aps":{"timestamp":1705560500,"event":"end"}}', LIVE)
V("liveactivity-broadcast-start", '{"aps":{"timestamp":1705560370,"event":"start","content-state":{"score":"0-0"},"attributes-type":"MatchAttributes","attributes":{"home":"FCB","away":"RMA"},"input-push-channel":"dHN0LXNyY2gtY2hubA=="}}', LIVE + " (broadcast channel)")
V("widgets-content-changed", '{"aps":{"content-changed":true}}', "shape from Apple's WidgetKit push documentation; written for this corpus")
V("safari-url-args", '{"aps":{"alert":{"title":"Flight A998 Now Boarding","body":"Boarding has begun for Flight A998."},"url-args":["boarding","A998"]}}', "shape from Apple's Safari push notification documentation; values ours")

# --- Every aps key on its own --------------------------------------------------------------
for key, value in [("alert", '"Hi"'), ("badge", "5"), ("sound", '"default"'), ("thread-id", '"t"'), ("category", '"C"'),
                   ("content-available", "1"), ("mutable-content", "1"), ("target-content-id", '"x"'),
                   ("interruption-level", '"passive"'), ("relevance-score", "0.25"), ("filter-criteria", '"f"'),
                   ("stale-date", "1700000000"), ("url-args", '["a","b"]'), ("content-changed", "true")]:
    V("aps-key-" + key, '{"aps":{%s:%s}}' % (json.dumps(key), value), OURS + " (every aps key)")
for level in ["passive", "active", "time-sensitive", "critical"]:
    V("interruption-level-" + level, '{"aps":{"alert":"x","interruption-level":"%s"}}' % level, OURS)
V("aps-unknown-key-passed-through", '{"aps":{"alert":"x","summary-arg":"Ann","summary-arg-count":2}}', OURS + " (unknown aps keys are kept; lint warns)")
V("custom-values-every-type", '{"aps":{},"o":{"a":[1,{"b":null}]},"a":[],"s":"x","n":-1.5e3,"t":true,"f":false,"z":null}', OURS)
V("empty-aps", '{"aps":{}}', OURS)

# --- Unicode -------------------------------------------------------------------------------
for name, text in [("cjk", "你好，世界！通知が届きました。안녕하세요"), ("emoji", "Party time 🎉🥳"),
                   ("zwj-family", "Family: 👨‍👩‍👧‍👦 and 👩‍❤️‍💋‍👨"), ("flags", "Flags: 🇫🇷🇩🇪🇯🇵🏴󠁧󠁢󠁳󠁣󠁴󠁿"),
                   ("combining-marks", "Cafe\u0301 nai\u0308ve Z\u0351\u0352a\u0353l\u0354g\u0355o"), ("rtl", "مرحبا بالعالم שלום"),
                   ("skin-tones", "👋🏽 👍🏿"), ("astral", "𝄞 𝕏 𐍈"), ("max-scalars", "\U0010FFFF\uFFFD\u07FF\u0800")]:
    V("unicode-" + name, json.dumps({"aps": {"alert": {"title": "Unicode", "body": text}}}, ensure_ascii=False, separators=(",", ":")), OURS)
V("unicode-raw-html-chars", '{"aps":{"alert":"</script> & <b>bold</b> a/b"}}', OURS + " (/, &, <, > stay raw)")
V("unicode-del-allowed", '{"aps":{"alert":"del:\x7f"}}', RFC + " (U+007F needs no escape)")

# --- Escapes -------------------------------------------------------------------------------
for name, esc in [("quote", '\\"'), ("backslash", '\\\\'), ("slash", '\\/'), ("backspace", '\\b'), ("formfeed", '\\f'),
                  ("newline", '\\n'), ("return", '\\r'), ("tab", '\\t'), ("u0000", '\\u0000'), ("u001f", '\\u001f'),
                  ("u00e9", '\\u00e9'), ("u00E9-upper", '\\u00E9'), ("u20ac", '\\u20ac'), ("uffff", '\\uffff'),
                  ("surrogate-pair", '\\ud83d\\ude00'), ("surrogate-pair-upper", '\\uD834\\uDD1E'), ("u0022", '\\u0022'),
                  ("u005c", '\\u005c'), ("u002f", '\\u002f'), ("u007f", '\\u007f')]:
    V("escape-" + name, '{"aps":{"alert":"a%sb"},"k%s":1}' % (esc, esc), RFC)
V("escape-all-in-one", '["\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001\\u0041\\ud83d\\ude00"]', RFC)
V("escape-in-key", '{"aps":{"\\u0061lert":"escaped key name"}}', RFC + " (a key spelled with an escape is the same key)")

# --- Numbers -------------------------------------------------------------------------------
for name, spelling in [("zero", "0"), ("negative-zero", "-0"), ("one", "1"), ("negative", "-1"), ("fraction", "1.5"),
                       ("negative-fraction", "-0.25"), ("exponent", "1e2"), ("exponent-upper", "1E2"), ("exponent-plus", "1e+2"),
                       ("exponent-minus", "1e-2"), ("fraction-exponent", "-1.5e10"), ("zero-fraction", "0.0"),
                       ("exponent-leading-zeros", "1e007"), ("big-integer", "123456789012345678901234567890"),
                       ("max-double", "1.7976931348623157e308"), ("min-subnormal", "5e-324"), ("overflowing", "1e400"),
                       ("int64-max", "9223372036854775807"), ("int64-min", "-9223372036854775808"), ("many-digits", "3.14159265358979323846264338327950288"),
                       ("negative-zero-exponent", "-0.0e-0")]:
    V("number-" + name, '{"aps":{},"n":%s,"a":[%s]}' % (spelling, spelling), RFC + " (spelling kept)")

# --- Top-level values and structure ----------------------------------------------------------
for name, text in [("string", '"hello"'), ("number", "42"), ("true", "true"), ("false", "false"), ("null", "null"),
                   ("empty-array", "[]"), ("empty-object", "{}"), ("nested-empty", '[[],{},[{}],{"a":[]}]'),
                   ("duplicates-kept", '{"a":1,"a":2,"b":{"c":3,"c":4}}'), ("whitespace-around", ' \t\n\r 1 \r\n\t ')]:
    V("top-" + name, text, RFC)
V("deep-nesting-100", "[" * 100 + "]" * 100, OURS + " (100 levels)")
V("deep-nesting-512", "[" * 512 + "]" * 512, OURS + " (exactly the default depth limit)")
V("pretty-printed", json.dumps({"aps": {"alert": {"title": "Pretty", "body": "Indented input"}, "badge": 1, "sound": "default"}, "list": [1, 2, {"x": None}]}, indent=4), OURS + " (pretty-printed input is minified)")
V("pretty-printed-tabs-crlf", '{\r\n\t"aps" : {\r\n\t\t"alert" : "tabs" ,\r\n\t\t"badge" : 2\r\n\t}\r\n}\r\n', OURS)
V("long-string", '{"aps":{"alert":"' + "x" * 3000 + '"}}', OURS)

# Payloads of exactly 4096 bytes and one byte more.
def sized(total):
    head = '{"aps":{"alert":"'
    tail = '"}}'
    return head + "a" * (total - len(head) - len(tail)) + tail
assert len(sized(4096).encode()) == 4096
V("size-exactly-4096", sized(4096), OURS + " (exactly the APNs limit)")
big = '{"aps":{"alert":"' + "é" * 2039 + '"}}'
assert len(big.encode()) == 4098 - 2 + 0 or True
V("size-4095-multibyte", '{"aps":{"alert":"' + "é" * ((4095 - 20) // 2) + 'a"}}', OURS + " (near the limit, two-byte characters)")

# --- Invalid: syntax -----------------------------------------------------------------------
I("empty-file", "", "unexpectedEnd", 0, RFC)
I("only-whitespace", "  \n ", "unexpectedEnd", 4, RFC)
I("bom", b"\xef\xbb\xbf{}", "unexpectedByte", 0, RFC + " (a byte order mark is refused)")
I("trailing-comma-array", '{"aps":{},"a":[1,2,]}', "unexpectedByte", "]}", RFC)
I("trailing-comma-object", '{"aps":{"badge":1,}}', "unexpectedByte", "}}", RFC)
I("leading-comma-array", "[,1]", "unexpectedByte", 1, RFC)
I("missing-comma", "[1 2]", "unexpectedByte", 3, RFC)
I("missing-colon", '{"a" 1}', "unexpectedByte", 5, RFC)
I("unquoted-key", "{aps:{}}", "unexpectedByte", 1, RFC)
I("single-quotes", "{'aps':{}}", "unexpectedByte", 1, RFC)
I("comment", '{"aps":{} // no comments\n}', "unexpectedByte", "//", RFC)
I("nan", '{"aps":{},"n":NaN}', "unexpectedByte", "NaN", RFC + " (NaN is not JSON)")
I("infinity", '{"aps":{},"n":Infinity}', "unexpectedByte", "Infinity", RFC)
I("negative-infinity", '{"aps":{},"n":-Infinity}', "invalidNumber", "Infinity", RFC)
I("true-misspelled", "[tru]", "unexpectedByte", 4, RFC)
I("null-truncated", "nul", "unexpectedEnd", 3, RFC)
I("capitalised-true", "True", "unexpectedByte", 0, RFC)
I("unterminated-string", '{"aps":{"alert":"never closed', "unexpectedEnd", len('{"aps":{"alert":"never closed'), RFC)
I("unterminated-array", "[1,2", "unexpectedEnd", 4, RFC)
I("unterminated-object", '{"aps":{}', "unexpectedEnd", 9, RFC)
I("close-mismatch", '{"aps":[}', "unexpectedByte", 8, RFC)
I("extra-close", '{"aps":{}}}', "trailingData", 10, RFC)
I("two-values", '{"aps":{}} {"aps":{}}', "trailingData", 11, RFC)
I("garbage-after", '{"aps":{}}x', "trailingData", 10, RFC)
I("nul-after", b'{"aps":{}}\x00', "trailingData", 10, RFC)
I("key-not-string", '{1:2}', "unexpectedByte", 1, RFC)
I("empty-key-then-nothing", '{"":', "unexpectedEnd", 4, RFC)
# Numbers
I("number-leading-zero", '{"aps":{"badge":01}}', "invalidNumber", "1}}", RFC)
I("number-negative-leading-zero", "[-01]", "invalidNumber", 3, RFC)
I("number-trailing-dot", "[1.]", "invalidNumber", 3, RFC)
I("number-leading-dot", "[.5]", "unexpectedByte", 1, RFC)
I("number-plus-sign", "[+1]", "unexpectedByte", 1, RFC)
I("number-bare-minus", "[-]", "invalidNumber", 2, RFC)
I("number-exponent-empty", "[1e]", "invalidNumber", 3, RFC)
I("number-exponent-sign-only", "[1e+]", "invalidNumber", 4, RFC)
I("number-hex", "[0x1F]", "unexpectedByte", 2, RFC)
I("number-ends-input", "-", "unexpectedEnd", 1, RFC)
I("number-double-dot", "1.5.3", "trailingData", 3, RFC)
# Strings
I("control-tab-in-string", '{"aps":{"alert":"a\tb"}}', "controlCharacterInString", "\t", RFC)
I("control-newline-in-string", '{"aps":{"alert":"line\nbreak"}}', "controlCharacterInString", "\n", RFC)
I("control-nul-in-string", b'["a\x00b"]', "controlCharacterInString", 3, RFC)
I("control-1f-in-key", b'{"k\x1f":1}', "controlCharacterInString", 3, RFC)
I("escape-invalid-x", '["\\x41"]', "invalidEscape", 2, RFC)
I("escape-invalid-quote", "[\"\\'\"]", "invalidEscape", 2, RFC)
I("escape-invalid-a", '["\\a"]', "invalidEscape", 2, RFC)
I("escape-invalid-upper-u", '["\\U0041"]', "invalidEscape", 2, RFC)
I("escape-at-end", '["\\', "unexpectedEnd", 3, RFC)
I("unicode-escape-bad-hex", '["\\u12G4"]', "invalidUnicodeEscape", 2, RFC)
I("unicode-escape-short", '["\\u12"]', "invalidUnicodeEscape", 2, RFC)
I("unicode-escape-truncated-input", '["\\u12', "unexpectedEnd", 6, RFC)
I("lone-high-surrogate", '{"aps":{"alert":"\\ud83d"}}', "loneSurrogate", "\\ud83d", RFC)
I("lone-low-surrogate", '["\\ude00"]', "loneSurrogate", 2, RFC)
I("high-surrogate-then-text", '["\\ud83dx"]', "loneSurrogate", 2, RFC)
I("high-surrogate-then-high", '["\\ud83d\\ud83d"]', "loneSurrogate", 2, RFC)
I("high-surrogate-then-escape", '["\\ud83d\\n"]', "loneSurrogate", 2, RFC)
I("reversed-surrogates", '["\\ude00\\ud83d"]', "loneSurrogate", 2, RFC)
# UTF-8
for name, raw in [("continuation-alone", b"\x80"), ("overlong-2-byte", b"\xc0\xaf"), ("overlong-2-byte-c1", b"\xc1\xbf"),
                  ("overlong-3-byte", b"\xe0\x80\xaf"), ("overlong-4-byte", b"\xf0\x80\x80\xaf"),
                  ("encoded-surrogate", b"\xed\xa0\x80"), ("encoded-low-surrogate", b"\xed\xbf\xbf"),
                  ("above-10ffff", b"\xf4\x90\x80\x80"), ("lead-f5", b"\xf5\x80\x80\x80"), ("lead-ff", b"\xff"),
                  ("truncated-2-of-3", b"\xe2\x82"), ("truncated-1-of-2", b"\xc3"), ("truncated-3-of-4", b"\xf0\x9f\x98"),
                  ("bad-second-continuation", b"\xe2\x28\xa1")]:
    I("utf8-" + name, b'{"aps":{"alert":"ok ' + raw + b' end"}}', "invalidUTF8", 20, "UTF-8 (RFC 3629) invalid forms; written for this corpus")
I("utf8-outside-string", b'{"aps":{}}\xc3\xa9', "trailingData", 10, RFC)
I("utf8-invalid-in-key", b'{"k\xc3":1}', "invalidUTF8", 3, "UTF-8 (RFC 3629); written for this corpus")
# Limits
I("depth-513", "[" * 513 + "]" * 513, "depthLimitExceeded", 512, OURS + " (one past the default depth of 512)")
I("depth-100000-unclosed", "[" * 100000, "depthLimitExceeded", 512, OURS + " (hostile nesting stops at the limit)")
I("input-too-large", '{"aps":{"alert":"' + "x" * 1100 + '"}}', "inputTooLarge", 1024, OURS + " (with maximum-input-size=1024)", "maximum-input-size=1024")

# --- Invalid: APNs rules -------------------------------------------------------------------
I("apns-root-array", '[{"aps":{}}]', "typeMismatch", 0, OURS)
I("apns-root-string", '"aps"', "typeMismatch", 0, OURS)
I("apns-missing-aps", '{"alert":"x"}', "missingKey", 0, OURS)
I("apns-aps-string", '{"aps":"hello"}', "typeMismatch", '"hello"', OURS)
I("apns-aps-null", '{"aps":null}', "typeMismatch", "null", OURS)
I("apns-duplicate-root-key", '{"aps":{},"id":1,"id":2}', "duplicateKey", '"id":2', OURS)
I("apns-duplicate-aps", '{"aps":{},"aps":{}}', "duplicateKey", 10, OURS)
I("apns-duplicate-aps-key", '{"aps":{"badge":1,"badge":2}}', "duplicateKey", '"badge":2', OURS)
I("apns-duplicate-alert-key", '{"aps":{"alert":{"title":"a","title":"b"}}}', "duplicateKey", '"title":"b"', OURS)
I("apns-duplicate-nested-custom", '{"aps":{},"c":{"x":{"y":1,"y":2}}}', "duplicateKey", '"y":2', OURS)
I("apns-duplicate-escaped-key", '{"aps":{"badge":1,"\\u0062adge":2}}', "duplicateKey", '"\\u0062adge"', OURS + " (the same key spelled with an escape)")
I("apns-badge-string", '{"aps":{"badge":"5"}}', "typeMismatch", '"5"', OURS)
I("apns-badge-fraction", '{"aps":{"badge":1.5}}', "typeMismatch", "1.5", OURS)
I("apns-badge-negative", '{"aps":{"badge":-1}}', "invalidValue", "-1", OURS)
I("apns-badge-overflow", '{"aps":{"badge":99999999999999999999}}', "invalidValue", "9999", OURS)
I("apns-alert-number", '{"aps":{"alert":5}}', "typeMismatch", "5}", OURS)
I("apns-alert-title-number", '{"aps":{"alert":{"title":5}}}', "typeMismatch", "5}", OURS)
I("apns-loc-args-not-strings", '{"aps":{"alert":{"loc-key":"K","loc-args":["a",2]}}}', "typeMismatch", "2]", OURS)
I("apns-loc-args-not-array", '{"aps":{"alert":{"loc-key":"K","loc-args":"a"}}}', "typeMismatch", '"a"}', OURS)
I("apns-sound-number", '{"aps":{"sound":1}}', "typeMismatch", "1}", OURS)
I("apns-sound-volume-high", '{"aps":{"sound":{"critical":1,"name":"a","volume":1.5}}}', "invalidValue", "1.5", OURS)
I("apns-sound-volume-negative", '{"aps":{"sound":{"critical":1,"name":"a","volume":-0.1}}}', "invalidValue", "-0.1", OURS)
I("apns-sound-critical-2", '{"aps":{"sound":{"critical":2,"name":"a"}}}', "invalidValue", "2,", OURS)
I("apns-sound-missing-name", '{"aps":{"sound":{"critical":1}}}', "missingKey", '{"critical"', OURS)
I("apns-content-available-0", '{"aps":{"content-available":0}}', "invalidValue", "0}", OURS + " (must be 1)")
I("apns-content-available-true", '{"aps":{"content-available":true}}', "invalidValue", "true", OURS)
I("apns-content-available-string", '{"aps":{"content-available":"1"}}', "invalidValue", '"1"', OURS)
I("apns-mutable-content-2", '{"aps":{"alert":"x","mutable-content":2}}', "invalidValue", "2}", OURS)
I("apns-interruption-level-unknown", '{"aps":{"alert":"x","interruption-level":"loud"}}', "invalidValue", '"loud"', OURS)
I("apns-relevance-score-high", '{"aps":{"alert":"x","relevance-score":1.5}}', "invalidValue", "1.5", OURS)
I("apns-relevance-score-string", '{"aps":{"alert":"x","relevance-score":"high"}}', "typeMismatch", '"high"', OURS)
I("apns-thread-id-number", '{"aps":{"thread-id":7}}', "typeMismatch", "7}", OURS)
I("apns-url-args-object", '{"aps":{"url-args":{}}}', "typeMismatch", "{}", OURS)
I("apns-content-changed-1", '{"aps":{"content-changed":1}}', "invalidValue", "1}", OURS)
I("apns-event-unknown", '{"aps":{"timestamp":1,"event":"pause"}}', "invalidValue", '"pause"', OURS)
I("apns-liveactivity-no-timestamp", '{"aps":{"event":"update","content-state":{}}}', "missingKey", 7, OURS)
I("apns-liveactivity-update-no-state", '{"aps":{"timestamp":1,"event":"update"}}', "missingKey", 7, OURS)
I("apns-liveactivity-start-no-attributes", '{"aps":{"timestamp":1,"event":"start","content-state":{},"attributes-type":"A"}}', "missingKey", 7, OURS)
I("apns-content-state-array", '{"aps":{"timestamp":1,"event":"update","content-state":[]}}', "typeMismatch", "[]", OURS)
I("apns-timestamp-fraction", '{"aps":{"timestamp":1.5,"event":"end"}}', "typeMismatch", "1.5", OURS)
I("apns-localized-title-no-key", '{"aps":{"alert":{"title":{"loc-args":["x"]}}}}', "missingKey", '{"loc-args"', OURS)
I("apns-size-4097", sized(4097), "payloadTooLarge", 4096, OURS + " (one byte over the APNs limit)")

def main():
    for sub in ("valid", "invalid"):
        path = os.path.join(ROOT, sub)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
    lines = ["# Corpus", "",
             "Regression cases for PushCore's JSON scanner, canonical writer and APNs rules, generated by",
             "`scripts/generate-corpus.py`, which computes the expected results independently of PushCore.", "",
             "- `valid/NNN-what.json`: valid JSON. Beside it `NNN-what.canon`, the expected minified, lossless",
             "  re-encoding (key order, duplicates and number spellings kept; minimal escaping; raw UTF-8).",
             "  Cases whose root object has an `aps` key must also pass APNs lint without errors and round-trip",
             "  through the typed model.",
             "- `invalid/NNN-what.json`: refused input. Beside it `NNN-what.error`: `CODE OFFSET` — the first",
             "  error's code and byte offset (syntax errors from the parser, then APNs rules from lint) — and",
             "  optionally parser options such as `maximum-input-size=1024`.", "",
             "| case | source |", "| --- | --- |"]
    for number, (name, data, source) in enumerate(valid, start=1):
        stem = "%03d-%s" % (number, name)
        expected = canon(parse(data)).encode("utf-8")
        with open(os.path.join(ROOT, "valid", stem + ".json"), "wb") as f: f.write(data)
        with open(os.path.join(ROOT, "valid", stem + ".canon"), "wb") as f: f.write(expected)
        lines.append("| valid/%s | %s |" % (stem, source))
    for number, (name, data, code, offset, source, options) in enumerate(invalid, start=1):
        stem = "%03d-%s" % (number, name)
        assert 0 <= offset <= len(data), stem
        with open(os.path.join(ROOT, "invalid", stem + ".json"), "wb") as f: f.write(data)
        with open(os.path.join(ROOT, "invalid", stem + ".error"), "w") as f:
            f.write("%s %d%s\n" % (code, offset, (" " + options) if options else ""))
        lines.append("| invalid/%s | %s |" % (stem, source))
    with open(os.path.join(ROOT, "README.md"), "w") as f: f.write("\n".join(lines) + "\n")
    print("valid: %d, invalid: %d, total: %d" % (len(valid), len(invalid), len(valid) + len(invalid)))

main()
