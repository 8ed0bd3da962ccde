"""Run a study: its sweeps into the store, its targets evaluated, its report written."""

from __future__ import annotations

import html
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fatpipe.studies import StudyError
from fatpipe.studies.study import Study, load_study
from fatpipe.studies.targets import FAILS, HOLDS, NOT_COMPARABLE, Verdict

__all__ = ["reproduce", "StudyOutcome", "SkippedSweep", "points_for"]


@dataclass
class SkippedSweep:
    """A sweep this machine could not run (a testbed sweep without root or namespaces)."""

    sweep: Any
    reason: str
    skipped: bool = True
    ran: int = 0
    reused: int = 0
    failures: list = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.sweep.runs())


@dataclass
class StudyOutcome:
    study: Study
    mode: str
    verdicts: list[Verdict]
    report: Path
    sweeps: dict[str, Any]  # role -> SweepOutcome

    @property
    def failed_runs(self) -> int:
        return sum(len(o.failures) for o in self.sweeps.values())


def reproduce(name: str, *, mode: str = "quick", replications: int | None = None, store: Any = "results",
              out: str | Path | None = None, workers: int | None = None, cluster: Any = None,
              studies_root: str | Path | None = None, progress: bool = False) -> StudyOutcome:
    """Run study ``name`` in ``mode`` ("quick" or "full"); returns the verdicts and the report path."""
    from fatpipe.experiments import Sweep, open_store, run_sweep

    from fatpipe.testbed.system import TestbedUnavailable

    study = load_study(name, studies_root)
    if mode not in study.modes:
        raise StudyError(f"{study.name} has no {mode!r} mode; it offers: {', '.join(study.modes)}")
    m = study.modes[mode]
    # None: each sweep file's own replications (a study whose sweeps differ, e.g. per loss rate).
    reps = replications or m.replications
    st = store if hasattr(store, "runs") else open_store(store)
    sweeps = {role: Sweep.load(path, replications=reps) for role, path in m.sweeps.items()}
    outcomes: dict[str, Any] = {}
    # Simulator sweeps first, in parallel; then testbed sweeps, one run at a time in real time,
    # with nothing else of ours competing for the CPU. A machine that cannot host the testbed
    # (not root, no namespaces) skips them with the reason; their targets are not comparable.
    for role, sw in sorted(sweeps.items(), key=lambda kv: kv[1].backend == "testbed"):
        if sw.backend == "testbed":
            try:
                outcomes[role] = run_sweep(sw, st, progress=progress)
            except TestbedUnavailable as e:
                outcomes[role] = SkippedSweep(sw, str(e))
        else:
            outcomes[role] = run_sweep(sw, st, workers=workers, cluster=cluster, progress=progress)
    outcomes = {role: outcomes[role] for role in m.sweeps}
    verdicts = []
    for t in study.targets:
        o = outcomes[t.sweep]
        if getattr(o, "skipped", False):
            verdicts.append(Verdict(t, NOT_COMPARABLE, f"sweep {o.sweep.name} was not run: {o.reason}"))
            continue
        verdicts.append(t.evaluate(points_for(st, o.sweep.name, t.metric, t.x)))
    # A study's own analysis module (study.toml `analysis`) judges targets that are rules over
    # several sweeps at once and adds report sections (tables beside the paper, figures).
    analysis = study.analysis_module()
    if analysis is not None:
        verdicts += list(analysis.evaluate(st, outcomes, m))
    out_dir = Path(out) if out else Path("out") / f"{study.name}-{mode}"
    out_dir.mkdir(parents=True, exist_ok=True)
    sections = ""
    if analysis is not None and callable(getattr(analysis, "report_sections", None)):
        sections = analysis.report_sections(st, outcomes, m, verdicts, out_dir)
        (out_dir / "analysis.md").write_text(sections)
    report = _write(study, mode, reps, st, outcomes, verdicts, out_dir, sections)
    return StudyOutcome(study, mode, verdicts, report, outcomes)


def points_for(store: Any, sweep: str, metric: str, x: str) -> pd.DataFrame:
    """Per sweep point: x, mean, half_width, n of ``metric`` (x may be a derived quantity)."""
    from fatpipe.experiments import summarize_sweep
    from fatpipe.report_sweep import numeric

    d = store.sweep_definition(sweep)
    runs = store.runs(sweep)
    summ = summarize_sweep(runs, d["parameters"], [metric])
    if x == "buffer_bdp":
        firsts = runs.groupby("point", sort=True)["key"].first()
        xs = {p: _buffer_over_bdp(store.metadata(k)["plan"]) for p, k in firsts.items()}
        summ["x"] = summ["point"].map(xs)
    else:
        if x not in summ:
            raise KeyError(f"sweep {sweep} does not vary {x!r}")
        summ["x"] = [numeric(v) for v in summ[x]]
    return summ[["point", "x", "mean", "half_width", "n"]]


def _buffer_over_bdp(plan: dict[str, Any]) -> float:
    """Bottleneck buffer (packets) over the first flow's bandwidth-delay product (packets)."""
    link = next(l for l in plan["links"] if l["name"] == plan["bottleneck"])
    f = plan["flows"][0]
    bdp = f["path_bottleneck_bps"] * f["path_rtt_ns"] / 1e9 / (8 * (f["mss"] + f["header_bytes"]))
    return float(link["queue"]["limit_packets"]) / bdp


def _command(study: Study, mode: str, reps: int | None, store: Any) -> str:
    r = f" --reps {reps}" if reps else ""
    return f"fatpipe reproduce {study.name} --{mode}{r} --store {shlex.quote(str(store.root))}"


_BADGE = {HOLDS: "#2e7d32", FAILS: "#c62828", NOT_COMPARABLE: "#757575"}


def _write(study: Study, mode: str, reps: int, store: Any, outcomes: dict, verdicts: list[Verdict], out: Path,
           sections: str = "") -> Path:
    from fatpipe.report_sweep import write_sweep_report

    out.mkdir(parents=True, exist_ok=True)
    links = []
    for role, o in outcomes.items():
        if getattr(o, "skipped", False):
            links.append(f"<li>{html.escape(role)}: sweep {html.escape(o.sweep.name)} ({o.sweep.backend}), "
                         f"{o.total} runs <b>not run</b>: {html.escape(o.reason)}</li>")
            continue
        mine = [v for v in verdicts if v.target.sweep == role]
        # Reference curves are drawn beside the reproduction in each target's own figure
        # (_side_by_side), in the target's x (which may be derived, e.g. buffer/BDP).
        page = write_sweep_report(store, o.sweep.name, out / role, commands=[_command(study, mode, reps, store)],
                                  title=f"{study.title}: {role} ({mode})", extra_html=_verdicts_html(mine, out / role),
                                  max_series=study.modes[mode].report_series)
        on = " on the testbed" if o.sweep.backend == "testbed" else ""
        links.append(f'<li><a href="{role}/{page.name}">{html.escape(role)}</a>: sweep {html.escape(o.sweep.name)}{on}, '
                     f"{o.total} runs ({o.ran} run now, {o.reused} reused, {len(o.failures)} failed)</li>")
    cmd = _command(study, mode, reps, store)
    body = (
        f"<h1>{html.escape(study.title)}</h1><p>{html.escape(study.source)}</p>"
        f"<p>Mode <b>{mode}</b>: {html.escape(study.modes[mode].description)} "
        f"{f'{reps} replications per point' if reps else 'replications as each sweep file gives them'}. "
        f"Study folder: {html.escape(study.name)}/ (README: every parameter choice and deviation).</p>"
        "<h2>Reproduction targets</h2>" + _verdicts_html(verdicts, out)
        + (_markdown_html(sections) + '<p>The same as markdown: <a href="analysis.md">analysis.md</a>.</p>'
           if sections else "")
        + "<h2>Sweeps</h2><ul>" + "".join(links) + "</ul>"
        + "<h2>Rerun</h2><pre>" + html.escape(cmd) + "</pre>"
    )
    from fatpipe.report import _CSS

    page = out / "index.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(study.title)}</title>"
                    f"<style>{_CSS}</style></head><body>{body}</body></html>")
    return page


def _verdicts_html(verdicts: list[Verdict], out: Path) -> str:
    from fatpipe.report import _html_table
    from fatpipe.report_sweep import fmt_ci

    if not verdicts:
        return ""
    parts = []
    for v in verdicts:
        t = v.target
        badge = f'<b style="color:{_BADGE[v.status]}">{v.status}</b>'
        parts.append(f"<h3>{html.escape(t.id)}: {html.escape(t.claim)}</h3><p>{badge}: {html.escape(v.detail)}. "
                     f"<i>Tolerance and why:</i> {html.escape(t.why)}</p>")
        fig = _side_by_side(v, out)
        if fig:
            parts.append(fig)
        if v.rows:
            ref = "reference" in v.rows[0]
            heads = [t.x, *(["reference"] if ref else []), f"{t.metric} (fatpipe)", *(["difference"] if ref else [])]
            rows = [[f"{r['x']:.3g}", *([f"{r['reference']:.4g}"] if ref else []),
                     fmt_ci(float(r["mean"]), float(r["half_width"]), int(r["n"])),
                     *([f"{r['difference']:+.3g}"] if ref else [])] for r in v.rows]
            parts.append(_html_table(heads, rows))
    return "".join(parts)


def _side_by_side(v: Verdict, out: Path) -> str:
    """Reference curve and reproduction (mean, 95 % CI) on one figure, embedded in the page."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from fatpipe.report import _figure_html, _save

    if not v.rows:
        return ""
    t = v.target
    fig = Figure(figsize=(7.5, 4.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    xs = np.array([r["x"] for r in v.rows], dtype=float)
    if t.kind == "reference":
        ref = pd.read_csv(t.reference).sort_values("x")
        ax.plot(ref["x"], ref["value"], "k--", label=f"reference: {ref['source'].iloc[0]}"[:70])
        ax.fill_between(ref["x"], ref["value"] - t.tolerance, ref["value"] + t.tolerance, color="0.85",
                        label=f"tolerance ±{t.tolerance:g}")
    ax.errorbar(xs, [r["mean"] for r in v.rows], yerr=np.nan_to_num([r["half_width"] for r in v.rows]),
                marker="o", capsize=3, label="fatpipe (mean, 95 % CI)")
    ax.set_xlabel(t.x)
    ax.set_ylabel(t.metric)
    ax.set_title(f"{t.id}: {v.status}")
    ax.legend(loc="best")
    out.mkdir(parents=True, exist_ok=True)
    png, svg = _save(fig, out, f"target-{t.id}")
    return _figure_html(png, svg, f"{t.id}: reproduction and reference")


def _markdown_html(md: str) -> str:
    """The small markdown subset analysis modules write: headings, paragraphs, ``- `` lists,
    pipe tables and ``![alt](src)`` images (no third-party markdown package is a dependency)."""
    import re

    def inline(t: str) -> str:
        t = html.escape(t)
        t = re.sub(r"`([^`]+)`", r"<code>\1</code>", t)
        return re.sub(r"\*([^*]+)\*", r"<i>\1</i>", t)

    out: list[str] = []
    for block in re.split(r"\n\s*\n", md.strip()):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        if lines[0].startswith("#"):
            level = min(len(lines[0]) - len(lines[0].lstrip("#")) + 1, 6)
            out.append(f"<h{level}>{inline(lines[0].lstrip('#').strip())}</h{level}>")
            lines = lines[1:]
            if not lines:
                continue
        if all(l.startswith("|") for l in lines):
            cells = [[c.strip() for c in l.strip().strip("|").split("|")] for l in lines if not set(l) <= set("|-: ")]
            head, body = cells[0], cells[1:]
            out.append("<table><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in body)
                       + "</table>")
        elif all(l.startswith("- ") for l in lines):
            out.append("<ul>" + "".join(f"<li>{inline(l[2:])}</li>" for l in lines) + "</ul>")
        elif all(re.fullmatch(r"!\[[^\]]*\]\([^)]+\)", l.strip()) for l in lines):
            for l in lines:
                alt, src = re.fullmatch(r"!\[([^\]]*)\]\(([^)]+)\)", l.strip()).groups()
                out.append(f'<figure><img src="{html.escape(src)}" alt="{html.escape(alt)}" style="max-width:100%">'
                           f"<figcaption>{html.escape(alt)}</figcaption></figure>")
        else:
            out.append("<p>" + inline(" ".join(lines)) + "</p>")
    return "".join(out)
