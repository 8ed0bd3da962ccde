"""Per-run metrics of the da Silva (2006) study, and the time series its figures need.

The dissertation's metric is netperf's average throughput (``-f m``: 10^6 bit/s of payload,
"Vazão Média" = data volume / transfer time, seed note §5), averaged over the runs of a condition.
Here a run of a single-flow grid holds one connection (the simulated grid: replications are
seeds) or several connections back to back on the same hosts (the emulated grid, as the script
ran netperf over and over: the kernel's metrics cache can carry from one to the next). Each
connection's throughput is its bytes delivered by its stop over its own time, and:

- ``netperf_mbps``: the mean over the run's connections (the script's mean over runs);
- ``netperf_first_mbps``: the first connection's; ``netperf_later_mbps``: the mean of the others
  (the only ones a cached ssthresh can touch: ``tcp_no_metrics_save`` ON vs OFF).

Testbed runs also say how faithful the emulation was (NaN for simulator runs):
``emu_overflow`` (frames the emulator could not handle in time), ``emu_delay_p99_ms`` (the worst
99th percentile of departure error over the link's two directions), ``emu_rate_error`` (the
data direction's achieved rate over the asked one, minus 1), and ``advertised_window_bytes``
(the largest window the receiver advertised: what Linux made of netperf's -S).

Jain's index over time (Figs 4.19-4.21) and the cwnd traces (Figs 2.2-2.6) come from a run's
``flow_series`` (:func:`jain_series`, :func:`trace`); the formulas are :mod:`fatpipe.metrics`'s.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from fatpipe import metrics as fm
from fatpipe.result import Result

__all__ = ["METRICS", "JAIN_KINDS", "JAIN_KIND", "JAIN_INTERVAL_S", "connection_mbps", "jain_series", "trace"]

#: The thesis does not say how the v_j of its Jain index over time were averaged (seed note §10).
#: "cumulative": each flow's mean throughput from its start to t (smooth curves that converge, as
#: the thesis describes them); "interval": each flow's throughput over the last JAIN_INTERVAL_S.
#: Both are computed; the targets read JAIN_KIND.
JAIN_KINDS = ("cumulative", "interval")
JAIN_KIND = "cumulative"
JAIN_INTERVAL_S = 1.0


def _flows(r: Result):
    return r.to_pandas("flows").sort_values(["start_s", "flow_id"])


def connection_mbps(r: Result) -> np.ndarray:
    """Each connection's throughput in 10^6 bit/s, in start order."""
    return _flows(r)["goodput_bps"].to_numpy(dtype=float) / 1e6


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else math.nan


def _emu(r: Result) -> dict[str, Any] | None:
    e = r.engine.get("emulator") if isinstance(r.engine, dict) else None
    return e if isinstance(e, dict) else None


def _emu_overflow(r: Result) -> float:
    e = _emu(r)
    return float(e.get("overflow_total", math.nan)) if e else math.nan


def _emu_directions(r: Result) -> list[dict[str, Any]]:
    e = _emu(r)
    if not e:
        return []
    return [d for link in e.get("links", []) for d in (link.get("ab"), link.get("ba")) if isinstance(d, dict)]


def _emu_delay_p99_ms(r: Result) -> float:
    p99 = [d["delay_error_ns"]["p99"] for d in _emu_directions(r) if d.get("delay_error_ns", {}).get("count")]
    return max(p99) / 1e6 if p99 else math.nan


def _emu_rate_error(r: Result) -> float:
    """The data direction (the link's first: snd -> rcv) of the first emulated link."""
    e = _emu(r)
    if not e or not e.get("links"):
        return math.nan
    v = e["links"][0].get("ab", {}).get("rate_error")
    return math.nan if v is None else float(v)


def _advertised_window(r: Result) -> float:
    bufs = r.engine.get("socket_buffers") if isinstance(r.engine, dict) else None
    w = [b.get("snd_wnd_max_bytes") for b in bufs or [] if b.get("snd_wnd_max_bytes")]
    return float(max(w)) if w else math.nan


#: name -> (function, description): merged into fatpipe.experiments.run_metrics.METRICS.
METRICS: dict[str, tuple[Callable[[Result], float], str]] = {
    "netperf_mbps": (lambda r: _mean(connection_mbps(r)), "mean throughput per connection, 10^6 bit/s (netperf -f m)"),
    "netperf_first_mbps": (lambda r: _mean(connection_mbps(r)[:1]), "the run's first connection's throughput, 10^6 bit/s"),
    "netperf_later_mbps": (lambda r: _mean(connection_mbps(r)[1:]), "mean throughput of the run's later connections, 10^6 bit/s"),
    "emu_overflow": (_emu_overflow, "testbed: frames the link emulator could not handle in time"),
    "emu_delay_p99_ms": (_emu_delay_p99_ms, "testbed: worst 99th percentile of the emulator's departure error (ms)"),
    "emu_rate_error": (_emu_rate_error, "testbed: the data direction's achieved rate / asked rate - 1"),
    "advertised_window_bytes": (_advertised_window, "testbed: the largest receive window the receiver advertised (bytes)"),
}


def _cumulative(t: np.ndarray, b: np.ndarray, start: float, grid: np.ndarray) -> np.ndarray:
    """Mean throughput (bit/s) from ``start`` to each grid time; NaN before the flow started."""
    at = np.interp(grid, t, b, left=0.0)
    span = grid - start
    out = np.full(grid.shape, np.nan)
    ok = span > 0
    out[ok] = at[ok] * 8.0 / span[ok]
    return out


def jain_series(r: Result, kind: str = JAIN_KIND, interval_s: float = JAIN_INTERVAL_S) -> tuple[np.ndarray, np.ndarray]:
    """Jain's index of the flows' throughputs over time: (t, index), from the time every flow has
    started (the index is over all ten flows, so it is undefined before)."""
    if kind not in JAIN_KINDS:
        raise ValueError(f"kind must be one of {JAIN_KINDS}, got {kind!r}")
    fs = r.to_pandas("flow_series")
    flows = _flows(r)
    if fs.empty:
        return np.array([]), np.array([])
    end = r.plan["duration_ns"] / 1e9
    first = float(flows["start_s"].max())
    grid = np.arange(math.ceil(first / interval_s) * interval_s + interval_s, end + 1e-9, interval_s)
    rates = []
    for fid, start in zip(flows["flow_id"], flows["start_s"]):
        g = fs[fs["flow_id"] == fid]
        t, b = g["t_s"].to_numpy(dtype=float), g["bytes_delivered"].to_numpy(dtype=float)
        if kind == "cumulative":
            rates.append(_cumulative(t, b, float(start), grid))
        else:
            at = np.interp(grid, t, b, left=0.0)
            before = np.interp(grid - interval_s, t, b, left=0.0)
            rates.append((at - before) * 8.0 / interval_s)
    x = np.vstack(rates)
    idx = np.array([fm.jain_index(col) if np.all(np.isfinite(col)) and col.sum() > 0 else np.nan for col in x.T])
    return grid, idx


def trace(r: Result) -> dict[str, np.ndarray]:
    """The single flow's sampled cwnd, ssthresh (packets) and smoothed RTT (s) over time."""
    fs = r.to_pandas("flow_series")
    fs = fs[fs["flow_id"] == fs["flow_id"].min()]
    return {"t_s": fs["t_s"].to_numpy(dtype=float), "cwnd": fs["cwnd_pkts"].to_numpy(dtype=float),
            "ssthresh": fs["ssthresh_pkts"].to_numpy(dtype=float), "srtt_s": fs["srtt_s"].to_numpy(dtype=float)}
