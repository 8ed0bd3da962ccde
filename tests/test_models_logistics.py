"""Seed 002's TCP-logistics model (``fatpipe.models.logistics``): Eqs. 1-4 against the numbers the
seed note derives from the paper's equations and constants (§3 table, §6 targets M1-M5), the
chain prediction from a plan, and the figures."""

from __future__ import annotations

import math

import pytest

import fatpipe
from fatpipe.models import logistics as lg

# The seed note's §3 table (Mbit/s, s = 1500 B, segments of RTT/N): RTT ms -> Fig. 4 N=1,2,3 and
# Fig. 5 N=1,2,3. Printed to 0.1 Mbit/s.
SEED_TABLE = {
    10: (1469.7, 2939.4, 4409.1, 443.1, 1200.0, 2118.1),
    20: (734.8, 1469.7, 2204.5, 221.6, 600.0, 1059.0),
    30: (489.9, 979.8, 1469.7, 147.7, 400.0, 706.0),
    40: (367.4, 734.8, 1102.3, 110.8, 300.0, 529.5),
    50: (293.9, 587.9, 881.8, 88.6, 240.0, 423.6),
    60: (244.9, 489.9, 734.8, 73.9, 200.0, 353.0),
    70: (210.0, 419.9, 629.9, 63.3, 171.4, 302.6),
    80: (183.7, 367.4, 551.1, 55.4, 150.0, 264.8),
    90: (163.3, 326.6, 489.9, 49.2, 133.3, 235.3),
    100: (147.0, 293.9, 440.9, 44.3, 120.0, 211.8),
}


def test_figures_4_and_5_reproduce_the_seed_table_to_its_printed_digit():
    for row in lg.figure_rows():
        want = SEED_TABLE[round(row["rtt_ms"])]
        got = [row[f"fig4_n{n}_mbps"] for n in (1, 2, 3)] + [row[f"fig5_n{n}_mbps"] for n in (1, 2, 3)]
        # Rounded to 0.1 Mbit/s in the note: within half a unit of its last digit.
        for w, g in zip(want, got):
            assert abs(g - w) <= 0.05 + 1e-9, (row["rtt_ms"], want, got)


def test_m1_equal_segments_multiply_the_rate_by_n_at_any_rtt():
    f4 = lg.figure4(rtts_s=[0.005, 0.033, 0.2])
    for i in range(3):
        assert f4[2][i] == pytest.approx(2 * f4[1][i], rel=1e-12)
        assert f4[3][i] == pytest.approx(3 * f4[1][i], rel=1e-12)
    assert lg.gain(2) == pytest.approx(2.0) and lg.gain(3) == pytest.approx(3.0)


def test_m2_split_extra_loss_gives_more_than_n():
    # Seed note: x2.71 and x4.78, independent of RTT, always above N.
    assert lg.gain(2, p_extra=lg.PAPER_P_EXTRA) == pytest.approx(2.708, abs=5e-3)
    assert lg.gain(3, p_extra=lg.PAPER_P_EXTRA) == pytest.approx(4.776, abs=5e-3)
    f5 = lg.figure5(rtts_s=[0.01, 0.09])
    for n in (2, 3):
        assert f5[n][0] / f5[1][0] == pytest.approx(f5[n][1] / f5[1][1], rel=1e-12)
        assert f5[n][0] / f5[1][0] > n


def test_m3_the_rate_falls_as_one_over_the_rtt():
    assert lg.mathis_bps(1500, 0.010, 1e-6) / 1e6 == pytest.approx(1469.7, abs=0.05)
    assert lg.mathis_bps(1500, 0.090, 1e-6) / 1e6 == pytest.approx(163.3, abs=0.05)
    assert lg.mathis_bps(1500, 0.020, 1e-6) == pytest.approx(lg.mathis_bps(1500, 0.010, 1e-6) / 2)


def test_m4_eq4_split_is_below_the_end_to_end_loss_and_recombines_to_it():
    # The seed note's §4.4 values (percent): 0.1 % -> 0.050013 % (N=2), 0.033344 % (N=3).
    assert lg.split_loss(1e-3, 2) * 100 == pytest.approx(0.050013, abs=1e-6)
    assert lg.split_loss(1e-3, 3) * 100 == pytest.approx(0.033344, abs=1e-6)
    for p in (1e-6, 1e-4, 1e-2):
        for n in (2, 3, 5):
            q = lg.split_loss(p, n)
            assert q < p
            assert lg.combine_loss(*[q] * n) == pytest.approx(p, rel=1e-9)
    assert lg.split_loss(1e-3, 1) == 1e-3


def test_m5_the_bdp_of_1gbps_at_5ms_exceeds_512_kib():
    bdp = 1e9 / 8 * 0.005
    assert bdp == 625_000 and bdp > 512 * 1024


def test_fig5_per_segment_losses_are_the_notes():
    # N=1: 1.1e-5; N=2: 5e-6 + 1e-6; N=3: 3.33e-6 + 1e-6 (sum and product agree here).
    for n, want in ((1, 1.1e-5), (2, 6.0e-6), (3, 4.333e-6)):
        p = lg.combine_loss(lg.PAPER_P_BUFFER, lg.split_loss(lg.PAPER_P_EXTRA, n))
        assert p == pytest.approx(want, rel=1e-3)


def test_bad_inputs_are_refused():
    for bad in (lambda: lg.mathis_bps(0, 0.1, 1e-3), lambda: lg.mathis_bps(1500, 0.1, 1.0),
                lambda: lg.split_loss(1e-3, 0), lambda: lg.combine_loss(-0.1), lambda: lg.pipeline_bps([])):
        with pytest.raises(ValueError):
            bad()
    assert lg.mathis_bps(1500, 0.1, 0.0) == math.inf


LINE = """
duration = "10s"
[topology]
kind = "graph"
nodes = [{ name = "s" }, { name = "d1" }, { name = "d2" }, { name = "c" }]
links = [
  { between = ["s", "d1"], rate = "1Gbps", delay = "10ms", loss = 0.001 },
  { between = ["d1", "d2"], rate = "1Gbps", delay = "20ms", loss = 0.002 },
  { between = ["d2", "c"], rate = "100Mbps", delay = "10ms" },
]
[[flows]]
kind = "relay"
src = "s"
dst = "c"
depots = ["d1", "d2"]
segments = [{}, { mss = "8960B" }, {}]
"""


def test_a_plans_chain_is_predicted_segment_by_segment():
    plan = fatpipe.Scenario.from_toml(LINE).plan()
    pred = lg.chain_from_plan(plan)
    assert [(s.src, s.dst) for s in pred.segments] == [("s", "d1"), ("d1", "d2"), ("d2", "c")]
    s0, s1, s2 = pred.segments
    assert (s0.rtt_s, s0.path_loss, s0.mss_bytes) == (pytest.approx(0.02), pytest.approx(0.001), 1460)
    assert (s1.rtt_s, s1.path_loss, s1.mss_bytes) == (pytest.approx(0.04), pytest.approx(0.002), 8960)
    assert s2.path_loss == 0 and pred.rates_bps[2] == math.inf
    # Segment 0: 1460 B, 20 ms, 1e-3; segment 1: 8960 B, 40 ms, 2e-3: the first is slower.
    assert pred.bottleneck == 0
    assert pred.throughput_bps == pytest.approx(8 * 1460 * math.sqrt(1.5) / (0.02 * math.sqrt(1e-3)))
    # With the extension's cap the lossless last segment is its 100 Mb/s link.
    assert lg.chain_from_plan(plan, cap=True).rates_bps[2] == 100e6
    # The same path as one direct flow: RTT 80 ms, the losses combined (Eq. 4).
    direct = fatpipe.Scenario.from_toml(LINE.replace('kind = "relay"', 'kind = "bulk"')
                                        .replace('depots = ["d1", "d2"]\n', "")
                                        .replace('segments = [{}, { mss = "8960B" }, {}]\n', ""))
    d = lg.chain_from_plan(direct.plan())
    assert d.segments[0].rtt_s == pytest.approx(0.08)
    assert d.segments[0].path_loss == pytest.approx(lg.combine_loss(0.001, 0.002))
    assert plan["flows"][0]["path_loss"] == pytest.approx(d.segments[0].path_loss)


def test_figures_are_written(tmp_path):
    files = lg.write_figures(tmp_path)
    assert sorted(f.name for f in files) == ["figure4.png", "figure5.png", "figures4-5.csv"]
    assert all(f.stat().st_size > 0 for f in files)
    lines = (tmp_path / "figures4-5.csv").read_text().splitlines()
    assert lines[0].startswith("rtt_ms,fig4_n1_mbps") and len(lines) == 11
