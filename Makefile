# The two commands a new user needs: `make run` and `make test`. See README.md.
SWIFT ?= swift
# Release builds link the Swift runtime statically (secretd's resident memory drops by ~3 MB),
# and the C++ runtime under it too: loading libstdc++.so cost every secretctl start ~0.5 ms.
STATIC_CXX := $(CURDIR)/.build/static-cxx
RELEASE := -c release --static-swift-stdlib \
	-Xswiftc -Xclang-linker -Xswiftc -L$(STATIC_CXX) -Xswiftc -Xclang-linker -Xswiftc -static-libgcc
PREFIX ?= $(HOME)/.local
BENCHMARKS := SharedStateBenchmark SecretClientBenchmark SecretdBenchmark SecretsBenchmark SecretctlBenchmark

.PHONY: bootstrap build test bench run install uninstall static-cxx

bootstrap:
	@scripts/bootstrap

# A folder holding only libstdc++.a, searched before the one that also has libstdc++.so. Without
# the archive it stays empty and the shared library is used, which works as well, only slower.
static-cxx:
	@mkdir -p $(STATIC_CXX)
	@archive=$$(clang -print-file-name=libstdc++.a 2>/dev/null); \
	  if [ -f "$$archive" ]; then ln -sf "$$archive" $(STATIC_CXX)/libstdc++.a; fi

# secretd in the foreground on your session bus, or on a private bus when there is none.
run: bootstrap static-cxx
	$(SWIFT) build $(RELEASE) --product secretd
	@scripts/run

build: bootstrap
	$(SWIFT) build --build-tests

# Every test, inside a throwaway D-Bus session: nothing reaches the user's own bus or keyring
# (each test also starts private buses and providers of its own).
test: build
	dbus-run-session -- $(SWIFT) test --skip-build

bench: bootstrap static-cxx
	$(SWIFT) build $(RELEASE)
	@for benchmark in $(BENCHMARKS); do .build/release/$$benchmark || exit 1; echo; done

UNIT_DIR := $(HOME)/.config/systemd/user
DBUS_SERVICES_DIR := $(HOME)/.local/share/dbus-1/services

install: bootstrap static-cxx
	$(SWIFT) build $(RELEASE) --product secretd
	$(SWIFT) build $(RELEASE) --product secretctl
	install -Dm755 .build/release/secretd $(PREFIX)/bin/secretd
	install -Dm755 .build/release/secretctl $(PREFIX)/bin/secretctl
	sed 's|^ExecStart=.*|ExecStart=$(PREFIX)/bin/secretd|' systemd/secretd.service > secretd.service.tmp
	install -Dm644 secretd.service.tmp $(UNIT_DIR)/secretd.service && rm secretd.service.tmp
	install -Dm644 systemd/org.freedesktop.secrets.service $(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service
	@echo "Installed. Start it now and at every login: systemctl --user enable --now secretd"

uninstall:
	@systemctl --user disable --now secretd 2>/dev/null || true
	rm -f $(PREFIX)/bin/secretd $(PREFIX)/bin/secretctl $(UNIT_DIR)/secretd.service $(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service
