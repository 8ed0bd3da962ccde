# The README's two commands: `make demo` and `make test`. Both set everything up from scratch on a
# fresh machine (Debian packages when root, a virtual environment in .venv, a release build).
SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
PIP   := $(PY) -m pip
OUT   ?= out/michel2009-demo

.PHONY: demo test setup system-deps venv build build-pgo test-rust test-python bench ipp schema clean

demo: build
	$(VENV)/bin/fatpipe reproduce michel2009 --demo --out $(OUT)

test: build test-rust test-python

setup: system-deps venv

# ns-2.35 (validation peer) from Debian's packages; skipped when not root or already present.
# iproute2, procps and ethtool for the testbed (network namespaces, offloads off on emulated
# links; its tests skip without root); iperf3 for its optional traffic driver; curl and wget,
# the unmodified clients of the depot tests.
system-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! { command -v ip && command -v pgrep && command -v ethtool && command -v iperf3 && command -v curl && command -v wget; } >/dev/null 2>&1; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 procps ethtool iperf3 curl wget >/dev/null; \
	fi
	@if ! command -v ns >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian package ns2 (validation peer)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 >/dev/null; \
	  else echo "warning: ns-2 not installed and not root: validation tests will be skipped"; fi; \
	fi

$(VENV)/.deps: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.5,<2" "numpy>=1.24" "pandas>=2.0" "pyarrow>=14" "matplotlib>=3.7" "rich>=13" "scipy>=1.10" "dask[distributed]>=2024.1" "pytest>=7" "pytest-xdist>=3" "hypothesis>=6" "mypy>=1.8" "jsonschema>=4" "ns3==3.44.post0"
	touch $@

venv: $(VENV)/.deps

build: setup
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q
	cargo build --release -q -p fatpipe-bulk -p fatpipe-linkem -p fatpipe-depot

# The extension built with profile-guided optimisation (opt-in, about twice build's time; results
# unchanged, about 5 % faster): see tools/pgo_build.sh. `make build` afterwards goes back to the
# plain build.
build-pgo: setup
	tools/pgo_build.sh
	cargo build --release -q -p fatpipe-bulk -p fatpipe-linkem -p fatpipe-depot

test-rust:
	cargo test --workspace --release

# Two phases: every test but the testbed's in parallel, one worker per core, each test file on one
# worker (files share expensive module-level runs, e.g. an ns-3 batch); then the testbed's tests on
# their own, since they emulate links in real time and must not compete for the CPU.
test-python:
	$(PY) -m pytest -q -n auto --dist loadfile -m "not alone" tests
	$(PY) -m pytest -q -m alone tests

bench: build
	cargo bench -p fatpipe-core -p fatpipe-scenario -p fatpipe-transport
	$(VENV)/bin/fatpipe bench
	$(VENV)/bin/fatpipe bench --sweep

# Instructions per delivered packet on the reference dumbbell (10 s) and where they go, by
# callgrind (repeatable on a busy machine, unlike timings): tools/callgrind_breakdown.py.
IPP_OUT ?= /tmp/fatpipe-ipp.out
ipp:
	cargo build --release -p fatpipe-scenario --example run_file
	valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=$(IPP_OUT) \
	  target/release/examples/run_file scenarios/reference-dumbbell.toml duration=10s 2>&1 | tee $(IPP_OUT).log
	python3 tools/callgrind_breakdown.py $(IPP_OUT) target/release/examples/run_file \
	  $$(grep -o 'delivered [0-9]*' $(IPP_OUT).log | tr -dc 0-9)

schema: build
	$(VENV)/bin/fatpipe schema > docs/scenario.schema.json

clean:
	rm -rf $(VENV) target out
