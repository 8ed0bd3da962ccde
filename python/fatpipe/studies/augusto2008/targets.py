"""Seed 002's 18 reproduction targets (§6) as rules over the study's numbers.

M1-M5 are computations with the paper's model (:mod:`fatpipe.models.logistics`). E1-E8 are the
paper's experimental claims, judged twice: on the testbed (real Linux TCP, the real daemon) and in
the simulator (relay chains), each over the cells of :func:`fatpipe.studies.augusto2008.data.cells`
with the rule of :mod:`fatpipe.studies.checks` (a claim on the wrong side by no more than the 95 %
CI noise is not comparable). "≈ 2x" and "≈ 3x" allow ±20 % (the seed note's tolerance for shapes
read from prose). F1-F5 are the system's functional claims, judged on the testbed's records.

Every rule reads a :class:`Data`; tests build one from paper-like or contradicting numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from fatpipe.studies.checks import Check, Missing, Pt, RuleVerdict, above, below, combine, greater, monotone, near, ratio
from fatpipe.studies.targets import FAILS, HOLDS, NOT_COMPARABLE, Target

__all__ = ["Data", "evaluate_all", "TARGETS", "RATIO_TOL", "ENVS"]

#: "≈ N x": within 20 % of N (seed note §6: "tolerance should be qualitative to ≈ ±20 %").
RATIO_TOL = 0.2
#: "Near the nominal rate" / "reaches the link rate": within 20 % / 5 % of it.
NEAR_RATE, REACHES_RATE = 0.8, 0.95
ENVS = {"testbed": "testbed", "sim": "simulator", "sim1g": "simulator at 1 Gb/s"}
#: "≈" between two configurations (Fig. 11's "2 depots = 1 depot"): overlapping 95 % CIs, or within
#: 5 % of each other (a deterministic simulator's CI has zero width).
SAME_TOL = 0.05


@dataclass
class Data:
    #: data.cells(): per configuration mean, half_width, n, model.
    cells: pd.DataFrame
    #: data.frame(): one row per download (testbed records included).
    runs: pd.DataFrame
    #: role -> reason, for sweeps this machine skipped.
    skipped: dict[str, str] = field(default_factory=dict)
    #: env -> {"t_s": ..., "cwnd": ..., "rtt_s": float} of the trace experiment.
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What the testbed's kernel offers (tcp_available_congestion_control).
    kernel_ccs: tuple[str, ...] = ()
    #: Replications the mode asks for (F5).
    reps: int = 10
    settings: Any = None


def _pt(c: pd.DataFrame, label: str, **where: Any) -> Pt:
    sel = c
    for k, v in where.items():
        sel = sel[np.isclose(sel[k], v)] if isinstance(v, float) else sel[sel[k] == v]
    if sel.empty or int(sel["n"].iloc[0]) == 0:
        raise Missing(f"{label}: no finished run for {where}")
    r = sel.iloc[0]
    return Pt(float(r["mean"]), float(r["half_width"]), int(r["n"]), label)


def _cfg(n: int) -> str:
    return "direct" if n == 0 else f"{n} depot{'s' if n > 1 else ''}"


def overlap(a: Pt, b: Pt) -> Check:
    """Claim a ≈ b: overlapping 95 % CIs (the paper's reading of Fig. 11) or within SAME_TOL."""
    gap = abs(a.mean - b.mean) - (a.noise + b.noise)
    close = abs(a.mean - b.mean) <= SAME_TOL * max(abs(a.mean), abs(b.mean))
    text = f"{a.fmt()} ≈ {b.fmt()} (95 % CIs overlap, or within {SAME_TOL:.0%})"
    if math.isnan(a.hw) and math.isnan(b.hw) and not close:
        return Check(NOT_COMPARABLE, text + ": one replication, no CI")
    ok = gap <= 0 or close
    return Check(HOLDS if ok else FAILS, text + ("" if ok else f": apart by {gap:.3g}"))


def _scale(d: Data, env: str) -> float:
    """The rate as a fraction of the paper's 1 Gb/s in ``env``."""
    return 1.0 if env == "sim1g" else (d.settings.SCALE if d.settings is not None else 0.1)


# ---- model targets ------------------------------------------------------------------------------

def m1(d: Data) -> list[Check]:
    from fatpipe.models import logistics as lg

    out = []
    for n in (2, 3):
        g = [lg.equal_segments_bps(r, n) / lg.equal_segments_bps(r, 1) for r in lg.PAPER_RTTS_S]
        ok = all(abs(x - n) < 1e-9 for x in g)
        out.append(Check(HOLDS if ok else FAILS, f"N = {n}: gain over direct at RTT 10-100 ms = "
                                                   f"{min(g):.6g}..{max(g):.6g} (claim exactly {n})"))
    return out


def m2(d: Data) -> list[Check]:
    from fatpipe.models import logistics as lg

    out = []
    for n, want in ((2, 2.71), (3, 4.78)):
        g = lg.gain(n, lg.PAPER_P_BUFFER, lg.PAPER_P_EXTRA)
        out.append(near(Pt(g, label=f"Fig. 5 gain N={n}"), want, 0.005))
        out.append(above(Pt(g, label=f"Fig. 5 gain N={n}"), n))
    return out


def m3(d: Data) -> list[Check]:
    from fatpipe.models import logistics as lg

    r10 = lg.equal_segments_bps(0.010, 1) / 1e6
    r90 = lg.equal_segments_bps(0.090, 1) / 1e6
    prod = [lg.equal_segments_bps(r, 1) * r for r in lg.PAPER_RTTS_S]
    return [near(Pt(r10, label="direct at 10 ms (Mb/s)"), 1469.7, 0.05),
            near(Pt(r90, label="direct at 90 ms (Mb/s)"), 163.3, 0.05),
            Check(HOLDS if max(prod) - min(prod) < 1e-6 * max(prod) else FAILS,
                  f"rate x RTT constant over 10-100 ms: {min(prod):.6g}..{max(prod):.6g} B")]


def m4(d: Data) -> list[Check]:
    from fatpipe.models import logistics as lg

    out = []
    for p in (1e-6, 1e-5, 1e-4, 1e-3):
        for n in (2, 3):
            pi = lg.split_loss(p, n)
            back = 1 - (1 - pi) ** n
            ok = pi < p and abs(back - p) < 1e-12
            out.append(Check(HOLDS if ok else FAILS, f"p = {p:g}, N = {n}: p_i = {pi:.6g} < p, "
                                                       f"1 - (1 - p_i)^N = {back:.6g}"))
    return out


def m5(d: Data) -> list[Check]:
    bdp = 1e9 / 8 * 0.005
    return [Check(HOLDS if bdp == 625000 else FAILS, f"BDP(1 Gb/s, 5 ms) = {bdp:.0f} B"),
            above(Pt(bdp, label="BDP (B)"), 512 * 1024)]


# ---- experimental targets, per environment ------------------------------------------------------

def _exp(d: Data, exp: str, env: str) -> pd.DataFrame:
    c = d.cells[(d.cells["exp"] == exp) & (d.cells["env"] == env)]
    if c.empty:
        raise Missing(f"no {exp} experiment in the {ENVS[env]}")
    return c


def e1(d: Data, env: str) -> list[Check]:
    c = _exp(d, "delay", env)
    rtts = sorted(c["rtt_ms"].unique())
    rate = float(c["rate_mbps"].max())
    out, rel = [], {}
    for n in (0, 1, 2):
        pts = [_pt(c, f"{_cfg(n)} at {r:g} ms", depots=n, rtt_ms=r) for r in rtts]
        out.append(above(pts[0], NEAR_RATE * rate, "≥"))
        out.append(monotone(pts, -1, 0.0))
        rel[n] = ratio(pts[-1], pts[0], f"{_cfg(n)}: last/first")
    out += [greater(rel[1], rel[0]), greater(rel[2], rel[0])]
    return out


def e2(d: Data, env: str) -> list[Check]:
    c = _exp(d, "delay", env)
    rtts = [r for r in sorted(c["rtt_ms"].unique()) if r >= 70 - 1e-9]
    if not rtts:
        raise Missing("no RTT ≥ 70 ms")
    out = []
    for r in rtts:
        direct = _pt(c, f"direct at {r:g} ms", depots=0, rtt_ms=r)
        for n in (1, 2):
            g = ratio(_pt(c, f"{_cfg(n)} at {r:g} ms", depots=n, rtt_ms=r), direct, f"{_cfg(n)}/direct at {r:g} ms")
            out.append(near(g, n + 1, RATIO_TOL * (n + 1)))
    return out


def e3(d: Data, env: str) -> list[Check]:
    c = _exp(d, "cc", env)
    rtts = sorted(c["rtt_ms"].unique())
    ccs = set(c["cc"])
    out = []
    for r in rtts:
        p = {cc: _pt(c, f"{cc} at {r:g} ms", cc=cc, rtt_ms=r) for cc in ccs}
        if "cubic" in p and "reno" in p:
            out.append(greater(p["cubic"], p["reno"]))
        if "highspeed" in p:
            out.append(greater(p["highspeed"], p["reno"]))
            out.append(greater(p["highspeed"], p["cubic"]))
    if "highspeed" not in ccs:
        out.append(Check(NOT_COMPARABLE, "highspeed (RFC 3649) is not offered by this kernel "
                                         f"(tcp_available_congestion_control: {', '.join(d.kernel_ccs) or 'unknown'}): "
                                         "the claims 'highspeed > reno' and 'highspeed best' cannot be tested here; "
                                         "bbr ran in its place (shown in the tables, not judged)"))
    return out


def e4(d: Data, env: str) -> list[Check]:
    c = _exp(d, "loss", env)
    losses = sorted(c["loss"].unique())
    out = []
    for n in (0, 1, 2):
        out.append(monotone([_pt(c, f"{_cfg(n)} at loss {p:.2g}", depots=n, loss=p) for p in losses], -1, 0.0))
    for p in [p for p in losses if p >= 1e-4 * (1 - 1e-6)]:
        direct = _pt(c, f"direct at {p:.2g}", depots=0, loss=p)
        for n in (1, 2):
            g = ratio(_pt(c, f"{_cfg(n)} at {p:.2g}", depots=n, loss=p), direct, f"{_cfg(n)}/direct at loss {p:.2g}")
            out.append(near(g, n + 1, RATIO_TOL * (n + 1)))
    return out


def e5(d: Data, env: str) -> list[Check]:
    c = _exp(d, "size", env)
    sizes = sorted(c["size_mb"].unique())
    rate = float(c["rate_mbps"].max())
    scale = _scale(d, env)
    out = []
    for n in (0, 1, 2):
        out.append(monotone([_pt(c, f"{_cfg(n)} {s:g} MB", depots=n, size_mb=s) for s in sizes], +1, 0.0))
    for s in sizes:
        direct = _pt(c, f"direct {s:g} MB", depots=0, size_mb=s)
        one, two = (_pt(c, f"{_cfg(n)} {s:g} MB", depots=n, size_mb=s) for n in (1, 2))
        out += [greater(one, direct), greater(two, direct), below(direct, REACHES_RATE * rate, "<")]
        paper_mb = s / scale
        if paper_mb <= 200 + 1e-6:
            out.append(greater(two, one))
        else:
            out.append(overlap(two, one))
    return out


def e6(d: Data, env: str) -> list[Check]:
    c = _exp(d, "buffer", env)
    scale = _scale(d, env)
    small, big = round(512 * 1024 * scale), round(8192 * 1024 * scale)
    out = []
    for r in sorted(c["rtt_ms"].unique()):
        cc = c[np.isclose(c["rtt_ms"], r)]
        bufs = sorted(cc["buffer_bytes"].unique())
        pts = {b: _pt(cc, f"{r:g} ms, buffer {b / 1024:.0f} KiB", buffer_bytes=b) for b in bufs}
        if big in pts:
            smaller = [pts[b] for b in bufs if b < big]
            if smaller:
                best = max(smaller, key=lambda p: p.mean)
                out.append(greater(best, pts[big]))
        if math.isclose(r, 5.0) and small in pts:
            best = max(pts.values(), key=lambda p: p.mean)
            out.append(greater(best, pts[small]) if best is not pts[small] else
                       Check(FAILS, f"{pts[small].fmt()} is the best buffer at 5 ms: not reduced"))
    if not out:
        raise Missing("no 512 KB or 8192 KB point")
    return out


def e7(d: Data, env: str) -> list[Check]:
    tr = d.traces.get(env)
    if not tr:
        raise Missing("no trace")
    t, w, rtt = np.asarray(tr["t_s"]), np.asarray(tr["cwnd"], dtype=float), float(tr["rtt_s"])
    peak = np.maximum.accumulate(w)
    drops = np.nonzero(w < 0.7 * peak)[0]
    if drops.size == 0:
        return [Check(FAILS, f"no window reduction in {t[-1]:.3g} s: slow start never overflowed a queue "
                             f"(largest cwnd {w.max():.0f} packets)")]
    i = int(drops[0])
    t_red, w_peak = float(t[i]), float(peak[i])
    w0 = float(w[0]) if w[0] > 0 else 1.0
    rounds = max(t_red / rtt, 1.0)
    growth = w_peak / w0
    out = [Check(HOLDS if growth >= 2 ** (0.5 * rounds) else FAILS,
                 f"exponential growth before the reduction: cwnd {w0:.0f} -> {w_peak:.0f} packets in {rounds:.1f} "
                 f"RTTs (x{growth:.3g}; doubling every 2 RTTs or faster needs x{2 ** (0.5 * rounds):.3g})")]
    after = (t > t_red) & (t <= t_red + 3 * rtt)
    w_after = w[after]
    if w_after.size:
        slow = float(w_after.max()) < 2 * float(w[i])
        out.append(Check(HOLDS if slow else FAILS, f"after the reduction at {t_red:.3g} s the window grows slowly: "
                                                  f"{w[i]:.0f} -> at most {w_after.max():.0f} packets in 3 RTTs "
                                                  "(slow start would double it)"))
    scale = _scale(d, env)
    # The paper's 0.6 s at 1 Gb/s; a tenth of the window is reached log2(1/scale) RTTs sooner.
    expect = 0.6 - math.log2(1 / scale) * rtt
    out.append(near(Pt(t_red, label="reduction time (s)"), expect, 0.5 * expect))
    return out


def e8(d: Data, env: str) -> list[Check]:
    c = _exp(d, "endcc", env)
    out = []
    for r in sorted(c["rtt_ms"].unique()):
        g = {}
        for cc in ("reno", "cubic"):
            sel = c[np.isclose(c["rtt_ms"], r) & (c["end_cc"] == cc)]
            g[cc] = ratio(_pt(sel, f"2 depots, {cc} ends, {r:g} ms", depots=2),
                          _pt(sel, f"direct, {cc}, {r:g} ms", depots=0), f"gain with {cc} ends at {r:g} ms")
        out.append(near(ratio(g["reno"], g["cubic"], f"gain(reno)/gain(cubic) at {r:g} ms"), 1.0, RATIO_TOL))
    return out


# ---- functional targets (testbed) ---------------------------------------------------------------

def _tb(d: Data, exp: str | None = None) -> pd.DataFrame:
    r = d.runs[d.runs["env"] == "testbed"]
    r = r[r["identical"].notna()] if "identical" in r else r
    return r if exp is None else r[r["exp"] == exp]


def f1(d: Data) -> list[Check]:
    fn = _tb(d, "func")
    out = []
    for n in (0, 1, 2, 3):
        sel = fn[fn["depots"] == n]
        if sel.empty:
            out.append(Check(NOT_COMPARABLE, f"{_cfg(n)}: no run"))
            continue
        ok = bool(sel["identical"].all()) and bool((sel["redirects"] == (1 if n else 0)).all())
        out.append(Check(HOLDS if ok else FAILS, f"{_cfg(n)}: curl -L, {int(sel['redirects'].iloc[0])} redirect(s), "
                                                 f"{int(sel['identical'].sum())} of {len(sel)} downloads byte-identical"))
    alltb = _tb(d)
    if alltb.empty:
        return out + [Check(NOT_COMPARABLE, "no testbed download")]
    bad = alltb[~alltb["identical"].astype(bool)]
    out.append(Check(HOLDS if bad.empty else FAILS, f"every testbed download: {len(alltb) - len(bad)} of {len(alltb)} "
                                                    "complete and byte-identical (SHA-256)"))
    return out


def f2(d: Data) -> list[Check]:
    fn = _tb(d, "func")
    out = []
    for n in (1, 2, 3):
        sel = fn[fn["depots"] == n]
        if sel.empty:
            continue
        seen = int(sel["segments_seen"].min())
        out.append(Check(HOLDS if seen == n + 1 else FAILS,
                         f"{_cfg(n)}: {seen} TCP connections seen carrying the data (ss -tin in each sender's "
                         f"namespace, server to client), {n + 1} expected"))
    return out or [Check(NOT_COMPARABLE, "no relay run")]


def f3(d: Data) -> list[Check]:
    out = []
    relays = _tb(d)
    relays = relays[(relays["depots"] > 0) & relays["span_s"].notna()]
    if relays.empty:
        raise Missing("no relay run")
    frac = (relays["first_byte_s"] / relays["span_s"]).max()
    worst = relays.loc[(relays["first_byte_s"] / relays["span_s"]).idxmax()]
    out.append(Check(HOLDS if frac < 0.5 else FAILS,
                     f"first byte at the client after at most {frac:.1%} of the transfer (worst: {worst['exp']}, "
                     f"{_cfg(int(worst['depots']))}, {worst['size_mb']:g} MB: {worst['first_byte_s'] * 1e3:.0f} ms of "
                     f"{worst['span_s']:.3g} s); store-and-forward would wait for the whole file"))
    sz = _tb(d, "size")
    sz = sz[sz["depots"] > 0]
    if sz.empty or sz["size_mb"].nunique() < 2:
        out.append(Check(NOT_COMPARABLE, "depot memory against file size needs the size experiment's runs"))
    else:
        small, big = sz["size_mb"].min(), sz["size_mb"].max()
        a, b = sz[sz["size_mb"] == small]["peak_rss_kib"].max(), sz[sz["size_mb"] == big]["peak_rss_kib"].max()
        ok = b <= 1.2 * a + 2048
        out.append(Check(HOLDS if ok else FAILS, f"depots' peak RSS {a / 1024:.1f} MiB at {small:g} MB, {b / 1024:.1f} "
                                                 f"MiB at {big:g} MB (bounded: at most 1.2 x + 2 MiB)"))
    return out


def f4(d: Data) -> list[Check]:
    runs = _tb(d)
    runs = runs[runs["exp"].isin(["cc", "endcc", "func"]) & (runs["depots"] > 0)]
    if runs.empty:
        raise Missing("no relay run with chosen algorithms")
    out = []
    for (planned, seen), g in runs.groupby(["planned_cc", "seen_cc"]):
        pairs = list(zip(planned.split("/"), seen.split("/")))
        wrong = [(a, b) for a, b in pairs if b != "None" and a != b]
        unseen = sum(b == "None" for _, b in pairs)
        text = f"segments' algorithms asked {planned}, run by the senders' sockets {seen} ({len(g)} runs)"
        if wrong:
            out.append(Check(FAILS, text))
        elif unseen:
            out.append(Check(NOT_COMPARABLE, text + f": {unseen} segment(s) ended before ss looked"))
        else:
            out.append(Check(HOLDS, text))
    return out


def f5(d: Data) -> list[Check]:
    c = d.cells[(d.cells["env"] == "testbed") & d.cells["exp"].isin(["delay", "loss", "size", "cc"])]
    if c.empty:
        raise Missing("no testbed cell")
    n = int(c["n"].min())
    out = [Check(HOLDS, "throughput = bits / (start of the connection that carries the data -> last byte), from "
                        "curl's own timings at the client (time_total - time_redirect), not a capture")]
    if n >= 10:
        out.append(Check(HOLDS, f"every cell of the delay, cc, loss and size experiments has n ≥ {n} "
                                "downloads, mean ± 95 % CI (Student's t)"))
    else:
        out.append(Check(NOT_COMPARABLE, f"the paper's 10 runs per configuration: this mode ran n = {n} "
                                         "(the full mode runs 10)"))
    return out


# ---- the targets --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Def:
    id: str
    claim: str
    rule: str
    fn: Callable[..., list[Check]]
    roles: tuple[str, ...] = ()
    env: str | None = None


_E = [
    ("E1", "delay", e1, "All near the link rate at the lowest RTT, all fall with RTT, the direct curve fastest (Fig. 8)",
     f"at the lowest RTT each ≥ {NEAR_RATE:.0%} of the link rate; each falls from point to point; last/first of each "
     "depot configuration > the direct one's"),
    ("E2", "delay", e2, "RTT ≥ 70 ms: 1 depot ≈ 2x direct, 2 depots ≈ 3x direct (Fig. 8)",
     f"at every RTT ≥ 70 ms the ratio is within {RATIO_TOL:.0%} of 2 and 3"),
    ("E3", "cc", e3, "With the depots' algorithm varied: highspeed > cubic > reno at every RTT (Fig. 9)",
     "cubic > reno and highspeed > cubic, reno at every RTT; an algorithm the kernel lacks makes its part "
     "not comparable"),
    ("E4", "loss", e4, "Throughput falls with loss; at 0.01 % and 0.1 %: 1 depot ≈ 2x, 2 depots ≈ 3x direct (Fig. 10)",
     f"each configuration falls with loss; at loss ≥ 0.01 % the ratios within {RATIO_TOL:.0%} of 2 and 3"),
    ("E5", "size", e5, "Throughput rises with file size; depots > direct at every size; direct never reaches the "
     "link rate; 2 depots > 1 depot at 100 and 200 MB, ≈ (overlapping CIs) from 400 MB (Fig. 11)",
     f"each rises; depots > direct; direct < {REACHES_RATE:.0%} of the link rate; 2 > 1 depot up to 200 MB "
     "(paper's size), CIs overlap above"),
    ("E6", "buffer", e6, "Direct transfer: 512 KB limits the 5 ms curve (< BDP); 8192 KB degrades all three (Fig. 12)",
     "at 5 ms the best buffer beats 512 KB (scaled); on each curve a smaller buffer beats 8192 KB (scaled)"),
    ("E7", "trace", e7, "The 8192 KB / 50 ms transfer: exponential slow start, a window reduction after ≈ 0.6 s, "
     "then slow growth (Fig. 13)",
     "a cwnd drop below 70 % of its peak; before it growth of at least a doubling per 2 RTTs; after it less than "
     "a doubling in 3 RTTs; the drop's time within 50 % of 0.6 s less log2(1/scale) RTTs"),
    ("E8", "endcc", e8, "The depots' relative gain depends little on the end hosts' algorithm (§5.2)",
     f"gain(2 depots/direct) with Reno ends over that with CUBIC ends within {RATIO_TOL:.0%} of 1"),
]

TARGETS: list[_Def] = [
    _Def("M1", "Model: N equal-RTT segments give N x the direct throughput at any RTT (Fig. 4)",
         "Eq. 3 with s = 1500 B, p = 1e-6 at RTT 10-100 ms: the ratio is N to 1e-9", m1),
    _Def("M2", "Model with 0.001 % extra loss split by Eq. 4: gains ≈ 2.71 (N = 2) and ≈ 4.78 (N = 3), above N (Fig. 5)",
         "within 0.005 of 2.71 and 4.78, and > N", m2),
    _Def("M3", "Model throughput ∝ 1/RTT: 1469.7 Mb/s at 10 ms, 163.3 Mb/s at 90 ms (s = 1500 B, p = 1e-6)",
         "within 0.05 Mb/s; rate x RTT constant", m3),
    _Def("M4", "Eq. 4: p_i = 1 - (1 - p)^(1/N) < p for N > 1", "at p = 1e-6..1e-3, N = 2, 3", m4),
    _Def("M5", "BDP(1 Gb/s, 5 ms) = 625 000 B > 512 KB", "exact arithmetic", m5),
    *[_Def(f"{i} ({ENVS[env]})", claim, rule, fn, (f"{exp}.{env}",), env)
      for i, exp, fn, claim, rule in _E for env in ENVS],
    _Def("F1", "Unmodified curl follows the origin's redirect and receives the byte-identical file through 0-3 depots "
         "(Fig. 6)", "every download of the func experiment (and of the whole study) complete with the file's SHA-256, "
         "1 redirect through a chain, none directly", f1, ("func.testbed",)),
    _Def("F2", "During a transfer there are depots + 1 TCP connections, server to client",
         "ss -tin in each segment's sender sees a socket moving the data for every segment", f2, ("func.testbed",)),
    _Def("F3", "Depots forward in a pipeline: the first bytes arrive long before the end; depot memory does not "
         "grow with the file", "first byte within 50 % of the transfer's time for every relay download; depots' "
         "peak RSS at the largest file ≤ 1.2 x that at the smallest + 2 MiB", f3, ("func.testbed", "size.testbed")),
    _Def("F4", "Each depot's congestion control is the one its outgoing connection runs",
         "the algorithm ss reports on each segment's sender socket equals the one asked", f4,
         ("cc.testbed", "endcc.testbed")),
    _Def("F5", "Throughput = bits / (connection start -> last byte), 10 runs, mean ± 95 % CI",
         "the metric as defined; n ≥ 10 per cell (else not comparable)", f5, ("delay.testbed",)),
]


def evaluate_all(d: Data) -> list[RuleVerdict]:
    out = []
    for t in TARGETS:
        target = Target(id=t.id, kind="rule", sweep="", metric="aggregate_goodput_bps", x="", claim=t.claim, why=t.rule)
        skipped = [r for r in t.roles if r in d.skipped]
        if skipped:
            out.append(RuleVerdict(target, NOT_COMPARABLE, f"sweep {skipped[0]} was not run: {d.skipped[skipped[0]]}"))
            continue
        try:
            checks = t.fn(d, t.env) if t.env else t.fn(d)
        except Missing as e:
            out.append(RuleVerdict(target, NOT_COMPARABLE, f"missing data: {e}"))
            continue
        status = combine(checks)
        held = sum(c.status == HOLDS for c in checks)
        out.append(RuleVerdict(target, status, f"{held} of {len(checks)} checks hold", checks=checks))
    return out
