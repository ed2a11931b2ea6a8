# irqres: top-level build. `make demo` and `make test` are the two commands a new
# Debian 12 machine needs; both install what they need first.
prefix ?= /usr/local
PREFIX ?= $(prefix)
sbindir ?= $(PREFIX)/sbin
bindir ?= $(PREFIX)/bin
datadir ?= $(PREFIX)/share
sysconfdir ?= /etc
unitdir ?= /lib/systemd/system
DESTDIR ?=
PYTHON ?= python3
PYTEST ?= $(PYTHON) -m pytest

export PYTHON

all: daemon python

deps: build/.deps-stamp
build/.deps-stamp: scripts/install-deps.sh
	bash scripts/install-deps.sh
	@mkdir -p build && touch $@

daemon: deps
	$(MAKE) -C daemon

# The Python package, installed in development mode (builds the trace reader extension).
python: deps build/.python-stamp
build/.python-stamp: pyproject.toml $(wildcard setup.py) $(wildcard analysis/irqres/*/*.c)
	$(PYTHON) -m pip install -q --disable-pip-version-check --root-user-action=ignore \
		--no-build-isolation -e .
	@mkdir -p build && touch $@

test check: all lint test-c test-asan test-valgrind test-fuzz test-py test-vm

lint: deps
	$(PYTHON) -m ruff check analysis tests bench

test-c: daemon
	$(MAKE) -C daemon check

test-asan: daemon
	ASAN_OPTIONS=detect_leaks=1 $(MAKE) -C daemon BUILD=../build/daemon-asan SAN=1 check

# The C suites under valgrind's memcheck (no sanitizer build: valgrind sees the plain one).
test-valgrind: daemon
	$(MAKE) -C daemon valgrind

# The kept fuzz inputs (seeds and every crash ever found), then FUZZ_CHECK_SECONDS of
# each libFuzzer harness (tests/fuzz/).
FUZZ_CHECK_SECONDS ?= 10
test-fuzz: deps
	$(MAKE) -C tests/fuzz check FUZZ_CHECK_SECONDS=$(FUZZ_CHECK_SECONDS)

# Fuzz every harness FUZZ_SECONDS in turn (the corpora grow under build/fuzz/), then mutate
# trace files for FUZZ_SECONDS through the reader and irqres analyze.
FUZZ_SECONDS ?= 60
fuzz: all
	$(MAKE) -C tests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)
	@mkdir -p build/fuzz
	$(PYTHON) tests/fuzz/traces/tracefuzz.py --count 1000000 --duration $(FUZZ_SECONDS) \
		--analyze-args "--period 5ms" --findings build/fuzz/trace-findings.txt

test-py: all
	$(PYTEST) tests/python tests/integration

test-vm: all
	$(PYTEST) tests/vm

demo: all
	bash tests/vm/demo.sh

bench: all
	bash bench/run-all.sh

install: daemon
	$(MAKE) -C daemon install DESTDIR=$(DESTDIR) sbindir=$(sbindir)
	$(PYTHON) -m pip install -q --disable-pip-version-check --root-user-action=ignore \
		--no-build-isolation --no-deps --ignore-installed $(if $(DESTDIR),--root $(DESTDIR)) --prefix $(PREFIX) .
	install -d $(DESTDIR)$(sysconfdir)/irqres $(DESTDIR)$(datadir)/irqres/profiles
	install -m 0644 profiles/*.yaml $(DESTDIR)$(datadir)/irqres/profiles/
	install -d $(DESTDIR)$(unitdir) $(DESTDIR)$(datadir)/doc/irqres
	install -m 0644 docs/*.md $(DESTDIR)$(datadir)/doc/irqres/
	for u in irqresd.service irqres-tune.service; do \
		sed -e 's|/usr/local/sbin/|$(sbindir)/|g' -e 's|/usr/local/bin/|$(bindir)/|g' \
		    -e 's|/usr/local/share/|$(datadir)/|g' systemd/$$u > $(DESTDIR)$(unitdir)/$$u && \
		chmod 0644 $(DESTDIR)$(unitdir)/$$u || exit 1; \
	done

clean:
	$(MAKE) -C daemon clean
	$(MAKE) -C tests/fuzz clean
	rm -rf build analysis/*.egg-info

.PHONY: all deps daemon python test check lint test-c test-asan test-valgrind test-fuzz fuzz test-py \
	test-vm demo bench install clean
