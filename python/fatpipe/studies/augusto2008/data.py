"""The Augusto et al. (2008) study's runs as one tidy frame, read from the results store.

Every row is one download (one run: each sweep point has one flow) described by what its plan
says, not by sweep parameter names: the experiment and environment (from the sweep role
``<exp>.<testbed|sim>``), the number of depots, the end-to-end RTT (the sum of the segments'
propagation RTTs: the depots lie on the path), the end-to-end random loss, the file size, the
depots' congestion control, the hosts' buffer maximum, the measured throughput (10^6 bit/s) and
the analytic model's prediction for the same chain (:mod:`fatpipe.models.logistics`). Testbed
runs add what the http driver recorded (checksums, redirects, the algorithm each segment's
socket ran, the depots' peak memory, curl's timings).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from fatpipe.stats import mean_ci

__all__ = ["frame", "cells", "ci", "COLUMNS"]

COLUMNS = ["role", "exp", "env", "depots", "rtt_ms", "loss", "size_mb", "cc", "end_cc", "buffer_bytes", "seed", "key",
           "mbps", "complete", "model_mbps", "model_capped_mbps", "rate_mbps", "identical", "redirects",
           "segments_seen", "planned_cc", "seen_cc", "peak_rss_kib", "first_byte_s", "span_s"]


def _point(plan: Mapping[str, Any]) -> dict[str, Any]:
    from fatpipe.models import logistics

    f = plan["flows"][0]
    relay = f.get("relay") or {}
    segs = relay.get("segments") or [f]
    loss = 1.0 - float(np.prod([1.0 - float(l.get("loss", 0.0)) for l in plan["links"]
                                if l["name"] in ("server->d2", "d2->d1", "d1->client", "server->d3", "d3->d2")]))
    tb = plan.get("testbed") or {}
    rmem = tb.get("rmem")
    pred = logistics.chain_from_plan(plan, 0, p_buffer=logistics.PAPER_P_BUFFER)
    capped = logistics.chain_from_plan(plan, 0, p_buffer=logistics.PAPER_P_BUFFER, cap=True)
    return {"depots": len(relay.get("depots", [])), "rtt_ms": round(sum(s["path_rtt_ns"] for s in segs) / 1e6, 3),
            "loss": round(loss, 12), "size_mb": f["size_bytes"] / 1e6,
            "cc": segs[-2]["cc"] if len(segs) > 1 else segs[0]["cc"], "end_cc": segs[0]["cc"],
            "buffer_bytes": int(rmem[2]) if rmem else math.nan,
            "model_mbps": pred.throughput_bps / 1e6, "model_capped_mbps": capped.throughput_bps / 1e6,
            "rate_mbps": min(float(s["path_bottleneck_bps"]) for s in segs) / 1e6}


def frame(store: Any, outcomes: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for role, o in outcomes.items():
        if getattr(o, "skipped", False) or "." not in role:
            continue
        exp, env = role.split(".", 1)
        runs = store.runs(o.sweep.name)
        if runs.empty:
            continue
        for key, seed in zip(runs["key"], runs["seed"]):
            r = store.load(key)
            fl = r.flows.to_pandas()
            mbps = float(fl["goodput_bps"].iloc[0]) / 1e6 if len(fl) else math.nan
            complete = bool(len(fl)) and bool(fl["objects"].iloc[0] >= 1)
            row = {"role": role, "exp": exp, "env": env, **_point(r.plan), "seed": int(seed), "key": key,
                   "mbps": mbps if complete else math.nan, "complete": complete}
            rec = (r.engine.get("http") or [None])[0]
            if rec:
                row.update({"identical": bool(rec["identical"]), "redirects": int(rec["redirects"]),
                            "segments_seen": int(rec["segments_seen"]), "planned_cc": "/".join(rec["planned_cc"]),
                            "seen_cc": "/".join(str(c) for c in rec["seen_cc"]),
                            "peak_rss_kib": max([k for k in rec["depot_peak_rss_kib"] if k] or [math.nan]),
                            "first_byte_s": rec["time_starttransfer_s"] - rec["time_redirect_s"],
                            "span_s": rec["time_total_s"] - rec["time_redirect_s"]})
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


#: Mean, 95 % half-width (Student's t; NaN for one value) and n of a cell's finite values.
ci = mean_ci


KEYS = ["exp", "env", "depots", "rtt_ms", "loss", "size_mb", "cc", "end_cc", "buffer_bytes"]


def cells(df: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: mean throughput, 95 % half-width, n (runs that completed), the model."""
    out = []
    for k, d in df.groupby(KEYS, dropna=False):
        m, hw, n = ci(d["mbps"].to_numpy())
        out.append(dict(zip(KEYS, k)) | {"mean": m, "half_width": hw, "n": n, "runs": len(d),
                                         "model_mbps": float(d["model_mbps"].iloc[0]),
                                         "model_capped_mbps": float(d["model_capped_mbps"].iloc[0]),
                                         "rate_mbps": float(d["rate_mbps"].iloc[0])})
    return pd.DataFrame(out, columns=[*KEYS, "mean", "half_width", "n", "runs", "model_mbps", "model_capped_mbps",
                                      "rate_mbps"])
