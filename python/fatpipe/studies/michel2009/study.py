"""The study hook of ``studies/michel2009`` (study.toml ``analysis = "fatpipe.studies.michel2009.study"``).

:func:`fatpipe.studies.reproduction.reproduce` calls

- :func:`evaluate` ``(store, outcomes, mode)`` after the sweeps: the verdicts of T1–T29;
- :func:`report_sections` ``(store, outcomes, mode, verdicts, out)``: markdown (the paper's tables
  beside ours, the figures, every target's checks) that the report embeds.

``outcomes`` maps sweep role -> SweepOutcome; the roles are the seed note's experiment ids
("D-S1", ..., "P-S1", ..., "P-F2"). :func:`tidy_frame` turns the sweeps' per-point summaries into
the frame :mod:`fatpipe.studies.michel2009.targets` reads. The swept columns are read from each
point's elaborated plan, not from the sweep's parameter names, so they mean the same whatever
keys a sweep file uses (and the parking lot's sweeps need no new mapping):

- ``n_flows``: main flows; ``n_hs``: main flows not running Reno;
- ``cc``: the one high-speed protocol among the main flows, "mixed" if several; with none (D-C's
  n_hs = 0 point) the varied ``...tcp.cc`` parameter names the curve the point belongs to;
- ``capacity_bps``: the bottleneck rate over the mode's ``capacity_scale`` (quick runs a tenth
  of the paper's capacities and reports them under the paper's values the targets name);
- ``delay_s``: the bottleneck's one-way delay; ``bg``: the plan's background load.

The parking lot's plan names its first bottleneck ``r0->r1`` as the bottleneck (every main flow
crosses it, and every bottleneck carries the same load), so its rate is P-S2's capacity. Its
per-RTT-group numbers (T21, T22, Tables 4.4/4.5) are per-run metrics
(``rtt_<short|long>_*``, ``goodput_bps_<cc>_<short|long>`` in
:mod:`~fatpipe.studies.michel2009.measures`) that group the main flows by the base RTT the plan
gives each flow (``path_rtt_ns``: 90 and 180 ms), so they reach this frame like any other metric.

Rate metrics (names containing ``_bps``) are divided by ``capacity_scale`` as well, so quick's
goodputs read as the same share of the paper's link. Times (convergence) are not rescaled.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["tidy_frame", "point_columns", "evaluate", "report_sections"]

_RENO = ("reno", "newreno")


def point_columns(plan: Mapping[str, Any], params: Mapping[str, Any], capacity_scale: float = 1.0) -> dict[str, Any]:
    """The tidy frame's descriptive columns of one sweep point (see the module docstring)."""
    from fatpipe.studies.michel2009.measures import background_fraction

    main = [f for f in plan["flows"] if f.get("role", "main") == "main"]
    hs = sorted({f["cc"] for f in main if f["cc"] not in _RENO})
    if len(hs) == 1:
        cc = hs[0]
    elif hs:
        cc = "mixed"
    else:
        varied = [v for k, v in params.items() if k.endswith("tcp.cc")]
        cc = str(varied[0]) if varied else "reno"
    link = next(l for l in plan["links"] if l["name"] == plan.get("bottleneck"))
    return {
        "cc": cc,
        "bg": background_fraction(plan),
        "n_flows": len(main),
        "n_hs": sum(f["cc"] not in _RENO for f in main),
        "capacity_bps": float(round(link["rate_bps"] / capacity_scale)),  # 1e8 / 0.1 is not 1e9 in floats
        "delay_s": link["delay_ns"] / 1e9,
    }


def tidy_frame(store: Any, outcomes: Mapping[str, Any], capacity_scale: float = 1.0) -> "pd.DataFrame":
    """One row per (experiment, point, metric): the columns of :mod:`~fatpipe.studies.michel2009.targets`."""
    import pandas as pd

    from fatpipe.experiments import summarize_sweep

    frames = []
    for exp, o in outcomes.items():
        name = o.sweep.name if hasattr(o, "sweep") else str(o)
        d = store.sweep_definition(name)
        runs = store.runs(name)
        if runs.empty:
            continue
        summ = summarize_sweep(runs, d["parameters"], d["metrics"])
        firsts = runs.groupby("point", sort=True)["key"].first()
        cols = {}
        for point, key in firsts.items():
            g = runs[runs["point"] == point].iloc[0]
            cols[point] = point_columns(store.metadata(key)["plan"], {p: g[p] for p in d["parameters"]}, capacity_scale)
        extra = pd.DataFrame.from_dict(cols, orient="index")
        s = summ[["point", "metric", "mean", "half_width", "n"]].join(extra, on="point")
        # Rates (bit/s) at the paper's scale too: at a tenth of the capacity a flow's share is a
        # tenth of the paper's, so rate / capacity_scale is the same share of the paper's link.
        rates = s["metric"].str.contains("_bps", regex=False)  # main_goodput_bps, goodput_bps_<cc>, ...
        s.loc[rates, ["mean", "half_width"]] = s.loc[rates, ["mean", "half_width"]] / capacity_scale
        s.insert(0, "experiment", exp)
        frames.append(s)
    columns = ["experiment", "point", "cc", "bg", "n_flows", "capacity_bps", "delay_s", "n_hs", "metric", "mean",
               "half_width", "n"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def _scale(mode: Any) -> float:
    opts = getattr(mode, "analysis", None) or {}
    scale = float(opts.get("capacity_scale", 1.0))
    if not scale > 0:
        raise ValueError(f"capacity_scale must be > 0, got {scale}")
    return scale


def evaluate(store: Any, outcomes: Mapping[str, Any], mode: Any) -> list:
    """Verdicts of T1–T29 (:class:`~fatpipe.studies.michel2009.targets.RuleVerdict`) on the sweeps run."""
    from fatpipe.studies.michel2009.targets import evaluate_all

    return evaluate_all(tidy_frame(store, outcomes, _scale(mode)))


def report_sections(store: Any, outcomes: Mapping[str, Any], mode: Any, verdicts: list, out: str | Path) -> str:
    """Markdown: the paper's tables beside ours, Figures 4.3–4.17 (PNG files under ``out``), the
    ratings derived from our scores beside Tables 4.7 (dumbbell) and 4.8 (parking lot), the ranking
    from whichever of the two we have, and every target's checks."""
    from fatpipe.studies.michel2009 import figures, ratings, tables
    from fatpipe.studies.michel2009.reference import load
    from fatpipe.studies.targets import checks_markdown

    out = Path(out)
    tidy = tidy_frame(store, outcomes, _scale(mode))
    tidy.to_csv(out / "michel2009-tidy.csv", index=False)
    parts = ["## Michel (2009): tables, paper beside ours",
             "Cells read `paper / ours` (ours: mean ± 95 % CI half-width over replications; — = not run "
             "in this mode). Per-point data: `michel2009-tidy.csv`."]
    for fn in (tables.table_4_1, tables.table_4_2, tables.table_4_3, tables.table_4_4, tables.table_4_5):
        parts.append(fn(tidy))
    rated, names = [], []
    for topo, table, name in (("dumbbell", "4.7", "dumbbell"), ("parking", "4.8", "parking lot")):
        scores = ratings.property_scores(tidy, topo)
        if scores.empty:
            continue
        ours = ratings.rate(scores)
        rated.append(ours)
        names.append(name)
        parts.append(f"### Ratings (Table {table}) from our scores\n")
        parts.append(tables.ratings_table(ours.reset_index(), topo))
    if rated:
        # The paper ranks on both tables; with one topology run, the ranking is from that one.
        which = " + ".join(names)
        rk = ratings.compare_ranking(ratings.ranking(rated), load("ranking"))
        parts.append(tables.markdown(["protocol", "paper tier", f"our tier ({which})", "agree"],
                                     [[str(r.protocol), str(r.paper_tier), str(r.our_tier), "✓" if r.agree else "✗"]
                                      for r in rk.itertuples()]))
    pl_plan = None
    if any(str(e).startswith("P-") for e in tidy.get("experiment", [])):
        import fatpipe
        from fatpipe.studies.study import studies_dir

        pl_plan = fatpipe.Scenario.load(studies_dir() / "michel2009" / "parkinglot.toml").plan()
    figs = figures.write_all(tidy, out / "figures", parking_lot_plan=pl_plan)
    if figs:
        parts.append("## Figures (ours with 95 % CI; × = the paper's numbers where its tables give them)")
        parts += [f"![Fig {p.stem[4:]}](figures/{p.name})" for p in figs]
    parts.append("## Targets T1–T29: every check")
    parts += checks_markdown(verdicts)
    return "\n\n".join(parts) + "\n"
