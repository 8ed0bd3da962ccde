"""The ns-2 peer on a ring (docs/ring.md): flows to the opposite LAN have two equal-cost paths,
which ns-2's static routing would choose its own way; the peer must send every packet along
fatpipe's path, whatever the tie-break."""

from __future__ import annotations

import shutil

import pytest

import fatpipe
from fatpipe.peers import ns2

TIE_BREAKS = ["clockwise", "counterclockwise", "ns2"]

#: One sender and one receiver per LAN, finite transfers of 10, 20, 40 and 80 segments from LANs
#: r1..r4 (so every link's packet count tells which flows crossed it), queues that never drop,
#: 10 Mb/s ring links and a 1 s minimum RTO (no spurious timeouts from queueing), no delayed ACKs:
#: each flow sends exactly its segments and gets one ACK for each.
RING = """
duration = "10s"
[topology]
kind = "ring"
senders = 1
receivers = 1
ring = { rate = "10Mbps", delays = ["10ms", "20ms", "30ms", "40ms"] }
[tcp]
rack = false
tlp = false
initial_window = 2
min_rto = "1s"
[[flows]]
pairs = [0]
kind = "file"
size = "14600B"
[[flows]]
pairs = [1]
kind = "file"
size = "29200B"
[[flows]]
pairs = [2]
kind = "file"
size = "58400B"
[[flows]]
pairs = [3]
kind = "file"
size = "116800B"
"""


def ring(tie_break: str) -> fatpipe.Scenario:
    return fatpipe.Scenario.from_toml(RING).with_overrides(f'topology.tie_break="{tie_break}"')


def path_rtt_ns(plan: dict, next_link: dict, src: str, dst: str) -> int:
    """Round-trip propagation delay along the peer's routes (data one way, ACKs back)."""
    idx = {n["name"]: i for i, n in enumerate(plan["nodes"])}
    total = 0
    for a, b in ((idx[src], idx[dst]), (idx[dst], idx[src])):
        u = a
        while u != b:
            link = plan["links"][next_link[(u, b)]]
            total += int(link["delay_ns"])
            u = idx[link["to"]]
    return total


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_peer_routes_are_fatpipes(tie_break):
    # Every ring link has its own delay, so a flow's round trip says which way its data and ACKs
    # go: the peer's routes (fatpipe's rule, recomputed from the plan's links) must give the
    # plan's path_rtt_ns, computed by fatpipe's own routing table.
    plan = ring(tie_break).plan()
    next_link, ties = ns2.fatpipe_routes(plan)
    # Each router meets a tie towards the opposite receiver (data) and sender (ACKs).
    assert len(ties) == 8
    rtts = [path_rtt_ns(plan, next_link, f["src"], f["dst"]) for f in plan["flows"]]
    assert rtts == [f["path_rtt_ns"] for f in plan["flows"]]
    script = ns2.plan_to_tcl(plan, "/tmp/unused")
    assert "$ns rtproto Manual" in script and "fp_route" in script


def test_tree_plans_keep_ns2_static_routing():
    sc = fatpipe.Scenario.dumbbell(pairs=3, rate="10Mbps", delay="10ms", duration="1s", rack=False, tlp=False)
    plan = sc.plan()
    _, ties = ns2.fatpipe_routes(plan)
    assert not ties
    script = ns2.plan_to_tcl(plan, "/tmp/unused")
    assert "rtproto" not in script and "fp_route" not in script


@pytest.mark.validation
@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 ('ns', Debian package ns2) is not installed")
@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_ns2_sends_every_packet_on_fatpipes_links(tie_break, tmp_path):
    sc = ring(tie_break)
    plan = sc.plan()
    ours = fatpipe.run(sc)
    theirs = ns2.run_plan(plan, workdir=str(tmp_path))
    # Both complete every transfer without a loss or a retransmission ...
    for f in theirs["flows"]:
        assert f["retransmits"] == 0 and f["completion_s"] is not None, f
    of = ours.to_pandas("flows")
    assert (of["retransmits"] == 0).all() and of["completion_s"].notna().all()
    # ... so each directed link carries the same packets in both: the data of the flows routed
    # over it and the ACKs of those routed back over it.
    mine = dict(zip(ours.to_pandas("links")["link"], ours.to_pandas("links")["tx_packets"]))
    ns = {row["link"]: row["tx_packets"] for row in theirs["links"]}
    ring_links = sorted(k for k in mine if "s" not in k and "d" not in k)
    assert len(ring_links) == 8
    diff = {k: (mine[k], ns[k]) for k in mine if mine[k] != ns[k]}
    assert not diff, f"{tie_break}: links whose packet counts differ (fatpipe, ns-2): {diff}"
    # And the tie-break shows: "clockwise" leaves the counterclockwise links idle, "ns2" r3 -- r4.
    idle = sorted(k for k in ring_links if mine[k] == 0)
    expect = {
        "clockwise": ["r1->r4", "r2->r1", "r3->r2", "r4->r3"],
        "counterclockwise": ["r1->r2", "r2->r3", "r3->r4", "r4->r1"],
        "ns2": ["r3->r4", "r4->r3"],
    }[tie_break]
    assert idle == expect


def test_ns3_peer_refuses_a_ring_with_equal_cost_choices():
    from fatpipe.peers import ns3

    sc = fatpipe.Scenario.from_toml(
        'duration = "2s"\n[topology]\nkind = "ring"\nsenders = 1\nreceivers = 1\n'
        'ring = { delay = "10ms" }\n')
    with pytest.raises(ValueError, match="equal-cost"):
        ns3.plan_to_spec(sc.plan())
