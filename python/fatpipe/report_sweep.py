"""The report of a sweep from the results store: figures (PNG and SVG) and one ``report.html``.

What it shows, and why:

- every metric versus a varied parameter, as the mean over replications with its 95 % Student's t
  confidence interval as error bars, one line per value of the other varied parameters (the
  congestion control ``tcp.cc`` when it is varied) — the figure a reader of a paper expects;
- time series (cwnd, goodput, queue length) of chosen runs, drawn by the single-run report's own
  functions (:mod:`fatpipe.report`), because an average hides what one run does;
- tables with mean ± CI half-width *and n* for every value, since a mean without its number of
  replications cannot be judged;
- the exact commands that rerun the sweep and rebuild the page.

The page is self-contained (figures embedded as base64 PNG; the SVGs sit next to it). Studies build
their side-by-side pages from the same pieces (:mod:`fatpipe.studies.report`).

>>> from fatpipe.report_sweep import format_ci
>>> format_ci(0.9005, 0.0083, 3)
'0.9005 ± 0.0083 (n=3)'
>>> format_ci(0.9, float("nan"), 1)
'0.9 (n=1, no CI)'
"""

from __future__ import annotations

import html
import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fatpipe import report as _run_report
from fatpipe.experiments.aggregate import summarize_sweep
from fatpipe.experiments.run_metrics import describe as _describe_metrics

__all__ = [
    "SweepData",
    "RefCurve",
    "load_sweep_data",
    "choose_axes",
    "numeric",
    "format_ci",
    "plot_metric",
    "summary_table_html",
    "rerun_commands",
    "run_series_html",
    "write_sweep_report",
    "page",
    "fmt_ci",
]

_NUM = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/%]*)\s*$")
#: At most this many series per figure; more and the figure would be unreadable.
MAX_SERIES = 10


# --------------------------------------------------------------------------- data


@dataclass
class SweepData:
    """One sweep as stored: its definition, per-run rows and per-point statistics."""

    name: str
    definition: dict[str, Any]
    parameters: dict[str, list[Any]]
    metrics: list[str]
    runs: pd.DataFrame
    summary: pd.DataFrame
    metric_labels: dict[str, str] = field(default_factory=dict)

    def resummarize(self, metrics: Sequence[str] | None = None) -> None:
        """Recompute ``summary`` (e.g. after adding derived metric columns to ``runs``)."""
        if metrics is not None:
            self.metrics = list(metrics)
        self.summary = summarize_sweep(self.runs, list(self.parameters), self.metrics)


def load_sweep_data(store: Any, name: str) -> SweepData:
    """Read sweep ``name`` from ``store`` (a :class:`fatpipe.Store`); KeyError if it is unknown."""
    definition = store.sweep_definition(name)
    params = {k: [_label(x) for x in v] for k, v in (definition.get("parameters") or {}).items()}
    metrics = list(definition.get("metrics") or [])
    runs = store.runs(name)
    for k in params:
        if k in runs:
            runs[k] = [_label(x) for x in runs[k]]
    summary = summarize_sweep(runs, list(params), metrics)
    return SweepData(name, definition, params, metrics, runs, summary, dict(_describe_metrics()))


def _label(v: Any) -> Any:
    """A list or table parameter value (e.g. pairs ``[20, 21]``, ``cc_params``) as its ``--set``
    text: the report groups points by parameter values, which must be hashable."""
    if isinstance(v, (list, dict)):
        from fatpipe.experiments.sweep import _format_value

        return _format_value(v)
    return v


def numeric(v: Any) -> Any:
    """A parameter value as a number for an axis: ``50`` → 50, ``"50pkt"`` → 50, ``"reno"`` → None.

    A pandas Series is converted element-wise (non-numeric values become NaN).

    >>> numeric(50), numeric("10Mbps"), numeric("1.5s"), numeric("reno")
    (50.0, 10.0, 1.5, None)
    >>> numeric(pd.Series(["9pkt", "22pkt"])).tolist()
    [9.0, 22.0]
    """
    if isinstance(v, pd.Series):
        return v.map(lambda x: np.nan if numeric(x) is None else numeric(x)).astype(float)
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    if isinstance(v, str):
        m = _NUM.match(v)
        if m:
            return float(m.group(1))
    return None


def _unit(values: Iterable[Any]) -> str:
    units = {(_NUM.match(v).group(2) if isinstance(v, str) and _NUM.match(v) else "") for v in values}
    return units.pop() if len(units) == 1 else ""


def choose_axes(parameters: dict[str, list[Any]]) -> tuple[str | None, list[str]]:
    """Pick the x axis and the series parameters of the metric figures.

    The x axis is the numeric parameter with the most values (the first such one); every other
    varied parameter becomes part of the series label, with ``tcp.cc`` (the algorithm) first.

    >>> choose_axes({"tcp.cc": ["reno", "cubic"], "topology.pairs": [1, 2, 4]})
    ('topology.pairs', ['tcp.cc'])
    >>> choose_axes({})
    (None, [])
    """
    numeric_params = [k for k, v in parameters.items() if v and all(numeric(x) is not None for x in v)]
    x = max(numeric_params, key=lambda k: len(set(map(str, parameters[k]))), default=None)
    if x is None and parameters:
        x = max(parameters, key=lambda k: len(parameters[k]))
    series = [k for k in parameters if k != x]
    series.sort(key=lambda k: (k != "tcp.cc", list(parameters).index(k)))
    return x, series


def format_ci(mean: float, half_width: float, n: int, spec: str = ".4g") -> str:  # noqa: D401
    """``mean ± half-width (n=N)``; one replication has no interval and says so."""
    if n == 0 or mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return f"— (n={n})"
    if half_width is None or math.isnan(half_width):
        return f"{format(mean, spec)} (n={n}, no CI)"
    return f"{format(mean, spec)} ± {format(half_width, '.2g')} (n={n})"


#: Short alias used by the study pages.
fmt_ci = format_ci


# --------------------------------------------------------------------------- figures


@dataclass
class RefCurve:
    """A reference drawn on a metric figure: a line (``x``, ``y``) or markers, with its source."""

    x: Sequence[float]
    y: Sequence[float]
    label: str
    line: bool = True


def _series_label(row: pd.Series, series: Sequence[str]) -> str:
    return ", ".join(f"{k}={row[k]}" for k in series) if series else ""


def plot_metric(summary: pd.DataFrame, x: str | None, metric: str, series: Sequence[str] = (), *,
                title: str | None = None, ylabel: str | None = None, xlabel: str | None = None,
                references: Sequence[RefCurve] = (), x_values: dict[Any, float] | None = None,
                overlay: Callable[[Any, str], None] | None = None) -> Figure:
    """Mean of ``metric`` versus parameter ``x`` with 95 % CI error bars, one line per series.

    ``summary`` has the rows of :func:`fatpipe.experiments.summarize_sweep`. A non-numeric ``x``
    is drawn as categories in sweep order. ``x_values`` maps a parameter value to the number to
    plot (e.g. a buffer as a fraction of the BDP); ``references`` are overlaid (dashed lines or
    hollow markers) with their source in the legend; ``overlay(ax, metric)``, when given, may draw
    more (a study's reference curves) before the legend is made.
    """
    rows = summary[summary["metric"] == metric].copy()
    with matplotlib.rc_context(_run_report._RC):
        fig = Figure(figsize=_run_report._FIGSIZE)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        ax.set_title(title or metric)
        ax.set_ylabel(ylabel or metric)
        if rows.empty or x is None:
            _run_report._no_data(ax, f"values of {metric}")
            fig.tight_layout()
            return fig
        raw = list(dict.fromkeys(rows[x]))
        if x_values is not None:
            pos = {v: x_values.get(v, math.nan) for v in raw}
        elif all(numeric(v) is not None for v in raw):
            pos = {v: numeric(v) for v in raw}
        else:
            pos = {v: float(i) for i, v in enumerate(raw)}
            ax.set_xticks(list(pos.values()), [str(v) for v in raw])
        unit = _unit(raw) if x_values is None else ""
        ax.set_xlabel(xlabel or (f"{x} ({unit})" if unit else x))
        groups = list(rows.groupby(list(series), sort=False)) if series else [((), rows)]
        for i, (_, g) in enumerate(groups[:MAX_SERIES]):
            g = g.assign(_x=[pos[v] for v in g[x]]).sort_values("_x")
            hw = g["half_width"].to_numpy(dtype=float)
            label = _series_label(g.iloc[0], series) or "fatpipe (mean, 95 % CI)"
            ax.errorbar(g["_x"], g["mean"], yerr=np.where(np.isfinite(hw), hw, 0.0), marker="o", ms=4,
                        capsize=3, lw=1.4, color=f"C{i % 10}", label=label)
        for j, ref in enumerate(references):
            style = dict(color="0.25", lw=1.2, ls="--" if j == 0 else ":") if ref.line else dict(
                color="0.25", marker="s", ms=6, mfc="none", ls="none")
            ax.plot(list(ref.x), list(ref.y), label=ref.label, **style)
        if overlay is not None:
            overlay(ax, metric)
        if len(groups) > MAX_SERIES:
            ax.plot([], [], " ", label=f"+{len(groups) - MAX_SERIES} series not shown")
        if len(groups) > 1 or references or series or overlay is not None:
            _run_report._legend_outside(ax)
        fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- tables


def summary_table_html(summary: pd.DataFrame, parameters: Sequence[str], metrics: Sequence[str],
                       labels: dict[str, str] | None = None) -> str:
    """One table per metric: parameters, mean ± CI half-width (n), std, CI bounds."""
    out = []
    for metric in metrics:
        rows = summary[summary["metric"] == metric]
        body = [
            (*(str(r[p]) for p in parameters), format_ci(r["mean"], r["half_width"], int(r["n"])),
             str(int(r["n"])), _run_report._fmt(r["std"], ".4g"), _run_report._fmt(r["ci_low"], ".4g"),
             _run_report._fmt(r["ci_high"], ".4g"))
            for _, r in rows.iterrows()
        ]
        desc = (labels or {}).get(metric)
        out.append(f"<h3>{html.escape(metric)}</h3>" + (f'<p class="cite">{html.escape(desc)}</p>' if desc else ""))
        out.append(_run_report._html_table((*parameters, "mean ± 95 % CI (n)", "n", "std", "CI low", "CI high"), body))
    return "".join(out)


# --------------------------------------------------------------------------- commands


def _display_path(p: str | None) -> str:
    """A path relative to the working directory when it lies below it (shorter, portable)."""
    if not p:
        return "<sweep.toml>"
    try:
        return str(Path(p).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return p


def rerun_commands(data: SweepData, store_root: str | Path, out_dir: str | Path | None = None) -> list[str]:
    """The commands that rerun the sweep (finished runs are reused) and rebuild this report."""
    d = data.definition
    seeds = list(d.get("seeds") or [])
    cmd = ["fatpipe", "sweep", _display_path(d.get("source")), "--store", _display_path(str(store_root))]
    if seeds == list(range(1, len(seeds) + 1)):
        cmd += ["--reps", str(len(seeds))]
    for o in d.get("scenario_overrides") or []:
        cmd += ["--set", o]
    rep = ["fatpipe", "report", data.name, "--store", _display_path(str(store_root))]
    if out_dir is not None:
        rep += ["--out", _display_path(str(out_dir))]
    lines = [shlex.join(cmd), shlex.join(rep)]
    if seeds and seeds != list(range(1, len(seeds) + 1)):
        lines.insert(1, f"# seeds {seeds} come from the sweep file (--reps would use 1..{len(seeds)})")
    return lines


# --------------------------------------------------------------------------- time series


def run_series_html(store: Any, key: str, out: Path, label: str) -> str:
    """cwnd, goodput and queue-length figures of one stored run, with its rerun command."""
    res = store.load(key)
    meta = store.metadata(key)
    t = {name: res.to_pandas(name) for name in ("flows", "flow_series", "queues", "queue_series", "links")}
    bn = res.bottleneck
    rate = None
    if bn is not None and not t["links"].empty:
        match = t["links"].loc[t["links"]["link"] == bn, "rate_bps"]
        rate = float(match.iloc[0]) if len(match) else None
    parts = [f"<h3>{html.escape(label)} — run {html.escape(key[:12])}</h3>"]
    for stem, fig, caption in (
        ("cwnd", _run_report.plot_cwnd(t["flow_series"], t["flows"]), "Congestion window of each flow."),
        ("goodput", _run_report.plot_goodput(t["flow_series"], t["flows"], rate), "Goodput per sampling interval."),
        ("queues", _run_report.plot_queues(t["queue_series"], t["queues"], bn), "Queue length over time."),
    ):
        png, svg = _run_report._save(fig, out, f"run-{key[:12]}-{stem}")
        parts.append(_run_report._figure_html(png, svg, f"{label}: {caption}"))
    overrides = " ".join(f"--set {shlex.quote(o)}" for o in meta.get("overrides", []))
    source = _display_path((meta.get("scenario_source") or meta.get("source")) if isinstance(meta, dict) else None)
    parts.append(f'<pre class="command">fatpipe run {html.escape(source)} --seed {meta.get("seed")} '
                 f"{html.escape(overrides)}</pre>")
    return "".join(parts)


def _default_runs(data: SweepData) -> list[str]:
    """Without ``--runs``: the first replication of the first and of the last point."""
    if data.runs.empty:
        return []
    first = data.runs.sort_values(["point", "seed"]).groupby("point", sort=True).head(1)
    keys = list(dict.fromkeys([first.iloc[0]["key"], first.iloc[-1]["key"]]))
    return [str(k) for k in keys]


# --------------------------------------------------------------------------- the page


def page(title: str, subtitle: str, sections: Sequence[str]) -> str:
    """A complete self-contained HTML page in the single-run report's style."""
    css = _run_report._CSS + (
        ".holds { color: #17661d; font-weight: bold; } .fails { color: #a01010; font-weight: bold; } "
        ".nc { color: #7a5a00; font-weight: bold; }\n"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n<p class=\"cite\">{html.escape(subtitle)}</p>\n"
        + "\n".join(sections) + "\n</body>\n</html>\n"
    )


def metric_figures_html(data: SweepData, out: Path, prefix: str = "",
                        overlay: Callable[[Any, str], None] | None = None) -> str:
    """Every metric of the sweep versus its x parameter, saved as PNG + SVG, as HTML figures."""
    x, series = choose_axes(data.parameters)
    parts = []
    for metric in data.metrics:
        fig = plot_metric(data.summary, x, metric, series, title=f"{data.name}: {metric}",
                          ylabel=data.metric_labels.get(metric, metric), overlay=overlay)
        stem = f"{prefix}{_slug(data.name)}-{_slug(metric)}"
        png, svg = _run_report._save(fig, out, stem)
        parts.append(_run_report._figure_html(
            png, svg, f"{metric} versus {x}: mean over replications with 95 % CI error bars"
                      + (f", one line per {', '.join(series)}" if series else "")))
    return "".join(parts)


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-") or "x"


def write_sweep_report(store: Any, sweep: str, out_dir: str | Path, *, runs: Sequence[str] = (),
                       commands: Sequence[str] | None = None, title: str | None = None,
                       extra_html: str = "", overlay: Callable[[Any, str], None] | None = None,
                       max_series: int | None = None) -> Path:
    """Write figures and ``report.html`` for stored sweep ``sweep`` into ``out_dir``.

    ``runs`` are run keys (or unique prefixes) whose time series to draw; by default the first
    replication of the first and last point, at most ``max_series`` of them (0: none). ``commands`` replaces the rerun commands (studies
    pass their ``fatpipe reproduce`` line), ``title`` the page title, ``extra_html`` is placed
    before the figures (a study's verdicts) and ``overlay(ax, metric)`` draws on every metric
    figure. Returns the path of ``report.html``.
    """
    data = load_sweep_data(store, sweep)  # an unknown sweep fails before anything is written
    keys = [store.resolve(k) for k in runs] if runs else _default_runs(data)[:max_series]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    params = list(data.parameters)
    n_points = len(data.summary["point"].unique()) if not data.summary.empty else 0
    reps = len(data.definition.get("seeds") or [])
    cmds = list(commands) if commands is not None else rerun_commands(data, store.root, out)
    sections = [
        "<h2>Sweep</h2>" + _run_report._html_table(("quantity", "value"), [
            ("sweep", data.name),
            ("description", data.definition.get("description") or "—"),
            ("varied parameters", "; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in data.parameters.items()) or "—"),
            ("fixed overrides", "; ".join(data.definition.get("scenario_overrides") or []) or "—"),
            ("points × replications", f"{n_points} × {reps} (seeds {data.definition.get('seeds')})"),
            ("finished runs in the store", str(len(data.runs))),
        ]),
        extra_html,
        "<h2>Metrics versus parameters</h2>" + metric_figures_html(data, out, overlay=overlay),
        "<h2>Tables (mean ± 95 % Student's t CI half-width, n replications)</h2>"
        + summary_table_html(data.summary, params, data.metrics, data.metric_labels),
    ]
    if keys:
        labels = {str(r["key"]): f"point {int(r['point'])} ({', '.join(f'{p}={r[p]}' for p in params)}), seed {int(r['seed'])}"
                  for _, r in data.runs.iterrows()}
        sections.append("<h2>Time series of chosen runs</h2>"
                        + "".join(run_series_html(store, k, out, labels.get(k, k[:12])) for k in keys))
    sections.append("<h2>Rerun</h2><pre class=\"command\">" + html.escape("\n".join(cmds)) + "</pre>")
    path = out / "report.html"
    path.write_text(page(title or f"fatpipe sweep report — {data.name}",
                         f"{len(data.runs)} runs from the results store", sections), encoding="utf-8")
    return path
