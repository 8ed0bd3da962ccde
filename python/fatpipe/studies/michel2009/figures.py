"""Figures 4.3–4.17: one figure per experiment, one panel per bg level, ours with 95 % CI error
bars and the paper's points where the paper gives numbers (its figures are lost; only tables and
prose numbers survive).

matplotlib is imported inside the functions (Agg canvas, no pyplot state), so importing this
module costs nothing.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fatpipe.studies.michel2009.reference import load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FIGURES", "figure", "topology_figure", "write_all"]

#: figure number -> (experiment, x column or "bg", metric, y label, y scale)
FIGURES: dict[str, tuple[str, str, str, str, float]] = {
    "4.3": ("D-S1", "n_flows", "main_utilisation", "utilisation (%)", 100),
    "4.4": ("D-S3", "capacity_bps", "main_utilisation", "utilisation (%)", 100),
    "4.5a": ("D-S3a", "capacity_bps", "main_utilisation", "utilisation (%)", 100),
    "4.5b": ("D-S3b", "capacity_bps", "main_utilisation", "utilisation (%)", 100),
    "4.5c": ("D-S3c", "capacity_bps", "main_utilisation", "utilisation (%)", 100),
    "4.6": ("D-S2", "delay_s", "main_utilisation", "utilisation (%)", 100),
    "4.7": ("D-C", "n_hs", "reno_share_main", "Reno share of the link (%)", 100),
    "4.8a": ("D-F1a", "bg", "main_jain", "Jain index", 1),
    "4.8b": ("D-F1b", "bg", "main_jain", "Jain index", 1),
    "4.8c": ("D-F1c", "bg", "main_jain", "Jain index", 1),
    "4.9": ("D-F2", "bg", "jain_cc_aggregates_excl_libra", "Jain index (per protocol, excl. LIBRA)", 1),
    "4.10": ("D-CV", "bg", "convergence_time_s", "convergence time (s)", 1),
    "4.11": ("D-ST", "bg", "main_stability_cv", "cv of aggregate throughput (%)", 100),
    "4.13": ("P-S1", "n_flows", "main_utilisation", "utilisation (%)", 100),
    "4.14": ("P-S2", "capacity_bps", "main_utilisation", "utilisation (%)", 100),
    "4.15": ("P-C", "n_hs", "reno_share_main", "Reno share of the link (%)", 100),
    "4.16": ("P-F1", "bg", "main_jain", "Jain index", 1),
    "4.17": ("P-F2", "bg", "rtt_short_jain", "Jain index per RTT group", 1),
}


def _paper_points(fig: str) -> dict[str, list[tuple[float, float]]]:
    """protocol -> [(x, y)] in the figure's units, where the paper's tables give them."""
    out: dict[str, list[tuple[float, float]]] = {}
    if fig == "4.8a":
        t = load("table4_2_rtt_fairness")
        for p, g in t.groupby("protocol"):
            out[str(p)] = [(b / 100, j) for b, j in zip(g["bg_pct"], g["jain"])]
    elif fig == "4.9":
        t = load("table4_3_jain")
        g = t[t["row"] == "excl_libra"]
        out["paper Jain*"] = [(b / 100, j) for b, j in zip(g["bg_pct"], g["jain"])]
    elif fig == "4.17":
        # Jain per group derived from Table 4.5 (seed note §6.9)
        out["paper 90 ms"] = [(0.2, 0.766), (0.5, 0.720), (0.8, 0.544)]
        out["paper 180 ms"] = [(0.2, 0.818), (0.5, 0.702), (0.8, 0.461)]
    return out


def figure(tidy: "pd.DataFrame", fig: str) -> Any:
    """A matplotlib Figure for Figure ``fig`` (a key of :data:`FIGURES`), or None without data."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from fatpipe.studies.michel2009.targets import normalise

    exp, x, metric, ylabel, scale = FIGURES[fig]
    d = normalise(tidy)
    d = d[(d["experiment"] == exp) & (d["metric"] == metric)]
    if d.empty:
        return None
    paper = _paper_points(fig)
    per_bg = x != "bg"
    bgs = sorted(set(d["bg"])) if per_bg else [None]
    f = Figure(figsize=(4.2 * len(bgs), 3.6))
    FigureCanvasAgg(f)
    for i, bg in enumerate(bgs):
        ax = f.add_subplot(1, len(bgs), i + 1)
        sub = d if bg is None else d[(d["bg"] - bg).abs() < 1e-9]
        for proto, g in sub.groupby("protocol"):
            g = g.sort_values(x)
            hw = [0.0 if math.isnan(h) else h * scale for h in g["half_width"]]
            ax.errorbar(g[x], g["mean"] * scale, yerr=hw, marker="o", ms=3, capsize=2, label=f"{proto}")
        for name, pts in paper.items():
            # the paper's points are already in the figure's units (Jain indices)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "kx",
                    linestyle="none", label=f"paper {name}" if not name.startswith("paper") else name)
        if x in ("n_flows", "capacity_bps"):
            ax.set_xscale("log", base=2 if x == "n_flows" else 10)
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        ax.set_title(f"Fig {fig} ({exp})" + (f", bg {bg:.0%}" if bg is not None else ""))
        ax.grid(alpha=0.3)
    f.axes[-1].legend(fontsize=6, loc="best")
    f.tight_layout()
    return f


def topology_figure(plan: dict[str, Any]) -> Any:
    """Figure 4.12 (= 4.2): the parking lot as simulated, drawn from its plan — routers in a row,
    the main senders and receivers at the ends, each bottleneck's cross hosts above it, every
    link labelled with its rate and one-way delay. (The paper's drawing is lost; this is our
    reconstruction, docs/parking-lot.md.)"""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    links = {l["name"]: l for l in plan["links"]}
    routers = sorted((n["name"] for n in plan["nodes"] if n["kind"] == "router"), key=lambda r: int(r[1:]))
    senders = [n["name"] for n in plan["nodes"] if n["name"][0] == "s" and n["name"][1:].isdigit()]
    k = len(routers) - 1
    pos = {r: (2.0 * i, 0.0) for i, r in enumerate(routers)}
    pos["s"], pos["d"] = (-2.0, 0.0), (2.0 * k + 2.0, 0.0)
    for i in range(k):
        pos[f"x{i}l"], pos[f"x{i}r"] = (2.0 * i + 0.25, 1.2), (2.0 * i + 1.75, 1.2)
    f = Figure(figsize=(2.2 * (k + 2), 2.8))
    FigureCanvasAgg(f)
    ax = f.add_subplot(1, 1, 1)

    def edge(a: str, b: str, name: str, above: bool = False) -> None:
        (x0, y0), (x1, y1) = pos[a], pos[b]
        ax.plot([x0, x1], [y0, y1], "k-", lw=2 if a[0] == "r" and b[0] == "r" else 1)
        l = links.get(name)
        if l and not above:  # cross access links are summarised in the caption (no room here)
            txt = f"{l['rate_bps'] / 1e6:g} Mb/s\n{l['delay_ns'] / 1e6:g} ms"
            ax.text((x0 + x1) / 2, (y0 + y1) / 2 - 0.32, txt, ha="center", fontsize=6)

    for i in range(k):
        edge(routers[i], routers[i + 1], f"{routers[i]}->{routers[i + 1]}")
        edge(f"x{i}l", routers[i], f"x{i}l->{routers[i]}", above=True)
        edge(routers[i + 1], f"x{i}r", f"{routers[i + 1]}->x{i}r", above=True)
    edge("s", routers[0], "")
    edge(routers[-1], "d", "")
    for name, (x, y) in pos.items():
        label = {"s": f"s0..s{len(senders) - 1}", "d": f"d0..d{len(senders) - 1}"}.get(name, name)
        ax.plot([x], [y], "o" if name[0] == "r" else "s", ms=9, color="tab:blue" if name[0] == "r" else "tab:orange")
        ax.text(x, y + 0.2, label, ha="center", fontsize=7)
    # to 10 ms: delay_spread adds up to a couple of ms per pair
    rtts = sorted({10 * round(f["path_rtt_ns"] / 1e7) for f in plan["flows"] if f.get("role") == "main"})
    ax.set_title(f"Fig 4.12: parking lot as simulated ({k} bottlenecks; main flows s→d, base RTTs "
                 f"{', '.join(map(str, rtts))} ms; cross/background x<k>l↔x<k>r)", fontsize=8)
    acc = links.get(f"x0l->{routers[0]}")
    if acc:
        ax.text(2.0 * k + 2.0, -0.7, f"access links {acc['rate_bps'] / 1e6:g} Mb/s, delays set from the base RTTs",
                ha="right", fontsize=6)
    ax.set_axis_off()
    ax.set_ylim(-0.8, 1.8)
    f.tight_layout()
    return f


def write_all(tidy: "pd.DataFrame", out: str | Path, parking_lot_plan: dict[str, Any] | None = None) -> list[Path]:
    """Every figure with data, as PNG files ``fig-<n>.png`` in ``out``; the paths written.
    ``parking_lot_plan`` (a plan of the parking-lot base scenario) adds Figure 4.12."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if parking_lot_plan is not None:
        p = out / "fig-4.12.png"
        topology_figure(parking_lot_plan).savefig(p, dpi=110)
        written.append(p)
    for fig in FIGURES:
        f = figure(tidy, fig)
        if f is not None:
            p = out / f"fig-{fig}.png"
            f.savefig(p, dpi=110)
            written.append(p)
    return written

