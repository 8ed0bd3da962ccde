"""The study hook of ``studies/augusto2008`` (study.toml ``analysis = "fatpipe.studies.augusto2008.study"``).

:func:`fatpipe.studies.reproduction.reproduce` runs the sweeps (the simulator's in parallel, then
the testbed's one at a time; a machine that cannot host the testbed skips those with the reason)
and calls

- :func:`evaluate` ``(store, outcomes, mode)``: the verdicts of the 18 targets (E1-E8 once per
  environment);
- :func:`report_sections` ``(store, outcomes, mode, verdicts, out)``: the tables model vs testbed
  vs simulator per experiment, the figures, and every check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

__all__ = ["collect", "evaluate", "report_sections"]

_cache: dict[int, Any] = {}


def _traces(store: Any, outcomes: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for env in ("testbed", "sim", "sim1g"):
        o = outcomes.get(f"trace.{env}")
        if o is None or getattr(o, "skipped", False):
            continue
        runs = store.runs(o.sweep.name)
        if runs.empty:
            continue
        r = store.load(runs.sort_values("seed")["key"].iloc[0])
        s = r.flow_series.to_pandas()
        s = s[s["flow_id"] == 0].sort_values("t_s")
        f0 = r.plan["flows"][0]
        t0 = float(r.flows.to_pandas()["start_s"].iloc[0]) if env == "testbed" else 0.0
        out[env] = {"t_s": (s["t_s"] - t0).to_numpy(), "cwnd": s["cwnd_pkts"].to_numpy(dtype=float),
                    "bytes": s["bytes_delivered"].to_numpy(dtype=float), "rtt_s": f0["path_rtt_ns"] * 1e-9}
    return out


def collect(store: Any, outcomes: Mapping[str, Any], mode: Any):
    key = id(outcomes)
    if key in _cache:
        return _cache[key]
    from fatpipe.studies.augusto2008 import data, settings
    from fatpipe.studies.augusto2008.targets import Data
    from fatpipe.testbed.run import kernel_algorithms

    runs = data.frame(store, outcomes)
    reps = max((o.sweep.replications for r, o in outcomes.items() if r.startswith("delay.")), default=1)
    d = Data(cells=data.cells(runs), runs=runs,
             skipped={r: o.reason for r, o in outcomes.items() if getattr(o, "skipped", False)},
             traces=_traces(store, outcomes), kernel_ccs=tuple(kernel_algorithms()), reps=int(reps),
             settings=settings())
    _cache.clear()
    _cache[key] = d
    return d


def evaluate(store: Any, outcomes: Mapping[str, Any], mode: Any) -> list:
    from fatpipe.studies.augusto2008.targets import evaluate_all

    return evaluate_all(collect(store, outcomes, mode))


def report_sections(store: Any, outcomes: Mapping[str, Any], mode: Any, verdicts: list, out: str | Path) -> str:
    from fatpipe.studies.augusto2008 import figures, tables
    from fatpipe.studies.targets import checks_markdown, figures_markdown

    out = Path(out)
    d = collect(store, outcomes, mode)
    d.runs.to_csv(out / "augusto2008-downloads.csv", index=False)
    d.cells.to_csv(out / "augusto2008-cells.csv", index=False)
    parts = ["## Augusto et al. (2008): model, testbed and simulator side by side",
             "Throughput in Mb/s: mean ± 95 % CI half-width over the downloads (n); the model is Eq. 3 with each "
             "segment's propagation RTT and random loss plus the paper's p = 1e-6 (uncapped, as in the paper) and "
             "the same capped at the link rate (an extension). Per download: `augusto2008-downloads.csv`; per "
             "configuration: `augusto2008-cells.csv`."]
    if d.skipped:
        parts.append("Not run here: " + "; ".join(f"`{r}` ({why})" for r, why in sorted(d.skipped.items())))
    parts += tables.all_tables(d)
    parts += figures_markdown(figures.write_all(d, out / "figures"))
    parts.append("## The 18 targets: every check")
    parts += checks_markdown(verdicts, shown=40)
    return "\n\n".join(parts) + "\n"

