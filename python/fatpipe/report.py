"""The small report of one run: figures (PNG and SVG) and a self-contained ``report.html``.

>>> from fatpipe.report import write_run_report            # doctest: +SKIP
>>> write_run_report("out/demo/report", summary=res.summary,  # doctest: +SKIP
...                  **{t: res.to_pandas(t) for t in fatpipe.result.TABLES})

The tables are the pandas forms of the result tables described in docs/plan-and-results.md. The
report is lenient: a missing column or an empty table gives a note and a "—" rather than an
exception, so that a run's output is not lost because of its report. Figures are drawn on
:class:`matplotlib.figure.Figure` objects with the Agg canvas, so the global pyplot backend of the
caller is left alone; fonts and the SVG hash salt are set locally, so the output is reproducible.
"""

from __future__ import annotations

import base64
import html
import math
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fatpipe.metrics import coefficient_of_variation, jain_index

__all__ = ["write_run_report", "plot_cwnd", "plot_goodput", "plot_queues", "MAX_LEGEND_FLOWS"]

#: Flow plots get a legend only up to this many flows; above it they say "N flows".
MAX_LEGEND_FLOWS = 10
#: Besides the bottleneck, at most this many other (non-empty) queues are drawn.
MAX_OTHER_QUEUES = 8

_RC: Any = {  # Any: matplotlib types rc keys as Literal strings
    "font.size": 11,
    "axes.titlesize": 13,
    "axes.labelsize": 11,
    "legend.fontsize": 9,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "svg.hashsalt": "fatpipe",  # stable element ids: identical runs give identical SVGs
    "svg.fonttype": "none",  # text stays text in the SVG
}
_FIGSIZE = (9.0, 4.6)
_DASH = "—"


# --------------------------------------------------------------------------- small helpers


def _col(df: pd.DataFrame | None, name: str, notes: list[str], table: str) -> pd.Series:
    """Column ``name`` of ``df`` as a Series; NaNs (and a note) if the column is missing."""
    if df is None:
        return pd.Series(dtype="float64")
    if name in df.columns:
        return df[name]
    msg = f"table '{table}' has no column '{name}'"
    if msg not in notes:
        notes.append(msg)
    return pd.Series([np.nan] * len(df), index=df.index, dtype="float64")


def _has(df: pd.DataFrame | None, *cols: str) -> bool:
    return df is not None and len(df) > 0 and all(c in df.columns for c in cols)


def _is_missing(x: Any) -> bool:
    if x is None:
        return True
    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def _fmt(x: Any, spec: str = "", scale: float = 1.0) -> str:
    """Format a number (times ``scale``) with ``spec``; "—" for missing values."""
    if _is_missing(x):
        return _DASH
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)) and scale == 1.0 and not spec:
        return f"{int(x):,}"
    if isinstance(x, (int, float, np.integer, np.floating)):
        v = float(x) * scale
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if spec:
            return format(v, spec)
        return f"{v:,.0f}" if v.is_integer() and abs(v) < 1e15 else f"{v:.6g}"
    return str(x)


def _mbps(x: Any) -> str:
    """bit/s → Mb/s with three decimals (the unit of every rate shown in the report)."""
    return _fmt(x, ".3f", 1e-6)


def _ms(x: Any) -> str:
    """seconds → milliseconds with two decimals."""
    return _fmt(x, ".2f", 1e3)


def _html_table(headers: Sequence[str], rows: Iterable[Sequence[str]], row_classes: Sequence[str] | None = None) -> str:
    """An HTML table; cells are escaped, numeric-looking cells right-aligned by CSS class."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        cells = "".join(f"<td>{html.escape(str(c))}</td>" for c in row)
        body.append(f"<tr{cls}>{cells}</tr>")
    if not body:
        body.append(f'<tr><td colspan="{len(headers)}" class="empty">no rows</td></tr>')
    return f'<table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _flow_labels(flows: pd.DataFrame | None) -> dict[Any, str]:
    """flow_id → "flow 0 (reno)" (the cc is added when the flows table has it)."""
    if not _has(flows, "flow_id"):
        return {}
    assert flows is not None
    ccs = flows["cc"] if "cc" in flows.columns else [None] * len(flows)
    return {fid: f"flow {fid}" + (f" ({cc})" if not _is_missing(cc) else "") for fid, cc in zip(flows["flow_id"], ccs)}


def _new_figure(title: str, ylabel: str) -> tuple[Figure, Any]:
    """A figure on its own Agg canvas with one time-axis plot."""
    fig = Figure(figsize=_FIGSIZE)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_title(title)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    return fig, ax


def _no_data(ax: Any, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what}", ha="center", va="center", transform=ax.transAxes, fontsize=12, color="0.4")


def _many_flows_note(ax: Any, n: int) -> None:
    """"N flows", outside the axes on the right (where the legend would be), clear of the data."""
    ax.text(
        1.02, 1.0, f"{n} flows", ha="left", va="top", transform=ax.transAxes, fontsize=10,
        bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": "0.7"},
    )


def _legend_outside(ax: Any, **kwargs: Any) -> Any:
    """A legend to the right of the axes, so it never hides a line."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)


def _flow_colours(n: int) -> list[Any]:
    if n <= 10:
        return [f"C{i}" for i in range(n)]
    cmap = matplotlib.colormaps["viridis"]
    return [cmap(i / max(n - 1, 1)) for i in range(n)]


# --------------------------------------------------------------------------- figures


def _plot_per_flow(ax, flow_series: pd.DataFrame, flows: pd.DataFrame | None, column: str, *,
                   scale: float, lw: float, alpha: float) -> tuple[int, bool]:
    """One line per flow of ``column * scale`` over time; thinner, lighter, rasterised and
    unlabelled when there are more than :data:`MAX_LEGEND_FLOWS` flows. Returns (flows, many)."""
    labels = _flow_labels(flows)
    groups = list(flow_series.groupby("flow_id", sort=True))
    many = len(groups) > MAX_LEGEND_FLOWS
    for (fid, g), colour in zip(groups, _flow_colours(len(groups))):
        g = g.sort_values("t_s")
        ax.plot(g["t_s"], g[column] * scale, color=colour, lw=0.8 if many else lw,
                alpha=min(alpha, 0.75) if many else alpha,
                label=None if many else labels.get(fid, f"flow {fid}"), rasterized=many)
    return len(groups), many



def plot_cwnd(flow_series: pd.DataFrame, flows: pd.DataFrame | None = None) -> Figure:
    """Congestion window (packets) of every flow over time; one line per flow.

    A legend is drawn for at most :data:`MAX_LEGEND_FLOWS` flows; with more, the axes say "N flows".
    """
    with matplotlib.rc_context(_RC):
        fig, ax = _new_figure("Congestion window", "cwnd (packets)")
        if not _has(flow_series, "t_s", "flow_id", "cwnd_pkts"):
            _no_data(ax, "cwnd samples")
        else:
            n_flows, many = _plot_per_flow(ax, flow_series, flows, "cwnd_pkts", scale=1.0, lw=1.3, alpha=1.0)
            if many:
                _many_flows_note(ax, n_flows)
            else:
                _legend_outside(ax)
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
        fig.tight_layout()
    return fig


def plot_goodput(
    flow_series: pd.DataFrame,
    flows: pd.DataFrame | None = None,
    bottleneck_rate_bps: float | None = None,
) -> Figure:
    """Per-flow goodput (Mb/s, over each sample interval) and their sum over time.

    ``bottleneck_rate_bps``, when given, is drawn as a dashed line (it is a wire rate: goodput,
    being payload only, stays a few percent below it).
    """
    with matplotlib.rc_context(_RC):
        fig, ax = _new_figure("Goodput", "goodput (Mb/s)")
        if not _has(flow_series, "t_s", "flow_id", "goodput_bps"):
            _no_data(ax, "goodput samples")
        else:
            n_flows, many = _plot_per_flow(ax, flow_series, flows, "goodput_bps", scale=1e-6, lw=1.2, alpha=0.9)
            agg = flow_series.groupby("t_s", sort=True)["goodput_bps"].sum()
            ax.plot(agg.index, agg.to_numpy() * 1e-6, color="black", lw=2.0, label="aggregate")
            if bottleneck_rate_bps is not None and not _is_missing(bottleneck_rate_bps):
                ax.axhline(float(bottleneck_rate_bps) * 1e-6, color="0.35", ls="--", lw=1.0,
                           label="bottleneck rate")
            if many:  # no per-flow entries: one entry says how many thin lines there are
                ax.plot([], [], color="0.5", lw=0.8, label=f"{n_flows} flows")
            _legend_outside(ax)
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
        fig.tight_layout()
    return fig


def _queues_to_plot(queue_series: pd.DataFrame, queues: pd.DataFrame | None, bottleneck: str | None) -> tuple[list[str], int]:
    """The bottleneck (if sampled) then the other links whose queue was ever non-empty, longest
    first, at most :data:`MAX_OTHER_QUEUES` of them; also how many non-empty ones were left out."""
    sampled = list(dict.fromkeys(queue_series["link"]))
    if _has(queues, "link", "max_len_pkts"):
        assert queues is not None
        max_len = dict(zip(queues["link"], queues["max_len_pkts"]))
    else:
        max_len = queue_series.groupby("link")["len_pkts"].max().to_dict()
    others = [l for l in sampled if l != bottleneck and not _is_missing(max_len.get(l)) and max_len[l] > 0]
    others.sort(key=lambda l: (-float(max_len[l]), str(l)))
    chosen = ([bottleneck] if bottleneck in sampled else []) + others[:MAX_OTHER_QUEUES]
    return chosen, max(len(others) - MAX_OTHER_QUEUES, 0)


def plot_queues(queue_series: pd.DataFrame, queues: pd.DataFrame | None = None, bottleneck: str | None = None) -> Figure:
    """Queue length (packets) over time: the bottleneck link (thick), and any other link whose
    queue was ever non-empty (thin; at most :data:`MAX_OTHER_QUEUES`, the longest first)."""
    with matplotlib.rc_context(_RC):
        fig, ax = _new_figure(f"Queue length — bottleneck {bottleneck}" if bottleneck else "Queue length", "queue length (packets)")
        if not _has(queue_series, "t_s", "link", "len_pkts"):
            _no_data(ax, "queue samples")
        else:
            chosen, left_out = _queues_to_plot(queue_series, queues, bottleneck)
            if not chosen:
                _no_data(ax, "non-empty queue")
            by_link = dict(list(queue_series.groupby("link", sort=False)))
            for i, link in enumerate(chosen):
                g = by_link[link].sort_values("t_s")
                is_bn = link == bottleneck
                ax.plot(g["t_s"], g["len_pkts"], lw=1.6 if is_bn else 0.9, color="C3" if is_bn else f"C{i % 10}",
                        label=f"{link} (bottleneck)" if is_bn else str(link), zorder=3 if is_bn else 2)
            if chosen:
                title = f"+{left_out} more non-empty queues not shown" if left_out else None
                _legend_outside(ax, title=title, title_fontsize=9)
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
        fig.tight_layout()
    return fig


def _save(fig: Figure, out: Path, stem: str) -> tuple[Path, Path]:
    """Write ``stem.png`` and ``stem.svg``; returns their paths."""
    png, svg = out / f"{stem}.png", out / f"{stem}.svg"
    with matplotlib.rc_context(_RC):
        fig.savefig(png, format="png")
        fig.savefig(svg, format="svg", metadata={"Date": None})
    return png, svg


# --------------------------------------------------------------------------- HTML sections


def _summary_section(summary: dict[str, Any], n_flows: int) -> str:
    s = summary
    util = s.get("utilisation")
    rows = [
        ("scenario", _fmt(s.get("name"))),
        ("seed", _fmt(s.get("seed"))),
        ("fatpipe version", _fmt(s.get("version"))),
        ("simulated time", f"{_fmt(s.get('sim_s'))} s"),
        ("flows", str(n_flows)),
        ("aggregate goodput", f"{_mbps(s.get('aggregate_goodput_bps'))} Mb/s"),
        ("bottleneck", _fmt(s.get("bottleneck"))),
        ("bottleneck utilisation", _DASH if _is_missing(util) else _fmt(util, ".2f", 100.0) + " %"),
        ("drops", _fmt(s.get("drops"))),
        ("retransmits", _fmt(s.get("retransmits"))),
        ("timeouts", _fmt(s.get("timeouts"))),
        ("events", _fmt(s.get("events"))),
        ("data packets delivered", _fmt(s.get("packets_delivered"))),
        ("wall-clock time", f"{_fmt(s.get('wall_s'), '.3f')} s"),
        ("packets per wall-clock second", _fmt(s.get("packets_per_wall_s"), ",.0f")),
    ]
    return "<h2>Run</h2>" + _html_table(("quantity", "value"), rows)


def _fairness_section(flows: pd.DataFrame, notes: list[str]) -> str:
    """Jain's index and cv of per-flow goodput; per congestion control when there are several."""
    gp = pd.to_numeric(_col(flows, "goodput_bps", notes, "flows"), errors="coerce")

    def stats(values: pd.Series) -> tuple[str, str]:
        v = values.dropna().to_numpy(dtype=float)
        try:
            j = f"{jain_index(v):.4f}"
        except ValueError as e:
            j = f"undefined ({str(e).split(': ', 1)[-1]})"
        try:
            cv = f"{coefficient_of_variation(v) * 100:.2f} %"
        except ValueError:
            cv = _DASH
        return j, cv

    jain, cv = stats(gp)
    out = [
        "<h2>Fairness</h2>",
        f'<p>Jain\'s fairness index of per-flow goodput: <b class="jain">{html.escape(jain)}</b>; '
        f"coefficient of variation (population): {html.escape(cv)}.</p>",
    ]
    if "cc" in flows.columns and flows["cc"].nunique(dropna=True) > 1:
        rows = []
        for cc, g in flows.assign(_gp=gp).groupby("cc", sort=True):
            j, c = stats(g["_gp"])
            rows.append((str(cc), str(len(g)), _mbps(g["_gp"].sum()), _mbps(g["_gp"].mean()), j, c))
        out.append(_html_table(("cc", "flows", "aggregate goodput (Mb/s)", "mean per flow (Mb/s)", "Jain", "cv"), rows))
    out.append(
        '<p class="cite">Jain, Chiu &amp; Hawe, DEC-TR-301 (1984): J = (Σx)² / (n·Σx²), between 1/n and 1; '
        "equal to 1/(1 + cv²) with the population cv.</p>"
    )
    return "".join(out)


def _flows_section(flows: pd.DataFrame, notes: list[str]) -> str:
    c = lambda name: _col(flows, name, notes, "flows")  # noqa: E731
    rows = zip(
        c("flow_id"), c("src"), c("dst"), c("cc"), c("start_s"), c("end_s"), c("goodput_bps"), c("throughput_bps"),
        c("bytes_delivered"), c("retransmits"), c("timeouts"), c("fast_recoveries"),
        c("rtt_min_s"), c("rtt_mean_s"), c("rtt_max_s"), c("completion_s"),
    )
    body = [
        (_fmt(fid), _fmt(src), _fmt(dst), _fmt(cc), _fmt(t0, ".3f"), _fmt(t1, ".3f"), _mbps(gp), _mbps(tp),
         _fmt(bd), _fmt(rx), _fmt(to), _fmt(fr), _ms(r0), _ms(r1), _ms(r2), _fmt(done, ".3f"))
        for fid, src, dst, cc, t0, t1, gp, tp, bd, rx, to, fr, r0, r1, r2, done in rows
    ]
    headers = ("flow", "src", "dst", "cc", "start (s)", "end (s)", "goodput (Mb/s)", "throughput (Mb/s)",
               "bytes delivered", "retransmits", "timeouts", "fast recoveries",
               "RTT min (ms)", "RTT mean (ms)", "RTT max (ms)", "completion (s)")
    return "<h2>Flows</h2>" + _html_table(headers, body)


def _queues_section(queues: pd.DataFrame, bottleneck: str | None, notes: list[str]) -> str:
    c = lambda name: _col(queues, name, notes, "queues")  # noqa: E731
    tail, early, forced = (pd.to_numeric(c(n), errors="coerce") for n in ("drops_tail", "drops_aqm_early", "drops_aqm_forced"))
    rand = pd.to_numeric(queues["drops_random"], errors="coerce") if "drops_random" in queues else 0
    total = tail.fillna(0) + early.fillna(0) + forced.fillna(0) + (rand.fillna(0) if not isinstance(rand, int) else 0)
    links = list(c("link"))
    rows = zip(links, c("kind"), c("enqueued"), c("dequeued"), tail, early, forced, total, c("dropped_bytes"),
               c("max_len_pkts"), c("mean_len_pkts"))
    body = [
        (_fmt(l), _fmt(k), _fmt(e), _fmt(d), _fmt(t, ",.0f"), _fmt(ae, ",.0f"), _fmt(af, ",.0f"), _fmt(tot, ",.0f"),
         _fmt(db), _fmt(mx), _fmt(mn, ".2f"))
        for l, k, e, d, t, ae, af, tot, db, mx, mn in rows
    ]
    headers = ("link", "queue", "enqueued", "dequeued", "drops: tail", "drops: AQM early", "drops: AQM forced",
               "drops: total", "dropped bytes", "max length (pkts)", "mean length (pkts)")
    classes = ["bottleneck" if l == bottleneck else "" for l in links]
    return "<h2>Queues</h2>" + _html_table(headers, body, classes)


def _links_section(links: pd.DataFrame, bottleneck: str | None, notes: list[str]) -> str:
    c = lambda name: _col(links, name, notes, "links")  # noqa: E731
    names = list(c("link"))
    rows = zip(names, c("from"), c("to"), c("rate_bps"), c("delay_s"), c("tx_bytes"), c("tx_packets"), c("utilisation"))
    body = [
        (_fmt(l), _fmt(a), _fmt(b), _mbps(r), _ms(d), _fmt(tb), _fmt(tp), _fmt(u, ".2f", 100.0))
        for l, a, b, r, d, tb, tp, u in rows
    ]
    headers = ("link", "from", "to", "rate (Mb/s)", "delay (ms)", "tx bytes", "tx packets", "utilisation (%)")
    classes = ["bottleneck" if l == bottleneck else "" for l in names]
    return ("<h2>Links</h2>" + _html_table(headers, body, classes)
            + '<p class="cite">utilisation = tx bytes × 8 / (rate × duration), wire bytes (headers included).</p>')


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 1.6em;
     border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; } th { background: #f2f2f2; text-align: left; }
td { text-align: right; font-variant-numeric: tabular-nums; } td:first-child { text-align: left; }
tr.bottleneck td { font-weight: bold; background: #fff4e5; } td.empty { text-align: center; color: #888; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
.cite { font-size: 0.8em; color: #666; } .notes { color: #8a5300; }
"""


def _figure_html(png: Path, svg: Path, caption: str) -> str:
    data = base64.b64encode(png.read_bytes()).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(caption)}">'
        f"<figcaption>{html.escape(caption)} (vector version: {html.escape(svg.name)})</figcaption></figure>"
    )


# --------------------------------------------------------------------------- entry point


def write_run_report(
    out_dir: str | os.PathLike[str],
    *,
    summary: dict[str, Any],
    flows: pd.DataFrame,
    flow_series: pd.DataFrame,
    queues: pd.DataFrame,
    queue_series: pd.DataFrame,
    links: pd.DataFrame,
    scenario_text: str | None = None,
    command: str | None = None,
) -> Path:
    """Write the report of one run into ``out_dir`` (created if needed); returns ``report.html``.

    Files: ``cwnd``, ``goodput`` and ``queues`` as ``.png`` and ``.svg``, and ``report.html``, a
    single self-contained page (figures embedded as base64 PNG) with the run summary, per-flow
    table, Jain's index of per-flow goodput, queue and link tables, the scenario text and the
    command that reruns it. ``summary`` is ``Result.summary``; the tables are
    ``Result.to_pandas(name)``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    bottleneck = summary.get("bottleneck")
    bottleneck = None if _is_missing(bottleneck) else str(bottleneck)

    bn_rate = None
    if bottleneck is not None and _has(links, "link", "rate_bps"):
        match = links.loc[links["link"] == bottleneck, "rate_bps"]
        bn_rate = float(match.iloc[0]) if len(match) else None

    figures = []
    for stem, fig, caption in (
        ("cwnd", plot_cwnd(flow_series, flows), "Congestion window of each flow over time."),
        ("goodput", plot_goodput(flow_series, flows, bn_rate),
         "Goodput of each flow over each sampling interval, and their sum."),
        ("queues", plot_queues(queue_series, queues, bottleneck),
         "Queue length of the bottleneck link and of any other link whose queue was ever non-empty."),
    ):
        png, svg = _save(fig, out, stem)
        figures.append(_figure_html(png, svg, caption))

    name = summary.get("name") or "run"
    sections = [
        _summary_section(summary, len(flows)),
        _fairness_section(flows, notes),
        _flows_section(flows, notes),
        "<h2>Figures</h2>" + "".join(figures),
        _queues_section(queues, bottleneck, notes),
        _links_section(links, bottleneck, notes),
        "<h2>Scenario</h2>" + (f"<pre>{html.escape(scenario_text)}</pre>" if scenario_text else "<p>not recorded</p>"),
        "<h2>Rerun</h2>" + (f'<pre class="command">{html.escape(command)}</pre>' if command else "<p>command not recorded</p>"),
    ]
    warnings = list(summary.get("warnings") or [])
    if warnings or notes:
        items = "".join(f"<li>{html.escape(str(w))}</li>" for w in [*warnings, *notes])
        sections.append(f'<h2>Notes</h2><ul class="notes">{items}</ul>')

    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>fatpipe report — {html.escape(str(name))}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>fatpipe report — {html.escape(str(name))}</h1>\n"
        f'<p class="cite">seed {html.escape(_fmt(summary.get("seed")))}, '
        f'fatpipe {html.escape(_fmt(summary.get("version")))}</p>\n'
        + "\n".join(sections)
        + "\n</body>\n</html>\n"
    )
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
