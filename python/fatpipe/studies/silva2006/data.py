"""The da Silva (2006) study's runs as tidy frames, read from the results store.

Every frame describes its points by what the run's plan says, not by sweep parameter names, so
it means the same whatever keys a sweep file uses:

- :func:`grid_frame`: one row per **connection** of the single-flow grids (``sim.*``,
  ``emu.*``, ``real.*``): environment, protocol, added delay, loss rate, ``tcp_no_metrics_save``
  (testbed), the run, the connection's position in it and its throughput (10^6 bit/s). The
  dissertation's mean over runs is then a mean over connections (its runs) and seeds.
- :func:`cells`: the grid frame summarised per condition: mean, 95 % CI half-width, n.
- :func:`fairness_frame`: Jain's index over time of each fairness run (both averaging kinds).
- :func:`traces`: the cwnd trace of each protocol's ``cwnd`` run.
- :func:`emulation_frame`: the testbed's own record per run (emulator fidelity, socket buffers).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from fatpipe.stats import mean_ci
from fatpipe.studies.silva2006 import measures

__all__ = ["environment", "grid_frame", "cells", "fairness_frame", "traces", "emulation_frame", "ci"]


def environment(role: str) -> str:
    """"sim" (the simulated grid at 1 Gb/s), "testbed" (emulated on Linux) or "replica" (the
    simulator's replica of the testbed runs), from a sweep role."""
    if role.startswith("sim.") or role == "real.sim":
        return "sim"
    if ".testbed" in role:
        return "testbed"
    if ".replica" in role:
        return "replica"
    raise ValueError(f"not a grid role: {role}")


def _runs(store: Any, outcome: Any):
    if getattr(outcome, "skipped", False):
        return None
    name = outcome.sweep.name if hasattr(outcome, "sweep") else str(outcome)
    runs = store.runs(name)
    return None if runs.empty else runs


def _point(plan: Mapping[str, Any]) -> dict[str, Any]:
    from fatpipe.studies.silva2006 import settings

    base = settings().BASE_RTT_MS / 2
    link = next(l for l in plan["links"] if l["name"] == "snd->rcv")
    tb = plan.get("testbed") or {}
    return {"cc": plan["flows"][0]["cc"], "delay_ms": round(link["delay_ns"] / 1e6 - base, 6),
            "loss": float(link.get("loss", 0.0)), "rate_bps": float(link["rate_bps"]),
            "nms": tb.get("no_metrics_save") if "no_metrics_save" in tb else None}


def grid_frame(store: Any, outcomes: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for role, o in outcomes.items():
        if not (role.startswith(("sim.", "emu.", "real."))):
            continue
        runs = _runs(store, o)
        if runs is None:
            continue
        env = environment(role)
        for key, seed in zip(runs["key"], runs["seed"]):
            r = store.load(key)
            p = _point(r.plan)
            for i, mbps in enumerate(measures.connection_mbps(r)):
                rows.append({"role": role, "env": env, **p, "real": role.startswith("real."), "seed": int(seed),
                             "key": key, "conn": i, "mbps": float(mbps)})
    cols = ["role", "env", "cc", "delay_ms", "loss", "rate_bps", "nms", "real", "seed", "key", "conn", "mbps"]
    return pd.DataFrame(rows, columns=cols)


#: Mean, 95 % half-width (Student's t; NaN for one value) and n of a cell's finite values.
ci = mean_ci


def cells(grid: pd.DataFrame, later_only: bool = False) -> pd.DataFrame:
    """Per (env, real, cc, delay, loss, nms): mean throughput, half-width, n; ``later_only``
    keeps the connections after a run's first (those a cached ssthresh can reach)."""
    g = grid[grid["conn"] > 0] if later_only else grid
    keys = ["env", "real", "cc", "delay_ms", "loss", "nms"]
    out = []
    for k, d in g.assign(nms=g["nms"].astype(object).where(g["nms"].notna(), "n/a")).groupby(keys, dropna=False):
        m, hw, n = ci(d["mbps"].to_numpy())
        out.append(dict(zip(keys, k)) | {"mean": m, "half_width": hw, "n": n})
    return pd.DataFrame(out, columns=[*keys, "mean", "half_width", "n"])


def _fair_point(plan: Mapping[str, Any]) -> dict[str, Any]:
    ccs = [f["cc"] for f in plan["flows"]]
    others = sorted({c for c in ccs[5:]})
    return {"cc": ccs[-1] if len(set(ccs)) <= 2 else "mixed", "first_cc": ccs[0],
            "x_cc": others[0] if len(others) == 1 else "mixed"}


def fairness_frame(store: Any, outcomes: Mapping[str, Any]) -> pd.DataFrame:
    """Per (experiment, protocol, seed, averaging kind, t): Jain's index."""
    rows = []
    for role, o in outcomes.items():
        if not role.startswith("fair."):
            continue
        runs = _runs(store, o)
        if runs is None:
            continue
        exp = role.split(".", 1)[1]
        for key, seed in zip(runs["key"], runs["seed"]):
            r = store.load(key)
            p = _fair_point(r.plan)
            for kind in measures.JAIN_KINDS:
                t, j = measures.jain_series(r, kind)
                rows += [{"experiment": exp, "cc": p["x_cc"], "seed": int(seed), "kind": kind, "t_s": float(a),
                          "jain": float(b)} for a, b in zip(t, j)]
    return pd.DataFrame(rows, columns=["experiment", "cc", "seed", "kind", "t_s", "jain"])


def traces(store: Any, outcomes: Mapping[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """protocol -> its cwnd trace (the first stored seed)."""
    o = outcomes.get("cwnd")
    runs = _runs(store, o) if o is not None else None
    if runs is None:
        return {}
    out = {}
    for key in runs.sort_values("seed")["key"]:
        r = store.load(key)
        cc = r.plan["flows"][0]["cc"]
        if cc not in out:
            out[cc] = measures.trace(r) | {"rate_bps": np.array([float(r.plan["links"][0]["rate_bps"])])}
    return out


def emulation_frame(store: Any, outcomes: Mapping[str, Any]) -> pd.DataFrame:
    """Per testbed run: point, emulator fidelity, socket buffers Linux granted, kernel, modules."""
    rows = []
    for role, o in outcomes.items():
        if environment_or_none(role) != "testbed":
            continue
        runs = _runs(store, o)
        if runs is None:
            continue
        for key in runs["key"]:
            meta = store.metadata(key)
            eng = meta["engine"]
            p = _point(meta["plan"])
            bufs = eng.get("socket_buffers") or []
            sock = [b.get("sndbuf_bytes") for b in bufs if b.get("sndbuf_bytes")]
            limited = sum(float(b.get("rwnd_limited_s") or 0.0) for b in bufs)
            rows.append({"role": role, **p, "kernel": eng.get("kernel"), "key": key,
                         "asked_bytes": (meta["plan"].get("testbed") or {}).get("sndbuf"),
                         "granted_bytes": max(sock) if sock else math.nan, "rwnd_limited_s": limited,
                         **{k: meta["metrics"].get(k) for k in ("emu_overflow", "emu_delay_p99_ms", "emu_rate_error",
                                                                 "advertised_window_bytes")},
                         "modules": ", ".join(f"{k}: {v}" for k, v in (eng.get("modules") or {}).items())})
    return pd.DataFrame(rows)


def environment_or_none(role: str) -> str | None:
    try:
        return environment(role)
    except ValueError:
        return None
