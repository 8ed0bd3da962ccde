"""Peer validation of NewReno recovery (RFC 6582, no SACK): fatpipe against ns-2.35's
``Agent/TCP/Newreno`` with ``Agent/TCPSink`` (Debian package ``ns2``).

Same dumbbell as test_ns2_reno.py: 100 Mb/s, 50 ms bottleneck, 100-packet DropTail buffer,
1 Gb/s x 1 ms access links, initial window 2, flows starting in the first second.

ns-2's agent follows RFC 5681 where fatpipe's defaults follow Linux, in two documented places, so
these runs select the ns-2 rules with fatpipe's named TCP parameters (docs/scenarios.md):
``cwnd_growth = "per-ack"`` (at most one segment per ACK, RFC 5681 §3.1, instead of the segments
the ACK covers) and ``rto_ssthresh = "halve-again"`` (a timeout during fast recovery halves the
current cwnd again, ns-2's ``Agent/TCP::timeout``, instead of Linux's once-per-episode rule). The
peer also sets ``delay_growth_ false`` (fatpipe, like TCP/Linux, has no handshake to wait for).
With Linux's rules instead, the slow-start overshoot (hundreds of losses in one window) is
repaired differently: 4 flows had 17 timeouts and 1651 drops against ns-2's 7 and 795.

What is compared, and why:
- Steady state of a single flow (200 s, two congestion events after the start-up): both run the
  same AIMD with one loss per congestion event and a NewReno fast retransmit, so the growth in
  congestion avoidance (slope of cwnd over 10-90 s) within 2 %, the peak cwnd and the ssthresh
  after the last event within 2 %, the congestion events within 2 s of each other (the start-up
  transient leaves the two trajectories a constant 8-14 segments apart, depending on how its
  hundreds of losses are repaired; at one segment per RTT that shifts the events by about a
  second), and aggregate goodput within 3 %. This test caught fatpipe keeping NewReno's dupack
  count after a timeout (the window was inflated by up to 50 segments for the rest of the run).
- All runs (1 flow 200 s; 4 and 16 flows 100 s, seed 1): aggregate goodput within 4 % and Jain's
  index within 0.03 (as the SACK validation); bottleneck drops within 20 % (as the SACK validation
  pooled over seeds: the losses of a slow-start overshoot are the least stable quantity); timeouts
  within max(2, 30 %) of ns-2's. Measured: drops 158/155 and 600/588, timeouts 2/2 and 7/7 (1 and
  4 flows; 16 flows: see the known defect below).
- Not compared: retransmissions (1 flow: 562 vs 445; drops and timeouts agree).
- Known defect, kept visible as a strict xfail: with 16 flows a flow can fall into a loop of
  spurious retransmissions. Duplicates from a go-back-N resend produce three dupacks after the
  recovery point has passed, which starts a false fast retransmit; its partial ACKs then advance
  one segment at a time, and each retransmits (RFC 6582 step 5) a segment that is only in flight,
  making more duplicates. Seed 1 (this test): 30 timeouts against ns-2's 22; seed 2: one flow
  retransmits 9397 segments and aggregate goodput is 4 % below ns-2's. Linux breaks this loop with its reordering detection
  (tcp_check_reno_reordering) and by retransmitting on a partial ACK only when dupacks show data
  beyond the hole; which remedy to adopt is open (issue note).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fatpipe
from conftest import ns2_available
from fatpipe.metrics import jain_index
from fatpipe.peers import ns2

pytestmark = [
    pytest.mark.validation,
    pytest.mark.skipif(not ns2_available(), reason="ns-2 (Debian package ns2) is not installed; `make setup` installs it"),
]


def scenario(pairs: int, duration: str) -> fatpipe.Scenario:
    return fatpipe.Scenario.dumbbell(
        pairs=pairs, rate="100Mbps", delay="50ms", buffer="100pkt", access_rate="1Gbps",
        duration=duration, initial_window=2, start_spread="1s", recovery="newreno",
        cwnd_growth="per-ack", rto_ssthresh="halve-again",
    )


def both(sc: fatpipe.Scenario, seed: int = 1):
    plan = sc.plan(seed)
    ours = fatpipe.run(sc, seed=seed)
    theirs = ns2.run_plan(plan, sample_interval_ns=plan["monitor"]["interval_ns"], fast_headers=True)
    return ours, theirs


def goodputs(ours, theirs):
    f = ours.to_pandas("flows").sort_values("flow_id")["goodput_bps"].to_numpy()
    n = np.array([x["goodput_bps"] for x in sorted(theirs["flows"], key=lambda x: x["flow_id"])])
    return f, n


def test_single_flow_steady_state_matches_ns2():
    ours, theirs = both(scenario(1, "200s"))
    f, n = goodputs(ours, theirs)
    assert abs(f.sum() - n.sum()) / n.sum() < 0.03, (f, n)
    fs = ours.to_pandas("flow_series").set_index("t_s")
    ns_ = pd.DataFrame(theirs["flow_series"]).set_index("t_s")
    t = np.arange(10.0, 200.0, 1.0)
    a = fs["cwnd_pkts"].reindex(t, method="nearest", tolerance=1e-6).to_numpy(dtype=float)
    b = ns_["cwnd_pkts"].reindex(t, method="nearest", tolerance=1e-6).to_numpy(dtype=float)
    assert np.isfinite(a).all() and np.isfinite(b).all()
    # Congestion avoidance: the same growth per second (one segment per RTT) ...
    ca = (t >= 10) & (t <= 90)
    slope_f, slope_n = np.polyfit(t[ca], a[ca], 1)[0], np.polyfit(t[ca], b[ca], 1)[0]
    assert abs(slope_f - slope_n) / slope_n < 0.02, (slope_f, slope_n)
    # ... the same peaks and the same ssthresh after each congestion event ...
    assert abs(a.max() - b.max()) / b.max() < 0.02, (a.max(), b.max())
    sf = fs["ssthresh_pkts"].reindex(t, method="nearest", tolerance=1e-6).to_numpy(dtype=float)
    sn = ns_["ssthresh_pkts"].reindex(t, method="nearest", tolerance=1e-6).to_numpy(dtype=float)
    assert abs(sf[-1] - sn[-1]) / sn[-1] < 0.02, (sf[-1], sn[-1])
    # ... congestion events at the same times, up to the phase shift the start-up leaves (ours is
    # a few segments ahead, so it fills the buffer a few RTTs earlier) ...
    ev_f, ev_n = t[1:][a[1:] < 0.7 * a[:-1]], t[1:][b[1:] < 0.7 * b[:-1]]
    assert len(ev_f) == len(ev_n) >= 1, (ev_f, ev_n)
    assert np.max(np.abs(ev_f - ev_n)) <= 2.0, (ev_f, ev_n)


def drops_and_timeouts(ours, theirs):
    fd = int(ours.to_pandas("queues").set_index("link").loc["r0->r1", "drops_tail"])
    nd = int(next(q for q in theirs["queues"] if q["link"] == "r0->r1")["drops_tail"])
    return fd, nd, int(ours.summary["timeouts"]), sum(int(x["timeouts"]) for x in theirs["flows"])


KNOWN_LOOP = pytest.mark.xfail(
    strict=True,
    reason="spurious-retransmission loop after a false fast retransmit (see module docstring)",
)


@pytest.mark.parametrize(
    "pairs,duration", [(1, "200s"), (4, "100s"), pytest.param(16, "100s", marks=KNOWN_LOOP)]
)
def test_aggregate_drops_and_timeouts_match_ns2(pairs, duration):
    ours, theirs = both(scenario(pairs, duration))
    f, n = goodputs(ours, theirs)
    assert len(f) == len(n) == pairs
    assert abs(f.sum() - n.sum()) / n.sum() < 0.04, (f.sum(), n.sum())
    assert abs(jain_index(f) - jain_index(n)) < 0.03
    fd, nd, ft, nt = drops_and_timeouts(ours, theirs)
    assert nd > 0 and abs(fd - nd) / nd < 0.20, (fd, nd)
    assert abs(ft - nt) <= max(2, 0.3 * nt), (ft, nt)
