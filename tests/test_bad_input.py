"""No bad input escapes (issue 13): every input below once ended in a traceback, an abort, a
hang or a silently different run. Each is now a FatpipeError subclass from Python, naming the
field, and exit status 2 from the command line with the field in the message.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

import fatpipe
from fatpipe import FatpipeError, ScenarioError

FATPIPE = [sys.executable, "-m", "fatpipe.cli"]


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FATPIPE, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture
def base(scenarios_dir):
    return scenarios_dir / "dumbbell-reno.toml"


# (override, field the error names) -- one per class of the list.
CASES = [
    # numbers the core's integers cannot hold: errors, not saturated or truncated
    ("topology.bottleneck.rate=1e19bps", "topology.bottleneck.rate"),
    ("topology.bottleneck.rate=18446744073709551616bps", "topology.bottleneck.rate"),
    ("tcp.header=4294967296B", "tcp.header"),
    ("duration=1e30s", "duration"),
    # sizes that exhausted memory or time while building
    ("topology.pairs=4294967295", "topology"),
    ("topology.pairs=100000", "limits.max_memory"),
    ("monitor.interval=1ns", "limits.max_events"),
    # RTO settings that livelocked the run
    ("tcp.min_rto=0s", "tcp.min_rto"),
    ("tcp.min_rto=-0.0s", "tcp.min_rto"),
    ("tcp.max_rto=1e30s", "tcp.max_rto"),
    ("tcp.initial_rto=0s", "tcp.initial_rto"),
    # a bare number where a unit is required
    ('tcp.mss="1460"', "tcp.mss"),
    ('topology.bottleneck.queue.limit="200"', "topology.bottleneck.queue.limit"),
    # numbers TOML can spell but no field means
    ("topology.bottleneck.queue.min_th=nan", "topology.bottleneck.queue.min_th"),
]


@pytest.mark.parametrize("override,field", CASES, ids=[c[0] for c in CASES])
def test_scenario_values_are_typed_errors_naming_the_field(base, override, field):
    t0 = time.monotonic()
    with pytest.raises(ScenarioError) as e:
        fatpipe.Scenario.load(base, [override])
    assert e.value.path == field, str(e.value)
    p = cli("plan", str(base), "--set", override)
    assert p.returncode == 2, p.stderr
    assert f"ScenarioError: {field}:" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    # Refused before anything is built: no allocation, no waiting.
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize("seed", [-1, 2**64, 2**70])
def test_seeds_outside_64_bits(base, seed):
    sc = fatpipe.Scenario.load(base, ["duration=100ms"])
    for call in (lambda: fatpipe.run(sc, seed=seed), lambda: sc.plan(seed)):
        with pytest.raises(ScenarioError) as e:
            call()
        assert e.value.path == "seed"
    for cmd in ("run", "plan"):
        p = cli(cmd, str(base), "--seed", str(seed), "--set", "duration=100ms")
        assert p.returncode == 2 and "ScenarioError: seed:" in p.stderr, p.stderr
    # The largest seed is a seed.
    assert sc.plan(2**64 - 1)["seed"] == 2**64 - 1
    with pytest.raises(ScenarioError):
        sc.plan(1.5)  # type: ignore[arg-type]


def test_files_that_are_not_readable_utf8_text(tmp_path, monkeypatch):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for path, says in [(bad, "not UTF-8"), (tmp_path, "is a directory"), (fifo, "not a regular file"),
                       (tmp_path / "absent.toml", "no such file")]:
        with pytest.raises(ScenarioError, match=says):
            fatpipe.Scenario.load(path)
        p = cli("run", str(path))
        assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, p.stderr
    # Unreadable: root reads anything, so the permission error is simulated.
    real_open = os.open

    def denied(path, *a, **k):
        if str(path).endswith("secret.toml"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(ScenarioError, match="permission denied"):
        fatpipe.Scenario.load(tmp_path / "secret.toml")
    with pytest.raises(fatpipe.SweepError, match="permission denied"):
        fatpipe.Sweep.load(tmp_path / "secret.toml")


def test_a_graph_of_20000_hosts_plans_in_linear_time(tmp_path):
    nodes = ", ".join(['{ name = "r", kind = "router" }'] + [f'{{ name = "h{i}" }}' for i in range(20_000)])
    links = ", ".join(f'{{ between = ["h{i}", "r"], rate = "1Gbps", delay = "1ms" }}' for i in range(20_000))
    f = tmp_path / "star.toml"
    f.write_text(f'duration = "1s"\n[topology]\nkind = "graph"\nnodes = [{nodes}]\nlinks = [{links}]\n'
                 '[[flows]]\nsrc = "h0"\ndst = "h1"\n')
    t0 = time.monotonic()
    p = cli("plan", str(f))
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - t0 < 30
    # Its run's all-pairs routing table is bounded by the memory limit, the fix named.
    p = cli("plan", str(f), "--set", "limits.max_memory=1GB")
    assert p.returncode == 2 and "limits.max_memory" in p.stderr and "fewer nodes" in p.stderr, p.stderr


# ---- sweeps -------------------------------------------------------------------------------------
SWEEP_CASES = [
    ('[[vary]]\n"topology.pairs" = { from = 1, to = nan, step = 1 }\n', "topology.pairs"),
    ('[[vary]]\n"topology.pairs" = { from = 1, to = inf, step = 1 }\n', "topology.pairs"),
    ('[[vary]]\n"topology.pairs" = { from = -1e308, to = 1e308, step = 1e-300 }\n', "topology.pairs"),
    ('[[vary]]\n"topology.pairs" = { from = 1, to = 4, factor = inf }\n', "topology.pairs"),
    ('[[vary]]\n"topology.pairs" = { values = 3 }\n', "topology.pairs"),
    ('vary = [1]\n', "vary"),
    ('vary = [[1, 2]]\n', "vary"),
    ('replications = 4611686018427387904\n[[vary]]\n"topology.pairs" = [1]\n', "replications"),
    ('seeds = [-1]\n[[vary]]\n"topology.pairs" = [1]\n', "seeds"),
    ('seeds = 3\n[[vary]]\n"topology.pairs" = [1]\n', "seeds"),
    ('[[vary]]\n"topology.pairs" = { from = 1, to = 1000, step = 1 }\n'
     '[[vary]]\n"topology.bottleneck.delay" = { from = 1, to = 1000, step = 1, unit = "ms" }\n', "vary"),
]


@pytest.mark.parametrize("body,field", SWEEP_CASES, ids=[c[1] + str(i) for i, c in enumerate(SWEEP_CASES)])
def test_sweep_ranges_and_shapes_are_typed_errors(tmp_path, base, body, field):
    head = f'name = "bad"\nscenario = "{base.as_posix()}"\n'
    if "replications" not in body and "seeds" not in body:
        head += "replications = 1\n"
    f = tmp_path / "sweep.toml"
    f.write_text(head + body)
    t0 = time.monotonic()
    with pytest.raises(fatpipe.SweepError) as e:
        fatpipe.Sweep.load(f)
    assert e.value.parameter == field, str(e.value)
    assert isinstance(e.value, FatpipeError)
    p = cli("sweep", str(f), "--dry-run", "--store", str(tmp_path / "store"))
    assert p.returncode == 2 and f"SweepError: {field}:" in p.stderr, p.stderr
    assert time.monotonic() - t0 < 60


def test_replications_from_the_command_line(tmp_path, base):
    f = tmp_path / "sweep.toml"
    f.write_text(f'name = "ok"\nscenario = "{base.as_posix()}"\n[[vary]]\n"topology.pairs" = [1]\n')
    p = cli("sweep", str(f), "--dry-run", "--reps", str(2**62))
    assert p.returncode == 2 and "SweepError: replications:" in p.stderr, p.stderr


@pytest.mark.parametrize("design,field", [
    ('{flows = 1e300, q0 = 50}', "topology.bottleneck.queue.design"),  # OverflowError in the fluid model
    ('{flows = 1, q0 = 3000, pade_order = true, sigma_w = 0.0}', "topology.bottleneck.queue.design.pade_order"),
    ('{flows = 1, q0 = 3000, pade_order = 1, sigma_w = 0.0}', "topology.bottleneck.queue.design.weights"),  # IndexError
    ('{flows = 10, q0 = 50, match_dc = 1}', "topology.bottleneck.queue.design.match_dc"),
], ids=["overflow", "bool-order", "degenerate", "int-bool"])
def test_design_tables_the_models_cannot_serve(scenarios_dir, design, field):
    """Found by fuzzing the front end's design mode (fatpipe.models): each once escaped as an
    OverflowError or IndexError from numpy code."""
    q = f'topology.bottleneck.queue={{kind = "h2", limit = "5MB", design = {design}}}'
    with pytest.raises(ScenarioError) as e:
        fatpipe.Scenario.load(scenarios_dir / "reference-dumbbell.toml", [q])
    assert e.value.path == field, str(e.value)
