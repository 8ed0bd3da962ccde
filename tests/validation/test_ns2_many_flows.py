"""Many-flow regimes against ns-2.35 TCP-Linux (`Agent/TCP/Linux select_ca reno` + `TCPSink/Sack1`):
the regimes where the retransmission timer and phase effects decide the result.

Why these scenarios. An independent check found fatpipe timing out ~6 300 times in 60 s where
ns-2 timed out ~800 (50 Reno flows on 10 Mb/s, 20 ms, 50 packets), a single flow at a one-BDP
buffer timing out 6 times in 120 s where ns-2 never did, and 100 flows on 155 Mb/s locking into
a fixed timing pattern (Jain 0.999 in fatpipe, 0.92-0.97 in ns-2). Each test below would have
caught its case.

Rules on fatpipe's side. ns-2's agent has its own timer rules, so the comparisons select them
(fatpipe's defaults are Linux's): `rto_restart = "every-ack"` (the agent re-arms the timer and
clears the backoff on every ACK, `time_processing`/`ts_resetRTO_`), `rto_estimator = "rfc6298"`
(`rtt_update` keeps `t_srtt_`/`t_rttvar_` and the RTO is max(minrto_, srtt + 4 rttvar), without
Linux's per-RTT mdev_max floor); `peer_runs.both` sets the validations' recovery rule
(`NS2_CWND_REDUCTION`), and RACK-TLP is off (`NS2_TCP`: ns-2.35 has none).
The single-flow test keeps fatpipe's defaults: there the issue asks the Linux estimator itself to
time out as rarely as ns-2.

Randomness. Deterministic simulators lock many flows into phase, so the many-flow scenarios run
with send jitter U(0, 0.1 ms) on both sides (ns-2 `overhead_`), seeds 1-5, and compare means and
spreads over the seeds, never one run.

Tolerances and why (measured values in docs/validation.md):
- Aggregate goodput, mean over seeds: 1 %. Both sides keep the link busy (measured < 0.2 %).
- Jain's index, mean over seeds: 0.03 with 50 flows (seed-to-seed spread 0.92-0.94 in ns-2,
  measured difference ~0.01), 0.005 with 100 flows (spread 0.994-0.997, measured 0.001).
- Per-flow goodput pooled over the seeds (250 or 500 flows), 10th/50th/90th percentiles: 10 %
  with 50 flows (a flow gets ~1.7 packets of window, so shares are coarse; measured < 2 %), 5 %
  with 100 flows (measured < 2 %).
- Timeouts with 50 flows: runs count 10-26 on either side (standard deviation 5-6), so the
  standard error of the difference of two 5-seed means is ~3.5; the bound is 10 (about 3 SE).
  The defect it guards against was a factor of 8.
- Retransmissions with 50 flows: 10 % (measured 2-4 %; they are dominated by ~130 drops per
  second in steady state, which both sides share out the same way).
- One flow, one-BDP buffer: no randomness, identical plans: timeouts equal and goodput within
  0.5 % (measured identical to 0.01 %).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import fatpipe
from conftest import ns2_available
from fatpipe.metrics import jain_index
from validation.peer_runs import NS2_TCP, both, per_flow_goodput

pytestmark = [
    pytest.mark.validation,
    pytest.mark.skipif(not ns2_available(), reason="ns-2 (Debian package ns2) is not installed; `make setup` installs it"),
]

SEEDS = (1, 2, 3, 4, 5)
#: ns-2.35 Agent/TCP/Linux's timer rules in fatpipe's names (see the module docstring).
NS2_TIMER = ("tcp.rto_restart=every-ack", "tcp.rto_estimator=rfc6298")
JITTER = "tcp.send_jitter=0.1ms"
QUANTILES = (10, 50, 90)


def dumbbell(pairs: int, rate: str, delay: str, buffer: str, duration: str, *overrides: str) -> fatpipe.Scenario:
    sc = fatpipe.Scenario.dumbbell(
        pairs=pairs, rate=rate, delay=delay, buffer=buffer, access_rate="1Gbps",
        duration=duration, initial_window=2, start_spread="1s", **NS2_TCP,
    )
    return sc.with_overrides("tcp.cc=reno", *overrides)


def timeouts(ours, theirs) -> tuple[np.ndarray, np.ndarray]:
    f = ours.to_pandas("flows").sort_values("flow_id")["timeouts"].to_numpy()
    n = np.array([x["timeouts"] for x in sorted(theirs["flows"], key=lambda x: x["flow_id"])])
    return f, n


def retransmits(ours, theirs) -> tuple[int, int]:
    return int(ours.to_pandas("flows")["retransmits"].sum()), sum(int(x["retransmits"]) for x in theirs["flows"])


@functools.lru_cache(maxsize=None)
def over_seeds(pairs: int, rate: str, delay: str, buffer: str, duration: str) -> dict:
    """Per-seed and pooled statistics, fatpipe (ns-2's rules) and ns-2, with jitter on both."""
    out: dict[str, list] = {k: [] for k in ("goodput", "jain", "timeouts", "retransmits", "flows_f", "flows_n", "to_f", "to_n")}
    for seed in SEEDS:
        ours, theirs = both(dumbbell(pairs, rate, delay, buffer, duration, JITTER, *NS2_TIMER), seed)
        f, n = per_flow_goodput(ours, theirs)
        tf, tn = timeouts(ours, theirs)
        out["goodput"].append((f.sum(), n.sum()))
        out["jain"].append((jain_index(f), jain_index(n)))
        out["timeouts"].append((tf.sum(), tn.sum()))
        out["retransmits"].append(retransmits(ours, theirs))
        out["flows_f"].extend(f)
        out["flows_n"].extend(n)
        out["to_f"].extend(tf)
        out["to_n"].extend(tn)
    return out


def means(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    a = np.array(pairs, dtype=float)
    return float(a[:, 0].mean()), float(a[:, 1].mean())


def check_shares(s: dict, jain_bound: float, quantile_bound: float) -> None:
    gf, gn = means(s["goodput"])
    assert abs(gf - gn) / gn <= 0.01, f"aggregate goodput {gf / 1e6:.3f} vs ns-2 {gn / 1e6:.3f} Mb/s"
    jf, jn = means(s["jain"])
    assert abs(jf - jn) <= jain_bound, f"mean Jain {jf:.4f} vs ns-2 {jn:.4f} (per seed {s['jain']})"
    qf = np.percentile(s["flows_f"], QUANTILES)
    qn = np.percentile(s["flows_n"], QUANTILES)
    for q, a, b in zip(QUANTILES, qf, qn):
        assert abs(a - b) / b <= quantile_bound, f"{q}th percentile of per-flow goodput {a / 1e3:.1f} vs ns-2 {b / 1e3:.1f} kb/s"


SMALL_BUFFER = (50, "10Mbps", "20ms", "50pkt", "60s")
PHASE = (100, "155Mbps", "10ms", "200pkt", "60s")


def test_small_buffer_many_flows_share_and_time_out_like_ns2():
    """50 Reno flows, 10 Mb/s x 20 ms, 50-packet buffer: windows of about 1.7 packets per flow."""
    s = over_seeds(*SMALL_BUFFER)
    check_shares(s, jain_bound=0.03, quantile_bound=0.10)
    tf, tn = means(s["timeouts"])
    assert abs(tf - tn) <= 10, f"timeouts per run {tf:.1f} vs ns-2 {tn:.1f} (per seed {s['timeouts']})"
    rf, rn = means(s["retransmits"])
    assert abs(rf - rn) / rn <= 0.10, f"retransmissions {rf:.0f} vs ns-2 {rn:.0f}"
    # Timeouts per flow, pooled: the 90th percentile (the flows that time out most) within 2.
    pf, pn = np.percentile(s["to_f"], 90), np.percentile(s["to_n"], 90)
    assert abs(pf - pn) <= 2, f"90th percentile of timeouts per flow {pf} vs ns-2 {pn}"


def test_phase_effects_with_jitter_on_both_sides_match_ns2():
    """100 Reno flows, 155 Mb/s x 10 ms, 200-packet buffer: with 0.1 ms send jitter on both sides
    the shares agree (the issue's Jain ~0.995); without it ns-2 locks at 0.93-0.95 and fatpipe at
    0.998 (docs/validation.md)."""
    s = over_seeds(*PHASE)
    check_shares(s, jain_bound=0.005, quantile_bound=0.05)


@pytest.mark.xfail(strict=True, reason=(
    "100 flows, 155 Mb/s: fatpipe times out ~50 % more than ns-2 (means over seeds 1-5: 211 vs "
    "139) and drops ~17 % fewer packets (34.7k vs 41.6k) at the same shares. Cause, an ns-2 port "
    "artefact with overhead_ on: the delayed-send timer goes through save_from_linux/load_to_linux, "
    "which restores the rate-halving bound send_much has just lowered, so recovery keeps the old "
    "window and avoids timeouts; ns-2 with that call removed: 1748 timeouts per run; fatpipe with "
    "the restore imitated: 118 (docs/validation.md)"))
def test_phase_scenario_timeouts_match_ns2():
    s = over_seeds(*PHASE)
    tf, tn = means(s["timeouts"])
    assert abs(tf - tn) / tn <= 0.20, f"timeouts per run {tf:.1f} vs ns-2 {tn:.1f} (per seed {s['timeouts']})"


@pytest.mark.parametrize("rate,buffer", [("10Mbps", "87pkt"), ("100Mbps", "867pkt")])
def test_single_flow_at_one_bdp_times_out_as_rarely_as_ns2(rate, buffer):
    """One Reno flow, 50 ms bottleneck (104 ms RTT), buffer = one BDP, 120 s, fatpipe's defaults
    (Linux's RTO estimator). RFC 6298's estimator in the same plan times out 7 (10 Mb/s) and 1
    (100 Mb/s) times and loses 8 % and 10 % of the goodput: with a standing queue and a timestamp
    sample on every ACK its variance term collapses and the RTO sits just above SRTT."""
    sc = dumbbell(1, rate, "50ms", buffer, "120s")
    ours, theirs = both(sc)
    tf, tn = timeouts(ours, theirs)
    f, n = per_flow_goodput(ours, theirs)
    assert tf.sum() == tn.sum(), f"timeouts {tf.sum()} vs ns-2 {tn.sum()}"
    assert abs(f.sum() - n.sum()) / n.sum() <= 0.005, f"goodput {f.sum() / 1e6:.3f} vs ns-2 {n.sum() / 1e6:.3f} Mb/s"


def test_rfc6298_estimator_times_out_spuriously_where_linux_does_not():
    """The same one-BDP plan at 10 Mb/s: the scenario does exercise the estimator (a test that
    could not tell the two estimators apart would not guard the fix)."""
    linux = fatpipe.run(dumbbell(1, "10Mbps", "50ms", "87pkt", "120s"), seed=1).summary["timeouts"]
    rfc = fatpipe.run(dumbbell(1, "10Mbps", "50ms", "87pkt", "120s", "tcp.rto_estimator=rfc6298"), seed=1).summary["timeouts"]
    assert linux == 0 and rfc >= 3, f"timeouts: linux {linux}, rfc6298 {rfc}"
