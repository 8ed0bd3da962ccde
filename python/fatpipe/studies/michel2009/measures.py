"""Per-run metrics of the Michel (2009) experiments: a :class:`fatpipe.Result` in, a float out.

Every metric looks only at the **main** flows (the studied ones): when the ``flows`` table has a
``role`` column, rows with ``role == "main"``; without it every flow is main (runs without
background traffic). Background load comes from the plan's ``background`` entry
(``{"load": 0.5, ...}``; absent or None means no background). Formulas are those of
:mod:`fatpipe.metrics` (Jain, population cv, fair share, 1 s interval throughput, convergence,
stability, Reno share); nothing is redefined here.

Rates are goodput (payload bytes delivered), so a link carrying only full-size segments can show at
most ``mss / (mss + header)`` (1460/1500 = 0.973) of its rate. The dissertation's "throughput" is
presumably measured the same way at the receivers; where a claim is "reaches the capacity" or "the
fair share", the capacity is scaled by that payload fraction (see :func:`payload_fraction`).

A metric that is undefined for a run is NaN (the sweep statistics leave it out and ``n`` says so).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, Mapping

import numpy as np

from fatpipe import metrics as m
from fatpipe.result import Result

__all__ = [
    "METRICS", "SERIES_INTERVAL_S", "CONVERGENCE_SUSTAIN_INTERVALS", "RTT_GROUP_RATIO", "WARMUP_FRACTION",
    "main_flows", "background_fraction", "bottleneck_rate_bps", "payload_fraction", "rtt_groups",
    "main_utilisation", "reno_share_main", "cc_goodput_bps", "main_jain", "main_cv", "jain_cc_aggregates",
    "rtt_group_mean_goodput_bps", "rtt_group_cc_goodput_bps", "rtt_group_jain", "rtt_group_utilisation", "convergence_time",
    "main_stability_cv",
]

#: Bits are counted per 1 s interval ([Michel09] §4.1.4 convergence; the stability sampling
#: interval is not stated, "likely 1 s", seed note §4.2 D-ST; we use the same 1 s for both).
SERIES_INTERVAL_S = 1.0
#: The sustained convergence criterion: the first of this many consecutive 1 s intervals all at
#: or above the fair share. The paper implies "first reaching" (1); 5 s is our named option, long
#: enough to span a congestion epoch of a 1 Gb/s, 200 ms flow at its 40 Mb/s share (about 3 s of
#: Reno-like growth), short against the 450 s after the late flow starts.
CONVERGENCE_SUSTAIN_INTERVALS = 5
#: Base RTTs are grouped by sorting them and starting a new group when an RTT exceeds the
#: group's smallest by more than this ratio. The parking lot's groups are 90 and 180 ms (ratio 2)
#: and the random delay jitter is "small", so 1.25 separates the groups and keeps jittered flows of
#: one group together.
RTT_GROUP_RATIO = 1.25
#: Warm-up cut for ``main_stability_cv_warm``: the first 10 % of the run, the same named fraction
#: as fatpipe.experiments.run_metrics' ``stability_cv_warm`` (the paper names no warm-up).
WARMUP_FRACTION = 0.1

_RENO = ("reno", "newreno")


# ---- shared per-run tables (cached: compute() calls every metric on the same Result) ----------

_cache: list[Any] = [None, None]


def _tables(r: Result) -> dict[str, Any]:
    if _cache[0] is r:
        return _cache[1]
    flows = r.to_pandas("flows")
    if "role" in flows.columns:
        flows = flows[flows["role"] == "main"]
    flows = flows.reset_index(drop=True)
    series = r.to_pandas("flow_series")
    series = series[series["flow_id"].isin(flows["flow_id"])]
    t = {"flows": flows, "series": series}
    _cache[0], _cache[1] = r, t
    return t


def main_flows(r: Result):
    """The main flows' rows of the ``flows`` table (pandas)."""
    return _tables(r)["flows"]


def background_fraction(plan: Mapping[str, Any]) -> float:
    """Background load as a fraction of the bottleneck (0 when the plan has none).

    A load above 1 is read as a percentage (50 -> 0.5), so both spellings of "bg 50 %" work.
    """
    bg = plan.get("background")
    if not bg:
        return 0.0
    load = float(bg.get("load", 0.0)) if isinstance(bg, dict) else float(bg)
    load = load / 100.0 if load > 1.0 else load
    if not 0.0 <= load <= 1.0:
        raise ValueError(f"background load {load!r} is not a fraction of the capacity")
    return load


def bottleneck_rate_bps(r: Result) -> float:
    """Rate of the plan's bottleneck link (the busiest link when the plan names none)."""
    bn = r.bottleneck
    for row in r.links.to_pylist():
        if row["link"] == bn:
            return float(row["rate_bps"])
    return math.nan


def payload_fraction(plan: dict[str, Any], flow_ids: Any = None) -> float:
    """``mss / (mss + header_bytes)`` of the first (main) flow: the most goodput a link can carry."""
    flows = plan.get("flows", [])
    if flow_ids is not None:
        ids = set(int(i) for i in flow_ids)
        flows = [f for f in flows if int(f["id"]) in ids] or flows
    if not flows:
        return 1.0
    f = flows[0]
    return float(f["mss"]) / float(f["mss"] + f["header_bytes"])


def _goodput(r: Result) -> np.ndarray:
    return main_flows(r)["goodput_bps"].to_numpy(dtype=float)


def _window_rates(r: Result) -> np.ndarray:
    """Each main flow's delivered bits over one common window, from the first main flow's start to
    the end of the run.

    Shares of the link (utilisation, Reno share) are sums of these: per-flow ``goodput_bps`` is
    averaged over each flow's own life, so summing it over-counts a late starter's share (D-CV's
    flow starting at 150 s, D-F1b's staggered starts) and can exceed the capacity.
    """
    f = main_flows(r)
    if f.empty:
        return np.array([])
    window = r.plan["duration_ns"] / 1e9 - float(f["start_s"].min())
    return f["bytes_delivered"].to_numpy(dtype=float) * 8.0 / window


def main_utilisation(r: Result) -> float:
    """Main flows' delivered bits over the bottleneck's capacity in the window from the first main
    start to the end of the run ([Michel09] "utilização", as a fraction)."""
    x = _window_rates(r)
    return float(x.sum() / bottleneck_rate_bps(r)) if x.size else math.nan


def reno_share_main(r: Result) -> float:
    """Main Reno flows' share of the bottleneck capacity (compatibility, §5 item 7), over the same
    window as :func:`main_utilisation`.

    Background FTP flows may run Reno too; they are not the "20 Reno connections", hence main only.
    """
    f = main_flows(r)
    if f.empty:
        return math.nan
    return m.reno_share(_window_rates(r), f["cc"].str.lower().isin(_RENO).to_numpy(), bottleneck_rate_bps(r))


def _cc_mask(f, cc: str) -> np.ndarray:
    from fatpipe.studies.michel2009.reference import protocol_of

    want = protocol_of(cc)
    return np.array([_safe_protocol(c) == want for c in f["cc"]], dtype=bool)


def _safe_protocol(c: str) -> str | None:
    from fatpipe.studies.michel2009.reference import protocol_of

    try:
        return protocol_of(c)
    except ValueError:
        return None


def cc_goodput_bps(r: Result, cc: str) -> float:
    """Aggregate goodput of the main flows running ``cc`` (Table 4.3); NaN if none runs it."""
    f = main_flows(r)
    mask = _cc_mask(f, cc)
    return float(f["goodput_bps"][mask].sum()) if mask.any() else math.nan


def main_jain(r: Result) -> float:
    """Jain's index over the main flows' goodputs (per connection)."""
    g = _goodput(r)
    return m.jain_index(g) if g.size else math.nan


def main_cv(r: Result) -> float:
    """Population coefficient of variation of the main flows' goodputs."""
    g = _goodput(r)
    return m.coefficient_of_variation(g) if g.size else math.nan


def jain_cc_aggregates(r: Result, exclude: tuple[str, ...] = ()) -> float:
    """Jain's index over the per-protocol aggregate goodputs (Table 4.3's "Jain index*" grouping).

    The seed note (§6.3) shows Table 4.3's Jain* row is this index over the 7 non-LIBRA
    aggregates, Reno included; ``exclude=("libra",)`` gives it.
    """
    f = main_flows(r)
    if f.empty:
        return math.nan
    protos = [_safe_protocol(c) or str(c) for c in f["cc"]]
    skip = {_safe_protocol(e) or e for e in exclude}
    agg: dict[str, float] = {}
    for p, g in zip(protos, f["goodput_bps"].to_numpy(dtype=float)):
        if p not in skip:
            agg[p] = agg.get(p, 0.0) + float(g)
    return m.jain_index(list(agg.values())) if agg else math.nan


# ---- RTT groups (parking lot: 90 and 180 ms) ----------------------------------------------------


def rtt_groups(r: Result) -> list[list[int]]:
    """Main flow ids grouped by base RTT (the plan's ``path_rtt_ns``), shortest group first.

    See :data:`RTT_GROUP_RATIO`.
    """
    ids = set(int(i) for i in main_flows(r)["flow_id"])
    rtts = sorted((float(f["path_rtt_ns"]), int(f["id"])) for f in r.plan["flows"] if int(f["id"]) in ids)
    groups: list[list[int]] = []
    first = math.nan
    for rtt, fid in rtts:
        if not groups or rtt > first * RTT_GROUP_RATIO:
            groups.append([])
            first = rtt
        groups[-1].append(fid)
    return [sorted(g) for g in groups]


def _group(r: Result, which: str, exclude: tuple[str, ...] = ()):
    """Main flows of the shortest (``"short"``) or longest (``"long"``) RTT group; None if the run
    has a single group (then "short" and "long" do not exist)."""
    groups = rtt_groups(r)
    if len(groups) < 2:
        return None
    ids = groups[0] if which == "short" else groups[-1]
    f = main_flows(r)
    f = f[f["flow_id"].isin(ids)]
    if exclude:
        skip = {_safe_protocol(e) for e in exclude}
        f = f[[_safe_protocol(c) not in skip for c in f["cc"]]]
    return f


def rtt_group_mean_goodput_bps(r: Result, which: str) -> float:
    """Mean goodput per connection of an RTT group (Tables 4.4 and 4.5)."""
    f = _group(r, which)
    return float(f["goodput_bps"].mean()) if f is not None and not f.empty else math.nan


def rtt_group_cc_goodput_bps(r: Result, which: str, cc: str) -> float:
    """Mean goodput per connection of the main flows running ``cc`` within an RTT group (Table 4.5:
    P-F2 has one connection per protocol per group); NaN if none runs it there."""
    f = _group(r, which)
    if f is None or f.empty:
        return math.nan
    mask = _cc_mask(f, cc)
    return float(f["goodput_bps"][mask].mean()) if mask.any() else math.nan


def rtt_group_jain(r: Result, which: str, exclude: tuple[str, ...] = ()) -> float:
    """Jain's index within an RTT group (Fig 4.17a; ``exclude=("libra",)`` for its dashed lines)."""
    f = _group(r, which, exclude)
    return m.jain_index(f["goodput_bps"].to_numpy(dtype=float)) if f is not None and not f.empty else math.nan


def rtt_group_utilisation(r: Result, which: str) -> float:
    """An RTT group's goodput over the bottleneck rate (Fig 4.17b)."""
    f = _group(r, which)
    if f is None or f.empty:
        return math.nan
    rates = dict(zip(main_flows(r)["flow_id"], _window_rates(r)))
    return float(sum(rates[i] for i in f["flow_id"]) / bottleneck_rate_bps(r))


# ---- time series: convergence and stability ------------------------------------------------------


def _flow_intervals(series, fid: int) -> tuple[np.ndarray, np.ndarray]:
    g = series[series["flow_id"] == fid]
    if g.empty:
        return np.array([]), np.array([])
    return m.interval_throughput_bps(g["t_s"].to_numpy(), g["bytes_delivered"].to_numpy(), SERIES_INTERVAL_S)


def convergence_time(r: Result, sustain: int = 1) -> float:
    """Convergence time (s) of the last-started main flow to its fair share (D-CV, §5 item 6).

    Fair share = payload fraction x C (1 - bg) / N with N the number of main flows
    (:func:`fatpipe.metrics.fair_share_bps`); the capacity is scaled to goodput so that a flow
    taking exactly its share of the wire counts as converged. ``sustain`` > 1 is the sustained
    criterion (:data:`CONVERGENCE_SUSTAIN_INTERVALS`). NaN if the flow never reaches its share.
    """
    t = _tables(r)
    f = t["flows"]
    if f.empty:
        return math.nan
    last = f.loc[f["start_s"].idxmax()]
    share = m.fair_share_bps(bottleneck_rate_bps(r) * payload_fraction(r.plan, f["flow_id"]), len(f),
                             background_fraction(r.plan))
    ends, bps = _flow_intervals(t["series"], int(last["flow_id"]))
    if ends.size == 0:
        return math.nan
    tc = m.convergence_time_s(ends, bps, float(last["start_s"]), share, sustain=sustain)
    return math.nan if tc is None else float(tc)


def main_stability_cv(r: Result, warm: bool = False) -> float:
    """cv of the main flows' aggregate throughput in 1 s intervals (D-ST, §5 item 4)."""
    series = _tables(r)["series"]
    total: np.ndarray | None = None
    ends: np.ndarray | None = None
    for fid in sorted(set(int(i) for i in series["flow_id"])):
        t, bps = _flow_intervals(series, fid)
        if total is None or ends is None:
            ends, total = t, bps.copy()
        else:
            # flows' series end at the same run end; a shorter one only truncates the tail
            k = min(len(total), len(bps))
            ends, total = ends[:k], total[:k] + bps[:k]
    if total is None or ends is None or total.size == 0:
        return math.nan
    warmup = WARMUP_FRACTION * r.plan["duration_ns"] / 1e9 if warm else 0.0
    return m.stability_cv(ends, total, warmup_s=warmup)


# ---- the registry ---------------------------------------------------------------------------------


def _registry() -> dict[str, tuple[Callable[[Result], float], str]]:
    from fatpipe.studies.michel2009.reference import PAPER_TO_CC

    reg: dict[str, tuple[Callable[[Result], float], str]] = {
        "main_utilisation": (main_utilisation, "main flows' goodput over the bottleneck rate (fraction)"),
        "main_goodput_bps": (lambda r: float(_goodput(r).sum()) if _goodput(r).size else math.nan,
                             "main flows' aggregate goodput (bit/s)"),
        "main_mean_goodput_bps": (lambda r: float(_goodput(r).mean()) if _goodput(r).size else math.nan,
                                  "mean goodput per main flow (bit/s; Table 4.2's x̄)"),
        "main_jain": (main_jain, "Jain's index over the main flows' goodputs"),
        "main_cv": (main_cv, "population cv of the main flows' goodputs (fraction)"),
        "reno_share_main": (reno_share_main, "main Reno flows' goodput over the bottleneck rate (fraction)"),
        "jain_cc_aggregates": (jain_cc_aggregates, "Jain's index over per-protocol aggregate goodputs"),
        "jain_cc_aggregates_excl_libra": (lambda r: jain_cc_aggregates(r, ("libra",)),
                                          "jain_cc_aggregates without LIBRA (Table 4.3's Jain*)"),
        "convergence_time_s": (convergence_time,
                               "last-started main flow: s until a 1 s interval reaches the fair share (NaN: never)"),
        "convergence_time_sustained_s": (lambda r: convergence_time(r, CONVERGENCE_SUSTAIN_INTERVALS),
                                         "convergence_time_s needing 5 consecutive 1 s intervals at the share"),
        "main_stability_cv": (main_stability_cv, "cv of the main flows' aggregate throughput per 1 s interval"),
        "main_stability_cv_warm": (lambda r: main_stability_cv(r, warm=True),
                                   "main_stability_cv without the first 10 % of the run"),
    }
    for which in ("short", "long"):
        reg[f"rtt_{which}_mean_goodput_bps"] = (
            partial(rtt_group_mean_goodput_bps, which=which),
            f"mean goodput per main flow of the {which}est base-RTT group (bit/s; NaN with one group)")
        reg[f"rtt_{which}_jain"] = (partial(rtt_group_jain, which=which),
                                    f"Jain's index within the {which}est base-RTT group")
        reg[f"rtt_{which}_jain_excl_libra"] = (partial(rtt_group_jain, which=which, exclude=("libra",)),
                                               f"rtt_{which}_jain without LIBRA flows")
        reg[f"rtt_{which}_utilisation"] = (partial(rtt_group_utilisation, which=which),
                                           f"goodput of the {which}est base-RTT group over the bottleneck rate")
    for proto, cc in PAPER_TO_CC.items():
        reg[f"goodput_bps_{cc}"] = (partial(cc_goodput_bps, cc=cc),
                                    f"aggregate goodput of the main {proto} flows (bit/s; NaN if none)")
        for which in ("short", "long"):
            reg[f"goodput_bps_{cc}_{which}"] = (
                partial(rtt_group_cc_goodput_bps, which=which, cc=cc),
                f"mean goodput per main {proto} flow in the {which}est base-RTT group (bit/s; Table 4.5)")
    return reg


#: name -> (function, one-line description): merged into fatpipe.experiments.run_metrics.METRICS.
METRICS: dict[str, tuple[Callable[[Result], float], str]] = _registry()
