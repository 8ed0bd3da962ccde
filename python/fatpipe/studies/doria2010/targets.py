"""Targets 1–13 of seed note §6, judged on our tidy frame with stated rules.

The frame (:func:`fatpipe.studies.doria2010.study.tidy_frame`) has one row per (variant,
pairing, delay_ms, protocol, kind) with ``mean``, ``half_width`` (95 % CI) and ``n``. Targets are
judged on one variant (study.toml ``analysis = {primary = "by-lan.ns2"}``); the report compares
every variant with the paper separately.

Each target is a list of checks. A comparison "a > b" holds when the difference is on the claim's
side, does not hold when it is on the other side by more than the two CI half-widths together,
and is not comparable (inside the noise) otherwise. A range check holds when the mean lies in the
paper's range widened by the stated tolerance, or the range is within its CI. A target holds when
every check holds, does not hold when any fails, and is otherwise not comparable.

The ranges come from the paper's Tables 1–6 (seed note §6 quotes them); where the seed gives a
range of several cells, our value must fall inside it. Tolerances: delays 0.01 s (the tables'
printed precision), throughputs 10 % where the seed says "≈", counts and ratios as stated below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from fatpipe.studies.targets import FAILS, HOLDS, NOT_COMPARABLE, Target, Verdict

__all__ = ["Check", "RuleVerdict", "TARGETS", "evaluate_all", "OFFERED_KBPS", "OFFERED_PACKETS"]

#: 80 kb/s × 1.004 / (1.004 + 1.587) and its packets in 900 s (seed note §3.3).
OFFERED_KBPS = 80.0 * 1.004 / 2.591
OFFERED_PACKETS = 21_797.0

DELAYS = (25, 50, 100)
CONTENDED = ("ccid2-cubic", "compound-cubic", "ccid2-compound")
WITH_CCID3 = ("ccid2-ccid3", "ccid3-compound", "ccid3-cubic")


@dataclass
class Check:
    status: str
    text: str


@dataclass
class RuleVerdict(Verdict):
    checks: list[Check] = field(default_factory=list)


class Frame:
    """Look-ups into the tidy frame of one variant."""

    def __init__(self, tidy: Any):
        self.d = {}
        for r in tidy.itertuples():
            self.d[(r.pairing, int(r.delay_ms), r.protocol, r.kind)] = (float(r.mean), float(r.half_width))

    def get(self, pairing: str, d: int, proto: str, kind: str) -> tuple[float, float]:
        v = self.d.get((pairing, d, proto, kind))
        if v is None:
            return math.nan, math.nan
        m, hw = v
        return m, (0.0 if math.isnan(hw) else hw)

    def has(self, pairing: str) -> bool:
        return any(k[0] == pairing for k in self.d)


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 100 else f"{x:,.0f}"


def greater(f: Frame, a: tuple, b: tuple, what: str) -> Check:
    """a > b, with a and b = (pairing, d, proto, kind)."""
    (ma, ha), (mb, hb) = f.get(*a), f.get(*b)
    text = f"{what}: {_fmt(ma)} vs {_fmt(mb)}"
    if math.isnan(ma) or math.isnan(mb):
        return Check(NOT_COMPARABLE, text + " (not run)")
    if ma > mb:
        return Check(HOLDS, text)
    if mb - ma <= ha + hb:
        return Check(NOT_COMPARABLE, text + " (within the CIs)")
    return Check(FAILS, text)


def in_range(f: Frame, key: tuple, lo: float, hi: float, what: str) -> Check:
    m, hw = f.get(*key)
    text = f"{what}: {_fmt(m)} (paper {_fmt(lo)}–{_fmt(hi)})"
    if math.isnan(m):
        return Check(NOT_COMPARABLE, text + " (not run)")
    if lo <= m <= hi:
        return Check(HOLDS, text)
    if m + hw >= lo and m - hw <= hi:
        return Check(NOT_COMPARABLE, text + " (the CI reaches the range)")
    return Check(FAILS, text)


def ratio_range(f: Frame, a: tuple, b: tuple, lo: float, hi: float, what: str) -> Check:
    (ma, _), (mb, _) = f.get(*a), f.get(*b)
    r = ma / mb if mb else math.nan
    text = f"{what}: {_fmt(r)} (paper {_fmt(lo)}–{_fmt(hi)})"
    if math.isnan(r):
        return Check(NOT_COMPARABLE, text + " (not run)")
    return Check(HOLDS if lo <= r <= hi else FAILS, text)


def _t1(f: Frame) -> list[Check]:
    out = []
    for pairing in WITH_CCID3:
        other = next(p for p in pairing.split("-") if p != "ccid3")
        for d in DELAYS:
            out.append(in_range(f, (pairing, d, other, "throughput_kbps"), OFFERED_KBPS * 0.98, OFFERED_KBPS * 1.02,
                                f"{other} against CCID 3 at {d} ms, kb/s"))
            out.append(in_range(f, (pairing, d, other, "sent"), OFFERED_PACKETS - 300, OFFERED_PACKETS + 300,
                                f"{other} against CCID 3 at {d} ms, packets sent"))
    return out


def _t2(f: Frame) -> list[Check]:
    # Our throughput *is* (sent − dropped) × payload / time: the identity is the definition we took
    # from the paper's rows, so only its consequence for TCP is informative: how far the paper's
    # formula (which counts retransmitted duplicates) is from the distinct payload delivered.
    out = []
    for pairing in CONTENDED:
        for proto in pairing.split("-"):
            for d in DELAYS:
                (t, _), (g, _) = f.get(pairing, d, proto, "throughput_kbps"), f.get(pairing, d, proto, "goodput_kbps")
                if math.isnan(t):
                    continue
                out.append(Check(NOT_COMPARABLE,
                                 f"{proto} in {pairing} at {d} ms: paper formula {t:.2f} kb/s, distinct payload {g:.2f}"))
    return out[:6]


def _t3(f: Frame) -> list[Check]:
    paper = {25: 0.06, 50: 0.11, 100: 0.21}
    return [in_range(f, (p, d, proto, "delay_s"), paper[d] - 0.01, paper[d] + 0.01, f"{proto} in {p} at {d} ms, delay s")
            for p in WITH_CCID3 for proto in p.split("-") for d in DELAYS]


def _t4(f: Frame) -> list[Check]:
    ranges = {25: (0.20, 0.22), 50: (0.24, 0.27), 100: (0.33, 0.35)}
    out = []
    for p in CONTENDED:
        a, b = p.split("-")
        for d in DELAYS:
            lo, hi = ranges[d]
            for proto in (a, b):
                out.append(in_range(f, (p, d, proto, "delay_s"), lo - 0.01, hi + 0.01, f"{proto} in {p} at {d} ms, delay s"))
            (ma, _), (mb, _) = f.get(p, d, a, "delay_s"), f.get(p, d, b, "delay_s")
            if not (math.isnan(ma) or math.isnan(mb)):
                out.append(Check(HOLDS if abs(ma - mb) <= 0.01 + 1e-9 else FAILS,
                                 f"{p} at {d} ms: both protocols' delays within 0.01 s ({ma:.3f}, {mb:.3f})"))
        for proto in (a, b):
            out.append(greater(f, (p, 100, proto, "delay_s"), (p, 25, proto, "delay_s"), f"{proto} in {p}: delay at 100 ms > at 25 ms"))
    return out


def _t5(f: Frame) -> list[Check]:
    out = []
    for p, opp, lo, hi in (("ccid2-cubic", "ccid2", 5.0, 7.0), ("compound-cubic", "compound", 3.0, 6.0)):
        for d in DELAYS:
            out.append(greater(f, (p, d, "cubic", "dropped"), (p, d, opp, "dropped"), f"{p} at {d} ms: CUBIC drops more"))
            out.append(ratio_range(f, (p, d, "cubic", "dropped"), (p, d, opp, "dropped"), lo * 0.9, hi * 1.1,
                                   f"{p} at {d} ms: CUBIC's drops over {opp}'s (±10 %)"))
            out.append(in_range(f, (p, d, "cubic", "delivery_pct"), 89.8 - 1, 93.3 + 1, f"{p} at {d} ms: CUBIC delivery %"))
            out.append(greater(f, (p, d, opp, "delivery_pct"), (p, d, "cubic", "delivery_pct"), f"{p} at {d} ms: {opp} delivers a larger share"))
    return out


def _t6(f: Frame) -> list[Check]:
    p = "ccid2-cubic"
    out = [greater(f, (p, 25, "ccid2", "throughput_kbps"), (p, 25, "cubic", "throughput_kbps"), "25 ms: CCID 2 above CUBIC"),
           greater(f, (p, 100, "cubic", "throughput_kbps"), (p, 100, "ccid2", "throughput_kbps"), "100 ms: CUBIC above CCID 2"),
           ratio_range(f, (p, 100, "cubic", "throughput_kbps"), (p, 100, "ccid2", "throughput_kbps"), 1.1, 1.3,
                       "100 ms: CUBIC over CCID 2 (paper 1.20)")]
    for d in DELAYS:
        (a, _), (b, _) = f.get(p, d, "ccid2", "delivery_pct"), f.get(p, d, "cubic", "delivery_pct")
        if not (math.isnan(a) or math.isnan(b)):
            out.append(Check(HOLDS if 4.0 <= a - b <= 9.0 else FAILS,
                             f"{d} ms: CCID 2's delivery {a - b:.1f} points above CUBIC's (paper 5.3–7.3; 4–9 accepted)"))
    return out


def _t7(f: Frame) -> list[Check]:
    p = "compound-cubic"
    out = [greater(f, (p, 25, "compound", "throughput_kbps"), (p, 25, "cubic", "throughput_kbps"), "25 ms: CTCP above CUBIC"),
           greater(f, (p, 100, "cubic", "throughput_kbps"), (p, 100, "compound", "throughput_kbps"), "100 ms: CUBIC above CTCP"),
           greater(f, (p, 25, "compound", "throughput_kbps"), (p, 100, "compound", "throughput_kbps"), "CTCP falls from 25 to 100 ms")]
    for d in DELAYS:
        out.append(greater(f, (p, d, "compound", "delivery_pct"), (p, d, "cubic", "delivery_pct"), f"{d} ms: CTCP delivers a larger share"))
        out.append(greater(f, (p, d, "cubic", "dropped"), (p, d, "compound", "dropped"), f"{d} ms: CTCP drops fewer"))
    return out


def _t8(f: Frame) -> list[Check]:
    p = "ccid2-compound"
    out = []
    for d in DELAYS:
        out.append(greater(f, (p, d, "ccid2", "throughput_kbps"), (p, d, "compound", "throughput_kbps"), f"{d} ms: CCID 2 throughput above CTCP"))
        out.append(greater(f, (p, d, "ccid2", "delivery_pct"), (p, d, "compound", "delivery_pct"), f"{d} ms: CCID 2 delivery above CTCP"))
        out.append(greater(f, (p, d, "compound", "dropped"), (p, d, "ccid2", "dropped"), f"{d} ms: CCID 2 drops fewer"))
    vals = [f.get(p, d, "ccid2", "throughput_kbps")[0] for d in DELAYS]
    if not any(math.isnan(v) for v in vals):
        spread = (max(vals) - min(vals)) / max(vals)
        out.append(Check(HOLDS if spread <= 0.03 else FAILS, f"CCID 2 roughly flat in d: spread {spread:.1%} (paper 0.2 %; ≤ 3 % accepted)"))
    return out


def _t9(f: Frame) -> list[Check]:
    paper = {25: (8.54, 10.06), 50: (4.87, 6.20), 100: (1.96, 3.31)}
    out = []
    for p in WITH_CCID3:
        for d in DELAYS:
            lo, hi = paper[d]
            out.append(in_range(f, (p, d, "ccid3", "throughput_kbps"), lo * 0.9, hi * 1.1, f"CCID 3 in {p} at {d} ms, kb/s (±10 %)"))
        out.append(ratio_range(f, (p, 25, "ccid3", "throughput_kbps"), (p, 100, "ccid3", "throughput_kbps"), 3.0 * 0.9, 4.4 * 1.1,
                               f"CCID 3 in {p}: 25 ms over 100 ms (paper 3.0–4.4, ±10 %)"))
    return out


def _t10(f: Frame) -> list[Check]:
    out = []
    for p in WITH_CCID3:
        other = next(x for x in p.split("-") if x != "ccid3")
        for d in DELAYS:
            out.append(in_range(f, (p, d, "ccid3", "dropped"), 0.0, 1.0, f"CCID 3 drops per flow in {p} at {d} ms"))
            out.append(in_range(f, (p, d, "ccid3", "delivery_pct"), 99.6, 100.0, f"CCID 3 delivery % in {p} at {d} ms"))
            # The seed's "≥ 99.5 %" rounds Table 6's 99.49 (CUBIC at 100 ms): 99.4 keeps the table.
            out.append(in_range(f, (p, d, other, "delivery_pct"), 99.4, 100.0, f"{other} delivery % against CCID 3 at {d} ms"))
    return out


def _t11(f: Frame) -> list[Check]:
    out = []
    for d in DELAYS:
        k = lambda p: (p, d, "ccid3", "throughput_kbps")  # noqa: E731
        out.append(greater(f, k("ccid2-ccid3"), k("ccid3-compound"), f"{d} ms: CCID 3 does better against CCID 2 than against CTCP"))
        out.append(greater(f, k("ccid3-compound"), k("ccid3-cubic"), f"{d} ms: CCID 3 does better against CTCP than against CUBIC"))
    p = "ccid3-cubic"
    out.append(greater(f, (p, 100, "cubic", "dropped"), (p, 25, "cubic", "dropped"), "CUBIC's drops against CCID 3 grow from 25 to 100 ms"))
    return out


def _t12(f: Frame) -> list[Check]:
    out = [
        greater(f, ("ccid2-cubic", 100, "cubic", "throughput_kbps"), ("ccid2-cubic", 100, "ccid2", "throughput_kbps"),
                "100 ms: CUBIC ≥ CCID 2"),
        greater(f, ("ccid2-compound", 100, "ccid2", "throughput_kbps"), ("ccid2-compound", 100, "compound", "throughput_kbps"),
                "100 ms: CCID 2 > CTCP"),
        greater(f, ("ccid2-cubic", 25, "ccid2", "throughput_kbps"), ("ccid2-cubic", 25, "cubic", "throughput_kbps"),
                "25 ms: CCID 2 ≥ CUBIC"),
    ]
    # Delivery ranking over every pairing a protocol is in: CCID 3 ≥ CCID 2 ≥ CTCP ≥ CUBIC.
    means = {}
    for proto in ("ccid3", "ccid2", "compound", "cubic"):
        v = [f.get(p, d, proto, "delivery_pct")[0] for p in CONTENDED + WITH_CCID3 if proto in p.split("-") for d in DELAYS]
        v = [x for x in v if not math.isnan(x)]
        means[proto] = sum(v) / len(v) if v else math.nan
    order = ["ccid3", "ccid2", "compound", "cubic"]
    vals = [means[p] for p in order]
    if any(math.isnan(x) for x in vals):
        out.append(Check(NOT_COMPARABLE, "delivery ranking: a protocol was not run"))
    else:
        ok = all(a >= b for a, b in zip(vals, vals[1:]))
        out.append(Check(HOLDS if ok else FAILS, "mean delivery CCID 3 ≥ CCID 2 ≥ CTCP ≥ CUBIC: "
                         + ", ".join(f"{p} {means[p]:.2f} %" for p in order)))
    return out


def _t13(f: Frame) -> list[Check]:
    p = "ccid2-cubic"
    return [
        greater(f, (p, 25, "ccid2", "sent"), (p, 100, "ccid2", "sent"), "CCID 2's packets sent fall from 25 to 100 ms"),
        greater(f, (p, 100, "cubic", "sent"), (p, 25, "cubic", "sent"), "CUBIC's packets sent rise from 25 to 100 ms"),
        in_range(f, (p, 100, "cubic", "sent"), OFFERED_PACKETS, 1e9, "CUBIC at 100 ms sends more than the offered load"),
    ]


def _target(i: int, claim: str, why: str) -> Target:
    return Target(id=f"T{i}", kind="rule", sweep="*", metric="*", x="delay_ms", claim=claim, why=why)


TARGETS: list[tuple[Target, Callable[[Frame], list[Check]]]] = [
    (_target(1, "an unconstrained voice flow delivers ≈ 31.0 kb/s and sends ≈ 21 800 packets in 900 s",
             "CCID 3's opponents within 2 % of 31.0 kb/s and 21 797 ± 300 packets"), _t1),
    (_target(2, "throughput = (sent − dropped) × 1280 / 900 / 1000 per flow",
             "a definition we take from the paper's rows, so not testable on ours; shown: its gap to distinct payload for TCP"), _t2),
    (_target(3, "with CCID 3 in the pair, mean delay ≈ 0.06 / 0.11 / 0.21 s (propagation)", "within 0.01 s"), _t3),
    (_target(4, "without CCID 3, delays ≈ 0.20–0.22 / 0.24–0.27 / 0.33–0.35 s, rising with d, equal within a pair",
             "ranges ± 0.01 s; the pair's delays within 0.01 s"), _t4),
    (_target(5, "CUBIC drops the most (3–7× its opponent) and has the lowest delivery (89.8–93.3 %)",
             "ordering, ratio in the paper's per-pair range ± 10 %, delivery ± 1 point"), _t5),
    (_target(6, "CCID 2 above CUBIC at 25 ms, CUBIC ≈ 20 % above at 100 ms; CCID 2 delivers 5–8 points more",
             "orderings; ratio 1.1–1.3; delivery gap 4–9 points"), _t6),
    (_target(7, "CTCP above CUBIC at 25 ms, CUBIC clearly above at 100 ms; CTCP falls with d, delivers more, drops less",
             "orderings"), _t7),
    (_target(8, "CCID 2 beats CTCP on every metric at every d and is flat in d", "orderings; spread ≤ 3 %"), _t8),
    (_target(9, "CCID 3 gets ≈ 8.5–10 / 4.9–6.2 / 2.0–3.3 kb/s, falling 3–4.4× from 25 to 100 ms",
             "paper's ranges ± 10 %"), _t9),
    (_target(10, "CCID 3 has < 1 drop per flow and ≥ 99.6 % delivery; its opponent ≥ 99.5 %", "ranges as stated, the opponent's from 99.4 % (Table 6 prints 99.49)"), _t10),
    (_target(11, "CCID 3 does best against CCID 2, then CTCP, then CUBIC; CUBIC's drops against it grow with d",
             "orderings"), _t11),
    (_target(12, "throughput CUBIC ≥ CCID 2 > CTCP ≫ CCID 3 at high RTT, CCID 2 ≥ CUBIC at low; delivery CCID 3 ≥ CCID 2 ≥ CTCP ≥ CUBIC",
             "orderings at 100 and 25 ms; delivery means over every pairing"), _t12),
    (_target(13, "against CUBIC, CCID 2's packets sent fall with d while CUBIC's rise above the offered load",
             "orderings; CUBIC at 100 ms above 21 797"), _t13),
]


def evaluate_all(tidy: Any) -> list[RuleVerdict]:
    f = Frame(tidy)
    out = []
    for target, rule in TARGETS:
        checks = rule(f)
        statuses = {c.status for c in checks}
        if not checks or statuses == {NOT_COMPARABLE}:
            status = NOT_COMPARABLE
        elif FAILS in statuses:
            status = FAILS
        elif statuses == {HOLDS}:
            status = HOLDS
        else:
            status = NOT_COMPARABLE
        held = sum(c.status == HOLDS for c in checks)
        detail = f"{held}/{len(checks)} checks hold; " + "; ".join(c.text for c in checks if c.status != HOLDS)[:400]
        out.append(RuleVerdict(target, status, detail, checks=checks))
    return out
