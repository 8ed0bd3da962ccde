"""Peer validation of BBR v1 and CUBIC (RFC 9438 parameters) against ns-3 3.44 (PyPI ``ns3``:
``TcpBbr``, ``TcpCubic``), through python/fatpipe/peers/ns3.py, which runs the *same plan*.

Scenario: dumbbell, 100 Mb/s x 20 ms bottleneck, 1 Gb/s x 1 ms access links (RTT 44 ms, BDP 367
packets of 1500 bytes), DropTail of 1 BDP (367 packets), for BBR also 4 BDP (1468 packets),
initial window 10, starts spread over the first second. ns-3 hard-wires some TCP rules that are
options in fatpipe, so the plans select ns-3's (the peer refuses any other value, naming the
field): RFC 6298 RTO, ssthresh reduced on a timeout in recovery, 60 s RTO cap, no
lost-retransmission detection. Algorithms: CUBIC ``variant = "rfc9438"`` (beta 0.7, C 0.4, fast
convergence, Reno-friendly region: ns-3's Beta 0.7, C 0.4, FastConvergence, TcpFriendliness) with
``hystart = "off"`` on both sides (ns-3 3.44 has no RFC 9406 HyStart++, and its HyStart's delay
threshold is the min RTT where Linux's is a eighth of it),
and BBR ``variant = "linux"`` with ``long_term_bw = false`` (ns-3's TcpBbr has no policer
detection; it has the 1 % pacing margin and the ACK-aggregation allowance).

Randomness: ns-3 has no send jitter (ns-2's ``overhead_``). Phase locking between seeds is broken
by the plan's start times, drawn per seed (``start_spread = 1s``) and identical on both sides, and
for BBR by the random initial PROBE_BW phase (fatpipe: its own stream; ns-3: ``SetRun(seed)``).
Shared-bottleneck results are compared as means over seeds 1-5, never one run.

CUBIC
    Without HyStart a slow start overshoots by ~0.5 BDP and the recovery from that (RTO and state
    resets on both sides, in different ways) is not what this validation is about, so the CUBIC
    plans set ``initial_ssthresh`` (700 packets for one flow, just under W_max = BDP + buffer =
    734; 240 per flow for three) and every window change after that is CUBIC's.
    - One flow, 26 s (no randomness: the two trajectories must coincide): the times of the
      window reductions after 3 s within 0.3 s (3 samples of 100 ms), the same number of them,
      peaks (the window just before each reduction) within 1 % (the cube is evaluated in
      integers by fatpipe as Linux, in doubles by ns-3: a few packets at 735), the plateau (the
      window where it is flattest, at W_max after fast convergence, 0.85 x 735 = 625) within
      1 %, goodput within 1 % and drops within 10 % (measured: identical).
    - Three flows x 5 seeds, 12 s: aggregate goodput within 2 % (both near the 96.7 Mb/s of
      payload the link carries), Jain's index within 0.05, drops within 20 % (a synchronised
      drop burst loses a packet count that depends on sub-RTT timing) and the mean bottleneck
      queue within 10 % of the buffer.

BBR
    - One flow, 22 s, buffers 1 and 4 BDP: goodput within 2 % (both pace at ~99 % of the
      bottleneck except during PROBE_RTT); BBR's low queue: the mean bottleneck queue after 3 s
      below 0.1 BDP (37 packets) on both sides, with either buffer, and the two within 0.05 BDP
      (18 packets, 1.5 ms of queueing delay, 3 % of the RTT): the queue is the 1.25-gain probe
      (0.25 BDP for one RTprop in eight) and its drain, and 1 % of difference in the bandwidth
      estimate shifts it by ~1 % x BDP per RTprop; the cwnd gain: the median window in PROBE_BW
      divided by the BDP in [1.9, 2.2] on both sides (cwnd_gain 2 plus the quantization budget)
      and within 5 % of each other: Linux's budget (fatpipe's) is 3 x tso_segs_goal, 8 segments
      (1 ms of data) each at 100 Mb/s, rounded up to even, ns-3's 3 x 1 segment, 21 packets or
      0.057 BDP apart (measured 2.073 vs 2.022); the first PROBE_RTT (window <= 6 packets, after
      3 s) within 0.3 s. Both sides run without the ACK-aggregation allowance
      (``ack_aggregation = false``): ns-3 3.44's is capped near 3 packets by a threshold compared
      in bytes where Linux compares packets (see python/fatpipe/peers/ns3.py and
      docs/validation.md for what it does to three flows).
    - PROBE_RTT periodicity (every 10 s while the min RTT is not lowered): a strict xfail, see
      ``PROBE_RTT_XFAIL``.
    - Three flows x 5 seeds, 12 s, buffers 1 and 4 BDP: aggregate goodput within 3 %, Jain within
      0.1 (BBR v1's sharing depends on which flow's probe sees the higher delivery rate: the
      per-seed standard deviation of Jain's index is 0.07-0.10, so the standard error of the
      difference of two 5-seed means is ~0.055), and BBR v1's standing queue with several flows
      (each flow's window is 2 x its bandwidth estimate x min RTT, and the estimates add up to
      more than the link): the mean bottleneck queue after 3 s between 0.5 and 1.5 BDP on both
      sides and the two within 0.25 BDP (92 packets). That queue depends on when each flow last
      saw the empty queue, so it spreads over seeds (standard deviation 70 packets in fatpipe,
      37 in ns-3, measured): the standard error of the difference of the 5-seed means is 35
      packets, 2 of them plus the quantization-budget difference (~4 packets per flow) is 83.
    - The 1-BDP three-flow case is a strict xfail, see ``SHARED_1BDP_XFAIL``.

Wall time: all plans run in one batch (``run_plans``, two ns-3 processes that import ns-3 once);
fatpipe's side takes well under a second.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
import pytest

import fatpipe
from fatpipe.metrics import jain_index
from fatpipe.peers import ns3
from validation.peer_runs import NS3_RULES

pytestmark = [
    pytest.mark.validation,
    pytest.mark.skipif(
        not ns3.ns3_available(),
        reason="ns-3 Python bindings not installed (`pip install ns3==3.44.post0`, part of `make setup`)",
    ),
]

BOTTLENECK = "r0->r1"
BDP = 100e6 * 0.044 / 8 / 1500  # packets of 1500 bytes on the wire
SEEDS = (1, 2, 3, 4, 5)
INTERVAL_NS = 100_000_000
PARAMS = {"bbr": "{long_term_bw = false, ack_aggregation = false}", "cubic": '{variant = "rfc9438", hystart = "off"}'}


def scenario(cc: str, pairs: int, duration: str, buffer: str, ssthresh: int | None = None) -> fatpipe.Scenario:
    ov = [f"tcp.cc={cc}", f"tcp.cc_params={PARAMS[cc]}", "monitor.interval=100ms", *NS3_RULES]
    if ssthresh is not None:
        ov.append(f"tcp.initial_ssthresh={ssthresh}")
    return fatpipe.Scenario.dumbbell(
        pairs=pairs, rate="100Mbps", delay="20ms", buffer=buffer, access_rate="1Gbps",
        duration=duration, initial_window=10, start_spread="1s",
    ).with_overrides(*ov)


CASES = {
    "cubic-1": (scenario("cubic", 1, "26s", "367pkt", 700), (1,)),
    "cubic-3": (scenario("cubic", 3, "12s", "367pkt", 240), SEEDS),
    "bbr-1-1bdp": (scenario("bbr", 1, "22s", "367pkt"), (1,)),
    "bbr-1-4bdp": (scenario("bbr", 1, "22s", "1468pkt"), (1,)),
    "bbr-3-1bdp": (scenario("bbr", 3, "12s", "367pkt"), SEEDS),
    "bbr-3-4bdp": (scenario("bbr", 3, "12s", "1468pkt"), SEEDS),
}


class Side:
    """One simulator's tables for one run, as pandas frames."""

    def __init__(self, flows, fs, queues, qs):
        self.flows, self.fs, self.queues, self.qs = flows, fs, queues, qs

    @classmethod
    def of_fatpipe(cls, res) -> "Side":
        return cls(*(res.to_pandas(t) for t in ("flows", "flow_series", "queues", "queue_series")))

    @classmethod
    def of_peer(cls, res: dict) -> "Side":
        return cls(*(pd.DataFrame(res[t]) for t in ("flows", "flow_series", "queues", "queue_series")))

    def goodput(self) -> np.ndarray:
        return self.flows.sort_values("flow_id")["goodput_bps"].to_numpy()

    def drops(self) -> int:
        return int(self.queues.set_index("link").loc[BOTTLENECK, "drops_tail"])

    def queue_after(self, t0: float) -> float:
        q = self.qs[(self.qs["link"] == BOTTLENECK) & (self.qs["t_s"] > t0)]
        return float(q["len_pkts"].mean())

    def cwnd(self, flow: int = 0) -> tuple[np.ndarray, np.ndarray]:
        s = self.fs[self.fs["flow_id"] == flow].sort_values("t_s")
        return s["t_s"].to_numpy(), s["cwnd_pkts"].to_numpy().astype(float)


#: A short plan run twice by the same ns-3 process, first and last (``run_plans`` gives child 0
#: every other plan): the batch must not leak state from one run into the next.
REPEAT = scenario("bbr", 2, "4s", "367pkt")


@functools.lru_cache(maxsize=None)
def runs() -> dict:
    """{(case, seed): (fatpipe Side, ns-3 Side)}: every plan of this module in one ns-3 batch,
    plus ``("repeat", "first"/"last")``: the ns-3 results of ``REPEAT``."""
    keys: list[tuple[str, Any]] = [("repeat", "first")]
    plans, ours = [REPEAT.plan(1)], {}
    for name, (sc, seeds) in CASES.items():
        for seed in seeds:
            keys.append((name, seed))
            plans.append(sc.plan(seed))
            ours[(name, seed)] = Side.of_fatpipe(fatpipe.run(sc, seed=seed))
    if len(plans) % 2:
        keys.append(("repeat", "pad"))
        plans.append(REPEAT.plan(2))
    keys.append(("repeat", "last"))
    plans.append(REPEAT.plan(1))
    theirs = ns3.run_plans(plans, sample_interval_ns=INTERVAL_NS, jobs=2)
    out: dict[Any, Any] = {k: (ours.get(k), Side.of_peer(t)) for k, t in zip(keys, theirs)}
    raw = dict(zip(keys, theirs))
    out["repeat"] = (raw[("repeat", "first")], raw[("repeat", "last")])
    return out


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# ---------------------------------------------------------------------------------------------
# metrics


def reductions(side: Side, t0: float = 3.0) -> list[tuple[float, float]]:
    """(time, window before) of each window reduction by more than 10 % after ``t0``; a
    reduction spread over consecutive samples (recovery) counts once."""
    t, c = side.cwnd()
    out: list[tuple[float, float]] = []
    i = 1
    while i < len(c):
        if t[i] > t0 and c[i] < 0.9 * c[i - 1]:
            out.append((float(t[i]), float(c[i - 1])))
            while i + 1 < len(c) and c[i + 1] < c[i]:
                i += 1
        i += 1
    return out


def plateau(side: Side, t0: float = 5.0, half_width_s: float = 1.0) -> float:
    """The window where the trajectory is flattest after ``t0``: the middle of the 2 s span with
    the smallest change (CUBIC's plateau at W_max)."""
    t, c = side.cwnd()
    k = int(round(half_width_s / (INTERVAL_NS / 1e9)))
    best, at = np.inf, np.nan
    for i in range(k, len(c) - k):
        if t[i] <= t0:
            continue
        d = abs(c[i + k] - c[i - k])
        if d < best and min(c[i - k : i + k + 1]) > 0.9 * max(c[i - k : i + k + 1]):
            best, at = d, c[i]
    return float(at)


def probe_rtt_starts(side: Side, t0: float = 3.0) -> list[float]:
    """Start times of PROBE_RTT episodes: samples with cwnd <= 6 packets after ``t0`` (the
    PROBE_RTT window is 4), consecutive samples merged."""
    t, c = side.cwnd()
    low = t[(t > t0) & (c <= 6)]
    starts: list[float] = []
    prev = -np.inf
    for x in low:
        if x - prev > 0.5:
            starts.append(float(x))
        prev = x
    return starts


def cwnd_gain(side: Side, t0: float = 3.0) -> float:
    """Median PROBE_BW window (after ``t0``, PROBE_RTT samples left out) over the BDP."""
    t, c = side.cwnd()
    return float(np.median(c[(t > t0) & (c > 6)]) / BDP)


def shared(case: str) -> dict:
    """Means over seeds of aggregate goodput, Jain's index, drops and mean queue (after 3 s)."""
    rows = []
    for seed in SEEDS:
        f, n = runs()[(case, seed)]
        rows.append(
            [f.goodput().sum(), n.goodput().sum(), jain_index(f.goodput()), jain_index(n.goodput()),
             f.drops(), n.drops(), f.queue_after(3.0), n.queue_after(3.0)]
        )
    m = np.mean(np.array(rows, dtype=float), axis=0)
    return {"goodput": m[0:2], "jain": m[2:4], "drops": m[4:6], "queue": m[6:8], "per_seed": rows}


# ---------------------------------------------------------------------------------------------
# CUBIC


def test_cubic_single_flow_trajectory_matches_ns3():
    f, n = runs()[("cubic-1", 1)]
    rf, rn = reductions(f), reductions(n)
    info = {"fatpipe": rf, "ns-3": rn}
    assert len(rf) == len(rn) >= 2, info
    for (tf, pf), (tn, pn) in zip(rf, rn):
        assert abs(tf - tn) <= 0.3, info
        assert rel(pf, pn) < 0.01, info
    assert rel(plateau(f), plateau(n)) < 0.01, (plateau(f), plateau(n))
    assert rel(f.goodput().sum(), n.goodput().sum()) < 0.01, (f.goodput(), n.goodput())
    assert abs(f.drops() - n.drops()) <= 0.10 * n.drops(), (f.drops(), n.drops())


def test_cubic_shared_bottleneck_matches_ns3():
    r = shared("cubic-3")
    (fg, ng), (fj, nj), (fd, nd), (fq, nq) = r["goodput"], r["jain"], r["drops"], r["queue"]
    assert rel(fg, ng) < 0.02, r
    assert abs(fj - nj) < 0.05, r
    assert abs(fd - nd) <= 0.20 * nd, r
    assert abs(fq - nq) < 0.10 * 367, r


# ---------------------------------------------------------------------------------------------
# BBR


@pytest.mark.parametrize("case", ["bbr-1-1bdp", "bbr-1-4bdp"])
def test_bbr_single_flow_matches_ns3(case):
    f, n = runs()[(case, 1)]
    assert rel(f.goodput().sum(), n.goodput().sum()) < 0.02, (f.goodput(), n.goodput())
    qf, qn = f.queue_after(3.0), n.queue_after(3.0)
    assert qf < 0.1 * BDP and qn < 0.1 * BDP, (qf, qn)
    assert abs(qf - qn) < 0.05 * BDP, (qf, qn)
    gf, gn = cwnd_gain(f), cwnd_gain(n)
    assert 1.9 <= gf <= 2.2 and 1.9 <= gn <= 2.2, (gf, gn)
    assert rel(gf, gn) < 0.05, (gf, gn)
    pf, pn = probe_rtt_starts(f), probe_rtt_starts(n)
    assert pf and pn and abs(pf[0] - pn[0]) <= 0.3, (pf, pn)


PROBE_RTT_XFAIL = (
    "ns-3 3.44 TcpBbr::UpdateRTprop refreshes the min-RTT stamp on a sample *equal* to the min RTT "
    "(m_lastRtt <= m_minRtt); Linux bbr_update_min_rtt (and fatpipe) only on a strictly lower one or "
    "when the 10 s filter expired. In a simulator the queue drains to exactly zero in every 0.75-gain "
    "phase, so every gain cycle yields an RTT sample equal to the minimum and ns-3's stamp never "
    "expires again: one flow, 22 s: fatpipe PROBE_RTT at 10.8 and 21.0 s, ns-3 at 10.7 s only "
    "(its first one comes 10 s after the handshake's sample, lower than any data sample)"
)


@pytest.mark.xfail(strict=True, reason=PROBE_RTT_XFAIL)
@pytest.mark.parametrize("case", ["bbr-1-1bdp", "bbr-1-4bdp"])
def test_bbr_probe_rtt_every_10s_matches_ns3(case):
    f, n = runs()[(case, 1)]
    pf, pn = probe_rtt_starts(f), probe_rtt_starts(n)
    # the first episode is checked above; here the period: the next one ~10 s later on both sides
    assert len(pf) >= 2 and 9.5 <= pf[1] - pf[0] <= 11.0, pf
    assert len(pn) >= 2 and abs((pf[1] - pf[0]) - (pn[1] - pn[0])) <= 0.3, (pf, pn)


SHARED_1BDP_XFAIL = (
    "three BBR flows in one BDP of buffer are in a heavy-loss regime on both sides (BBR v1 without "
    "policer detection paces at its estimate into a full queue: ~5 % loss, 20-40 timeouts in 12 s): "
    "means over seeds 1-5, aggregate goodput fatpipe 86.7 vs ns-3 90.3 Mb/s (4.0 %), Jain 0.75 vs "
    "0.82, drops 5598 vs 5749. fatpipe retransmits twice what the queue drops (seed 1: 10 452 "
    "retransmissions for 4 753 drops, ns-3 5 768 for 5 358): spurious retransmissions after its "
    "timeouts, which are lost retransmissions neither side detects here (with fatpipe's lost-retransmission "
    "detection or its default RACK-TLP: 0 timeouts, retransmissions = drops); ns-3's handling after a "
    "timeout is not traced yet (see docs/validation.md)"
)


@pytest.mark.parametrize(
    "case", [pytest.param("bbr-3-1bdp", marks=pytest.mark.xfail(strict=True, reason=SHARED_1BDP_XFAIL)), "bbr-3-4bdp"]
)
def test_bbr_shared_bottleneck_matches_ns3(case):
    r = shared(case)
    (fg, ng), (fj, nj), (fq, nq) = r["goodput"], r["jain"], r["queue"]
    assert rel(fg, ng) < 0.03, r
    assert abs(fj - nj) < 0.10, r
    assert 0.5 * BDP < fq < 1.5 * BDP and 0.5 * BDP < nq < 1.5 * BDP, r
    assert abs(fq - nq) < 0.25 * BDP, r


def test_ns3_batch_runs_are_independent():
    """A plan gives the same ns-3 tables first in a process and after a dozen other plans."""
    first, last = runs()["repeat"]
    strip = lambda r: {k: v for k, v in r.items() if not k.startswith(("wall", "peak_rss")) and k != "workdir"}  # noqa: E731
    assert first["flows"][0]["bytes_delivered"] > 0
    assert strip(first) == strip(last)
    # Process measurements differ: the child's own peak memory only grows over its batch.
    assert 0 < first["peak_rss_bytes"] <= last["peak_rss_bytes"]
