SWIFT ?= swift

.PHONY: deps build bench bench-quick cross-check-tokens cross-check-firebase-admin check-contract check-core-alone check-apple-shape check-generated check-openapi test test-debug test-release test-asan test-tsan fuzz fuzz-smoke robustness check-modules format-lint docs load load-writes clean

FUZZ_SECONDS ?= 300
# Extra flags for the release builds of `bench-quick` and `test-release`, and for the ASan build;
# CI skips debug information with them (see .ci/run). The fuzz build keeps it for its reports.
RELEASE_FLAGS ?=
ASAN_FLAGS ?=

# Installs the system packages the build needs (libxxhash-dev, pkg-config) when missing, the
# openssl command the client-certificate tests make their authority with, the PostgreSQL server the
# store tests start for themselves, tinyproxy for the proxy tests, and curl for the emulators' hooks.
deps:
	@scripts/install-system-deps openssl postgresql tinyproxy curl

build: deps
	$(SWIFT) build -c release

# `apns.send.client` and `fcm.send.client` run the `apns-emulator` and `fcm-emulator` built
# beside `bench`. The run's JSON lines go to Benchmarks/results/latest.jsonl and its picture to
# latest.svg; `make bench COMPARE=old.jsonl` also compares each row with an earlier run and draws
# the two side by side.
bench: deps
	$(SWIFT) build -c release --product apns-emulator --product fcm-emulator
	$(SWIFT) run -c release bench --save Benchmarks/results/latest.jsonl $(if $(COMPARE),--compare $(COMPARE))
	scripts/bench-chart.py Benchmarks/results/latest.jsonl $(COMPARE) > Benchmarks/results/latest.svg

# A short run of every workload: proves the benchmark builds and runs, measures nothing to quote.
bench-quick: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product apns-emulator --product fcm-emulator
	$(SWIFT) run -c release $(RELEASE_FLAGS) bench --quick

# The tests run the built `pushcore`, `hub-emulator` and `push-backend` binaries, so everything is
# built first (`swift test` and `--build-tests` build every product too); no test target links an
# executable. The tracing tests bootstrap a process-wide tracer, so they run in a process of their
# own.
TRACING_TESTS = env PUSHCORE_TRACING_TESTS=1 $(SWIFT) test --skip-build --filter TracingTests
test-debug: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(TRACING_TESTS)

# Release mode (optimised code is what ships; allocation counts are asserted there). Debug code
# is tested by `make test-asan`, which CI runs too, and `make test-debug` runs it alone. Without
# testable imports (no test uses them), the modules compile exactly as `make build`, `make bench`
# and `cross-check-tokens` compile them, so those reuse this build rather than redo it. Its bench
# binary then runs a quick pass: it proves the benchmark builds and runs, and measures nothing.
# A release build of the tests has no testable imports unless `swift test` asks for them, as it
# does by default. The suite runs in about a minute; its time limit turns a hang into a failure
# that names the tests still running (scripts/run-tests-within).
test test-release: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) --build-tests
	scripts/run-tests-within 900 $(SWIFT) test -c release $(RELEASE_FLAGS) --disable-testable-imports --skip-build
	"$$($(SWIFT) build -c release $(RELEASE_FLAGS) --show-bin-path)/bench" --quick
	EXPECT_SUITE="push-backend tracing" scripts/run-tests-within 300 $(TRACING_TESTS) -c release $(RELEASE_FLAGS)

# APNs provider tokens against Python's `cryptography` (pip installs it when missing), with the
# `pushcore` of `make test`'s release build.
cross-check-tokens: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product pushcore
	scripts/cross-check-provider-tokens "$$($(SWIFT) build -c release $(RELEASE_FLAGS) --show-bin-path)/pushcore"

# Firebase Admin for Python (pip installs it when missing) through `fcm-emulator`, and `pushcore
# send --fcm` beside it, with the binaries of `make test`'s release build.
cross-check-firebase-admin: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product fcm-emulator --product pushcore
	scripts/cross-check-firebase-admin "$$($(SWIFT) build -c release $(RELEASE_FLAGS) --show-bin-path)"

# schemathesis (pip installs it when missing) against `push-backend serve --demo`, with hub
# delivery and with APNs delivery, with the `push-backend` of `make test`'s release build.
check-contract: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product push-backend
	scripts/check-contract "$$($(SWIFT) build -c release $(RELEASE_FLAGS) --show-bin-path)/push-backend" 50

# The core as a package that wants only the codec builds it (`traits: []`): it builds and runs
# with swift-crypto and libxxhash alone.
check-core-alone: deps
	scripts/check-core-alone .build-core

# The whole suite under AddressSanitizer (the CLI tests then run an ASan-built pushcore too); a
# report from any process fails it (scripts/test-asan).
test-asan: deps
	scripts/share-checkouts .build-asan
	$(SWIFT) build --build-tests --sanitize=address $(ASAN_FLAGS) --scratch-path .build-asan
	scripts/test-asan .build-asan $(ASAN_FLAGS)

# The concurrent parts under ThreadSanitizer: the SAS token cache and the resource streams.
test-tsan: deps
	scripts/share-checkouts .build-tsan
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --filter 'SASTokenCacheTests|EmbeddedResourceTests|FileResourceTests'

# Every libFuzzer target for FUZZ_SECONDS each (default 300); see scripts/fuzz.
fuzz: deps
	scripts/fuzz $(FUZZ_SECONDS)

# A short bounded run of every fuzz target, for CI: unoptimised, which builds in half the time.
fuzz-smoke: deps
	PUSHCORE_FUZZ_UNOPTIMISED=1 scripts/fuzz 6

# push-backend under wrk beside a bare Hummingbird route: requests/s, p99 and errors of the image
# and secure endpoints, peak memory, on SQLite, PostgreSQL and two instances on one PostgreSQL
# (LOAD_SECONDS each, LOAD_CONNECTIONS connections, LOAD_SETUPS to pick); see scripts/load-backend.
LOAD_SECONDS ?= 20
LOAD_CONNECTIONS ?= 50
LOAD_SETUPS ?= bare sqlite postgres postgres-2
load:
	@scripts/install-system-deps wrk curl postgresql
	LOAD_SETUPS="$(LOAD_SETUPS)" RELEASE_FLAGS="$(RELEASE_FLAGS)" scripts/load-backend $(LOAD_SECONDS) $(LOAD_CONNECTIONS)

# The writes under wrk: POST /api/register and POST /api/notifications, requests/s, p99 and the
# server's allocations per request (scripts/load-writes; BIN=FOLDER for another build).
load-writes:
	@scripts/install-system-deps wrk curl
	RELEASE_FLAGS="$(RELEASE_FLAGS)" scripts/load-writes $(LOAD_SECONDS) $(LOAD_CONNECTIONS)

# The module graph's rules: the codec depends on nothing, the APNs model on the codec alone, and
# no production target on an emulator (scripts/check-module-graph).
check-modules:
	scripts/check-module-graph

# swift-format's lint with the repository's .swift-format; `swift format format --in-place
# --recursive Sources Tests Benchmarks Fuzz Package.swift` fixes what it reports.
FORMAT_PATHS = Sources Tests Benchmarks Fuzz Package.swift
# The APNs schema's generated Swift (Sources/PushAPNs/Generated/) is what scripts/apns-keys.tsv gives.
check-generated:
	scripts/generate-apns-schema.py --check

# The code generated from openapi.yaml (PushClient's client, push-backend's server side, the hub's
# document) against what swift-openapi-generator gives for it today, byte for byte (builds the
# generator first: a few minutes, so CI relies on the digest tests).
check-openapi:
	scripts/generate-openapi --check

# PushClient type-checked as an Apple platform builds it: its Apple dependencies only, stand-ins
# for the SDK modules and swift-openapi-urlsession; the core at the iOS floor (scripts/check-apple-shape).
check-apple-shape: deps
	scripts/check-apple-shape

# Also keeps the README short enough to read through: tables belong in Benchmarks/README.md.
format-lint:
	$(SWIFT) format lint --strict --recursive --parallel $(FORMAT_PATHS)
	@lines=$$(wc -l < README.md); [ $$lines -le 250 ] || { echo "README.md has $$lines lines; at most 250" >&2; exit 1; }

# What CI runs after `make test`.
robustness: test-asan fuzz-smoke

# DocC archives of the core modules and the products an adopter types against, in
# .build/plugins/Swift-DocC/outputs/ (swift-docc-plugin).
DOC_TARGETS = PushJSON PushAPNs PushSAS PushResources PushFCM APNs NotificationHubs PushClient
docs: deps
	PUSHCORE_DOCS=1 $(SWIFT) package generate-documentation $(addprefix --target ,$(DOC_TARGETS)) --warnings-as-errors
	@ls -d .build/plugins/Swift-DocC/outputs/*.doccarchive

clean:
	rm -rf .build .build-asan .build-tsan .build-fuzz
