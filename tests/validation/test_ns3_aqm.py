"""Peer validation of CoDel (RFC 8289) and PIE (RFC 8033) against ns-3 3.44's ``CoDelQueueDisc``
and ``PieQueueDisc`` (PyPI ``ns3``), through python/fatpipe/peers/ns3.py, which runs the *same
plan*; how the queue discs are set up and every semantic difference found in ns-3's sources are in
that module's docstring, the measured table in docs/validation.md ("CoDel and PIE").

Scenario: dumbbell, 10 Mb/s x 20 ms bottleneck, 100 Mb/s x 1 ms access links (RTT 45.5 ms with
serialisation, BDP 38 packets of 1500 bytes), the AQM on both directions of the bottleneck with
RFC defaults (CoDel: target 5 ms, interval 100 ms; PIE: QDELAY_REF 15 ms, T_UPDATE 15 ms,
alpha 0.125, beta 1.25, MAX_BURST 150 ms), a limit of 1000 packets that the AQM keeps far away
(the slow-start overshoot peaks below 170 packets under CoDel, 350 under PIE; no tail drop in any
run, tested), Reno (ns-3 ``TcpLinuxReno``) with initial window 10, starts spread over the first second,
PRR on both sides, and the rules ns-3 hard-wires (``NS3_RULES``: RFC 6298 RTO, no
lost-retransmission detection, no RACK-TLP). Cases: CoDel and PIE with 1 and 4 flows, and the
4-flow cases again with ECN (``tcp.ecn``, the AQM's ``ecn = true``, ``cwnd_reduction =
"at-once"``: the only ECN response the peer can give both sides). Randomness: the plan's start
times (per seed, identical on both sides) and PIE's drops (fatpipe's stream, ns-3's ``SetRun``);
seeds 1-5, except one CoDel flow (deterministic apart from its start time: seeds 1 and 2 gave
the same numbers to 0.01 %), one seed.

What is compared: the steady state from 5 to 20 s (a 20 s run minus a 5 s run of the same seed,
which is the same run up to 5 s on both sides, checked to the byte), so that the slow-start
overshoot, where the two TCPs' recoveries of many losses differ, stays out: aggregate goodput,
the mean bottleneck queue (time average; 1 packet = 1.2 ms of queueing delay) and the AQM's
events (drops; marks with ECN), as means over the seeds.

Bounds, and why (means over seeds; the measured table is in docs/validation.md):
- Goodput within 2 % with 4 flows, 4 % with one. Four flows keep the link 95-97 % busy and the
  per-seed standard deviation is 0.1-0.6 % (standard error of a 5-seed difference <= 0.3 %), so
  2 % is many standard errors and still catches an AQM that drops far too much or too little.
  One Reno flow under an AQM leaves the link idle for part of every sawtooth: a difference of one
  packet in the window at which a cycle turns (ns-3 reduces from 46 packets, fatpipe from 45,
  CoDel deciding alike) moves its goodput by ~3 %; PIE's per-seed deviation is 1.6 % there.
- Mean queue within 15 % or 0.5 packets (0.6 ms), whichever is larger: about one packet at these
  queues (1.4-14 packets), what one packet of window at the AQM's decisions changes; per-seed
  deviations 0.6-6 % (standard error of the difference <= 3 %). An AQM with a wrong target,
  interval or controller moves the queue, which is what it controls, by much more. CoDel with 4
  flows passes close to the bound (1.14 packets apart, bound 1.19): the recovery-exit credit
  below; without it ns-3's queue is 7.34 packets, 0.56 from fatpipe's.
- Drops (marks) within 15 % or 2 events, whichever is larger: per-seed deviations 0.4-11 %
  (standard error of the difference up to 7 %, PIE with one flow, where 11 drops are counted in
  15 s); 2 events because one flow's drop count is its number of sawtooth cycles.

Known differences (the strict xfails; the evidence was measured with diagnostic ns-3 variants
compiled into the same runner: a ``TcpLinuxReno`` subclass and copies of the two queue discs, see
docs/validation.md):
- ns-3's TCP credits the ACK that ends a fast recovery with every segment it covers
  (``TcpSocketBase::ProcessAck`` calls ``IncreaseWindow(segsAcked)`` with segsAcked = (ack -
  old snd_una) / MSS, though most of them were SACKed before), where Linux (and fatpipe) count
  only the newly delivered ones: an ns-3 Reno flow leaves each recovery 2-3 packets above
  ssthresh (100 ms after a reduction, 4 flows: 3.5 packets above in ns-3, 0.9 in fatpipe). Its
  flows are more aggressive, so its AQM drops more, holds a longer queue and keeps the link
  busier: ``CREDIT_XFAIL``. Without that credit the ns-3 numbers move to within the bounds,
  except PIE's drops with 4 flows (+25 %).
- Drops with 4 flows: ``DROPS_XFAIL``. The drop count answers the TCP's aggressiveness, and
  ns-3's TCP loses much more than fatpipe's at these windows (10-15 packets) in any queue: the
  same dumbbell with a 20-packet DropTail queue drops 2.4 times as many packets in ns-3 (413 vs
  172 from 5 to 30 s, seeds 1-3), with 12-15 timeouts against none. With the credit removed,
  replacing ns-3's AQM rules by RFC 8289's and RFC 8033's (exact control law; PIE's burst
  allowance and delay as the RFC) changes its drops by < 3 %: the AQMs agree, the TCPs do not.
- PIE's marks with ECN: ``PIE_MARKS_XFAIL``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

import fatpipe
from fatpipe.peers import ns3
from validation.peer_runs import NS3_RULES


def needs_ns3(test):
    """The marks of a test that runs ns-3 (the mapping tests below run without it)."""
    skip = pytest.mark.skipif(
        not ns3.ns3_available(),
        reason="ns-3 Python bindings not installed (`pip install ns3==3.44.post0`, part of `make setup`)",
    )
    return pytest.mark.validation(skip(test))


BOTTLENECK = "r0->r1"
SEEDS = (1, 2, 3, 4, 5)
T0, T = 5, 20  # seconds: steady state from T0 to T
PACKET_S = 1500 * 8 / 10e6  # one packet of queue = 1.2 ms of queueing delay

CODEL = '{kind = "codel", limit = "1000pkt"}'
PIE = '{kind = "pie", limit = "1000pkt"}'
CODEL_ECN = '{kind = "codel", limit = "1000pkt", ecn = true}'
PIE_ECN = '{kind = "pie", limit = "1000pkt", ecn = true}'
ECN_TCP = ("tcp.ecn=true", 'tcp.cwnd_reduction="at-once"')


def scenario(queue: str, pairs: int, duration: str) -> fatpipe.Scenario:
    ov = ["tcp.cc=reno", *NS3_RULES, f"topology.bottleneck.queue={queue}"]
    if "ecn = true" in queue:
        ov += ECN_TCP
    return fatpipe.Scenario.dumbbell(
        pairs=pairs, rate="10Mbps", delay="20ms", buffer="1000pkt", access_rate="100Mbps",
        duration=duration, initial_window=10, start_spread="1s",
    ).with_overrides(*ov)


#: name -> (queue, flows, seeds)
CASES = {
    "codel-1": (CODEL, 1, (1,)),
    "codel-4": (CODEL, 4, SEEDS),
    "pie-1": (PIE, 1, SEEDS),
    "pie-4": (PIE, 4, SEEDS),
    "codel-ecn-4": (CODEL_ECN, 4, SEEDS),
    "pie-ecn-4": (PIE_ECN, 4, SEEDS),
}

#: A short PIE plan run first and last in the ns-3 batch: PIE's random stream must not depend on
#: the plans before it in the process.
REPEAT = scenario(PIE, 2, "3s")


def _rows(res: Any) -> dict:
    if isinstance(res, dict):
        return res
    return {t: res.to_pandas(t).to_dict("records") for t in ("flows", "queues")}


def steady(long: Any, short: Any) -> np.ndarray:
    """(goodput Mb/s, mean queue packets, drops, marks) at the bottleneck from T0 to T, from a
    run of T and one of T0 with the same seed (fatpipe Result or ns-3 peer dict), and the tail
    drops of the whole run of T."""
    a, b = _rows(long), _rows(short)
    qa = next(q for q in a["queues"] if q["link"] == BOTTLENECK)
    qb = next(q for q in b["queues"] if q["link"] == BOTTLENECK)
    goodput = (sum(f["bytes_delivered"] for f in a["flows"]) - sum(f["bytes_delivered"] for f in b["flows"]))
    drops = sum(qa[k] - qb[k] for k in ("drops_tail", "drops_aqm_early", "drops_aqm_forced"))
    marks = sum(qa[k] - qb[k] for k in ("marks_aqm_early", "marks_aqm_forced"))
    return np.array(
        [goodput * 8 / (T - T0) / 1e6, (qa["mean_len_pkts"] * T - qb["mean_len_pkts"] * T0) / (T - T0), drops, marks,
         qa["drops_tail"]],
        dtype=float,
    )


@functools.lru_cache(maxsize=None)
def runs() -> dict:
    """{case: (fatpipe rows, ns-3 rows)}, one row per seed as ``steady`` gives it, and
    ``"repeat"``: the ns-3 results of ``REPEAT`` first and last in the batch. Every ns-3 plan in
    one batch (one process)."""
    keys: list[Any] = [("repeat", "first")]
    plans: list[dict] = [REPEAT.plan(1)]
    ours: dict[str, list[np.ndarray]] = {}
    for name, (queue, pairs, seeds) in CASES.items():
        long, short = scenario(queue, pairs, f"{T}s"), scenario(queue, pairs, f"{T0}s")
        for seed in seeds:
            keys += [(name, seed, "long"), (name, seed, "short")]
            plans += [long.plan(seed), short.plan(seed)]
            ours.setdefault(name, []).append(steady(fatpipe.run(long, seed=seed), fatpipe.run(short, seed=seed)))
    keys.append(("repeat", "last"))
    plans.append(REPEAT.plan(1))
    raw = dict(zip(keys, ns3.run_plans(plans, jobs=1)))
    out: dict[str, Any] = {"repeat": (raw[("repeat", "first")], raw[("repeat", "last")])}
    for name, (_, _, seeds) in CASES.items():
        theirs = [steady(raw[(name, s, "long")], raw[(name, s, "short")]) for s in seeds]
        out[name] = (np.array(ours[name]), np.array(theirs))
    return out


def summary(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Means and standard deviations over seeds: (fatpipe mean, ns-3 mean, fatpipe sd, ns-3 sd)."""
    f, n = runs()[name]
    sd = (lambda a: a.std(axis=0, ddof=1)) if len(f) > 1 else (lambda a: np.zeros(a.shape[1]))
    return f.mean(axis=0), n.mean(axis=0), sd(f), sd(n)


def table() -> str:
    """The measured table (markdown), as in docs/validation.md."""
    lines = [
        "| case | seeds | goodput Mb/s | mean queue, packets (ms) | drops | marks |",
        "|---|---|---|---|---|---|",
    ]
    for name, (_, _, seeds) in CASES.items():
        fm, nm, fs, ns = summary(name)

        def cell(i: int, fmt: str) -> str:
            pm = lambda m, s: (fmt % m) + (f" ± {fmt % s}" if len(seeds) > 1 else "")  # noqa: E731
            return f"{pm(fm[i], fs[i])} / {pm(nm[i], ns[i])}"

        queue = f"{cell(1, '%.2f')} ({fm[1] * PACKET_S * 1e3:.1f} / {nm[1] * PACKET_S * 1e3:.1f})"
        label = f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else f"{seeds[0]}"
        lines.append(
            f"| {name} | {label} | {cell(0, '%.3f')} | {queue} | {cell(2, '%.1f')} | {cell(3, '%.1f')} |"
        )
    return "\n".join(lines)


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# ---------------------------------------------------------------------------------------------
# the comparisons

CREDIT_XFAIL = (
    "ns-3's TCP credits the ACK that ends a fast recovery with every segment it covers "
    "(TcpSocketBase::ProcessAck -> IncreaseWindow(segsAcked), most of them SACKed before; Linux and "
    "fatpipe count the newly delivered ones): its Reno flows leave recovery 2-3 packets above ssthresh "
    "and keep the link busier. Steady state 5-20 s, means over seeds 1-5: CoDel, 4 flows, 9.457 vs "
    "9.698 Mb/s (+2.5 %); one flow 8.219 vs 8.713 (+6.0 %, ns-3 also turns its sawtooth one packet "
    "later, 46 vs 45). With the credit removed in ns-3 (a TcpLinuxReno subclass): 9.553 (+1.0 %) and "
    "8.492 (+3.3 %)"
)

DROPS_XFAIL = (
    "ns-3's TCP needs more congestion signals at these windows (10-15 packets per flow): with 4 Reno "
    "flows ns-3 drops 203 vs 137 packets under CoDel (+48 %) and 201 vs 122 under PIE (+65 %), 5-20 s, "
    "means over seeds 1-5 (per-seed sd <= 8 %). Most of it is the recovery-exit credit (without it: 156 "
    "and 152, +14 % and +25 %); replacing ns-3's AQM rules by the RFCs' changes its drops by < 3 %; and "
    "the same dumbbell with a 20-packet DropTail queue drops 2.4x as many in ns-3 (413 vs 172, with "
    "12-15 timeouts against none, 5-30 s, seeds 1-3): a TCP difference, not an AQM one"
)

PIE_MARKS_XFAIL = (
    "PIE with ECN, 4 flows: fatpipe marks 166 vs ns-3's 134 (+24 %, per-seed sd 6 %) with the same "
    "queue (13.4 vs 14.4 packets) and goodput; CoDel in the same set-up differs by 7 %. fatpipe's ECN "
    "response returns to Open at once and grows during the CWR round trip, ns-3 stays in CWR without "
    "growth, which makes fatpipe's flows slightly more aggressive; but ns-3 with RFC 8033's burst "
    "allowance and delay rules (a patched copy of PieQueueDisc) marks 122, so the PIE rule differences "
    "do not explain the rest. Not traced further"
)


def _xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param("codel-1", marks=_xfail(CREDIT_XFAIL)),
        pytest.param("codel-4", marks=_xfail(CREDIT_XFAIL)),
        "pie-1",
        "pie-4",
        "codel-ecn-4",
        "pie-ecn-4",
    ],
)
@needs_ns3
def test_goodput_matches_ns3(case):
    fm, nm, _, _ = summary(case)
    bound = 0.04 if CASES[case][1] == 1 else 0.02
    assert rel(fm[0], nm[0]) < bound, (case, fm[0], nm[0])


@pytest.mark.parametrize("case", list(CASES))
@needs_ns3
def test_mean_queue_matches_ns3(case):
    fm, nm, _, _ = summary(case)
    assert abs(fm[1] - nm[1]) <= max(0.15 * nm[1], 0.5), (case, fm[1], nm[1])


@pytest.mark.parametrize(
    "case",
    [
        "codel-1",
        pytest.param("codel-4", marks=_xfail(DROPS_XFAIL)),
        "pie-1",
        pytest.param("pie-4", marks=_xfail(DROPS_XFAIL)),
        "codel-ecn-4",
        pytest.param("pie-ecn-4", marks=_xfail(PIE_MARKS_XFAIL)),
    ],
)
@needs_ns3
def test_aqm_events_match_ns3(case):
    """Drops, or marks with ECN (then neither side drops in the steady state)."""
    fm, nm, _, _ = summary(case)
    i = 3 if "ecn" in case else 2
    if "ecn" in case:
        assert fm[2] == 0 and nm[2] == 0, (case, fm, nm)
    assert abs(fm[i] - nm[i]) <= max(0.15 * nm[i], 2), (case, fm[i], nm[i])


@needs_ns3
def test_the_aqm_decides_not_the_limit():
    """No tail drop at the bottleneck in any run, start-up included: every drop is the AQM's."""
    for name in CASES:
        f, n = runs()[name]
        assert f[:, 4].max() == 0 and n[:, 4].max() == 0, (name, f[:, 4], n[:, 4])


@needs_ns3
def test_pie_batch_runs_are_independent():
    """A PIE plan gives the same ns-3 tables first in a process and after the other plans."""
    first, last = runs()["repeat"]
    strip = lambda r: {k: v for k, v in r.items() if not k.startswith(("wall", "peak_rss")) and k != "workdir"}  # noqa: E731
    bn = next(q for q in first["queues"] if q["link"] == BOTTLENECK)
    assert bn["drops_aqm_early"] > 0  # the random drops happened
    assert strip(first) == strip(last)



# ---------------------------------------------------------------------------------------------
# the mapping (pure Python: these run without the ns3 wheel)


def spec_of(queue: str, *overrides: str) -> str:
    return ns3.plan_to_spec(scenario(queue, 2, "5s").with_overrides(*overrides).plan(1))


def bottleneck_tokens(spec: str) -> list[str]:
    """The queue tokens of the bottleneck's two directions."""
    line = next(ln for ln in spec.splitlines() if ln.startswith("link ") and " 10000000 10000000 " in ln)
    return line.split()[-2:]


def test_codel_maps_every_plan_field():
    spec = spec_of('{kind = "codel", limit = "600pkt", target = "3ms", interval = "50ms", mtu = "1000B", ecn = true}')
    for tok in bottleneck_tokens(spec):
        dev, kind, *attrs = tok.split("|")
        assert dev == "1p" and kind == "ns3::CoDelQueueDisc"
        assert set(attrs) == {
            "MaxSize=600p", "Target=3000000ns", "Interval=50000000ns", "MinBytes=1001", "UseEcn=true", "UseL4s=false",
        }
    # the access links keep the device DropTailQueue
    assert " 600p 600p" in spec


def test_pie_maps_every_plan_field():
    spec = spec_of(
        '{kind = "pie", limit = "700pkt", target = "20ms", t_update = "30ms", alpha = 0.0625, beta = 1.5, '
        'max_burst = "100ms", ecn = true, mark_ecnth = 0.2, derandomize = true, cap_drop = false, '
        'estimator = "dq_rate", dq_threshold = "10000B"}'
    )
    for tok in bottleneck_tokens(spec):
        dev, kind, *attrs = tok.split("|")
        assert dev == "1p" and kind == "ns3::PieQueueDisc"
        assert set(attrs) == {
            "MaxSize=700p", "QueueDelayReference=20000000ns", "Tupdate=30000000ns", "A=0.0625", "B=1.5",
            "MaxBurstAllowance=100000000ns", "UseEcn=true", "MarkEcnThreshold=0.2", "UseDerandomization=true",
            "UseCapDropAdjustment=false", "UseDequeueRateEstimator=true", "DequeueThreshold=10000",
            "MeanPktSize=1500", "UseL4s=false",
        }


def test_ecn_flows_map_to_ns3_ecn():
    assert "default ns3::TcpSocketBase::UseEcn On" in spec_of(CODEL_ECN).splitlines()
    assert "default ns3::TcpSocketBase::UseEcn Off" in spec_of(CODEL).splitlines()


@pytest.mark.parametrize(
    "queue,overrides,field",
    [
        ('{kind = "pie", limit = "1.5MB"}', (), r"links\[4\]\.queue\.limit_bytes"),
        ('{kind = "pie", limit = "100pkt", mean_packet = "1000B"}', (), r"links\[4\]\.queue\.aqm\.mean_packet_bytes"),
        ('{kind = "red", limit = "100pkt"}', (), r"links\[4\]\.queue\.kind"),
        ('{kind = "fq_codel", limit = "100pkt"}', (), r"links\[4\]\.queue\.kind"),
        (CODEL, ("tcp.ecn=true",), r"flows\[0\]\.ecn"),  # PRR: ns-3 would reduce over a round trip
    ],
)
def test_what_ns3_cannot_honour_is_refused_by_field(queue, overrides, field):
    with pytest.raises(ValueError, match=field):
        spec_of(queue, *overrides)


def test_unknown_aqm_fields_are_refused_by_field():
    for queue, kind in ((CODEL, "codel"), (PIE, "pie")):
        p = scenario(queue, 2, "5s").plan(1)
        p["links"][4]["queue"]["aqm"]["ce_threshold_ns"] = 1_000_000
        with pytest.raises(ValueError, match=r"links\[4\]\.queue(\.aqm)?: \['ce_threshold_ns'\]"):
            ns3.plan_to_spec(p)


if __name__ == "__main__":  # the table for docs/validation.md
    print(table())
