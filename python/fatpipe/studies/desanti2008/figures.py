"""The paper's Figures 2–9 regenerated: each metric against the offered load, per traffic type,
one line per AQM with its 95 % CI (H2 and RED solid; CoDel and PIE, the extension, dashed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["FIGURE_METRICS", "write_figures"]

#: (metric, axis label), in the paper's figure order (Figs. 2a, 2b, 3a, 3b, 4a, 4b, 5a, 5b).
FIGURE_METRICS: list[tuple[str, str]] = [
    ("queue_mean_pkts", "mean queue (packets)"),
    ("conn_throughput_pct", "throughput per connection (% of link)"),
    ("conn_cwnd_pkts", "cwnd per connection (segments)"),
    ("conn_goodput_bps", "goodput per connection (b/s)"),
    ("conn_timeouts", "RTOs per connection"),
    ("conn_rtt_s", "RTT per connection (s)"),
    ("transfer_time_s", "transfer time (s)"),
    ("connections", "finished connections"),
]

STYLE = {"h2": ("H2 (paper)", "-", "o"), "red": ("RED (paper)", "-", "s"),
         "codel": ("CoDel (extension)", "--", "^"), "pie": ("PIE (extension)", "--", "v")}


def write_figures(tidy: Any, out: Path) -> list[str]:
    """One PNG per traffic type with a panel per metric; returns the file names written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    for traffic in sorted(set(tidy["traffic"])):
        t = tidy[tidy["traffic"] == traffic]
        fig, axes = plt.subplots(2, 4, figsize=(16, 7.5))
        for ax, (metric, label) in zip(axes.flat, FIGURE_METRICS):
            for aqm, (name, ls, marker) in STYLE.items():
                d = t[(t["aqm"] == aqm) & (t["metric"] == metric)].sort_values("load")
                if d.empty:
                    continue
                ax.errorbar(d["load"], d["mean"], yerr=d["half_width"].fillna(0.0), label=name, linestyle=ls,
                            marker=marker, capsize=3, markersize=4)
            ax.set_xlabel("offered load")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        axes.flat[0].legend(fontsize=8)
        fig.suptitle(f"{traffic.upper()} traffic: HSTCP through RED and HSTCP-H2 (mean ± 95 % CI)")
        fig.tight_layout()
        name = f"desanti2008-{traffic}.png"
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        names.append(name)
    return names
