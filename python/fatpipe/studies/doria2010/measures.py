"""Per-run metrics of the Doria et al. (~2010) study: the paper's five columns per protocol.

The paper gives no formulas; the seed note (§4) derives them from its 36 table rows, and these
follow that derivation. Every value is a **per-flow average** over the flows of one protocol:

- ``sent_<p>``: data packets the transport sent (TCP retransmissions included; DCCP packets
  refused by its full queue are not sent, so not counted);
- ``dropped_<p>``: data packets dropped by queues in the network;
- ``delivery_pct_<p>``: 100 · (sent − dropped) / sent;
- ``throughput_kbps_<p>``: the paper's throughput, (sent − dropped) · payload · 8 / run time,
  kbit/s (1 kbit = 1000 bit; seed note §4: it matches all 36 rows to 0.02 kb/s). For DCCP that is
  the payload delivered; for TCP it counts every arrival, retransmitted duplicates included;
- ``goodput_kbps_<p>``: distinct payload delivered to the application over the run (kbit/s);
- ``delay_s_<p>``: mean one-way delay of the data packets that arrived.

``<p>`` is the ``cc`` column of the flows table: ``ccid2``, ``ccid3``, ``compound``, ``cubic``.
A protocol absent from the run gives NaN.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable

import numpy as np

from fatpipe.result import Result

__all__ = ["METRICS", "PROTOCOLS", "per_protocol"]

PROTOCOLS = ("ccid2", "ccid3", "compound", "cubic")

_cache: list[Any] = [None, None]


def _flows(r: Result):
    if _cache[0] is r:
        return _cache[1]
    f = r.to_pandas("flows")
    if "role" in f.columns:
        f = f[f["role"] == "main"]
    _cache[0], _cache[1] = r, f
    return f


def per_protocol(r: Result, cc: str, kind: str) -> float:
    f = _flows(r)
    f = f[f["cc"] == cc]
    if f.empty:
        return math.nan
    sent = f["data_packets_sent"].to_numpy(float)
    dropped = f["packets_dropped"].to_numpy(float)
    if kind == "sent":
        return float(sent.mean())
    if kind == "dropped":
        return float(dropped.mean())
    if kind == "delivery_pct":
        ok = sent > 0
        return float(np.mean(100.0 * (sent[ok] - dropped[ok]) / sent[ok])) if ok.any() else math.nan
    duration_s = r.plan["duration_ns"] / 1e9
    if kind == "throughput_kbps":
        payload = np.where(sent > 0, f["bytes_sent"].to_numpy(float) / np.maximum(sent, 1), 0.0)
        return float(((sent - dropped) * payload * 8 / duration_s / 1000).mean())
    if kind == "goodput_kbps":
        return float((f["bytes_delivered"].to_numpy(float) * 8 / duration_s / 1000).mean())
    if kind == "delay_s":
        d = f["delay_mean_s"].to_numpy(float)
        d = d[~np.isnan(d)]
        return float(d.mean()) if d.size else math.nan
    raise ValueError(kind)


_UNITS = {
    "sent": "data packets sent per flow",
    "dropped": "data packets dropped in the network per flow",
    "delivery_pct": "100 (sent - dropped) / sent, per-flow mean (%)",
    "throughput_kbps": "(sent - dropped) x payload over the run per flow, the paper's (kbit/s)",
    "goodput_kbps": "distinct payload delivered over the run per flow (kbit/s)",
    "delay_s": "mean one-way delay of arrived data packets, per-flow mean (s)",
}

#: name -> (function, description): merged into fatpipe.experiments.run_metrics.METRICS.
METRICS: dict[str, tuple[Callable[[Result], float], str]] = {
    f"{kind}_{cc}": (partial(per_protocol, cc=cc, kind=kind), f"{cc}: {what}")
    for cc in PROTOCOLS for kind, what in _UNITS.items()
}
