"""The plan -> namespaces/veths/addresses/routes mapping (pure; no root needed)."""

from __future__ import annotations

import fatpipe
from fatpipe.testbed.build import tuning_sysctls
from fatpipe.testbed.layout import layout_of

import pytest

GRAPH = """
duration = "1s"
[topology]
kind = "graph"
nodes = [{ name = "h1" }, { name = "h2" }, { name = "a", kind = "router" }, { name = "b", kind = "router" },
         { name = "c", kind = "router" }]
links = [
  { between = ["h1", "a"], rate = "1Gbps", delay = "1ms" },
  { between = ["a", "b"], rate = "1Gbps", delay = "1ms" },
  { between = ["a", "c"], rate = "1Gbps", delay = "1ms" },
  { between = ["b", "h2"], rate = "1Gbps", delay = "1ms" },
  { between = ["c", "h2"], rate = "1Gbps", delay = "1ms" },
]
[[flows]]
src = "h1"
dst = "h2"
"""


def test_every_full_duplex_link_is_one_subnet_and_routes_follow_the_first_added_link():
    plan = fatpipe.Scenario.from_toml(GRAPH).plan()
    lay = layout_of(plan, "fpt1-")
    assert [(l.a, l.b) for l in lay.links] == [("h1", "a"), ("a", "b"), ("a", "c"), ("b", "h2"), ("c", "h2")]
    assert [(l.a_ip, l.b_ip) for l in lay.links[:2]] == [("10.0.0.1", "10.0.0.2"), ("10.0.4.1", "10.0.4.2")]
    assert lay.host_ip == {"h1": "10.0.0.1", "h2": "10.0.12.2"}
    # Two equal-cost paths a-b-h2 and a-c-h2: the simulator takes the link added first (a-b).
    assert dict(lay.routes["a"])["10.0.12.2"] == "10.0.4.2"
    assert dict(lay.routes["h1"]) == {"10.0.12.2": "10.0.0.2"}
    assert lay.namespaces()[-1] == "fpt1-emu"
    assert layout_of(plan, "fpt1-", emulate=False).namespaces() == [f"fpt1-{n}" for n in ("h1", "h2", "a", "b", "c")]


def test_every_link_carries_the_largest_segment_and_at_least_ethernets_1500_bytes():
    base = fatpipe.Scenario.from_toml(GRAPH)
    assert layout_of(base.plan(), "fpt1-").mtu == 1500
    # A small segment keeps the standard MTU; a jumbo one (8960 + 40 IP/TCP bytes) gets 9000;
    # the simulator's wire accounting (`header`, which may count link-layer bytes) does not count.
    assert layout_of(base.with_overrides('tcp.mss="536B"').plan(), "fpt1-").mtu == 1500
    assert layout_of(base.with_overrides('tcp.mss="8960B"').plan(), "fpt1-").mtu == 9000
    assert layout_of(base.with_overrides('tcp.mss="8960B"', 'tcp.header="66B"').plan(), "fpt1-").mtu == 9000


def test_host_tuning_becomes_per_namespace_sysctls_and_bad_keys_are_named():
    assert tuning_sysctls({"sack": False, "rmem": [4096, 87380, 33554432], "txqueuelen": 1000}) == {
        "net.ipv4.tcp_sack": "0", "net.ipv4.tcp_rmem": "4096 87380 33554432"}
    with pytest.raises(ValueError, match="testbed.nagle"):
        tuning_sysctls({"nagle": True})
    with pytest.raises(ValueError, match="testbed.rmem"):
        tuning_sysctls({"rmem": [1, 2]})


def test_the_testbed_tables_have_the_simulators_columns():
    from fatpipe.testbed.tables import SCHEMAS

    r = fatpipe.run(fatpipe.Scenario.from_toml(GRAPH))
    for name, schema in SCHEMAS.items():
        assert r.table(name).schema.names == schema.names, name
        assert [str(t) for t in r.table(name).schema.types] == [str(t) for t in schema.types], name


def test_without_root_the_testbed_says_what_is_missing_and_exits_2(monkeypatch, capsys):
    from fatpipe import cli
    from fatpipe.testbed import TestbedUnavailable
    from fatpipe.testbed.system import check_available

    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(TestbedUnavailable, match="needs root"):
        check_available()
    scenario = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "scenarios" / "dumbbell-reno.toml")
    assert cli.main(["testbed", "run", scenario, "--no-write"]) == 2
    assert "needs root" in capsys.readouterr().err


def test_flows_the_kernel_cannot_run_are_named():
    from fatpipe.exceptions import FatpipeError
    from fatpipe.testbed.run import _check_flows

    plan = fatpipe.Scenario.from_toml(GRAPH.replace('dst = "h2"', 'dst = "h2"\ntcp = { cc = "libra" }')).plan()
    with pytest.raises(FatpipeError, match=r"flows\[0\]\.cc = 'libra'"):
        _check_flows(plan)
    plan = fatpipe.Scenario.from_toml(GRAPH.replace('dst = "h2"', 'dst = "h2"\nkind = "cbr"\nrate = "1Mbps"')).plan()
    with pytest.raises(FatpipeError, match="TCP bulk and file flows only"):
        _check_flows(plan)
