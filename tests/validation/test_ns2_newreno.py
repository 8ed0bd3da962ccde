"""Peer validation of NewReno recovery (RFC 6582, no SACK): fatpipe against ns-2.35's
``Agent/TCP/Newreno`` with ``Agent/TCPSink`` (Debian package ``ns2``).

Same dumbbell as test_ns2_reno.py: 100 Mb/s, 50 ms bottleneck, 100-packet DropTail buffer,
1 Gb/s x 1 ms access links, initial window 2, flows starting in the first second.

What is compared, and why:
- Steady state of a single flow (200 s, two congestion events after the start-up). Both run the
  same AIMD with one loss per congestion event and a NewReno fast retransmit, so: the growth in
  congestion avoidance (slope of cwnd over 10-90 s) within 2 %, the peak cwnd and the ssthresh
  after the last event within 2 % (measured: 939 vs 932 and 484 vs 484), the congestion events within 2 s of
  each other and, more than 3 s away from them, the cwnd trajectory from 10 s on within 12
  segments of ns-2's (measured at most about 8: the start-up leaves the two a few segments apart,
  an offset that then stays constant and shifts the events by under a second), and aggregate
  goodput within 3 %. This is
  the test that
  caught fatpipe keeping NewReno's dupack count after a timeout (the window was inflated by up to
  50 segments for the rest of the run, and cwnd grew twice as fast as in ns-2).
- Shared bottleneck (4 and 16 flows, seed 1): aggregate goodput within 4 % and Jain's index within
  0.03, the same bounds as the SACK validation.
- Not compared: drops, retransmissions and timeouts. They are dominated by the slow-start overshoot
  (hundreds of losses in one window, repaired by a timeout and go-back-N), where ns-2's agent and
  fatpipe (which follows Linux) make two different documented choices: ns-2 grows cwnd by at most
  one segment per ACK (RFC 5681 §3.1) while Linux grows it by the segments each ACK covers, and on
  a timeout during recovery ns-2 halves the current cwnd again while Linux keeps the ssthresh of the
  episode (``tcp_enter_loss``). Emulating both ns-2 rules in fatpipe brought timeouts and drops
  within about 20 % of ns-2 (4 flows: 8 vs 7 timeouts, 648 vs 795 drops), which shows where the
  difference is; making them named TCP parameters is future work (issue note).
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
    # ... and, away from those events, a trajectory offset by no more than that residue.
    calm = np.all(np.abs(t[:, None] - np.concatenate([ev_f, ev_n])[None, :]) > 3.0, axis=1)
    assert np.max(np.abs(a - b)[calm]) <= 12, np.max(np.abs(a - b)[calm])


@pytest.mark.parametrize("pairs", [4, 16])
def test_shared_bottleneck_aggregate_matches_ns2(pairs):
    ours, theirs = both(scenario(pairs, "100s"))
    f, n = goodputs(ours, theirs)
    assert len(f) == len(n) == pairs
    assert abs(f.sum() - n.sum()) / n.sum() < 0.04, (f.sum(), n.sum())
    assert abs(jain_index(f) - jain_index(n)) < 0.03
