"""Markdown tables of the da Silva (2006) reproduction: the dissertation's tables beside our
arithmetic, and our measured numbers where the dissertation has only (missing) figures."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["all_tables", "markdown"]


def markdown(head: list[str], rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows])


def _ci(mean: float, hw: float, n: int) -> str:
    if not math.isfinite(mean):
        return "—"
    return f"{mean:.4g}" + (f" ± {hw:.2g}" if math.isfinite(hw) else "") + f" (n={int(n)})"


def arithmetic(d: Any) -> str:
    from fatpipe.studies.silva2006.targets import PRINTED

    s = d.settings
    rows = []
    for rtt in s.TABLE_3_2_RTTS_MS:
        bdp, q = s.table_3_2(rtt)
        rows.append([f"{rtt}", f"{PRINTED['table_3_2_bdp_mb'][rtt]:g} / {bdp:.3f}",
                     f"{PRINTED['table_3_2_queue'][rtt]} / {q}", f"{PRINTED['table_4_3'][rtt]} / {s.get_queue(rtt)}",
                     f"{s.socket_buffer_bytes(rtt):,}"])
    t = markdown(["RTT or delay (ms)", "BDP MB (thesis / ours)", "Table 3.2 queue (thesis / ours)",
                  "Table 4.3 queue (thesis / get_queue)", "netperf -s/-S (bytes)"], rows)
    days = s.schedule_seconds() / 86400
    return ("### Tables 3.2, 4.3 and the script's buffers (arithmetic)\n\n" + t +
            f"\n\nTable 4.2's schedule, 5 protocols x 10 delays with the 10 s pauses: {s.schedule_seconds():,} s = "
            f"{days:.2f} days (thesis: 29.22).")


def sim_grid(d: Any) -> str:
    c = d.cells
    if c.empty:
        return ""
    c = c[(c["env"] == "sim") & (~c["real"])]
    if c.empty:
        return ""
    parts = ["### Simulated grid (Figs 4.14-4.18): throughput (10^6 bit/s) against the added delay, 1 Gb/s"]
    ccs = sorted(c["cc"].unique())
    for loss in sorted(c["loss"].unique(), reverse=True):
        s = c[np.isclose(c["loss"], loss)]
        rows = []
        for dl in sorted(s["delay_ms"].unique()):
            row = [f"{dl:g}"]
            for cc in ccs:
                x = s[(s["cc"] == cc) & np.isclose(s["delay_ms"], dl)]
                row.append(_ci(*x[["mean", "half_width", "n"]].iloc[0]) if not x.empty else "—")
            rows.append(row)
        parts.append(f"Loss {loss:g} ({100 * loss:g} %):\n\n" + markdown(["delay (ms)", *ccs], rows))
    return "\n\n".join(parts)


def emulated(d: Any) -> str:
    c = d.cells
    if c.empty or not (c["env"] == "testbed").any():
        why = next(iter(d.skipped.values()), "no testbed sweep in this mode") if d.skipped else "no testbed sweep in this mode"
        return f"### Emulated grid on the testbed\n\nNot run: {why}."
    later = d.later_cells
    rows = []
    tb = c[(c["env"] == "testbed") & (~c["real"])]
    for (cc, dl, loss), _ in tb.groupby(["cc", "delay_ms", "loss"]):
        def pick(frame, env, nms):
            x = frame[(frame["env"] == env) & (frame["cc"] == cc) & np.isclose(frame["delay_ms"], dl)
                      & np.isclose(frame["loss"], loss) & (~frame["real"])]
            if nms != "n/a":
                x = x[x["nms"] == nms]
            return _ci(*x[["mean", "half_width", "n"]].iloc[0]) if not x.empty else "—"
        rows.append([cc, f"{dl:g}", f"{loss:g}", pick(c, "testbed", True), pick(c, "testbed", False),
                     pick(later, "testbed", True), pick(later, "testbed", False), pick(c, "replica", "n/a")])
    return ("### Emulated grid (Figs 4.5-4.13) at a tenth of the rate, and the simulator's replica (10^6 bit/s)\n\n"
            + markdown(["cc", "delay (ms)", "loss", "testbed ON", "testbed OFF", "later conns ON", "later conns OFF",
                        "replica (simulator)"], rows))


def real_point(d: Any) -> str:
    c = d.cells
    if c.empty or not c["real"].any():
        return ""
    rows = []
    for env, label in (("sim", "simulated, 1 Gb/s"), ("testbed", "emulated on the testbed, 100 Mb/s"),
                       ("replica", "simulator's replica of the testbed, 100 Mb/s")):
        for r in c[(c["env"] == env) & (c["real"])].itertuples():
            rows.append([label, r.cc, _ci(r.mean, r.half_width, r.n)])
    return ("### The real environment's point (Fig 4.3: RTT 13.6 ms, loss 1e-7)\n\nThe GIGA network itself cannot be "
            "reproduced (no numbers for it in the text either); its replicas:\n\n" + markdown(["environment", "cc", "Mb/s"], rows))


def fairness(d: Any) -> str:
    from fatpipe.studies.silva2006.measures import JAIN_KIND

    f = d.fairness
    if f.empty:
        return ""
    f = f[f["kind"] == JAIN_KIND]
    rows = []
    for (exp, cc), g in f.groupby(["experiment", "cc"]):
        g = g.groupby("t_s", as_index=False)["jain"].mean().sort_values("t_s")
        t, j = g["t_s"].to_numpy(), g["jain"].to_numpy()
        at = lambda x: float(np.interp(x, t, j)) if t[0] <= x <= t[-1] else math.nan  # noqa: E731
        rows.append([exp, cc, f"{np.nanmean(j):.3f}", f"{at(30):.3f}", f"{at(125):.3f}", f"{j[-1]:.3f} at {t[-1]:.0f} s"])
    names = {"rtt": "intra, different RTTs (4.19)", "same": "intra, same RTT (4.20)", "inter": "5 reno + 5 X (4.21)"}
    rows = [[names.get(r[0], r[0]), *r[1:]] for r in rows]
    return (f"### Fairness (Figs 4.19-4.21): Jain's index of the 10 flows ({JAIN_KIND} throughput averages)\n\n"
            + markdown(["experiment", "X", "mean over the run", "at 30 s", "at 125 s", "at the end"], rows))


def traces(d: Any) -> str:
    from fatpipe.studies.silva2006.traces import shape

    if not d.traces:
        return ""
    rows = []
    k = 1.0 / d.trace_scale
    for cc in d.settings.THESIS_PROTOCOLS:
        tr = d.traces.get(cc)
        if tr is None:
            continue
        s = shape(tr["t_s"], tr["cwnd"], tr["ssthresh"], tr["srtt_s"])
        first = s.first_epoch_s * k / 60 if math.isfinite(s.first_epoch_s) else math.nan
        b = [x for x in s.backoffs if math.isfinite(x)]
        rows.append([cc, f"{float(np.max(tr['cwnd'])):.0f}", str(len(s.episodes)),
                     f"{first:.1f}" if math.isfinite(first) else f"> {s.first_epoch_lower_bound_s * k / 60:.1f}",
                     f"{np.mean(s.epochs_s) * k:.1f}" if s.epochs_s else "—",
                     f"{np.median(b):.3f}" if b else "—",
                     f"{np.median(s.growth_ratios):.2f}" if s.growth_ratios else "—",
                     f"{np.median(s.approach_ratios):.2f}" if s.approach_ratios else "—"])
    note = "" if d.trace_scale == 1 else f" (run at {d.trace_scale:g} x the rate; times scaled by {k:g})"
    return (f"### cwnd traces (Figs 2.2-2.6){note}\n\n"
            + markdown(["cc", "max cwnd (pkts, at the run's rate)", "congestion responses", "first cut to the next (min, 1 Gb/s)",
                        "mean epoch after (s, 1 Gb/s)", "backoff (median)", "growth 1st/2nd half of an epoch (median)",
                        "the same over the approach to the last peak"], rows))


def emulation(d: Any) -> str:
    e = d.emulation
    if e.empty:
        return ""
    p99 = e["emu_delay_p99_ms"].astype(float)
    rate = e["emu_rate_error"].dropna().astype(float)
    ratio = (e["advertised_window_bytes"] / e["asked_bytes"]).dropna()
    return ("### The testbed's own record\n\n" + markdown(["", "value"], [
        ["kernel", ", ".join(sorted(set(e["kernel"].dropna())))],
        ["congestion controls", "; ".join(sorted(set(e["modules"].dropna())))],
        ["testbed runs", str(len(e))],
        ["emulator departure error p99 (worst run)", f"{p99.max():.3g} ms"],
        ["frames the emulator could not keep up with", f"{int(e['emu_overflow'].fillna(0).sum())}"],
        ["achieved rate error (worst)", f"{100 * rate.abs().max():.4f} %" if not rate.empty else "—"],
        ["socket buffer granted / asked", f"{(e['granted_bytes'] / e['asked_bytes']).min():g}-{(e['granted_bytes'] / e['asked_bytes']).max():g}"],
        ["largest advertised window / -S value", f"{ratio.min():.3f}-{ratio.max():.3f}" if not ratio.empty else "—"],
    ]))


def all_tables(d: Any) -> list[str]:
    return [t for t in (arithmetic(d), sim_grid(d), emulated(d), real_point(d), fairness(d), traces(d), emulation(d)) if t]
