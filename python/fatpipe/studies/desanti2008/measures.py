"""Per-run metrics of the de Santi et al. (~2008) study: the paper's figures' quantities.

The paper plots, against the offered load, the bottleneck's mean queue and, "per active
connection", throughput (as a share of the bandwidth), congestion window, goodput, RTT,
retransmission timeouts and transfer time, and the number of connections (seed note §6). It gives
no formulas; here every per-connection value is a mean over the main traffic's finished
connections, each weighing the same (the flows table's ``conn_*`` columns, averaged over the ten
sources weighted by their finished objects):

- ``conn_throughput_pct``: payload bytes sent (retransmissions included) over the connection's
  lifetime (start to last ACK), as % of the bottleneck rate;
- ``conn_cwnd_pkts``: the time-averaged cwnd over the lifetime, packets;
- ``conn_goodput_bps``: file bytes over the transfer time (start to last byte delivered);
- ``conn_rtt_s``: the connection's mean RTT sample; ``conn_timeouts``: its RTOs;
- ``transfer_time_s``: start to last byte delivered; ``connections``: finished transfers;
- ``offered_load``: what arrived (files on the wire, 1500/1460 per payload byte, plus the UDP
  noise's wire bytes) over capacity × run time: the calibration of the load axis.

Connections still open at the end of the run are not counted (a few per source).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from fatpipe.result import Result

__all__ = ["METRICS"]

#: Wire bytes per payload byte of a full 1460-byte segment (1500/1460).
WIRE_PER_PAYLOAD = 1500.0 / 1460.0

_cache: list[Any] = [None, None]


def _files(r: Result):
    if _cache[0] is r:
        return _cache[1]
    f = r.to_pandas("flows")
    m = f[(f["kind"] == "files") & (f["role"] == "main")]
    _cache[0], _cache[1] = r, m
    return m


def _weighted(col: str, scale: float = 1.0) -> Callable[[Result], float]:
    def fn(r: Result) -> float:
        m = _files(r)
        m = m[(m["objects"] > 0) & m[col].notna()]
        n = float(m["objects"].sum())
        if n == 0:
            return math.nan
        return float((m[col] * m["objects"]).sum() / n * scale)

    return fn


def _bottleneck_rate(r: Result) -> float:
    bn = r.bottleneck
    for link in r.links.to_pylist():
        if link["link"] == bn:
            return float(link["rate_bps"])
    return math.nan


def _throughput_pct(r: Result) -> float:
    return _weighted("conn_throughput_mean_bps")(r) / _bottleneck_rate(r) * 100.0


def _connections(r: Result) -> float:
    return float(_files(r)["objects"].sum())


def _offered_load(r: Result) -> float:
    f = r.to_pandas("flows")
    files = float(f.loc[f["kind"] == "files", "bytes_offered"].sum()) * WIRE_PER_PAYLOAD
    udp = float(f.loc[(f["cc"] == "udp"), "bytes_sent"].sum())
    duration_s = r.plan["duration_ns"] / 1e9
    return (files + udp) * 8.0 / (_bottleneck_rate(r) * duration_s)


#: name -> (function, description): merged into fatpipe.experiments.run_metrics.METRICS.
METRICS: dict[str, tuple[Callable[[Result], float], str]] = {
    "conn_throughput_pct": (_throughput_pct, "files: mean per-connection throughput, % of the bottleneck rate"),
    "conn_cwnd_pkts": (_weighted("conn_cwnd_mean_pkts"), "files: mean per-connection time-averaged cwnd (packets)"),
    "conn_goodput_bps": (_weighted("conn_goodput_mean_bps"), "files: mean per-connection goodput (b/s)"),
    "conn_rtt_s": (_weighted("conn_rtt_mean_s"), "files: mean per-connection RTT (s)"),
    "conn_timeouts": (_weighted("conn_timeouts_mean"), "files: mean RTOs per connection"),
    "transfer_time_s": (_weighted("transfer_time_mean_s"), "files: mean transfer time (s)"),
    "connections": (_connections, "files: finished connections"),
    "offered_load": (_offered_load, "offered load on the wire (files + UDP) / bottleneck capacity"),
}
