# The two commands a new user needs: `make run` and `make test`. See README.md.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
SWIFT ?= swift
# GLib's gmodule-no-export-2.0.pc, which gio-2.0.pc requires, gives -pthread, a flag SwiftPM
# refuses to pass on: every swift command printed "warning: prohibited flag(s): -pthread" and
# dropped it. glibc keeps its threads in libc itself, so the flag means nothing here. A copy of
# that file without it, searched before the system's, keeps SwiftPM quiet; nothing else changes.
PKG_CONFIG_OVERRIDES := $(CURDIR)/.build/pkgconfig
SWIFT_BUILD := $(SWIFT) build --pkg-config-path $(PKG_CONFIG_OVERRIDES)
SWIFT_TEST := $(SWIFT) test --pkg-config-path $(PKG_CONFIG_OVERRIDES) --skip-build
# Release builds link the Swift runtime statically (secretd's resident memory drops by ~3 MB),
# and the C++ runtime under it too: loading libstdc++.so cost every secretctl start ~0.5 ms. So
# the binaries need no RUNPATH of $ORIGIN either (Debian's policy forbids one in /usr/bin).
STATIC_CXX := $(CURDIR)/.build/static-cxx
RELEASE := -c release --static-swift-stdlib --disable-local-rpath \
	-Xswiftc -Xclang-linker -Xswiftc -L$(STATIC_CXX) -Xswiftc -Xclang-linker -Xswiftc -static-libgcc
# Linking FoundationEssentials statically brings in its atomic-write helper, which names a
# temporary file with mktemp(3) and then creates it with O_CREAT|O_EXCL, trying another name if
# it exists: the race glibc's link-time warning ("the use of `mktemp' is dangerous") is about
# cannot happen there, and none of our code calls it. The linker prints that warning whenever the
# object is linked; release builds leave out that one line and show every other.
KNOWN_LINK_WARNING := libFoundationEssentials\.a(Data+Writing\.swift\.o).*the use of .mktemp. is dangerous
release_build = $(SWIFT_BUILD) $(RELEASE) $(1) 2>&1 | { grep --line-buffered -v '$(KNOWN_LINK_WARNING)' || true; }
PREFIX ?= $(HOME)/.local
BENCHMARKS := SharedStateBenchmark SecretClientBenchmark SecretdBenchmark SecretdPersistenceBenchmark SecretdRestartBenchmark \
  SecretdFairnessBenchmark SecretsBenchmark SecretctlBenchmark TrustComparison OpenBaoBenchmark
PRODUCTS := secretd secretctl secretctl-bao

.PHONY: bootstrap build check test lint format docs bench run install uninstall deb static-cxx pkg-config-overrides \
  system-limits

# Installs the Debian packages that building, testing and benchmarking need, and fetches what only
# tests use (python secretstorage's sdists, git's libsecret helper, OpenBao's bao) into .build/.
bootstrap:
	@scripts/bootstrap test

# Only the packages one purpose needs (run, build, deb), before anything that uses them.
packages-for-%:
	@scripts/bootstrap $*

pkg-config-overrides:
	@mkdir -p $(PKG_CONFIG_OVERRIDES)
	@if file=$$(pkg-config --path gmodule-no-export-2.0 2>/dev/null); then \
	  sed 's/ -pthread//g' "$$file" > $(PKG_CONFIG_OVERRIDES)/gmodule-no-export-2.0.pc; fi

# A folder holding only libstdc++.a, searched before the one that also has libstdc++.so. Without
# the archive it stays empty and the shared library is used, which works as well, only slower.
static-cxx:
	@mkdir -p $(STATIC_CXX)
	@archive=$$(clang -print-file-name=libstdc++.a 2>/dev/null); \
	  if [ -f "$$archive" ]; then ln -sf "$$archive" $(STATIC_CXX)/libstdc++.a; fi

# secretd in the foreground on your session bus, or on a private bus when there is none. Installs
# only what building and serving need (the C libraries, a bus daemon), nothing only tests use.
run: packages-for-run pkg-config-overrides static-cxx
	@$(call release_build,--product secretd)
	@scripts/run

# Builds everything, tests included; installs nothing (`make bootstrap` does, and says so).
build: pkg-config-overrides
	@scripts/bootstrap --check build
	$(SWIFT_BUILD) --build-tests

# The quick loop: build, then the tests that need no container, no memory scan, no OpenBao and no
# long flood (well under a minute after a build). `make test` runs everything.
CHECK_TESTS := SharedStateTests|SecretClientTests|SecretCLITests|SecretsTests\.|SecretDaemonTests\.(CryptoTests|StoreTests|ObjectPathTests|CommandLineTests|SecretToolTests|ExpiryTests)|PackagingTests\.(ManualPageTests|MakefileTests|BenchmarkFigureTests)
CHECK_SKIPS := aBurstOf1000Writes
check: build
	@rm -rf $(TEST_CONFIG) && mkdir -p $(TEST_CONFIG)
	XDG_CONFIG_HOME=$(TEST_CONFIG) dbus-run-session -- $(SWIFT_TEST) --filter '$(CHECK_TESTS)' --skip '$(CHECK_SKIPS)'

# Every test, inside a throwaway D-Bus session and with a configuration folder of its own:
# nothing reaches the user's own bus, keyring or ~/.config (each test also starts private buses
# and providers of its own). The packages are built first: tests install them on a fresh Debian
# machine. scripts/test ends by listing the tests it skipped and why.
TEST_CONFIG := $(CURDIR)/.build/test-config
test: bootstrap build lint deb
	@scripts/docs
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory system-limits; fi
	@SWIFT_TEST="$(SWIFT_TEST)" scripts/test

# Root only: the suite runs dozens of private buses and providers at once, each dbus-daemon and
# gnome-keyring holding inotify instances; the kernel's default of 128 per user runs out, and a
# process that then cannot watch its files misses live changes. This raises the limit to 1,024
# until the next boot, and says so; `make test` asks for it when run as root (as CI runs it).
INOTIFY_INSTANCES := /proc/sys/fs/inotify/max_user_instances
system-limits:
	@if [ "$$(cat $(INOTIFY_INSTANCES))" -lt 1024 ]; then \
	  echo 1024 > $(INOTIFY_INSTANCES) && echo "fs.inotify.max_user_instances raised to 1024 (until reboot)" \
	  || { echo "make system-limits: cannot write $(INOTIFY_INSTANCES): run it as root" >&2; exit 1; }; \
	else echo "fs.inotify.max_user_instances is $$(cat $(INOTIFY_INSTANCES)): nothing to do"; fi

# The tree's formatting (.swift-format); `make format` fixes what it can.
SWIFT_SOURCES := Sources Tests Benchmarks Examples Package.swift
lint:
	$(SWIFT) format lint --strict --recursive $(SWIFT_SOURCES)

format:
	$(SWIFT) format format --in-place --recursive $(SWIFT_SOURCES)

# The products' DocC documentation, into .build/docs; fails on any documentation warning.
docs: build
	@scripts/docs

# Every benchmark, release build; the whole transcript goes to Benchmarks/RESULTS.md. secretd is
# also measured against BASELINE's (the last commit before its store moved into an arena), built
# from git once into .build/baseline-BASELINE; without git history it is left out, and said so.
BASELINE ?= 6ce752f
BASELINE_DIR := $(CURDIR)/.build/baseline-$(BASELINE)
bench: bootstrap pkg-config-overrides static-cxx
	@$(call release_build,)
	@if [ ! -x $(BASELINE_DIR)/.build/release/secretd ] && git cat-file -e $(BASELINE)^{commit} 2>/dev/null; then \
	  rm -rf $(BASELINE_DIR) && mkdir -p $(BASELINE_DIR) && git archive $(BASELINE) | tar -x -C $(BASELINE_DIR) && \
	  cd $(BASELINE_DIR) && $(call release_build,--product secretd); fi
	@if [ -x $(BASELINE_DIR)/.build/release/secretd ]; then \
	  export SECRETD_BASELINE=$(BASELINE_DIR)/.build/release/secretd SECRETD_BASELINE_NAME=$(BASELINE); fi; \
	  scripts/bench $(BENCHMARKS)

# Binaries in PREFIX/bin, the user unit for this user, and `secretctl setup` (the D-Bus activation
# file, the unit enabled); scripts/install lists what it installed and says how to reach it.
install: packages-for-build pkg-config-overrides static-cxx
	@$(foreach product,$(PRODUCTS),$(call release_build,--product $(product)) &&) true
	@scripts/install --prefix $(PREFIX) $(addprefix .build/release/,$(PRODUCTS))

# Everything `make install` put, wherever the XDG variables point (scripts/install says what).
uninstall:
	@scripts/install --prefix $(PREFIX) --uninstall

# Debian packages in .build/deb: swift-secrets (secretd, secretctl, the user unit, man pages,
# completions) and swift-secrets-openbao (secretctl-bao). scripts/package-deb says what is where.
deb: packages-for-deb pkg-config-overrides static-cxx
	@$(foreach product,$(PRODUCTS),$(call release_build,--product $(product)) &&) true
	@scripts/package-deb .build/release .build/deb
