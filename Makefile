# irqres: top-level build. `make demo` and `make test` are the two commands a new
# Debian 12 machine needs; both install what they need first. `make && make install` is
# the RT box's path: build dependencies, then the program and its runtime dependencies.
prefix ?= /usr/local
PREFIX ?= $(prefix)
sbindir ?= $(PREFIX)/sbin
bindir ?= $(PREFIX)/bin
datadir ?= $(PREFIX)/share
mandir ?= $(datadir)/man
bashcompdir ?= $(datadir)/bash-completion/completions
zshcompdir ?= $(if $(filter /usr,$(PREFIX)),$(datadir)/zsh/vendor-completions,$(datadir)/zsh/site-functions)
sysconfdir ?= /etc
unitdir ?= /lib/systemd/system
DESTDIR ?=
# PYTHON builds and tests (a virtualenv is fine); SYSTEM_PYTHON is the interpreter the
# installed `irqres` runs on: the system's python3, whatever the build machine uses.
PYTHON ?= python3
SYSTEM_PYTHON ?= /usr/bin/python3
# Where SYSTEM_PYTHON looks for packages of PREFIX (Debian: dist-packages).
pythondir ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/$(shell \
	$(SYSTEM_PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])')/dist-packages)
PYTEST ?= $(PYTHON) -m pytest
INSTALL_DEPS ?= bash scripts/install-deps.sh

export PYTHON

all: daemon python man

# One stamp per dependency set of scripts/install-deps.sh (build, runtime, test, vm, deb).
DEP_SETS := build runtime test vm deb
deps: $(addprefix deps-,$(DEP_SETS))
$(addprefix deps-,$(DEP_SETS)): deps-%: build/.deps-%-stamp
# The arm64 guest's tools, for test-vm-arm64 and IRQRES_VM_ARCH=amd64,arm64 make test-vm
# (not part of deps).
deps-vm-arm64: build/.deps-vm-arm64-stamp
build/.deps-%-stamp: scripts/install-deps.sh
	$(INSTALL_DEPS) $*
	@mkdir -p build && touch $@

daemon: deps-build
	$(MAKE) -C daemon

# The Python package, installed in development mode (builds the trace reader extension).
python: deps-build build/.python-stamp
build/.python-stamp: pyproject.toml $(wildcard setup.py) $(wildcard analysis/irqres/*/*.[ch]) \
		daemon/src/irqname.[ch]
	$(PYTHON) -m pip install -q --disable-pip-version-check --root-user-action=ignore \
		--no-build-isolation -e .
	@mkdir -p build && touch $@

# Manual pages and shell completion, generated from what they describe (scripts/mkman.py):
# irqres.1 from the click commands, irqresd.8 from man/irqresd.8.md and irqresd --help,
# irqres-profile.5 from docs/profile.md.
# Regenerated on every build (about a second): it cannot miss a change of the CLI.
man: daemon
	$(PYTHON) scripts/mkman.py --irqresd build/daemon/irqresd --out build/man \
		--completion-out build/completion

test check: all vm-images-background lint complexity test-c test-asan test-valgrind test-fuzz \
	test-py test-vm

# The VM suite's amd64 images, built (or found in the cache) in the background while the
# host suites run, mostly on one CPU: a cold image would otherwise cost the VM suite
# minutes, while every group waited for it (docs/vm.md, "The image"). The suite's own
# ensure_image waits for a build under way (the cache lock) and makes whatever this did
# not, saying why; this build's output is in build/vm-images.log.
vm-images-background: deps-vm
	@mkdir -p build
	setsid nice -n 10 $(PYTHON) tests/vm/vmrunner.py >build/vm-images.log 2>&1 </dev/null &

# ruff and mypy at the versions scripts/install-deps.sh pins, from the virtualenv its
# test set makes (build/lint-venv: $(PYTHON) and its modules, plus the pinned linters).
LINT_VENV := build/lint-venv
$(LINT_VENV)/.made-from: scripts/install-deps.sh
	$(INSTALL_DEPS) test
	touch $@

lint: deps-test $(LINT_VENV)/.made-from
	$(LINT_VENV)/bin/python -m ruff check analysis tests bench scripts
	$(LINT_VENV)/bin/python -m mypy

# The code's size and complexity goals (the daemon, the trace reader, the Python package):
# at most 4 % of the functions with cyclomatic complexity over 15, none over 100 lines, no
# file over 1,000 lines (lizard, pinned in scripts/install-deps.sh; about 5 s).
complexity: deps-test
	$(PYTHON) scripts/c-complexity.py daemon/src analysis/irqres/trace --python analysis/irqres

test-c: daemon deps-test
	$(MAKE) -C daemon check

test-asan: daemon
	ASAN_OPTIONS=detect_leaks=1 $(MAKE) -C daemon BUILD=../build/daemon-asan SAN=1 check

# The C suites under valgrind's memcheck (no sanitizer build: valgrind sees the plain one).
test-valgrind: daemon deps-test
	$(MAKE) -C daemon valgrind

# The kept fuzz inputs (seeds and every crash ever found), then FUZZ_CHECK_SECONDS of
# each libFuzzer harness (tests/fuzz/).
FUZZ_CHECK_SECONDS ?= 10
test-fuzz: deps-build deps-test
	$(MAKE) -C tests/fuzz check FUZZ_CHECK_SECONDS=$(FUZZ_CHECK_SECONDS)

# Fuzz every harness FUZZ_SECONDS in turn (the corpora grow under build/fuzz/), then mutate
# trace files for FUZZ_SECONDS through the reader and irqres analyze.
FUZZ_SECONDS ?= 60
fuzz: all
	$(MAKE) -C tests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)
	@mkdir -p build/fuzz
	$(PYTHON) tests/fuzz/traces/tracefuzz.py --count 1000000 --duration $(FUZZ_SECONDS) \
		--analyze-args "--period 5ms" --findings build/fuzz/trace-findings.txt

test-py: all deps-test deps-runtime
	$(PYTEST) tests/python tests/integration

# The amd64 guests two at a time on a machine of two or more CPUs: tests/vm/groups.py
# deals the suite to two pytest processes of about equal expected time (docs/vm.md, "Two
# guests at once"; IRQRES_VM_GROUPS=1 runs one guest at a time). IRQRES_VM_ARCH=amd64,arm64
# runs the amd64 guests one at a time and the arm64 guest's scenarios (marked arm64) in a
# second process beside them, --by-arch (not the default: a cold arm64 image would take
# CI past its 90 minutes).
IRQRES_VM_ARCH ?= amd64
VM_ARM64 = $(findstring arm64,$(IRQRES_VM_ARCH))
test-vm: all deps-test deps-runtime deps-vm deps-deb $(if $(VM_ARM64),deps-vm-arm64)
	$(if $(VM_ARM64),IRQRES_VM_ARCH=$(IRQRES_VM_ARCH) $(PYTHON) tests/vm/groups.py --by-arch tests/vm,$(PYTHON) tests/vm/groups.py tests/vm)

# The scenarios marked arm64 on the arm64 guest (docs/vm.md, "The arm64 guest").
test-vm-arm64: all deps-test deps-runtime deps-vm-arm64
	IRQRES_VM_ARCH=arm64 $(PYTEST) tests/vm -m arm64

demo: all deps-vm deps-deb
	bash tests/vm/demo.sh

bench: all
	bash bench/run-all.sh

# Installs the runtime only. With DESTDIR (staging, packaging) the files alone; into the
# live system also the runtime's Debian packages, never the test or VM tools.
# The Python package is built by SYSTEM_PYTHON (its ABI, its dist-packages for PREFIX);
# the `irqres` script is written here, with SYSTEM_PYTHON on its #! line.
PY_BUILD := build/python-install
install: daemon man $(if $(DESTDIR),,deps-runtime)
	$(MAKE) -C daemon install DESTDIR=$(DESTDIR) sbindir=$(sbindir)
	@mkdir -p $(PY_BUILD)
	$(SYSTEM_PYTHON) setup.py build --build-base $(PY_BUILD) \
		install_lib --install-dir=$(DESTDIR)$(pythondir) --no-compile \
		install_egg_info --install-dir=$(DESTDIR)$(pythondir) \
		>$(PY_BUILD).log 2>&1 || { cat $(PY_BUILD).log; exit 1; }
	install -d $(DESTDIR)$(bindir)
	sed 's|@PYTHON@|$(SYSTEM_PYTHON)|' scripts/irqres.in >$(DESTDIR)$(bindir)/irqres
	chmod 0755 $(DESTDIR)$(bindir)/irqres
	install -d $(DESTDIR)$(sysconfdir)/irqres $(DESTDIR)$(datadir)/irqres/profiles
	install -m 0644 profiles/*.yaml $(DESTDIR)$(datadir)/irqres/profiles/
	install -d $(DESTDIR)$(unitdir) $(DESTDIR)$(datadir)/doc/irqres/examples
	install -m 0644 docs/*.md $(DESTDIR)$(datadir)/doc/irqres/
	install -m 0644 profiles/example.yaml $(DESTDIR)$(datadir)/doc/irqres/examples/profile.yaml
	install -d $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man5 $(DESTDIR)$(mandir)/man8
	install -m 0644 build/man/irqres.1 $(DESTDIR)$(mandir)/man1/
	install -m 0644 build/man/irqres-profile.5 $(DESTDIR)$(mandir)/man5/
	install -m 0644 build/man/irqresd.8 $(DESTDIR)$(mandir)/man8/
	install -D -m 0644 build/completion/irqres.bash $(DESTDIR)$(bashcompdir)/irqres
	install -D -m 0644 build/completion/_irqres $(DESTDIR)$(zshcompdir)/_irqres
	for u in irqresd.service irqres-tune.service; do \
		sed -e 's|/usr/local/sbin/|$(sbindir)/|g' -e 's|/usr/local/bin/|$(bindir)/|g' \
		    -e 's|/usr/local/share/|$(datadir)/|g' systemd/$$u > $(DESTDIR)$(unitdir)/$$u && \
		chmod 0644 $(DESTDIR)$(unitdir)/$$u || exit 1; \
	done

# The Debian package (debian/): built from a copy of the checkout's files in build/deb,
# so that dpkg-buildpackage's clean never touches this tree's build; then lintian, whose
# report is kept in build/deb/lintian.txt and whose errors fail the target.
DEB_VERSION = $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
DEB_ARCH = $(shell dpkg --print-architecture)
DEB = build/deb/irqres_$(DEB_VERSION)_$(DEB_ARCH).deb
deb: deb-package
	lintian --fail-on error --info --display-level '>=pedantic' $(DEB) >build/deb/lintian.txt 2>&1; \
		rc=$$?; cat build/deb/lintian.txt; exit $$rc

# Rebuilt only when a file of the checkout is newer than the package, so that make test's
# package checks and the VM suite share one build (file names with ':' rule out make's
# own prerequisites here).
deb-package: deps-deb
	@newest=$$(git ls-files -z --cached --others --exclude-standard | \
		xargs -0 stat -c %Y 2>/dev/null | sort -n | tail -n 1); \
	if [ -f $(DEB) ] && [ "$$(stat -c %Y $(DEB))" -gt "$${newest:-0}" ]; then \
		echo "$(DEB): up to date"; \
	else $(MAKE) --no-print-directory deb-build; fi

deb-build: deps-deb
	rm -rf build/deb && mkdir -p build/deb/irqres-$(DEB_VERSION)
	git ls-files -z --cached --others --exclude-standard | \
		(cd $(CURDIR) && tar --null --ignore-failed-read -T - -cf -) | \
		tar -C build/deb/irqres-$(DEB_VERSION) -xf -
	cd build/deb/irqres-$(DEB_VERSION) && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -n 40 ../build.log; exit 1; }

clean:
	$(MAKE) -C daemon clean
	$(MAKE) -C tests/fuzz clean
	rm -rf build analysis/*.egg-info

.PHONY: all deps $(addprefix deps-,$(DEP_SETS)) deps-vm-arm64 daemon python man test check lint \
	complexity test-c \
	test-asan test-valgrind test-fuzz fuzz test-py test-vm test-vm-arm64 vm-images-background demo bench install deb deb-package \
	deb-build clean
