"""Michel (2009) reference transcription: derived facts of the seed note recomputed from the CSVs."""

from __future__ import annotations

import pytest

from fatpipe.metrics import coefficient_of_variation, jain_from_cv, jain_index
from fatpipe.studies.michel2009.reference import HIGH_SPEED, load, protocol_of
from fatpipe.studies.michel2009.targets import evaluate


def test_table_4_2_jain_is_one_over_one_plus_cv_squared_for_all_21_entries():
    # Target T17: the population cv reproduces the printed Jain to 4 decimals.
    t = load("table4_2_rtt_fairness")
    assert len(t) == 21
    for _, r in t.iterrows():
        assert float(jain_from_cv(r["cv_pct"] / 100)) == pytest.approx(r["jain"], abs=1.05e-4), r["protocol"]
    assert evaluate("T17", t.iloc[:0]).status == "holds"


def test_population_cv_gives_jain_identity_on_a_sample():
    x = [10.0, 20.0, 30.0, 45.0]
    assert jain_index(x) == pytest.approx(float(jain_from_cv(coefficient_of_variation(x))))


def test_table_4_3_jain_star_follows_from_the_seven_non_libra_aggregates():
    t = load("table4_3_aggregate")
    got = {}
    for bg, g in t.groupby("bg_pct"):
        got[bg] = jain_index(g[g["protocol"] != "LIBRA"]["aggregate_mbps"])
        # the full row does not follow from the 8 aggregates (erratum 7)
        assert jain_index(g["aggregate_mbps"]) == pytest.approx({20: 0.859, 50: 0.719, 80: 0.523}[bg], abs=6e-4)
    assert [round(got[b], 3) for b in (20, 50, 80)] == [0.970, 0.818, 0.595]
    printed = load("table4_3_jain").query("row == 'excl_libra'").set_index("bg_pct")["jain"]
    for b in (20, 50, 80):
        assert got[b] == pytest.approx(printed[b], abs=1.5e-3)  # the table rounds down
    marks = t[t["mark"] != ""]
    assert set(marks[marks["mark"] == "+"]["protocol"]) == {"BIC", "FAST", "HTCP"}


def test_table_4_4_mean_row_and_table_4_5_group_jain():
    t = load("table4_4_parking_intra")
    for (bg, rtt), g in t.groupby(["bg_pct", "rtt_ms"]):
        rows = g[g["protocol"] != "MEAN"]["mean_mbps"]
        assert rows.mean() == pytest.approx(float(g[g["protocol"] == "MEAN"]["mean_mbps"].iloc[0]), abs=0.007)  # the seed note's ±0.006 rounds 0.0064 (bg 50 %, 180 ms)
    t5 = load("table4_5_parking_inter")
    derived = {(20, 90): 0.766, (20, 180): 0.818, (50, 90): 0.720, (50, 180): 0.702, (80, 90): 0.544, (80, 180): 0.461}
    for (bg, rtt), v in derived.items():
        g = t5[(t5["bg_pct"] == bg) & (t5["rtt_ms"] == rtt) & (t5["protocol"] != "MEAN")]
        assert jain_index(g["mean_mbps"]) == pytest.approx(v, abs=6e-4)


def test_ratings_and_ranking_tables_are_complete():
    for name, cols in (("table4_7_ratings_dumbbell", 5), ("table4_8_ratings_parking", 3)):
        t = load(name)
        assert sorted(t["protocol"]) == sorted(HIGH_SPEED) and t.shape[1] == cols + 1
    assert load("table4_7_ratings_dumbbell").set_index("protocol").loc["LIBRA", "convergence"] == "undefined"
    assert load("ranking").groupby("tier").size().tolist() == [1, 2, 2, 2]
    assert load("table4_1_delay_drop").set_index(["protocol", "bg_pct"]).loc[("FAST", 50), "drop_pp"] == 1.29


def test_protocol_names_map_both_ways():
    assert protocol_of("highspeed") == "HSTCP" and protocol_of("hstcp") == "HSTCP"
    assert protocol_of("scalable") == "STCP" and protocol_of("Fast") == "FAST"
    with pytest.raises(ValueError):
        protocol_of("westwood")
