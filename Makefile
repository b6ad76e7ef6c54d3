# The two commands a new user needs: `make run` and `make test`. See README.md.
SWIFT ?= swift
# Release builds link the Swift runtime statically (secretd's resident memory drops by ~3 MB),
# and the C++ runtime under it too: loading libstdc++.so cost every secretctl start ~0.5 ms.
STATIC_CXX := $(CURDIR)/.build/static-cxx
RELEASE := -c release --static-swift-stdlib \
	-Xswiftc -Xclang-linker -Xswiftc -L$(STATIC_CXX) -Xswiftc -Xclang-linker -Xswiftc -static-libgcc
PREFIX ?= $(HOME)/.local
BENCHMARKS := SharedStateBenchmark SecretClientBenchmark SecretdBenchmark SecretdFairnessBenchmark SecretsBenchmark \
  SecretctlBenchmark TrustComparison OpenBaoBenchmark

.PHONY: bootstrap build test lint format docs bench run install uninstall static-cxx

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

# Every test, inside a throwaway D-Bus session and with a configuration folder of its own:
# nothing reaches the user's own bus, keyring or ~/.config (each test also starts private buses
# and providers of its own).
TEST_CONFIG := $(CURDIR)/.build/test-config
# The suite runs dozens of private buses and providers at once, each dbus-daemon and
# gnome-keyring holding inotify instances: the kernel's default of 128 per user runs out, and a
# process that then cannot watch its files misses live changes. As root it is raised to 1024.
INOTIFY_INSTANCES := /proc/sys/fs/inotify/max_user_instances
test: build lint
	@scripts/docs
	@if [ "$$(id -u)" = 0 ] && [ "$$(cat $(INOTIFY_INSTANCES))" -lt 1024 ]; then \
	  echo 1024 > $(INOTIFY_INSTANCES) || echo "make test: cannot raise $(INOTIFY_INSTANCES)" >&2; fi
	@rm -rf $(TEST_CONFIG) && mkdir -p $(TEST_CONFIG)
	XDG_CONFIG_HOME=$(TEST_CONFIG) dbus-run-session -- $(SWIFT) test --skip-build

# The tree's formatting (.swift-format); `make format` fixes what it can.
SWIFT_SOURCES := Sources Tests Benchmarks Examples Package.swift
lint:
	$(SWIFT) format lint --strict --recursive $(SWIFT_SOURCES)

format:
	$(SWIFT) format format --in-place --recursive $(SWIFT_SOURCES)

# The products' DocC documentation, into .build/docs; fails on any documentation warning.
docs: build
	@scripts/docs

bench: bootstrap static-cxx
	$(SWIFT) build $(RELEASE)
	@for benchmark in $(BENCHMARKS); do .build/release/$$benchmark || exit 1; echo; done

# Binaries in PREFIX/bin, the user unit and the D-Bus activation file for this user
# (scripts/install says where and checks the sandbox against the running user manager).
install: bootstrap static-cxx
	$(SWIFT) build $(RELEASE) --product secretd
	$(SWIFT) build $(RELEASE) --product secretctl
	$(SWIFT) build $(RELEASE) --product secretctl-bao
	@scripts/install --prefix $(PREFIX) .build/release/secretd .build/release/secretctl .build/release/secretctl-bao

uninstall:
	@systemctl --user disable --now secretd 2>/dev/null || true
	rm -rf $(PREFIX)/bin/secretd $(PREFIX)/bin/secretctl $(PREFIX)/bin/secretctl-bao $(HOME)/.config/systemd/user/secretd.service \
	  $(HOME)/.config/systemd/user/secretd.service.d $(HOME)/.local/share/dbus-1/services/org.freedesktop.secrets.service
