"""The de Santi et al. (~2008) study: generated sweep files, the load arithmetic, the metrics on a
short run, and the target rules checked on a frame built from the paper's own statements (every
target the paper's prose supports must hold on it, otherwise the rule misreads the paper; a frame
where RED beats H2 must fail)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fatpipe
from fatpipe.studies.desanti2008 import make_sweeps_module, measures, targets
from fatpipe.studies.desanti2008.study import ratio_table
from fatpipe.studies.desanti2008.targets import PAPER_RATIOS
from fatpipe.studies.targets import FAILS, HOLDS, NOT_COMPARABLE

STUDY = Path(__file__).resolve().parents[1] / "studies" / "desanti2008"
LOADS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def test_sweep_files_are_what_make_sweeps_writes():
    ms = make_sweeps_module()
    files = ms.all_files()
    assert len(files) == 16
    for path, text in files.items():
        assert path.read_text() == text, f"{path.name} is stale: run python studies/desanti2008/make_sweeps.py"
    study = fatpipe.studies.load_study("desanti2008")
    for mode in ("quick", "full"):
        assert {k: str(v.relative_to(STUDY)) for k, v in study.modes[mode].sweeps.items()} == ms.study_sweeps(mode)


def test_each_load_is_80_percent_files_and_20_percent_noise_on_the_wire():
    ms = make_sweeps_module()
    for load in LOADS:
        files = ms.main_load_bps(load) * ms.MAIN_SOURCES
        noise = ms.noise_peak_payload_bps(load) * ms.NOISE_WIRE / ms.NOISE_PAYLOAD * ms.NOISE_DUTY * ms.NOISE_SOURCES
        assert files == pytest.approx(0.8 * load * 1e9, rel=1e-12)
        assert noise == pytest.approx(0.2 * load * 1e9, rel=1e-12)
        assert ms.load_of(f"{ms.main_load_bps(load):.0f}bps") == pytest.approx(load, abs=1e-6)


def test_the_metrics_of_a_short_run():
    ms = make_sweeps_module()
    sc = fatpipe.Scenario.load(STUDY / "dumbbell.toml").with_overrides(
        "duration=8s", f'flows.0.load="{ms.main_load_bps(0.5):.0f}bps"',
        f'flows.1.voip.rate="{ms.noise_peak_payload_bps(0.5):.0f}bps"',
        'flows.0.sizes={law="body-tail"}')
    r = fatpipe.run(sc, seed=1)
    vals = {k: fn(r) for k, (fn, _) in measures.METRICS.items()}
    # 8 s of web files at 0.4 Gb/s (80 % of 0.5): ~6 500 files per second, about 50 000.
    assert 40_000 < vals["connections"] < 60_000, vals
    # Offered load: 8 s is short for the on/off noise (relative spread of its part ~ 18 %, i.e.
    # ~4 % of the total) and the noise starts with a silence: within 10 % here; the calibration
    # of each part is tested on long runs (crates/fatpipe-scenario/tests/files.rs, the voice
    # source's mean rate) and the report prints the measured load of every sweep point.
    assert vals["offered_load"] == pytest.approx(0.5, rel=0.10), vals
    # Web files are a few segments: windows of a few packets, RTT at least the 200 ms base.
    assert 2.0 <= vals["conn_cwnd_pkts"] < 20.0
    assert vals["conn_rtt_s"] >= 0.2
    assert 0 < vals["conn_throughput_pct"] < 100
    assert vals["transfer_time_s"] > 0.2


def _interp(anchors: dict[float, float], x: float) -> float:
    xs = sorted(anchors)
    return float(np.interp(x, xs, [anchors[k] for k in xs]))


#: H2/RED ratios consistent with the paper's prose (anchors at the loads it names, linear between).
PAPER_LIKE = {
    ("ftp", "queue_mean_pkts"): {0.4: 1.5, 1.0: 3.0},
    ("ftp", "conn_throughput_pct"): {0.4: 1.40, 1.0: 2.09},
    ("ftp", "conn_cwnd_pkts"): {0.4: 2.07, 0.9: 3.0, 1.0: 3.0},
    ("ftp", "conn_goodput_bps"): {0.4: 1.4, 0.9: 2.0, 1.0: 2.0},
    ("ftp", "conn_timeouts"): {0.4: 0.22, 0.9: 0.9, 1.0: 1.1},
    ("ftp", "conn_rtt_s"): {0.4: 0.97, 1.0: 0.97},
    ("ftp", "transfer_time_s"): {0.4: 0.51, 0.9: 0.33, 1.0: 0.33},
    ("ftp", "connections"): {0.4: 1.01, 1.0: 1.10},
    ("web", "queue_mean_pkts"): {0.4: 1.2, 1.0: 2.0},
    ("web", "conn_throughput_pct"): {0.4: 1.05, 0.8: 1.19, 1.0: 1.19},
    ("web", "conn_cwnd_pkts"): {0.4: 1.22, 1.0: 1.53},
    ("web", "conn_goodput_bps"): {0.4: 1.07, 0.8: 1.19, 1.0: 1.19},
    ("web", "conn_rtt_s"): {0.4: 1.01, 1.0: 1.04},
    ("web", "conn_timeouts"): {0.4: 0.88, 0.5: 0.88, 0.6: 1.03, 1.0: 1.77},
    ("web", "transfer_time_s"): {0.4: 0.95, 0.8: 0.87, 1.0: 0.9},
    ("web", "connections"): {0.4: 1.01, 1.0: 1.05},
}
#: RED's values: rising with load where the paper says so (its queue nearly flat from 0.9 to 1.0).
RED = {
    "queue_mean_pkts": {0.4: 300.0, 0.9: 800.0, 1.0: 810.0},
    "conn_throughput_pct": {0.4: 0.5, 1.0: 0.2}, "conn_cwnd_pkts": {0.4: 400.0, 1.0: 300.0},
    "conn_goodput_bps": {0.4: 5e6, 1.0: 2e6}, "conn_timeouts": {0.4: 0.5, 1.0: 2.0},
    "conn_rtt_s": {0.4: 0.21, 1.0: 0.23}, "transfer_time_s": {0.4: 1.0, 1.0: 3.0},
    "connections": {0.4: 10_000.0, 1.0: 20_000.0},
}


def _paper_like() -> pd.DataFrame:
    rows = []
    for (traffic, metric), anchors in PAPER_LIKE.items():
        for x in LOADS:
            red = _interp(RED[metric], x) * (1.0 if traffic == "ftp" else 0.5)
            if traffic == "ftp" and metric == "conn_cwnd_pkts":
                red = 2744.0 / 3.0 * (1.0 + 0.05 * (x - 0.9))
            h2 = red * _interp(anchors, x)
            for aqm, v in (("red", red), ("h2", h2)):
                rows.append({"traffic": traffic, "aqm": aqm, "load": x, "metric": metric, "mean": v,
                             "half_width": 0.0, "n": 10})
    return pd.DataFrame(rows)


def test_targets_hold_on_numbers_that_restate_the_paper():
    verdicts = {v.target.id: v for v in targets.evaluate_all(_paper_like())}
    assert set(verdicts) == {"A1", "A2", "A3", "A4", "A5", "B", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8",
                             "D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8", "E"}
    for tid, v in verdicts.items():
        bad = [c.text for c in v.checks if c.status == FAILS]
        assert not bad, f"{tid}: {bad}"
        if tid in ("C8", "D8"):
            # The paper's absolute connection gaps depend on its unknown run length: not comparable.
            assert v.status == NOT_COMPARABLE
        else:
            assert v.status == HOLDS, f"{tid}: {[c.text for c in v.checks if c.status != HOLDS]}"


def test_red_beating_h2_fails_the_targets():
    t = _paper_like()
    swapped = t.copy()
    swapped["aqm"] = t["aqm"].map({"red": "h2", "h2": "red"})
    verdicts = {v.target.id: v for v in targets.evaluate_all(swapped)}
    for tid in ("C1", "C2", "C3", "C4", "C7", "D2", "D3", "D4", "D7", "E"):
        assert verdicts[tid].status == FAILS, tid


def test_missing_loads_are_not_comparable_not_failures():
    t = _paper_like()
    quick = t[t["load"].isin([0.4, 1.0])]
    verdicts = {v.target.id: v for v in targets.evaluate_all(quick)}
    # C3 needs load 0.9, which this frame lacks.
    assert any(c.status == NOT_COMPARABLE and "0.9" in c.text for c in verdicts["C3"].checks)
    assert verdicts["C3"].status != FAILS


def test_the_ratio_table_puts_the_papers_ratio_beside_ours():
    rt = ratio_table(_paper_like())
    row = rt[(rt["traffic"] == "ftp") & (rt["metric"] == "conn_cwnd_pkts") & (rt["load"] == 0.9)].iloc[0]
    assert row["ratio"] == pytest.approx(3.0)
    assert row["paper"] == PAPER_RATIOS[("ftp", "conn_cwnd_pkts", 0.9)]
    assert rt[(rt["traffic"] == "ftp") & (rt["metric"] == "connections")]["paper"].isna().all()
