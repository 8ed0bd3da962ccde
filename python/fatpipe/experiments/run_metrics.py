"""Scalar metrics of one run, by name — what sweeps collect and reports plot.

Each entry computes one number from a :class:`fatpipe.Result` using the metric functions defined
once in :mod:`fatpipe.metrics` (Jain, cv, utilisation, stability, friendliness). A metric that is
undefined for a run (e.g. a convergence time for a flow that never converges) is NaN, and is left
out of the replication statistics with the count ``n`` saying so.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from fatpipe import metrics as m
from fatpipe.result import Result

__all__ = ["METRICS", "compute", "check_metric_names", "describe", "register"]

#: Interval used for the time-series metrics, as in [Michel09] §5 (bits counted per 1 s).
SERIES_INTERVAL_S = 1.0
#: Warm-up cut for ``stability_cv_warm``: the first 10 % of the run (named parameter; the
#: dissertation itself names no warm-up, see fatpipe.metrics.stability_cv).
WARMUP_FRACTION = 0.1


def _flows(r: Result):
    return r.to_pandas("flows")


def _bottleneck_rate(r: Result) -> float:
    links = {l["link"]: l for l in r.links.to_pylist()}
    bn = r.bottleneck
    return float(links[bn]["rate_bps"]) if bn in links else math.nan


def _utilisation(r: Result) -> float:
    u = r.summary["utilisation"]
    return math.nan if u is None else float(u)


def _goodputs(r: Result) -> np.ndarray:
    return _flows(r)["goodput_bps"].to_numpy(dtype=float)


def _aggregate_series(r: Result) -> tuple[np.ndarray, np.ndarray]:
    """Aggregate throughput per SERIES_INTERVAL_S from the flows' cumulative byte samples."""
    fs = r.to_pandas("flow_series")
    if fs.empty:
        return np.array([]), np.array([])
    total = None
    ends = None
    for _, g in fs.groupby("flow_id", sort=True):
        t, bps = m.interval_throughput_bps(g["t_s"].to_numpy(), g["bytes_delivered"].to_numpy(), SERIES_INTERVAL_S)
        if total is None:
            ends, total = t, bps.copy()
        else:
            k = min(len(total), len(bps))
            ends, total = ends[:k], total[:k] + bps[:k]
    return ends, total


def _stability(r: Result, warm: bool) -> float:
    t, agg = _aggregate_series(r)
    if t.size == 0:
        return math.nan
    warmup = WARMUP_FRACTION * r.plan["duration_ns"] / 1e9 if warm else 0.0
    try:
        return m.stability_cv(t, agg, warmup_s=warmup)
    except ValueError:
        return math.nan


def _utilisation_steady(r: Result) -> float:
    """Bottleneck utilisation over the second half of the run, from the flows' delivered bytes
    (payload scaled to wire size), so the start-up (slow start, its losses and timeouts) is left
    out. Retransmitted copies are not counted: this is goodput-based, like a steady-state model."""
    fs = r.to_pandas("flow_series")
    if fs.empty:
        return math.nan
    end = r.plan["duration_ns"] / 1e9
    half = end / 2.0
    total = 0.0
    for _, g in fs.groupby("flow_id"):
        t, b = g["t_s"].to_numpy(), g["bytes_delivered"].to_numpy(dtype=float)
        at = lambda x: float(np.interp(x, t, b)) if t[0] <= x else 0.0  # noqa: E731
        total += at(end) - at(half)
    f = r.plan["flows"][0]
    wire = (f["mss"] + f["header_bytes"]) / f["mss"]
    return total * 8.0 * wire / (_bottleneck_rate(r) * (end - half))


def _reno_share(r: Result) -> float:
    f = _flows(r)
    return m.reno_share(f["goodput_bps"], f["cc"].isin(["reno", "newreno"]), _bottleneck_rate(r))


def _jain(r: Result) -> float:
    g = _goodputs(r)
    return m.jain_index(g) if g.size else math.nan


def _cv(r: Result) -> float:
    g = _goodputs(r)
    return m.coefficient_of_variation(g) if g.size and g.mean() > 0 else math.nan


def _rtt_mean(r: Result) -> float:
    f = _flows(r)
    v = f["rtt_mean_s"].to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def _queue_mean(r: Result) -> float:
    bn = r.bottleneck
    for q in r.queues.to_pylist():
        if q["link"] == bn:
            return float(q["mean_len_pkts"])
    return math.nan


def _sum(col: str) -> Callable[[Result], float]:
    return lambda r: float(_flows(r)[col].sum())


#: name -> (function, one-line description with unit)
METRICS: dict[str, tuple[Callable[[Result], float], str]] = {
    "utilisation": (_utilisation, "bottleneck utilisation (fraction of capacity)"),
    "utilisation_steady": (_utilisation_steady, "bottleneck utilisation by goodput over the second half of the run"),
    "aggregate_goodput_bps": (lambda r: float(_goodputs(r).sum()), "sum of per-flow goodput (bit/s)"),
    "mean_goodput_bps": (lambda r: float(_goodputs(r).mean()), "mean per-flow goodput (bit/s)"),
    "jain": (_jain, "Jain's fairness index of per-flow goodput"),
    "cv": (_cv, "coefficient of variation of per-flow goodput (population std)"),
    "drops": (lambda r: float(r.summary["drops"]), "packets dropped in all queues"),
    "retransmits": (_sum("retransmits"), "retransmitted data packets"),
    "timeouts": (_sum("timeouts"), "retransmission timeouts"),
    "rtt_mean_s": (_rtt_mean, "mean of the flows' mean RTT (s)"),
    "queue_mean_pkts": (_queue_mean, "mean bottleneck queue length (packets)"),
    "stability_cv": (lambda r: _stability(r, False), "cv of aggregate throughput per 1 s interval"),
    "stability_cv_warm": (lambda r: _stability(r, True), "stability_cv without the first 10 % of the run"),
    "reno_share": (_reno_share, "share of the bottleneck capacity taken by Reno flows"),
}


def register(metrics: dict[str, tuple[Callable[[Result], float], str]]) -> None:
    """Add a study's metrics to :data:`METRICS` (a name may be registered once only, so a study
    cannot silently change what an existing metric means)."""
    clash = sorted(set(metrics) & set(METRICS))
    if clash:
        raise ValueError(f"metric names already registered: {', '.join(clash)}")
    METRICS.update(metrics)


# Study metrics: the Michel (2009) reproduction's main-flow, per-protocol, RTT-group, convergence
# and stability metrics (fatpipe.studies.michel2009.measures). Registered here, not on demand, so
# that a sweep file naming them works in every worker process.
from fatpipe.studies.michel2009.measures import METRICS as _MICHEL2009  # noqa: E402

register(_MICHEL2009)

# The Doria et al. (~2010) reproduction's per-protocol VoIP metrics (fatpipe.studies.doria2010.measures).
from fatpipe.studies.doria2010.measures import METRICS as _DORIA2010  # noqa: E402

register(_DORIA2010)

# The de Santi et al. (~2008) reproduction's per-connection metrics (fatpipe.studies.desanti2008.measures).
from fatpipe.studies.desanti2008.measures import METRICS as _DESANTI2008  # noqa: E402

register(_DESANTI2008)

# The da Silva (2006) reproduction's netperf-style throughput and the testbed's emulation checks
# (fatpipe.studies.silva2006.measures).
from fatpipe.studies.silva2006.measures import METRICS as _SILVA2006  # noqa: E402

register(_SILVA2006)


def check_metric_names(names) -> None:
    from fatpipe.experiments.sweep import SweepError

    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise SweepError(f"must be a list of metric names, got {names!r}", "metrics")
    for n in names:
        if not isinstance(n, str) or n not in METRICS:
            raise SweepError(f"unknown metric {n!r}; known: {', '.join(METRICS)}", "metrics")


def compute(r: Result) -> dict[str, float]:
    """Every registered metric of a run (NaN where undefined)."""
    out: dict[str, float] = {}
    for name, (fn, _) in METRICS.items():
        try:
            out[name] = float(fn(r))
        except (ValueError, ZeroDivisionError, KeyError):
            out[name] = math.nan
    return out


def describe() -> dict[str, str]:
    return {k: d for k, (_, d) in METRICS.items()}
