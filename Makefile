SWIFT ?= swift

.PHONY: deps build bench bench-quick test test-debug test-release clean

# Installs the system packages the build needs (libxxhash-dev, pkg-config) when missing.
deps:
	@scripts/install-system-deps

build: deps
	$(SWIFT) build -c release

bench: deps
	$(SWIFT) run -c release bench

# A short run of every workload: proves the benchmark builds and runs, measures nothing to quote.
bench-quick: deps
	$(SWIFT) run -c release bench --quick

test-debug: deps
	$(SWIFT) test

test-release: deps
	$(SWIFT) test -c release

test: bench-quick test-debug test-release

clean:
	rm -rf .build
