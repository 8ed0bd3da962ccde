"""The dissertation's figures regenerated: throughput against delay per loss rate (simulated,
Figs 4.14-4.18; emulated with ON/OFF and the simulator's replica beside it, Figs 4.5-4.13), Jain's
index over time (Figs 4.19-4.21) and the cwnd traces (Figs 2.2-2.6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["write_all"]

MARKERS = {"reno": "o", "highspeed": "s", "scalable": "^", "htcp": "v", "bic": "D", "cubic": "P", "bbr": "X"}


#: Error bars (95 % CI) are drawn from this many values up: with two, Student's t (12.7) makes a
#: bar wider than the axis and hides the means; the tables give every half-width.
MIN_N_FOR_BARS = 3


def _bars(g: Any) -> Any:
    return g["half_width"].where(g["n"] >= MIN_N_FOR_BARS, 0.0).fillna(0.0)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def grid(d: Any, out: Path) -> Path | None:
    c = d.cells
    if c.empty:
        return None
    c = c[(c["env"] == "sim") & (~c["real"])]
    if c.empty:
        return None
    plt = _plt()
    losses = sorted(c["loss"].unique(), reverse=True)
    fig, axes = plt.subplots(1, len(losses), figsize=(4.2 * len(losses), 3.8), squeeze=False)
    for ax, loss in zip(axes[0], losses):
        s = c[np.isclose(c["loss"], loss)]
        for cc, g in s.groupby("cc"):
            g = g.sort_values("delay_ms")
            ax.errorbar(g["delay_ms"], g["mean"], yerr=_bars(g), marker=MARKERS.get(cc, "."),
                        capsize=2, markersize=4, label=cc)
        ax.set_title(f"loss {100 * loss:g} %")
        ax.set_xlabel("added delay (ms)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("throughput (10^6 bit/s)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Simulated grid at 1 Gb/s (the thesis's Figs 4.14-4.18)")
    fig.tight_layout()
    p = out / "fig4_14-18_simulated_grid.png"
    fig.savefig(p, dpi=90)
    plt.close(fig)
    return p


def emulated(d: Any, out: Path) -> Path | None:
    c = d.cells
    if c.empty or not (c["env"] == "testbed").any():
        return None
    c = c[~c["real"]]
    plt = _plt()
    losses = sorted(c[c["env"] == "testbed"]["loss"].unique(), reverse=True)
    fig, axes = plt.subplots(1, len(losses), figsize=(5.2 * len(losses), 4.0), squeeze=False)
    for ax, loss in zip(axes[0], losses):
        s = c[np.isclose(c["loss"], loss)]
        for cc in sorted(s["cc"].unique()):
            for env, nms, ls, lab in (("testbed", True, "-", "testbed ON"), ("testbed", False, "--", "testbed OFF"),
                                      ("replica", "n/a", ":", "simulator replica")):
                g = s[(s["env"] == env) & (s["cc"] == cc)]
                if nms != "n/a":
                    g = g[g["nms"] == nms]
                if g.empty:
                    continue
                g = g.sort_values("delay_ms")
                ax.errorbar(g["delay_ms"], g["mean"], yerr=_bars(g), linestyle=ls,
                            marker=MARKERS.get(cc, "."), capsize=2, markersize=4, label=f"{cc} {lab}")
        ax.set_title(f"loss {100 * loss:g} %")
        ax.set_xlabel("added delay (ms)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"throughput (10^6 bit/s; 95 % CI from n >= {MIN_N_FOR_BARS})")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"Emulated on the testbed (Linux) at {d.settings.EMU_SCALE * d.settings.CAPACITY_BPS / 1e6:g} Mb/s, "
                 "ON/OFF, and the simulator's replica (Figs 4.5-4.13 beside 4.14-4.18)")
    fig.tight_layout()
    p = out / "fig4_5-13_emulated_vs_simulated.png"
    fig.savefig(p, dpi=90)
    plt.close(fig)
    return p


def jain(d: Any, out: Path) -> Path | None:
    from fatpipe.studies.silva2006.measures import JAIN_KIND

    f = d.fairness
    if f.empty:
        return None
    plt = _plt()
    exps = [("rtt", "intra, different RTTs (Fig 4.19)"), ("same", "intra, same RTT (Fig 4.20)"),
            ("inter", "5 reno + 5 X (Fig 4.21)")]
    exps = [e for e in exps if (f["experiment"] == e[0]).any()]
    fig, axes = plt.subplots(1, len(exps), figsize=(5.2 * len(exps), 4.0), squeeze=False)
    for ax, (exp, title) in zip(axes[0], exps):
        s = f[f["experiment"] == exp]
        for i, cc in enumerate(sorted(s["cc"].unique())):
            for kind, ls, alpha in ((JAIN_KIND, "-", 1.0), *[(k, ":", 0.35) for k in ("interval", "cumulative") if k != JAIN_KIND]):
                g = s[(s["cc"] == cc) & (s["kind"] == kind)].groupby("t_s", as_index=False)["jain"].mean()
                label = (("reno alone" if exp == "inter" and cc == "reno" else cc) if kind == JAIN_KIND else None)
                ax.plot(g["t_s"], g["jain"], ls, color=f"C{i}", alpha=alpha, label=label)
        ax.axvline(125, color="0.6", lw=0.8)
        ax.set_ylim(0, 1.02)
        ax.set_title(title)
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"Jain's index ({JAIN_KIND}; dotted: 1 s intervals)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    p = out / "fig4_19-21_jain.png"
    fig.savefig(p, dpi=90)
    plt.close(fig)
    return p


def cwnd(d: Any, out: Path) -> Path | None:
    if not d.traces:
        return None
    plt = _plt()
    ccs = [cc for cc in d.settings.THESIS_PROTOCOLS if cc in d.traces]
    fig, axes = plt.subplots(len(ccs), 1, figsize=(10, 2.1 * len(ccs)), squeeze=False, sharex=True)
    figno = {"reno": "2.2", "highspeed": "2.3", "scalable": "2.4", "htcp": "2.5", "bic": "2.6"}
    for ax, cc in zip(axes[:, 0], ccs):
        tr = d.traces[cc]
        ax.plot(tr["t_s"], tr["cwnd"], lw=0.8, label="cwnd")
        ss = np.where(tr["ssthresh"] < 2**30, tr["ssthresh"], np.nan)
        ax.plot(tr["t_s"], ss, lw=0.6, color="0.5", label="ssthresh")
        ax.set_ylabel("packets")
        ax.set_title(f"Fig {figno.get(cc, '')}: {cc}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    rate = float(d.traces[ccs[0]]["rate_bps"][0])
    axes[-1, 0].set_xlabel(f"time (s) at {rate / 1e6:g} Mb/s, RTT 200 ms"
                           + ("" if d.trace_scale == 1 else f" (x {1 / d.trace_scale:g} for the thesis's 1 Gb/s)"))
    fig.tight_layout()
    p = out / "fig2_2-6_cwnd.png"
    fig.savefig(p, dpi=90)
    plt.close(fig)
    return p


def write_all(d: Any, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    return [p for p in (grid(d, out), emulated(d, out), jain(d, out), cwnd(d, out)) if p is not None]
