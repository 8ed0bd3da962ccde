"""The Augusto et al. (2008) study's figures: Figs. 8-12 as model / testbed / simulator panels,
and Fig. 13's window trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["write_all"]

_STYLE = {"testbed": dict(marker="o", ls="-"), "sim": dict(marker="s", ls="--"), "sim1g": dict(marker="^", ls="--")}
#: Left panel: the testbed and the simulator at 100 Mb/s; right: the simulator at the paper's 1 Gb/s.
_PANELS = (("100 Mb/s: testbed (solid), simulator (dashed)", ("testbed", "sim")),
           ("1 Gb/s: simulator", ("sim1g",)))
_COLOURS = {0: "C0", 1: "C1", 2: "C2", 3: "C3"}


def _panel(ax, c: pd.DataFrame, col: str, group: str, xlabel: str, scale: float = 1.0) -> None:
    for env, st in _STYLE.items():
        if env not in set(c["env"]):
            continue
        for key, g in c[c["env"] == env].groupby(group):
            g = g.sort_values(col)
            colour = _COLOURS.get(key, None) if group == "depots" else None
            name = ("direct" if key == 0 else f"{key} depot{'s' if key > 1 else ''}") if group == "depots" else str(key)
            ax.errorbar(g[col] * scale, g["mean"], yerr=g["half_width"].fillna(0), color=colour, label=f"{name}, {env}",
                        capsize=2, **st)
    if group == "depots":
        for key, g in c[c["env"] == c["env"].iloc[0]].groupby("depots"):
            g = g.sort_values(col)
            ax.plot(g[col] * scale, g["model_capped_mbps"], ":", color=_COLOURS.get(key), alpha=0.6)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("throughput (Mb/s)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)


def write_all(d, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    specs = [("fig08-delay", "delay", "rtt_ms", "depots", "RTT (ms)", 1.0, False),
             ("fig09-cc", "cc", "rtt_ms", "cc", "RTT (ms)", 1.0, False),
             ("fig10-loss", "loss", "loss", "depots", "end-to-end loss", 1.0, True),
             ("fig11-size", "size", "size_mb", "depots", "file (MB, scaled)", 1.0, True),
             ("fig12-buffer", "buffer", "buffer_bytes", "rtt_ms", "hosts' buffer (KiB, scaled)", 1 / 1024, True)]
    for name, exp, col, group, xlabel, scale, logx in specs:
        c = d.cells[(d.cells["exp"] == exp) & (d.cells["n"] > 0)]
        if c.empty:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for ax, (title, envs) in zip(axes, _PANELS):
            sub = c[c["env"].isin(envs)]
            if sub.empty:
                ax.set_visible(False)
                continue
            _panel(ax, sub, col, group, xlabel, scale)
            if logx:
                ax.set_xscale("log")
            ax.set_title(f"Augusto et al. (2008) {name.split('-')[0]}, {title}; model capped dotted", fontsize=8)
        p = out / f"{name}.png"
        fig.tight_layout()
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    if d.traces:
        fig, ax = plt.subplots(figsize=(6, 4))
        for env, tr in d.traces.items():
            ax.plot(tr["t_s"], np.asarray(tr["cwnd"]), label=f"cwnd, {env}", **{k: v for k, v in _STYLE[env].items()
                                                                                 if k == "ls"})
        ax.set_xlabel("time since the connection's start (s)")
        ax.set_ylabel("cwnd (packets)")
        ax.set_title("Fig. 13: direct, 8192 KB x 0.1 buffers, 50 ms", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        p = out / "fig13-trace.png"
        fig.tight_layout()
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths
