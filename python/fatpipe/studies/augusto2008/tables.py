"""Markdown tables of the Augusto et al. (2008) study: per experiment, model vs testbed vs
simulator, one row per configuration."""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["all_tables"]

#: experiment -> (title, the column that varies, its label)
EXPERIMENTS = {
    "delay": ("Fig. 8: throughput against RTT", "rtt_ms", "RTT (ms)"),
    "cc": ("Fig. 9: the depots' congestion control (2 depots)", "rtt_ms", "RTT (ms)"),
    "loss": ("Fig. 10: throughput against end-to-end loss (10 ms)", "loss", "loss"),
    "size": ("Fig. 11: throughput against file size (30 ms)", "size_mb", "file (MB, scaled)"),
    "buffer": ("Fig. 12: direct transfer against the hosts' buffers", "buffer_bytes", "buffer (KiB)"),
    "endcc": ("The end hosts' algorithm (2 depots vs direct)", "rtt_ms", "RTT (ms)"),
}


def _fmt(m: float, hw: float, n: int) -> str:
    """mean ± half-width (n); a 1 Gb/s row and a 100 Mb/s row of one configuration differ in x
    (files and buffers scale with the rate), so each row has one environment's number or two."""
    if n == 0 or math.isnan(m):
        return "–"
    return f"{m:.1f}" + ("" if math.isnan(hw) else f" ± {hw:.1f}") + f" (n={n})"


def _config(r: pd.Series, exp: str) -> str:
    n = int(r["depots"])
    name = "direct" if n == 0 else f"{n} depot{'s' if n > 1 else ''}"
    if exp == "cc":
        return f"{name}, depots {r['cc']}"
    if exp == "endcc":
        return f"{name}, {r['end_cc']} ends"
    if exp == "buffer":
        return f"{name}, {r['rtt_ms']:g} ms"
    return name


def _x(r: pd.Series, col: str) -> str:
    v = r[col]
    if col == "buffer_bytes":
        return f"{v / 1024:.0f}"
    if col == "loss":
        return f"{v:.2g}"
    return f"{v:g}"


def table(cells: pd.DataFrame, exp: str) -> str:
    title, col, label = EXPERIMENTS[exp]
    c = cells[cells["exp"] == exp]
    if c.empty:
        return ""
    rows = {}
    for _, r in c.iterrows():
        k = (_config(r, exp), _x(r, col), r[col])
        e = rows.setdefault(k, {"model": r["model_mbps"], "capped": r["model_capped_mbps"]})
        e[r["env"]] = _fmt(r["mean"], r["half_width"], int(r["n"]))
    lines = [f"### {title}", "", f"| configuration | {label} | model (Eq. 3) | model capped | testbed 100 Mb/s | "
             "simulator 100 Mb/s | simulator 1 Gb/s |", "|---|---|---|---|---|---|---|"]
    for (cfg, xs, _), e in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][2])):
        lines.append(f"| {cfg} | {xs} | {e['model']:.1f} | {e['capped']:.1f} | {e.get('testbed', '–')} | "
                     f"{e.get('sim', '–')} | {e.get('sim1g', '–')} |")
    return "\n".join(lines)


def gains(cells: pd.DataFrame) -> str:
    """Depots' gain over direct (ratio of means) per experiment point, beside the model's."""
    lines = ["### Gain over direct (ratio of means; the paper: ≈ 2 and ≈ 3 from 70 ms, and at 0.01-0.1 % loss)", "",
             "| experiment | point | env | 1 depot | 2 depots | model 1 / 2 depots |", "|---|---|---|---|---|---|"]
    for exp, col in (("delay", "rtt_ms"), ("loss", "loss"), ("size", "size_mb")):
        c = cells[cells["exp"] == exp]
        for (env, x), g in c.groupby(["env", col]):
            by = {int(r["depots"]): r for _, r in g.iterrows()}
            if 0 not in by:
                continue
            d0 = by[0]["mean"]
            rat = [f"{by[n]['mean'] / d0:.2f}" if n in by and d0 else "–" for n in (1, 2)]
            mod = [f"{by[n]['model_mbps'] / by[0]['model_mbps']:.2f}" if n in by else "–" for n in (1, 2)]
            xs = f"{x:.2g}" if col == "loss" else f"{x:g}"
            lines.append(f"| {exp} | {xs} | {env} | {rat[0]} | {rat[1]} | {mod[0]} / {mod[1]} |")
    return "\n".join(lines)


def all_tables(d) -> list[str]:
    if d.cells.empty:
        return ["No finished downloads."]
    out = [t for t in (table(d.cells, e) for e in EXPERIMENTS) if t]
    out.append(gains(d.cells))
    fn = d.runs[(d.runs["exp"] == "func")]
    if not fn.empty:
        lines = ["### Figure 6: 0-3 depots (testbed)", "", "| depots | redirects | byte-identical | connections seen | "
                 "algorithms asked / run | first byte (ms) | Mb/s |", "|---|---|---|---|---|---|---|"]
        for _, r in fn.sort_values("depots").iterrows():
            lines.append(f"| {int(r['depots'])} | {r['redirects']} | {r['identical']} | {r['segments_seen']} | "
                         f"{r['planned_cc']} / {r['seen_cc']} | {r['first_byte_s'] * 1e3:.0f} | {r['mbps']:.1f} |")
        out.append("\n".join(lines))
    return out
