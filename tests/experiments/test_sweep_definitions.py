"""Sweep definitions: TOML and Python API, ranges, groups, dry run, and bad input rejected
before any run starts (naming the parameter)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import fatpipe
from fatpipe.experiments import Sweep, SweepError
from experiments.sweeps_common import BASE, FAST, sweep_toml, write_sweep


def base():
    return fatpipe.Scenario.load(BASE).with_overrides(*FAST)


def test_toml_and_python_api_give_the_same_runs(tmp_path):
    a = Sweep.load(write_sweep(tmp_path, vary='"topology.pairs" = [1, 2]\n"tcp.recovery" = ["sack", "newreno"]'))
    b = Sweep("t", base(), vary=[{"topology.pairs": [1, 2], "tcp.recovery": ["sack", "newreno"]}],
              replications=2, metrics=["utilisation", "jain", "drops"])
    ra, rb = a.runs(), b.runs()
    assert [(r.point.params, r.seed) for r in ra] == [(r.point.params, r.seed) for r in rb]
    # The same runs, the same content keys.
    from fatpipe.experiments.store import run_key

    ka = [run_key(r.scenario().plan(seed=r.seed), fatpipe.__version__) for r in ra]
    kb = [run_key(r.scenario().plan(seed=r.seed), fatpipe.__version__) for r in rb]
    assert ka == kb and len(set(ka)) == 4


def test_groups_are_crossed_and_keys_in_a_group_zipped():
    sw = Sweep("t", base(), vary=[{"topology.pairs": [1, 2, 3], "tcp.recovery": ["sack", "newreno", "sack"]},
                                  {"topology.bottleneck.queue.limit": ["20pkt", "40pkt"]}], replications=1)
    pts = [p.as_dict() for p in sw.points()]
    assert len(pts) == 3 * 2
    assert pts[0] == {"topology.pairs": 1, "tcp.recovery": "sack", "topology.bottleneck.queue.limit": "20pkt"}
    assert pts[-1] == {"topology.pairs": 3, "tcp.recovery": "sack", "topology.bottleneck.queue.limit": "40pkt"}
    # A mapping crosses every key.
    assert len(Sweep("t", base(), vary={"topology.pairs": [1, 2], "tcp.recovery": ["sack", "newreno"]}).points()) == 4


def test_ranges(tmp_path):
    sw = Sweep.load(write_sweep(tmp_path, vary='"topology.bottleneck.queue.limit" = { from = 20, to = 80, step = 30, unit = "pkt" }'))
    assert sw.parameters == {"topology.bottleneck.queue.limit": ["20pkt", "50pkt", "80pkt"]}
    sw = Sweep("t", base(), vary={"topology.pairs": {"from": 1, "to": 8, "factor": 2}})
    assert sw.parameters == {"topology.pairs": [1, 2, 4, 8]}
    sw = Sweep("t", base(), vary={"tcp.cc": {"values": ["reno"]}}, seeds=[7, 9])
    assert [r.seed for r in sw.runs()] == [7, 9]


@pytest.mark.parametrize(
    "vary,param",
    [
        ('"topology.nonsense" = [1, 2]', "topology.nonsense"),
        ('"topology.pairs" = []', "topology.pairs"),
        ('"topology.pairs" = { from = 5, to = 1, step = 1 }', "topology.pairs"),
        ('"topology.pairs" = [1, 2]\n"tcp.recovery" = ["sack"]', "topology.pairs"),
        ('"topology.pairs" = [-3]', "topology.pairs"),
        ('"tcp.cc" = ["no-such-cc"]', "tcp.cc"),
    ],
)
def test_bad_sweeps_are_rejected_naming_the_parameter(tmp_path, vary, param):
    p = write_sweep(tmp_path, vary=vary)
    with pytest.raises(SweepError) as e:
        Sweep.load(p)
    assert e.value.parameter == param
    # The CLI: exit status 2, the parameter named, and no store created.
    store = tmp_path / "store"
    r = subprocess.run([sys.executable, "-m", "fatpipe.cli", "sweep", str(p), "--store", str(store)],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert param in r.stderr
    assert not store.exists()


def test_unknown_metric_and_bad_replications_are_rejected(tmp_path):
    with pytest.raises(SweepError, match="unknown metric"):
        Sweep("t", base(), vary={"topology.pairs": [1]}, metrics=["utilisation", "happiness"])
    with pytest.raises(SweepError) as e:
        Sweep("t", base(), vary={"topology.pairs": [1]}, replications=0)
    assert e.value.parameter == "replications"


def test_dry_run_counts_and_estimates_without_running(tmp_path):
    p = write_sweep(tmp_path, vary='"topology.pairs" = [1, 2, 4]', reps=3)
    store = tmp_path / "store"
    r = subprocess.run([sys.executable, "-m", "fatpipe.cli", "sweep", str(p), "--store", str(store), "--dry-run", "--json"],
                       capture_output=True, text=True, check=True)
    d = json.loads(r.stdout)
    assert (d["points"], d["replications"], d["runs"]) == (3, 3, 9)
    # 10 Mb/s for 3 s in 1500-byte packets, nine runs: the upper-bound estimate.
    assert d["packets_estimate"] == pytest.approx(9 * 10e6 * 3 / (8 * 1500))
    assert not store.exists()
