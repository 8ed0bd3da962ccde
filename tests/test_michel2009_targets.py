"""Target evaluation on synthetic tidy frames: one that holds, one that does not, one missing."""

from __future__ import annotations

import math

import pandas as pd

from fatpipe.studies.michel2009 import tables
from fatpipe.studies.checks import Pt, greater, near
from fatpipe.studies.michel2009.targets import FAILS, HOLDS, NOT_COMPARABLE, evaluate

PROTOS = ["bic", "cubic", "fast", "highspeed", "htcp", "libra", "scalable"]


def _stability(bic80=0.59):
    rows = []
    levels = {"cubic": 0.25, "fast": 0.24, "libra": 0.40, "highspeed": 0.41, "htcp": 0.39, "scalable": 0.52, "bic": bic80}
    for cc in PROTOS:
        for bg in (20, 50, 80):
            v = levels[cc] if bg == 80 else min(levels[cc], 0.22) - 0.01 * (bg == 20)
            rows.append({"experiment": "D-ST", "cc": cc, "bg": bg, "metric": "main_stability_cv", "mean": v,
                         "half_width": 0.01, "n": 5})
    return pd.DataFrame(rows)


def test_t25_holds_on_paper_like_numbers_and_fails_when_bic_is_stable():
    assert evaluate("T25", _stability()).status == HOLDS
    v = evaluate("T25", _stability(bic80=0.30))
    assert v.status == FAILS and "does not" in v.detail or v.status == FAILS
    assert any(ch.status == FAILS for ch in v.checks)


def test_missing_experiment_is_not_comparable():
    v = evaluate("T23", _stability())
    assert v.status == NOT_COMPARABLE and "experiment not run in this mode" in v.detail
    assert v.target.id == "T23" and v.rows == []


def test_convergence_target_counts_libra_never_converging():
    t = {"fast": 2.0, "highspeed": 3.0, "htcp": 7.0, "bic": 12.0, "cubic": None, "scalable": None}
    rows = []
    for cc, base in t.items():
        for bg in (20, 50, 80):
            if cc == "cubic":
                v = {20: 17.0, 50: 14.0, 80: 12.5}[bg]
            elif cc == "scalable":
                v = {20: 11.0, 50: 6.0, 80: 4.0}[bg]
            else:
                v = base - (bg == 80) * 0.5
            rows.append({"experiment": "D-CV", "cc": cc, "bg": bg, "metric": "convergence_time_s", "mean": v,
                         "half_width": 0.5, "n": 5})
    for bg in (20, 50, 80):
        rows.append({"experiment": "D-CV", "cc": "libra", "bg": bg, "metric": "convergence_time_s",
                     "mean": math.nan, "half_width": math.nan, "n": 0})
    v = evaluate("T23", pd.DataFrame(rows))
    assert v.status == HOLDS, [c.text for c in v.checks if c.status != HOLDS]


def test_ci_rule_orderings_and_tolerances():
    assert greater(Pt(2.0, 0.1), Pt(1.0, 0.1)).status == HOLDS
    assert greater(Pt(1.0, 0.5), Pt(1.2, 0.5)).status == NOT_COMPARABLE  # reversed, within noise
    assert greater(Pt(1.0, 0.05), Pt(1.2, 0.05)).status == FAILS
    assert greater(Pt(1.0), Pt(1.2)).status == FAILS  # one replication: the means decide
    assert near(Pt(0.30, 0.01), 0.25, 0.10).status == HOLDS
    assert near(Pt(0.40, 0.01), 0.25, 0.10).status == FAILS


def test_tables_put_paper_beside_ours():
    md = tables.table_4_2(pd.DataFrame([{"experiment": "D-F1a", "cc": "htcp", "bg": 0.2, "metric": "main_jain",
                                         "mean": 0.93, "half_width": 0.01, "n": 4}]))
    assert "0.9221 / 0.9300 ± 0.0100" in md and "—" in md
    assert md.count("\n") == 9
