"""Peer validation: the same plans run in ns-2.35 (Agent/TCP/Linux `select_ca reno` +
TCPSink/Sack1, Debian package `ns2`) and in fatpipe.

Scenario: dumbbell with a 100 Mb/s, 50 ms bottleneck, 1 Gb/s x 1 ms access links, a 100-packet
DropTail buffer (about 0.12 BDP, so losses are periodic), initial window 2 (ns-2's default), flows
starting uniformly in the first second (the same drawn start times on both sides: both run the
plan). 1 flow for 200 s (four sawtooth periods of ~51 s), 4 and 16 flows for 100 s.

Tolerances and why:
- Single flow. Nothing is random and both simulators run the same AIMD with SACK, so the
  trajectories should coincide up to recovery details (ns-2's TCP-Linux retransmits with its own
  scoreboard and rate halving, fatpipe follows RFC 6675); measured difference < 0.5 %. Bounds: aggregate
  goodput 2 %, drops and sawtooth period 5 %, peak cwnd 2 %.
- Several flows. Which flow loses in a synchronised drop burst depends on sub-microsecond packet
  interleaving, so individual sawtooths drift apart after the first losses in any two faithful
  implementations (and between seeds of one). What must agree is the aggregate and the shape of the
  sharing, over three seeds: aggregate goodput 4 % and Jain's index 0.03 in every run; pooled over
  the seeds, the sorted per-flow goodputs (the distribution of shares) 15 % point by point, the
  total drops 20 % (the number of packets lost per congestion event, above all in the slow-start
  overshoot, is the least stable quantity: single seeds differ by up to 30 % while aggregate
  goodput agrees within 3 %), and the median sawtooth period over flows 15 %.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fatpipe
from conftest import ns2_available
from fatpipe.metrics import jain_index
from fatpipe.peers.analysis import sawtooth_period_s
from validation.peer_runs import both, per_flow_goodput, validation_dumbbell

pytestmark = [
    pytest.mark.validation,
    pytest.mark.skipif(not ns2_available(), reason="ns-2 (Debian package ns2) is not installed; `make setup` installs it"),
]


def scenario(pairs: int, duration: str) -> fatpipe.Scenario:
    return validation_dumbbell(pairs, duration)


def bottleneck_drops(ours, theirs):
    f = int(ours.to_pandas("queues").set_index("link").loc["r0->r1", "drops_tail"])
    n = int(next(q for q in theirs["queues"] if q["link"] == "r0->r1")["drops_tail"])
    return f, n


def sawtooth_periods(series: pd.DataFrame) -> list[float]:
    out = []
    for _, g in series.groupby("flow_id"):
        p = sawtooth_period_s(g["t_s"].to_numpy(), g["cwnd_pkts"].to_numpy(), skip=1)
        if p is not None:
            out.append(p)
    return out


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


def test_single_flow_matches_ns2():
    ours, theirs = both(scenario(1, "200s"))
    f, n = per_flow_goodput(ours, theirs)
    assert rel(f.sum(), n.sum()) < 0.02, (f, n)
    fd, nd = bottleneck_drops(ours, theirs)
    assert nd > 0 and rel(fd, nd) < 0.05, (fd, nd)
    fs, ns_ = ours.to_pandas("flow_series"), pd.DataFrame(theirs["flow_series"])
    pf, pn = sawtooth_periods(fs), sawtooth_periods(ns_)
    assert len(pf) == 1 and len(pn) == 1
    assert rel(pf[0], pn[0]) < 0.05, (pf, pn)
    assert rel(fs["cwnd_pkts"].max(), ns_["cwnd_pkts"].max()) < 0.02


SEEDS = (1, 2, 3)


@pytest.mark.parametrize("pairs", [4, 16])
def test_shared_bottleneck_matches_ns2(pairs):
    runs = [both(scenario(pairs, "100s"), seed) for seed in SEEDS]
    shares_f, shares_n, drops_f, drops_n, saw_f, saw_n = [], [], 0, 0, [], []
    for ours, theirs in runs:
        f, n = per_flow_goodput(ours, theirs)
        assert len(f) == len(n) == pairs
        assert rel(f.sum(), n.sum()) < 0.04, (f.sum(), n.sum())
        assert abs(jain_index(f) - jain_index(n)) < 0.03
        shares_f += list(f)
        shares_n += list(n)
        fd, nd = bottleneck_drops(ours, theirs)
        drops_f += fd
        drops_n += nd
        saw_f += sawtooth_periods(ours.to_pandas("flow_series"))
        saw_n += sawtooth_periods(pd.DataFrame(theirs["flow_series"]))
        # No flow should be starved by timeouts where ns-2 has none.
        assert ours.summary["timeouts"] <= max(5, 3 * sum(x["timeouts"] for x in theirs["flows"]))
    sf, sn = np.sort(shares_f), np.sort(shares_n)
    assert np.max(np.abs(sf - sn) / sn) < 0.15, (sf, sn)
    assert rel(drops_f, drops_n) < 0.20, (drops_f, drops_n)
    assert rel(np.median(saw_f), np.median(saw_n)) < 0.15, (np.median(saw_f), np.median(saw_n))


def test_delayed_ack_single_flow_steady_state_matches_ns2():
    """Delayed ACKs (``Agent/TCPSink/Sack1/DelAck``, an ACK per two segments or after 40 ms).

    Congestion avoidance must still add one segment per RTT (Linux counts the segments an ACK
    covers), so the sawtooth period (5 %), the peak cwnd and the ssthresh after the last
    congestion event (2 %) must agree. Aggregate goodput within 5 %: the slow-start overshoot
    differs (ns-2's TCP-Linux is a 2.6 kernel that reduces cwnd by rate halving while fatpipe sets
    it to ssthresh at once, and it left slow start at ssthresh 349 where fatpipe left at 228), and
    over 200 s that start-up costs fatpipe a few percent; measured 72.95 vs 75.69 Mb/s (3.6 %),
    with drops 136 vs 97 for the same reason.
    """
    sc = scenario(1, "200s").with_overrides("tcp.delayed_ack=true")
    ours, theirs = both(sc)
    f, n = per_flow_goodput(ours, theirs)
    assert rel(f.sum(), n.sum()) < 0.05, (f, n)
    fs, ns_ = ours.to_pandas("flow_series"), pd.DataFrame(theirs["flow_series"])
    pf, pn = sawtooth_periods(fs), sawtooth_periods(ns_)
    assert len(pf) == 1 and len(pn) == 1
    assert rel(pf[0], pn[0]) < 0.05, (pf, pn)
    assert rel(fs["cwnd_pkts"].max(), ns_["cwnd_pkts"].max()) < 0.02
    assert rel(fs["ssthresh_pkts"].iloc[-1], ns_["ssthresh_pkts"].iloc[-1]) < 0.02
