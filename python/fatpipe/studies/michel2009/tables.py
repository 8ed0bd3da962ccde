"""Markdown tables in the paper's layout with the paper's number beside ours (mean ± 95 % CI).

Each cell reads ``paper / ours``; ours is "—" where the frame has no value. Units are the paper's
(%, pp, Mbit/s), converted from our fractions and bit/s.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

from fatpipe.studies.checks import Missing, Pt
from fatpipe.studies.michel2009.reference import HIGH_SPEED, PROTOCOLS, SYMBOLS, cc_of, load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["table_4_1", "table_4_2", "table_4_3", "table_4_4", "table_4_5", "ratings_table", "markdown"]

BGS = (20, 50, 80)


def markdown(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _ours(get: Callable[..., Pt], scale: float, digits: int) -> str:
    try:
        p = get()
    except Missing:
        return "—"
    if math.isnan(p.mean):
        return "undefined"
    hw = "" if math.isnan(p.hw) else f" ± {p.hw * scale:.{digits}f}"
    return f"{p.mean * scale:.{digits}f}{hw}"


def _data(tidy: "pd.DataFrame"):
    from fatpipe.studies.michel2009.targets import _Data

    return _Data(tidy)


def table_4_1(tidy: "pd.DataFrame") -> str:
    """Utilisation change between 10 ms and 200 ms (pp), D-S2."""
    from fatpipe.studies import checks as c

    D, ref = _data(tidy), load("table4_1_delay_drop").set_index(["protocol", "bg_pct"])

    def drop(p: str, bg: int) -> Pt:
        lo = D.pt("D-S2", "main_utilisation", p, bg / 100, delay_s=0.01)
        hi = D.pt("D-S2", "main_utilisation", p, bg / 100, delay_s=0.2)
        return c.diff(lo, hi)
    rows = [[p] + [f"{ref.loc[(p, bg), 'drop_pp']:.2f} / {_ours(lambda p=p, bg=bg: drop(p, bg), 100, 2)}" for bg in BGS]
            for p in HIGH_SPEED]
    return markdown(["Table 4.1 (pp, paper / ours)", *(f"bg {b} %" for b in BGS)], rows)


def table_4_2(tidy: "pd.DataFrame") -> str:
    """RTT fairness (D-F1a): x̄ (Mbit/s), cv (%), Jain per bg."""
    D, ref = _data(tidy), load("table4_2_rtt_fairness").set_index(["protocol", "bg_pct"])
    head = ["Table 4.2 (paper / ours)"]
    for b in BGS:
        head += [f"bg{b} x̄", f"bg{b} cv", f"bg{b} Jain"]
    rows = []
    for p in HIGH_SPEED:
        row = [p]
        for b in BGS:
            r = ref.loc[(p, b)]
            row += [f"{r['mean_mbps']:g} / {_ours(lambda p=p, b=b: D.pt('D-F1a', 'main_mean_goodput_bps', p, b / 100), 1e-6, 3)}",
                    f"{r['cv_pct']:g} / {_ours(lambda p=p, b=b: D.pt('D-F1a', 'main_cv', p, b / 100), 100, 2)}",
                    f"{r['jain']:.4f} / {_ours(lambda p=p, b=b: D.pt('D-F1a', 'main_jain', p, b / 100), 1, 4)}"]
        rows.append(row)
    return markdown(head, rows)


def table_4_3(tidy: "pd.DataFrame") -> str:
    """Inter-protocol dumbbell (D-F2): aggregate per protocol (Mbit/s), Jain rows."""
    D, ref = _data(tidy), load("table4_3_aggregate").set_index(["protocol", "bg_pct"])
    jr = load("table4_3_jain").set_index(["row", "bg_pct"])
    rows = []
    for p in PROTOCOLS_SORTED:
        rows.append([p] + [f"{ref.loc[(p, b), 'aggregate_mbps']:g} {ref.loc[(p, b), 'mark']} / "
                           f"{_ours(lambda p=p, b=b: D.pt('D-F2', f'goodput_bps_{cc_of(p)}', 'MIXED', b / 100), 1e-6, 2)}"
                           for b in BGS])
    for name, key, metric in (("Jain index (ours: per connection)", "all", "main_jain"),
                              ("Jain index* (excl. LIBRA, per protocol)", "excl_libra", "jain_cc_aggregates_excl_libra")):
        rows.append([name] + [f"{jr.loc[(key, b), 'jain']:.3f} / {_ours(lambda b=b, m=metric: D.pt('D-F2', m, 'MIXED', b / 100), 1, 3)}"
                              for b in BGS])
    return markdown(["Table 4.3 (Mbit/s, paper / ours)", *(f"bg {b} %" for b in BGS)], rows)


PROTOCOLS_SORTED = tuple(sorted(PROTOCOLS))  # the table lists RENO between LIBRA and STCP


def _by_group(tidy: "pd.DataFrame", exp: str, ref_name: str, title: str, mixed: bool) -> str:
    """Mean goodput per connection by protocol and RTT group (90 ms = the shortest base-RTT group,
    180 ms = the longest; measures.rtt_groups), and the paper's "Mean" row.

    P-F1 (``mixed`` False) runs one protocol per point: its row is that point's group means, and
    the Mean row the average of the 7 rows (as the paper's, which equals the mean of its rows).
    P-F2 (``mixed``) runs every protocol in one point, one connection per protocol per group: its
    rows are the per-protocol group goodputs ``goodput_bps_<cc>_<short|long>`` and the Mean row the
    group mean over all 7 connections.
    """
    from fatpipe.studies import checks as c

    D, ref = _data(tidy), load(ref_name).set_index(["protocol", "bg_pct", "rtt_ms"])
    head = [title] + [f"bg{b} {g} ms" for b in BGS for g in (90, 180)]
    groups = ((90, "short"), (180, "long"))

    def cell(p: str, b: int, which: str) -> Pt:
        if mixed:
            return D.pt(exp, f"goodput_bps_{cc_of(p)}_{which}", "MIXED", b / 100)
        return D.pt(exp, f"rtt_{which}_mean_goodput_bps", p, b / 100)

    def mean(b: int, which: str) -> Pt:
        if mixed:
            return D.pt(exp, f"rtt_{which}_mean_goodput_bps", "MIXED", b / 100)
        return c.average([cell(p, b, which) for p in HIGH_SPEED], f"{exp} mean of the 7 rows")

    rows = []
    for p in HIGH_SPEED:
        rows.append([p] + [f"{ref.loc[(p, b, g), 'mean_mbps']:g} / {_ours(lambda p=p, b=b, w=w: cell(p, b, w), 1e-6, 2)}"
                           for b in BGS for g, w in groups])
    rows.append(["Mean"] + [f"{ref.loc[('MEAN', b, g), 'mean_mbps']:g} / {_ours(lambda b=b, w=w: mean(b, w), 1e-6, 2)}"
                            for b in BGS for g, w in groups])
    return markdown(head, rows)


def table_4_4(tidy: "pd.DataFrame") -> str:
    """Parking-lot intra fairness (P-F1): mean per connection per RTT group (Mbit/s)."""
    return _by_group(tidy, "P-F1", "table4_4_parking_intra", "Table 4.4 (Mbit/s, paper / ours)", mixed=False)


def table_4_5(tidy: "pd.DataFrame") -> str:
    """Parking-lot inter fairness (P-F2): the paper's per-protocol rows and the group means."""
    return _by_group(tidy, "P-F2", "table4_5_parking_inter", "Table 4.5 (Mbit/s, paper / ours)", mixed=True)


def ratings_table(ours: "pd.DataFrame", topology: str = "dumbbell") -> str:
    """Table 4.7 (dumbbell) or 4.8 (parking): ``paper → ours`` symbols per cell, ✓ where equal."""
    paper = load("table4_7_ratings_dumbbell" if topology == "dumbbell" else "table4_8_ratings_parking").set_index("protocol")
    o = ours.set_index("protocol") if "protocol" in ours.columns else ours
    rows = []
    for p in paper.index:
        row = [p]
        for prop in paper.columns:
            a = str(paper.loc[p, prop])
            b = str(o.loc[p, prop]) if p in o.index and prop in o.columns else "—"
            mark = " ✓" if a == b else ""
            row.append(f"{SYMBOLS[a]} / {SYMBOLS.get(b, b)}{mark}")
        rows.append(row)
    title = "Table 4.7 (paper / ours)" if topology == "dumbbell" else "Table 4.8 (paper / ours)"
    return markdown([title, *paper.columns], rows)
