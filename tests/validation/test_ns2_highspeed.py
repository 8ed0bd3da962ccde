"""Peer validation of the high-speed TCP family against ns-2.35's TCP-Linux (Debian package `ns2`).

Every algorithm ns-2.35 TCP-Linux carries and fatpipe has runs the same plans on both sides, with
`Agent/TCP/Linux select_ca <name>` + `TCPSink/Sack1` in ns-2. ns-2's modules are Linux 2.6.22.6
ports, so fatpipe runs the variant that mirrors that generation where it has one (cubic
`paper2008` = CUBIC v2.1; compound `ns2` = the Castellani/Hemminger port; vegas `ns2` = 2.6.22's
tcp_vegas.c); the others' defaults are the 2.6.22-compatible rules already (see each `cc/*.rs`
header).

Scenario: dumbbell, 250 Mb/s x 40 ms bottleneck (RTT ~84 ms, BDP ~1750 packets), 350-packet
DropTail buffer (0.2 BDP), 1 Gb/s x 1 ms access links, initial window 2, starts spread over the
first second.

- One flow, 60 s, no randomness on either side: the window trajectory after 20 s (three or more
  congestion epochs) must coincide: mean and peak cwnd within 10 % (the issue's bound for the
  sawtooth/plateau; measured within 1.5 % for all but Scalable, 9 %, and Vegas), bottleneck
  drops within 10 %.
- Four flows x 5 seeds, 40 s, send jitter 0.01 ms on both sides (ns-2 `overhead_`; it breaks the
  phase locking of two deterministic simulators without changing the load). Which flow loses in a
  synchronised drop burst depends on sub-packet timing, so single runs are compared only through
  their means over the seeds: aggregate goodput within 5 % and Jain's index within 0.05. Drops are
  compared after the start-up (drops of the 40 s run minus those of a 5 s run with the same seed)
  within 20 %: in every algorithm most drops happen in the slow-start overshoot of the first
  seconds, whose size depends on recovery details where 2.6.22 (rate halving, its own
  scoreboard) and fatpipe's modern Linux rules differ; that start-up gap is documented in
  docs/validation.md with its numbers, not folded into the steady-state comparison.

Cases that still disagree are strict xfails whose reason gives the numbers and the cause.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

import fatpipe
from conftest import ns2_available
from fatpipe.metrics import jain_index
from validation.peer_runs import NS2_TCP, both, per_flow_goodput

pytestmark = [
    pytest.mark.validation,
    pytest.mark.skipif(not ns2_available(), reason="ns-2 (Debian package ns2) is not installed; `make setup` installs it"),
]

#: fatpipe algorithm -> cc_params selecting the variant that mirrors ns-2.35's 2.6.22 module.
ALGORITHMS = {
    "reno": "",
    "highspeed": "",
    "scalable": "",
    "bic": "",
    "cubic": 'variant = "paper2008"',
    "htcp": "",
    "illinois": "",
    "vegas": 'variant = "ns2"',
    "compound": 'variant = "ns2"',
}
SEEDS = (1, 2, 3, 4, 5)


def scenario(cc: str, pairs: int, duration: str, jitter: str | None) -> fatpipe.Scenario:
    sc = fatpipe.Scenario.dumbbell(
        pairs=pairs, rate="250Mbps", delay="40ms", buffer="350pkt", access_rate="1Gbps",
        duration=duration, initial_window=2, start_spread="1s", **NS2_TCP,
    )
    ov = [f"tcp.cc={cc}", "monitor.interval=100ms"]
    if jitter:
        ov.append(f"tcp.send_jitter={jitter}")
    if ALGORITHMS[cc]:
        ov.append(f"tcp.cc_params={{{ALGORITHMS[cc]}}}")
    return sc.with_overrides(*ov)


def bottleneck_drops(ours, theirs) -> tuple[int, int]:
    f = int(ours.to_pandas("queues").set_index("link").loc["r0->r1", "drops_tail"])
    n = int(next(q for q in theirs["queues"] if q["link"] == "r0->r1")["drops_tail"])
    return f, n


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


@functools.lru_cache(maxsize=None)
def single(cc: str) -> dict:
    ours, theirs = both(scenario(cc, 1, "60s", None))
    f, n = per_flow_goodput(ours, theirs)
    fs, ns_ = ours.to_pandas("flow_series"), pd.DataFrame(theirs["flow_series"])
    fs, ns_ = fs[fs["t_s"] > 20], ns_[ns_["t_s"] > 20]
    return {
        "goodput": (f.sum(), n.sum()),
        "mean_cwnd": (fs["cwnd_pkts"].mean(), ns_["cwnd_pkts"].mean()),
        "peak_cwnd": (fs["cwnd_pkts"].max(), ns_["cwnd_pkts"].max()),
        "drops": bottleneck_drops(ours, theirs),
    }


@functools.lru_cache(maxsize=None)
def shared(cc: str) -> dict:
    gp, jain, steady, startup = [], [], [], []
    for seed in SEEDS:
        ours, theirs = both(scenario(cc, 4, "40s", "0.01ms"), seed)
        f, n = per_flow_goodput(ours, theirs)
        gp.append((f.sum(), n.sum()))
        jain.append((jain_index(f), jain_index(n)))
        total = bottleneck_drops(ours, theirs)
        early = bottleneck_drops(*both(scenario(cc, 4, "5s", "0.01ms"), seed))
        startup.append(early)
        steady.append((total[0] - early[0], total[1] - early[1]))
    m = lambda xs: tuple(np.mean(np.array(xs, dtype=float), axis=0))  # noqa: E731
    return {"goodput": m(gp), "jain": m(jain), "steady_drops": m(steady), "startup_drops": m(startup)}


def _xfail(cases: dict[str, str]):
    return [
        pytest.param(cc, marks=pytest.mark.xfail(strict=True, reason=cases[cc])) if cc in cases else cc
        for cc in ALGORITHMS
    ]


SINGLE_XFAIL: dict[str, str] = {}


@pytest.mark.parametrize("cc", _xfail(SINGLE_XFAIL))
def test_single_flow_trajectory_matches_ns2(cc):
    r = single(cc)
    for key, bound in (("mean_cwnd", 0.10), ("peak_cwnd", 0.10), ("drops", 0.10)):
        f, n = r[key]
        assert rel(f, n) < bound, (cc, key, f, n, r)


#: Why ns-2's CUBIC (and BIC) start-ups blow up, traced in docs/validation.md: ns-2.35's
#: Agent/TCP/Linux clears its SACK scoreboard when a recovery ends (tcp-linux.cc 460-462; Linux
#: 2.6.22 and fatpipe keep SACK tags until cumulatively ACKed), rebuilds it from one ACK's 3 SACK
#: blocks, and declares a retransmission lost once a later retransmission is (S)ACKed
#: (scoreboard1.cc 215-216; not in Linux), so segments the receiver holds are resent in a loop.
#: With only that ClearScoreBoard call skipped in ns-2, every CUBIC assertion here passes.
NS2_SCOREBOARD_CLEAR = (
    "ns-2.35 TCP-Linux port defect: ScoreBoard1 is cleared when a recovery ends with holes above "
    "recover_ (2.6.22 CUBIC keeps 0.8 W in flight during recovery, so two flows out of slow start "
    "lose data sent in it), the rebuild from one ACK's 3 SACK blocks marks delivered segments "
    "lost and the retransmission-order rule resends them in a loop: 10 466 / 4 322 / 23 / "
    "191 628 / 239 042 spurious retransmissions in the first 5 s of seeds 1-5, start-up drops "
    "47 699 vs fatpipe's 3 739; "
)
SHARED_XFAIL = {
    "cubic": NS2_SCOREBOARD_CLEAR + "it costs ns-2 goodput for the rest of the run: aggregate "
    "239.1 vs 214.0 Mb/s over 5 seeds (11.7 %), Jain 0.693 vs 0.847; with the clear skipped in "
    "ns-2: 239.1 vs 239.4 Mb/s, Jain 0.693 vs 0.697. See docs/validation.md",
}


@pytest.mark.parametrize("cc", _xfail(SHARED_XFAIL))
def test_shared_bottleneck_goodput_and_fairness_match_ns2(cc):
    r = shared(cc)
    (fg, ng), (fj, nj) = r["goodput"], r["jain"]
    assert rel(fg, ng) < 0.05, (cc, r)
    assert abs(fj - nj) < 0.05, (cc, r)


STEADY_DROPS_XFAIL = {
    "cubic": NS2_SCOREBOARD_CLEAR + "after it the flows of the two runs share differently (Jain "
    "0.693 vs 0.847) and steady-state drops are 42.0 vs 64.6; with the clear skipped in ns-2: "
    "42.0 vs 42.0. See docs/validation.md",
}


@pytest.mark.parametrize("cc", _xfail(STEADY_DROPS_XFAIL))
def test_shared_bottleneck_steady_state_drops_match_ns2(cc):
    r = shared(cc)
    f, n = r["steady_drops"]
    # Algorithms that barely lose after start-up (a few drops per run on either side) are
    # compared in absolute terms: 20 % of a handful is below one packet.
    assert abs(f - n) <= max(0.20 * n, 10), (cc, r)
