"""The scenario's ``[testbed]`` section: host tuning per namespace, socket buffers, the iperf3
driver and the choice of link emulation (docs/testbed.md). Unit tests need nothing; the ones
marked with ``netns_or_skip`` build namespaces (root)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import fatpipe
from fatpipe.testbed import iperf3, qdisc
from fatpipe.testbed.layout import layout_of
from fatpipe.testbed.tuning import host_tunings

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "scenarios" / "compare-small.toml"

TUNED = """
[testbed]
driver = "iperf3"
emulator = "linkem"
sndbuf = "3125000B"
rcvbuf = "3125000B"
sack = true
dsack = false
no_metrics_save = true
moderate_rcvbuf = false
rmem = ["4096B", "3125000B", "26000000B"]
wmem = ["4096B", "3125000B", "26000000B"]
txqueuelen = 2000
[testbed.hosts.s1]
sack = false
no_metrics_save = false
"""


def tuned() -> fatpipe.Scenario:
    return fatpipe.Scenario.from_toml(SMALL.read_text() + TUNED)


def test_the_plan_carries_the_testbed_section_explicitly():
    tb = tuned().plan(1)["testbed"]
    assert (tb["driver"], tb["emulator"], tb["sndbuf"]) == ("iperf3", "linkem", 3_125_000)
    assert tb["rmem"] == [4096, 3_125_000, 26_000_000]
    assert tb["hosts"]["s1"]["sack"] is False and tb["hosts"]["s1"]["dsack"] is False
    # Without the table the plan has no testbed key (run keys of such scenarios are unchanged).
    assert "testbed" not in fatpipe.Scenario.load(SMALL).plan(1)


def test_host_tunings_merge_section_host_and_caller_in_that_order():
    plan = tuned().plan(1)
    t = host_tunings(plan, {"timestamps": False})
    assert set(t) == {"s0", "s1", "d0", "d1"}  # hosts only, not the routers r0, r1
    assert t["s0"]["sack"] is True and t["s1"]["sack"] is False
    assert t["s1"]["no_metrics_save"] is False and t["s0"]["no_metrics_save"] is True
    assert all(x["timestamps"] is False for x in t.values())
    assert t["s0"]["rmem"] == [4096, 3_125_000, 26_000_000]
    # Unset socket memory gets the testbed's default: 4 x the path BDP, at least 6 MB.
    d = host_tunings(fatpipe.Scenario.load(SMALL).plan(1))["s0"]
    assert d["rmem"][2] >= 6 * 1024 * 1024 and "sack" not in d


@pytest.mark.parametrize("text,path", [
    ('[testbed]\ndriver = "netperf"', "testbed.driver"),
    ('[testbed]\nemulator = "dummynet"', "testbed.emulator"),
    ('[testbed]\nrmem = ["4096B"]', "testbed.rmem"),
    ('[testbed]\nsack = "yes"', "testbed.sack"),
    ('[testbed]\nfrobnicate = true', "testbed"),
    ('[testbed]\nclose = "linger"', "testbed.close"),
    ('[testbed.hosts.nowhere]\nsack = false', "testbed.hosts.nowhere"),
])
def test_bad_testbed_options_name_their_field(text, path):
    with pytest.raises(fatpipe.ScenarioError) as e:
        fatpipe.Scenario.from_toml(SMALL.read_text() + "\n" + text + "\n").plan(1)
    assert e.value.path.startswith(path), e.value


def test_iperf3_commands_and_reports_take_the_plan_flow():
    plan = tuned().plan(1)
    f = plan["flows"][0]
    argv = iperf3.client_argv(f, "10.0.0.2", 5001, 0.05, 10.0, 3_125_000)
    assert argv[:6] == ["iperf3", "-c", "10.0.0.2", "-p", "5001", "-J"]
    assert argv[argv.index("-C") + 1] == f["cc"] and argv[argv.index("-M") + 1] == str(f["mss"])
    assert argv[argv.index("-i") + 1] == "0.100"  # iperf3's minimum
    assert argv[argv.index("-w") + 1] == "3125000"
    assert float(argv[argv.index("-t") + 1]) == pytest.approx(10.0 - f["start_ns"] * 1e-9, abs=1e-3)
    client = {"start": {"tcp_mss": 1448},
              "intervals": [{"streams": [{"end": 0.1, "bytes": 1000, "snd_cwnd": 14480, "rtt": 45000}]},
                            {"streams": [{"end": 0.2, "bytes": 3000, "snd_cwnd": 28960, "rtt": 47000}]}],
              "end": {"sum_sent": {"bytes": 4000, "retransmits": 3}}}
    server = {"end": {"sum_received": {"bytes": 3900, "end": 0.21}}}
    send, recv = iperf3.reports_from(client, server, 100.0, 1460)
    assert [s["cwnd"] for s in send["samples"]] == [10, 20]
    assert send["samples"][1]["rtt_s"] == pytest.approx(0.047) and send["samples"][1]["ssthresh"] is None
    assert (send["total_retrans"], recv["bytes"], recv["t_last"]) == (3, 3900, pytest.approx(100.21))


def test_qdisc_chains_express_the_plans_droptail_links():
    plan = fatpipe.Scenario.load(SMALL).with_overrides("topology.bottleneck.loss=0.001").plan(1)
    lay = layout_of(plan, "fptX-", emulate=False)
    cmds = qdisc.link_commands(lay)
    assert len(cmds) == 3 * 2 * len(lay.links)
    bott = [argv for ns, argv in cmds if "loss" in argv]
    assert len(bott) == 1  # loss on the forward direction only (the plan's loss_reverse is 0)
    netem = bott[0]
    assert netem[netem.index("delay") + 1] == "20000.000us" and netem[netem.index("loss") + 1] == "0.1%"
    fifo = [argv for ns, argv in cmds if "pfifo" in argv]
    assert {argv[argv.index("limit") + 1] for argv in fifo} >= {"80"}
    assert any("20000000bit" in argv for ns, argv in cmds)


def test_links_qdiscs_cannot_express_go_to_the_emulator_or_are_refused():
    aqm = fatpipe.Scenario.load(SMALL).with_overrides('topology.bottleneck.queue={kind="codel", limit="80pkt"}')
    plan = aqm.plan(1)
    assert qdisc.choose(plan, "auto") == "linkem"
    with pytest.raises(fatpipe.FatpipeError, match="codel"):
        qdisc.choose(plan, "qdisc")
    assert qdisc.choose(plan, "linkem") == "linkem"


@pytest.mark.usefixtures("netns_or_skip")
def test_host_tuning_reaches_each_namespace():
    from fatpipe.testbed.build import build
    from fatpipe.testbed.system import in_ns, prefix_for, teardown

    plan = tuned().plan(1)
    prefix = prefix_for() + "t"
    lay = layout_of(plan, prefix, emulate=False)
    try:
        build(lay, host_tuning=host_tunings(plan), offloads_off=False)

        def get(node: str, key: str) -> str:
            return in_ns(lay.ns(node), "sysctl", "-n", key).stdout.split()

        assert get("s0", "net.ipv4.tcp_sack") == ["1"] and get("s1", "net.ipv4.tcp_sack") == ["0"]
        assert get("s0", "net.ipv4.tcp_no_metrics_save") == ["1"] and get("s1", "net.ipv4.tcp_no_metrics_save") == ["0"]
        assert get("d0", "net.ipv4.tcp_rmem") == ["4096", "3125000", "26000000"]
        link = in_ns(lay.ns("s0"), "ip", "-j", "link", "show", "dev", lay.links[0].a_if).stdout
        assert json.loads(link)[0]["txqlen"] == 2000
    finally:
        teardown(prefix)


@pytest.mark.usefixtures("netns_or_skip")
def test_iperf3_driver_runs_the_scenario_and_fills_the_tables():
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed (make setup installs it as root)")
    from fatpipe.testbed import run_testbed

    sc = fatpipe.Scenario.load(SMALL).with_overrides("duration=4s", 'testbed.driver="iperf3"', "tcp.cc=\"reno\"")
    r = run_testbed(sc, seed=1)
    flows = r.to_pandas("flows")
    assert r.engine["driver"] == "iperf3" and len(flows) == 2
    # Two flows through a 20 Mb/s bottleneck for ~3-4 s each: together at least 60 % of it
    # (slow start and the staggered starts take the rest) and never more than the link.
    agg = flows["goodput_bps"].sum()
    assert 0.6 * 20e6 < agg < 20e6, agg
    series = r.to_pandas("flow_series")
    assert (series["cwnd_pkts"] > 0).any() and series["ssthresh_pkts"].isna().all()


@pytest.mark.usefixtures("netns_or_skip")
def test_qdisc_emulation_where_the_kernel_has_netem():
    missing = [q for q in qdisc.NEEDED if q not in qdisc.available()]
    if missing:
        pytest.skip(f"this kernel has no {', '.join(missing)} qdisc (fatpipe-linkem emulates its links)")
    from fatpipe.testbed import run_testbed

    sc = fatpipe.Scenario.load(SMALL).with_overrides("duration=6s", 'testbed.emulator="qdisc"', 'tcp.cc="cubic"')
    r = run_testbed(sc, seed=1)
    f = r.to_pandas("flows")
    assert r.engine["emulator_kind"] == "qdisc"
    # The bottleneck's rate caps the aggregate; its 44 ms base RTT floors every RTT sample.
    assert 0.6 * 20e6 < f["goodput_bps"].sum() < 20e6
    assert (f["rtt_min_s"] > 0.043).all()
