"""The ns-3 peer's plan translation (python/fatpipe/peers/ns3.py): what it maps, and that every plan
field ns-3 cannot honour is an error naming the field, never a silently different run. Pure Python
(``plan_to_spec``), so these run without the ns3 wheel."""

from __future__ import annotations

import pytest

import fatpipe
from fatpipe.peers import ns3
from validation.peer_runs import NS3_RULES



def plan(*overrides: str, cc: str = "cubic", params: str = '{variant = "rfc9438", hystart = "off"}') -> dict:
    sc = fatpipe.Scenario.dumbbell(
        pairs=2, rate="100Mbps", delay="20ms", buffer="367pkt", access_rate="1Gbps", duration="5s",
        initial_window=10, start_spread="1s",
    )
    ov = [f"tcp.cc={cc}", *NS3_RULES, *overrides]
    if params:
        ov.append(f"tcp.cc_params={params}")
    return sc.with_overrides(*ov).plan(1)


def spec_lines(p: dict) -> list[str]:
    return ns3.plan_to_spec(p).splitlines()


def test_spec_maps_the_plan():
    lines = spec_lines(plan())
    assert "default ns3::TcpCubic::Beta 0.7" in lines
    assert "default ns3::TcpCubic::C 0.4" in lines
    assert "default ns3::TcpCubic::HyStart false" in lines
    # wire size = mss + header_bytes: ns-3 adds 42 bytes (IP 20, TCP 20, PPP 2)
    assert "default ns3::TcpSocket::SegmentSize 1458" in lines
    assert "default ns3::TcpSocketBase::Timestamp false" in lines
    assert "default ns3::TcpSocket::DelAckCount 1" in lines
    assert "default ns3::TcpSocketBase::MinRto 200000000ns" in lines
    links = [ln for ln in lines if ln.startswith("link ")]
    assert len(links) == 5  # 10 directed links -> 5 full-duplex ns-3 links
    assert any(" 100000000 100000000 20000000 367p 367p" in ln for ln in links)
    flows = [ln.split() for ln in lines if ln.startswith("flow ")]
    p = plan()
    for f, row in zip(p["flows"], flows):
        # the application starts one path RTT early: the handshake ends at the plan's start time
        assert int(row[4]) == max(0, f["start_ns"] - f["path_rtt_ns"])


@pytest.mark.parametrize(
    "override,field",
    [
        ('tcp.rto_estimator="linux"', "rto_estimator"),
        ('tcp.rto_ssthresh="once-per-episode"', "rto_ssthresh"),
        ("tcp.lost_retransmit=true", "lost_retransmit"),
        ("tcp.max_rto=120s", "max_rto_ns"),
        ("tcp.send_jitter=0.01ms", "send_jitter_ns"),
        ('tcp.cwnd_growth="per-ack"', "cwnd_growth"),
        ("tcp.pacing=true", "pacing"),
        ("tcp.rack=true", "rack"),
        ("tcp.tlp=true", "tlp"),
    ],
)
def test_rules_ns3_hard_wires_are_rejected_by_field(override, field):
    with pytest.raises(ValueError, match=rf"flows\[0\]\.{field}"):
        ns3.plan_to_spec(plan(override))


@pytest.mark.parametrize(
    "cc,params,field",
    [
        ("cubic", '{variant = "rfc9438"}', "cc_params.hystart"),  # HyStart++ is not in ns-3 3.44
        ("cubic", '{variant = "paper2008"}', "cc_params.variant"),
        ("bbr", "", "cc_params.long_term_bw"),  # the linux variant's default: ns-3 has none
        ("bbr", '{long_term_bw = false, variant = "paper"}', "cc_params.variant"),
        ("bbr", "{long_term_bw = false, pacing_margin_percent = 0}", "cc_params.pacing_margin_percent"),
        ("vegas", "", "cc"),
    ],
)
def test_algorithm_settings_ns3_lacks_are_rejected_by_field(cc, params, field):
    with pytest.raises(ValueError, match=rf"flows\[0\]\.{field}"):
        ns3.plan_to_spec(plan(cc=cc, params=params))


def test_bbr_linux_without_long_term_sampling_is_accepted():
    lines = spec_lines(plan(cc="bbr", params="{long_term_bw = false}"))
    assert "socktype 0 ns3::TcpBbr" in lines


def test_queue_with_two_limits_is_rejected():
    p = plan()
    p["links"][4]["queue"]["limit_bytes"] = 100_000
    with pytest.raises(ValueError, match=r"links\[4\]\.queue"):
        ns3.plan_to_spec(p)


def test_asymmetric_delay_is_rejected():
    p = plan()
    p["links"][5]["delay_ns"] += 1
    with pytest.raises(ValueError, match=r"links\[5\]\.delay_ns"):
        ns3.plan_to_spec(p)


def test_cwnd_reduction_maps_to_ns3_recovery_ops():
    p = plan()
    assert "default ns3::TcpL4Protocol::RecoveryType ns3::TcpClassicRecovery" in spec_lines(p) or (
        p["flows"][0].get("cwnd_reduction") == "prr"
    )
    for f in p["flows"]:
        f["cwnd_reduction"] = "prr"
    assert "default ns3::TcpL4Protocol::RecoveryType ns3::TcpPrrRecovery" in spec_lines(p)
    for f in p["flows"]:
        f["cwnd_reduction"] = "at-once"
    assert "default ns3::TcpL4Protocol::RecoveryType ns3::TcpClassicRecovery" in spec_lines(p)
    p["flows"][0]["cwnd_reduction"] = "rate-halving"
    with pytest.raises(ValueError, match=r"flows\[0\]\.cwnd_reduction"):
        ns3.plan_to_spec(p)


def test_flows_must_agree_on_global_ns3_defaults():
    p = plan()
    p["flows"][1]["initial_window"] = 4
    with pytest.raises(ValueError, match=r"flows\[1\]: ns-3 sets ns3::TcpSocket::InitialCwnd once"):
        ns3.plan_to_spec(p)
