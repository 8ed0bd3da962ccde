"""The study hook of ``studies/silva2006`` (study.toml ``analysis = "fatpipe.studies.silva2006.study"``).

:func:`fatpipe.studies.reproduction.reproduce` runs the sweeps (the simulator's in parallel, then
the testbed's one at a time; a machine that cannot host the testbed skips those with the reason)
and calls

- :func:`evaluate` ``(store, outcomes, mode)``: the verdicts of targets 1-20;
- :func:`report_sections` ``(store, outcomes, mode, verdicts, out)``: the figures (throughput
  against delay per loss rate and environment, emulated beside simulated, ON beside OFF, Jain's
  index over time, the cwnd traces), the tables of our numbers, and every check.

The frames come from :mod:`fatpipe.studies.silva2006.data`; the rules from
:mod:`~fatpipe.studies.silva2006.targets`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

__all__ = ["collect", "evaluate", "report_sections"]

_cache: dict[int, Any] = {}


def collect(store: Any, outcomes: Mapping[str, Any], mode: Any):
    """Everything the rules read, from the store (cached per call of reproduce)."""
    key = id(outcomes)
    if key in _cache:
        return _cache[key]
    import fatpipe
    from fatpipe.studies.silva2006 import data, settings
    from fatpipe.studies.silva2006.targets import Data

    grid = data.grid_frame(store, outcomes)
    emu = data.emulation_frame(store, outcomes)
    tuning, offloads = [], []
    for role, o in outcomes.items():
        if ".testbed" in role and not getattr(o, "skipped", False):
            runs = store.runs(o.sweep.name)
            for k in runs["key"] if not runs.empty else []:
                eng = store.metadata(k)["engine"]
                tuning.append(eng.get("tuning") or {})
                offloads.append(eng.get("offloads_off") or [])
    opts = getattr(mode, "analysis", None) or {}
    d = Data(
        settings=settings(), cells=data.cells(grid) if not grid.empty else grid,
        later_cells=data.cells(grid, later_only=True) if not grid.empty else grid,
        fairness=data.fairness_frame(store, outcomes), traces=data.traces(store, outcomes), emulation=emu,
        tuning=tuning, offloads=offloads,
        sweeps={r: o.sweep for r, o in outcomes.items()},
        skipped={r: o.reason for r, o in outcomes.items() if getattr(o, "skipped", False)},
        trace_scale=float(opts.get("trace_scale", 1.0)),
        algorithm_params={a["name"]: {p["name"]: p["default"].strip('"') for p in a["params"]}
                          for a in fatpipe.algorithm_details()},
    )
    _cache.clear()
    _cache[key] = (d, grid)
    return d, grid


def evaluate(store: Any, outcomes: Mapping[str, Any], mode: Any) -> list:
    from fatpipe.studies.silva2006.targets import evaluate_all

    d, _ = collect(store, outcomes, mode)
    return evaluate_all(d)


def report_sections(store: Any, outcomes: Mapping[str, Any], mode: Any, verdicts: list, out: str | Path) -> str:
    from fatpipe.studies.silva2006 import figures, tables
    from fatpipe.studies.targets import checks_markdown, figures_markdown

    out = Path(out)
    d, grid = collect(store, outcomes, mode)
    grid.to_csv(out / "silva2006-connections.csv", index=False)
    if not d.cells.empty:
        d.cells.to_csv(out / "silva2006-cells.csv", index=False)
    if not d.fairness.empty:
        d.fairness.to_csv(out / "silva2006-jain.csv", index=False)
    parts = ["## da Silva (2006): our numbers beside the dissertation's",
             "The dissertation gives no numbers for its throughput and fairness curves (its figures are missing from "
             "the text); its prose claims are targets 12-19. Means with the 95 % CI half-width over connections and "
             "seeds (n). Per-connection data: `silva2006-connections.csv`; per condition: `silva2006-cells.csv`; "
             "Jain's index over time: `silva2006-jain.csv`."]
    parts += tables.all_tables(d)
    parts += figures_markdown(figures.write_all(d, out / "figures"))
    parts.append("## Targets 1-20: every check")
    parts += checks_markdown(verdicts, shown=40)
    return "\n\n".join(parts) + "\n"
