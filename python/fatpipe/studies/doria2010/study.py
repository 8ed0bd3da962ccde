"""The study hook of ``studies/doria2010`` (study.toml ``analysis = "fatpipe.studies.doria2010.study"``).

Sweep roles are ``<a>-<b>.<split>.<tie_break>`` (make_sweeps.py): a pairing of two protocols and
one reading of the paper's two open choices. :func:`tidy_frame` turns every sweep's per-point
summary into rows (variant, pairing, delay_ms, protocol, kind, mean, half_width, n);
:func:`evaluate` judges targets 1–13 on the mode's primary variant; :func:`report_sections`
writes Tables 1–6 with the paper's numbers beside ours and ranks the variants by their distance
to the paper.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

__all__ = ["tidy_frame", "evaluate", "report_sections", "variant_distance", "DEFAULT_PRIMARY"]

#: The variant the targets are judged on unless study.toml's mode says otherwise: the reading
#: closest to the paper in the quick run's distance table (README "What the quick run shows").
DEFAULT_PRIMARY = "alternate.ns2"


def tidy_frame(store: Any, outcomes: Mapping[str, Any]):
    import pandas as pd

    from fatpipe.experiments import summarize_sweep

    frames = []
    for role, o in outcomes.items():
        pairing, variant = role.split(".", 1)
        name = o.sweep.name if hasattr(o, "sweep") else str(o)
        d = store.sweep_definition(name)
        runs = store.runs(name)
        if runs.empty:
            continue
        summ = summarize_sweep(runs, d["parameters"], d["metrics"])
        delay = {}
        for point, g in runs.groupby("point"):
            v = str(g.iloc[0]["topology.ring.delay"])
            delay[point] = int(float(v.removesuffix("ms")))
        s = summ[["point", "metric", "mean", "half_width", "n"]].copy()
        s["delay_ms"] = s["point"].map(delay)
        parts = s["metric"].str.rsplit("_", n=1, expand=True)
        s["kind"], s["protocol"] = parts[0], parts[1]
        s["variant"], s["pairing"] = variant, pairing
        frames.append(s)
    cols = ["variant", "pairing", "delay_ms", "protocol", "kind", "mean", "half_width", "n"]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


def _primary(mode: Any) -> str:
    opts = getattr(mode, "analysis", None) or {}
    return str(opts.get("primary", DEFAULT_PRIMARY))


def evaluate(store: Any, outcomes: Mapping[str, Any], mode: Any) -> list:
    from fatpipe.studies.doria2010.targets import evaluate_all

    tidy = tidy_frame(store, outcomes)
    return evaluate_all(tidy[tidy["variant"] == _primary(mode)])


#: Metrics the distance to the paper is taken over, and how: relative error for rates, delays and
#: packets sent; delivery in percentage points / 100; drops as |log10((ours + 1)/(paper + 1))|
#: (they span 0.01 to 2 000 per flow, so a ratio is the only scale that treats both ends alike).
DISTANCE_KINDS = ("throughput_kbps", "sent", "delay_s", "delivery_pct", "dropped")


def variant_distance(tidy: Any) -> Any:
    """Per variant: mean error against the paper's 36 rows for each metric kind, and overall."""
    import pandas as pd

    from fatpipe.studies.doria2010.reference import rows

    paper = pd.DataFrame(rows())
    out = []
    for variant, t in tidy.groupby("variant"):
        m = t.merge(paper, on=["pairing", "delay_ms", "protocol", "kind"], suffixes=("", "_paper"))
        rec = {"variant": variant, "cells": len(m)}
        errs = []
        for kind in DISTANCE_KINDS:
            k = m[m["kind"] == kind]
            if k.empty:
                rec[kind] = math.nan
                continue
            if kind == "dropped":
                e = ((k["mean"] + 1) / (k["mean_paper"] + 1)).map(lambda x: abs(math.log10(x)))
            elif kind == "delivery_pct":
                e = (k["mean"] - k["mean_paper"]).abs() / 100
            else:
                e = (k["mean"] - k["mean_paper"]).abs() / k["mean_paper"]
            rec[kind] = float(e.mean())
            errs.append(rec[kind])
        rec["overall"] = float(sum(errs) / len(errs)) if errs else math.nan
        out.append(rec)
    return pd.DataFrame(out).sort_values("overall") if out else pd.DataFrame(columns=["variant", "overall"])


def _cell(m: float, hw: float, kind: str) -> str:
    if math.isnan(m):
        return "—"
    fmt = {"delivery_pct": "{:.2f}", "sent": "{:,.0f}", "dropped": "{:,.1f}", "throughput_kbps": "{:.2f}",
           "delay_s": "{:.3f}", "goodput_kbps": "{:.2f}"}[kind]
    return fmt.format(m) + (" ± " + fmt.format(hw) if not math.isnan(hw) and hw > 0 else "")


def report_sections(store: Any, outcomes: Mapping[str, Any], mode: Any, verdicts: list, out: str | Path) -> str:
    from fatpipe.studies.doria2010.reference import KINDS, ROWS, TABLES
    from fatpipe.studies.targets import checks_markdown

    out = Path(out)
    tidy = tidy_frame(store, outcomes)
    tidy.to_csv(out / "doria2010-tidy.csv", index=False)
    primary = _primary(mode)
    parts = ["## Doria et al. (~2010): Tables 1–6, paper beside ours",
             f"Variant `{primary}` (senders split, ring routes; README \"Open parameters\"). Cells read "
             "`paper / ours` (ours: mean ± 95 % CI half-width over the replications). Per-point data for every "
             "variant: `doria2010-tidy.csv`."]
    t = tidy[tidy["variant"] == primary]
    ours = {(r.pairing, int(r.delay_ms), r.protocol, r.kind): (float(r.mean), float(r.half_width)) for r in t.itertuples()}
    heads = {"delivery_pct": "delivery %", "sent": "packets sent", "dropped": "dropped", "throughput_kbps": "kb/s",
             "delay_s": "delay s"}
    for table, (a, b) in TABLES.items():
        pairing = f"{a}-{b}"
        lines = [f"### Table {table}: {a} vs {b}", "",
                 "| d | protocol | " + " | ".join(heads[k] for k in KINDS) + " |",
                 "|---|---|" + "---|" * len(KINDS)]
        for row in ROWS:
            if row[0] != table:
                continue
            _, d, proto, *vals = row
            cells = []
            for i, k in enumerate(KINDS):
                m, hw = ours.get((pairing, d, proto, k), (math.nan, math.nan))
                cells.append(f"{_cell(vals[2 * i], math.nan, k)} / {_cell(m, hw, k)}")
            lines.append(f"| {d} ms | {proto} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    dist = variant_distance(tidy)
    if not dist.empty:
        lines = ["### Which reading of the open choices matches the paper best", "",
                 "Mean error against the paper's 36 rows (relative for kb/s, packets sent and delay; "
                 "points/100 for delivery; |log10((ours+1)/(paper+1))| for drops); lower is closer.", "",
                 "| variant | cells | " + " | ".join(DISTANCE_KINDS) + " | overall |",
                 "|---|---|" + "---|" * (len(DISTANCE_KINDS) + 1)]
        for r in dist.itertuples():
            errs = " | ".join(f"{getattr(r, k):.3f}" for k in DISTANCE_KINDS)
            lines.append(f"| `{r.variant}` | {r.cells} | {errs} | {r.overall:.3f} |")
        parts.append("\n".join(lines))
    parts.append("## Targets 1–13: every check")
    parts += checks_markdown(verdicts)
    return "\n\n".join(parts) + "\n"
