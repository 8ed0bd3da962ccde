"""The study hook of ``studies/desanti2008`` (study.toml ``analysis = "fatpipe.studies.desanti2008.study"``).

Sweep roles are ``<traffic>.<aqm>`` (make_sweeps.py): FTP or WEB through RED, H2 (the paper's)
or CoDel, PIE (this reproduction's extension). :func:`tidy_frame` turns every sweep's per-point
summary into rows (traffic, aqm, load, metric, mean, half_width, n); :func:`evaluate` judges
targets A–E; :func:`report_sections` writes the figures (the paper's Figs. 2–9 regenerated, with
95 % CIs), a table of H2/RED ratios beside the paper's, and every check.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

__all__ = ["tidy_frame", "evaluate", "report_sections", "ratio_table"]


def tidy_frame(store: Any, outcomes: Mapping[str, Any]):
    import pandas as pd

    from fatpipe.experiments import summarize_sweep
    from fatpipe.studies.desanti2008 import make_sweeps_module

    load_of = make_sweeps_module().load_of
    frames = []
    for role, o in outcomes.items():
        traffic, aqm = role.split(".", 1)
        name = o.sweep.name if hasattr(o, "sweep") else str(o)
        d = store.sweep_definition(name)
        runs = store.runs(name)
        if runs.empty:
            continue
        summ = summarize_sweep(runs, d["parameters"], d["metrics"])
        load = {point: load_of(g.iloc[0]["flows.0.load"]) for point, g in runs.groupby("point")}
        s = summ[["point", "metric", "mean", "half_width", "n"]].copy()
        s["load"] = s["point"].map(load)
        s["traffic"], s["aqm"] = traffic, aqm
        frames.append(s)
    cols = ["traffic", "aqm", "load", "metric", "mean", "half_width", "n"]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols].sort_values(["traffic", "aqm", "load", "metric"])


def evaluate(store: Any, outcomes: Mapping[str, Any], mode: Any) -> list:
    from fatpipe.studies.desanti2008.targets import evaluate_all

    return evaluate_all(tidy_frame(store, outcomes))




def ratio_table(tidy: Any):
    """Per (traffic, metric, load): H2 mean, RED mean, H2/RED, and the paper's ratio where stated."""
    keys = ["traffic", "metric", "load"]
    h2 = tidy.loc[tidy["aqm"] == "h2", keys + ["mean"]].rename(columns={"mean": "mean_h2"})
    red = tidy.loc[tidy["aqm"] == "red", keys + ["mean"]].rename(columns={"mean": "mean_red"})
    both = h2.merge(red, on=keys, how="inner")
    both["ratio"] = both["mean_h2"] / both["mean_red"]
    from fatpipe.studies.desanti2008.targets import PAPER_RATIOS

    both["paper"] = [PAPER_RATIOS.get((t, m, round(x, 3)), math.nan)
                     for t, m, x in zip(both["traffic"], both["metric"], both["load"])]
    return both


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "—"
    return f"{x:.3g}" if abs(x) < 1e4 else f"{x:,.0f}"


def report_sections(store: Any, outcomes: Mapping[str, Any], mode: Any, verdicts: list, out: str | Path) -> str:
    from fatpipe.studies.desanti2008.figures import FIGURE_METRICS, write_figures
    from fatpipe.studies.targets import checks_markdown

    out = Path(out)
    tidy = tidy_frame(store, outcomes)
    tidy.to_csv(out / "desanti2008-tidy.csv", index=False)
    parts = ["## de Santi et al. (~2008): RED vs HSTCP-H2, the paper's figures regenerated",
             "Every point is a mean over the replications with its 95 % CI; CoDel and PIE are this "
             "reproduction's extension, not in the paper. Per-point data: `desanti2008-tidy.csv`. The inferred "
             "parameters (topology, operating point, noise schedule) are in the study's README."]
    for name in write_figures(tidy, out):
        parts.append(f"![{name}]({name})")
    rt = ratio_table(tidy)
    if not rt.empty:
        labels = dict(FIGURE_METRICS)
        lines = ["### H2 against RED, per load (paper's ratio where its prose gives one)", "",
                 "| traffic | metric | load | H2 | RED | H2/RED | paper |", "|---|---|---|---|---|---|---|"]
        for r in rt.sort_values(["traffic", "metric", "load"]).itertuples():
            lines.append(f"| {r.traffic.upper()} | {labels.get(r.metric, r.metric)} | {r.load:g} | {_fmt(r.mean_h2)} | "
                         f"{_fmt(r.mean_red)} | {_fmt(r.ratio)} | {_fmt(r.paper)} |")
        parts.append("\n".join(lines))
    off = tidy[tidy["metric"] == "offered_load"]
    if not off.empty:
        worst = float(((off["mean"] - off["load"]) / off["load"]).abs().max())
        parts.append(f"Load calibration: the measured offered load (files on the wire plus UDP noise, over "
                     f"capacity × run time) is within {100 * worst:.1f} % of the nominal load at every point "
                     "(the noise starts with a silence, so short runs offer slightly less).")
    parts.append("## Targets A–E: every check")
    parts += checks_markdown(verdicts)
    return "\n\n".join(parts) + "\n"
