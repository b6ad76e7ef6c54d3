# The two commands a new user needs: `make run` and `make test`. See README.md.
SWIFT ?= swift
PREFIX ?= $(HOME)/.local
BENCHMARKS := SecretClientBenchmark

.PHONY: bootstrap build test bench

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build --build-tests

# Every test, inside a throwaway D-Bus session: nothing reaches the user's own bus or keyring
# (each test also starts private buses and providers of its own).
test: build
	dbus-run-session -- $(SWIFT) test --skip-build

bench: bootstrap
	$(SWIFT) build -c release
	@for benchmark in $(BENCHMARKS); do .build/release/$$benchmark || exit 1; echo; done
