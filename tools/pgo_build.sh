#!/usr/bin/env bash
# Profile-guided build of the Python extension (`make build-pgo`): opt-in, like CPython's
# `--enable-optimizations`, because it builds the extension twice and runs a training set in
# between (about 2x `make build`'s time).
#
# 1. Build the extension instrumented (-Cprofile-generate) and install it in the venv.
# 2. Run a training set that covers the engine's paths: the reference dumbbell (the benchmark),
#    and other congestion controls, AQMs, DCCP, many flows, 10 Gb/s, multi-hop topologies and
#    relays, each shortened, so that PGO does not treat their code as cold.
# 3. Merge the raw profiles with the toolchain's own llvm-profdata (rustup's llvm-tools: its LLVM
#    must be rustc's; Debian's llvm-profdata reads another profile format).
# 4. Build again with -Cprofile-use and install.
#
# Results do not change (PGO changes code layout and inlining, not arithmetic): the `fatpipe
# bench` digest check and the test suite run against either build. Measured on the reference
# dumbbell (callgrind, 10 s): 1742.2 -> 1657.4 instructions per delivered packet (-4.9 %); wall time
# -4.8 % (geometric mean of 15 alternating pairs of 20 s runs).
#
# Each build has its own target directory, so the plain build's cache (tests, `make build`) is
# kept. Without llvm-profdata the script says so and does a plain build.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
venv_abs=$(cd "$VENV" && pwd)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
  echo "pgo_build: llvm-profdata not found (rustup component add llvm-tools); plain build instead" >&2
  exec make build
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "pgo_build: 1/3 instrumented build"
RUSTFLAGS="-Cprofile-generate=$work/raw" CARGO_TARGET_DIR=target/pgo-generate \
  VIRTUAL_ENV="$venv_abs" "$VENV/bin/maturin" develop --release -q

echo "pgo_build: 2/3 training runs"
train() {
  "$VENV/bin/fatpipe" run "$@" --no-write --json -q >/dev/null
}
train scenarios/reference-dumbbell.toml --set duration=10s
train scenarios/reference-dumbbell.toml --set duration=3s --set tcp.cc=cubic --set tcp.rack=true --set tcp.tlp=true
train scenarios/reference-dumbbell.toml --set duration=3s --set tcp.cc=highspeed --set tcp.recovery=newreno
train scenarios/reference-dumbbell.toml --set duration=3s --set topology.bottleneck.queue.kind=red
train scenarios/reference-dumbbell.toml --set duration=3s --set topology.bottleneck.queue.kind=codel --set tcp.cc=bbr
train scenarios/many-flows.toml --set duration=2s
train scenarios/long-fat-10g.toml --set duration=1s
train scenarios/parking-lot.toml --set duration=3s
train scenarios/ring.toml --set duration=3s
train scenarios/depot-chain.toml --set duration=10s
train studies/doria2010/ring.toml --set duration=20s
train scenarios/compare-small.toml
"$profdata" merge -o "$work/fatpipe.profdata" "$work/raw"

echo "pgo_build: 3/3 optimised build"
FATPIPE_BUILD=pgo RUSTFLAGS="-Cprofile-use=$work/fatpipe.profdata" CARGO_TARGET_DIR=target/pgo-use \
  VIRTUAL_ENV="$venv_abs" "$VENV/bin/maturin" develop --release -q
echo "pgo_build: done (installed in $VENV)"
