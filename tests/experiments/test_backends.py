"""Sweeps on the testbed back-end, the parts that need no root: the file key and its errors, the
dry run's estimate, the store key, what `fatpipe reproduce` does on a machine that cannot host
the testbed, and the [testbed] table's bad input named by field. (The runs themselves: tests/
testbed/test_host_settings.py, as root.)"""

from __future__ import annotations

import math

import pytest

import fatpipe
from fatpipe.exceptions import FatpipeError
from fatpipe.experiments import Sweep, SweepError
from fatpipe.experiments.execute import spec_key

SCENARIO = """
name = "backend"
duration = "2s"
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
links = [{ between = ["a", "b"], rate = "10Mbps", delay = "5ms" }]
[[flows]]
src = "a"
dst = "b"
"""


def _sweep(**kw) -> Sweep:
    return Sweep("b", fatpipe.Scenario(SCENARIO), vary={"tcp.cc": ["reno", "cubic"]}, **kw)


def test_backend_is_checked_and_named():
    assert _sweep().backend == "simulator"
    assert _sweep(backend="testbed").backend == "testbed"
    with pytest.raises(SweepError) as e:
        _sweep(backend="ns2")
    assert e.value.parameter == "backend" and "simulator, testbed" in str(e.value)
    with pytest.raises(SweepError) as e:
        Sweep.from_dict({"scenario": "x.toml", "backend": "qemu"}, base_dir="/nonexistent")
    assert e.value.parameter == "scenario"  # the scenario is checked first; then the backend:


def test_backend_key_in_a_sweep_file(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    (tmp_path / "sw.toml").write_text('scenario = "s.toml"\nbackend = "qemu"\n')
    with pytest.raises(SweepError) as e:
        Sweep.load(tmp_path / "sw.toml")
    assert e.value.parameter == "backend"
    (tmp_path / "sw.toml").write_text('scenario = "s.toml"\nbackend = "testbed"\nreplications = 3\n')
    sw = Sweep.load(tmp_path / "sw.toml")
    assert sw.backend == "testbed" and all(r.backend == "testbed" for r in sw.runs())


def test_dry_run_of_a_testbed_sweep_is_real_time():
    from fatpipe.experiments.sweep import TESTBED_OVERHEAD_S

    d = _sweep(backend="testbed", replications=3).dry_run()
    assert d.backend == "testbed"
    assert d.wall_s_estimate == pytest.approx(6 * (2.0 + TESTBED_OVERHEAD_S))
    assert "real time on the testbed" in str(d)
    assert "packets/s" in str(_sweep().dry_run())


def test_a_testbed_run_has_its_own_store_key():
    sim, tb = _sweep().runs()[0], _sweep(backend="testbed").runs()[0]
    assert spec_key(sim, "1") != spec_key(tb, "1")
    assert spec_key(tb, "1") == spec_key(_sweep(backend="testbed").runs()[0], "1")  # deterministic


def test_reproduce_skips_testbed_sweeps_it_cannot_run(tmp_path, monkeypatch):
    """Without root (simulated here by the availability check refusing, as it does for a non-root
    user), the simulator's sweeps run and the testbed's are skipped with the reason."""
    import fatpipe.testbed.system as system
    from fatpipe.studies import reproduce

    def refuse() -> None:
        raise system.TestbedUnavailable("the testbed needs root (test)")

    monkeypatch.setattr(system, "check_available", refuse)
    d = tmp_path / "studies" / "mini"
    d.mkdir(parents=True)
    (d / "s.toml").write_text(SCENARIO)
    (d / "sim.toml").write_text('name = "mini-sim"\nscenario = "s.toml"\nmetrics = ["aggregate_goodput_bps"]\n'
                                '[[vary]]\n"duration" = ["1s", "2s"]\n')
    (d / "tb.toml").write_text('name = "mini-tb"\nscenario = "s.toml"\nbackend = "testbed"\n'
                               'metrics = ["aggregate_goodput_bps"]\n[[vary]]\n"duration" = ["1s", "2s"]\n')
    (d / "study.toml").write_text(
        'title = "mini"\n[modes.quick]\nsweeps = { sim = "sim.toml", tb = "tb.toml" }\n'
        '[modes.full]\nsweeps = { sim = "sim.toml", tb = "tb.toml" }\n'
        '[[targets]]\nid = "S"\nkind = "trend"\nsweep = "sim"\nmetric = "aggregate_goodput_bps"\nx = "duration"\n'
        'claim = "x"\ndirection = "increasing"\n'
        '[[targets]]\nid = "T"\nkind = "trend"\nsweep = "tb"\nmetric = "aggregate_goodput_bps"\nx = "duration"\n'
        'claim = "x"\n')
    out = reproduce("mini", store=tmp_path / "store", out=tmp_path / "out", workers=1,
                    studies_root=tmp_path / "studies")
    assert out.sweeps["sim"].ran == 2
    assert out.sweeps["tb"].skipped and "root" in out.sweeps["tb"].reason and out.sweeps["tb"].total == 2
    v = {x.target.id: x for x in out.verdicts}
    assert v["T"].status == "not comparable" and "not run" in v["T"].detail
    assert "not run" in out.report.read_text()


def test_testbed_table_errors_name_the_field():
    from fatpipe.exceptions import ScenarioError

    for bad, field in (("testbed.close=\"abort\"", "testbed.close"), ("testbed.sndbuf=\"3pkt\"", "testbed.sndbuf"),
                       ("testbed.color=1", "testbed.color"), ("topology.links.0.delay_reverse=5", "topology.links.0.delay_reverse")):
        with pytest.raises(ScenarioError) as e:
            fatpipe.Scenario(SCENARIO, [bad])
        assert field in str(e.value), (bad, str(e.value))

