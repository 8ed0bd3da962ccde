"""Time-series metrics and replication statistics, by hand arithmetic and on real runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fatpipe
from fatpipe.metrics import (
    convergence_time_s,
    fair_share_bps,
    interval_throughput_bps,
    reno_share,
    stability_cv,
)
from fatpipe.stats import mean_ci, summarize


def test_interval_throughput_matches_hand_arithmetic():
    # 100 ms samples of a flow delivering 1250 B per sample: 12 500 B per second = 100 kb/s.
    t = np.arange(1, 31) * 0.1
    b = np.arange(1, 31) * 1250
    ends, bps = interval_throughput_bps(t, b, 1.0)
    assert ends.tolist() == [1.0, 2.0, 3.0]
    assert np.allclose(bps, 100_000.0)


def test_convergence_first_and_sustained():
    t = [1, 2, 3, 4, 5, 6]
    x = [0, 9, 11, 8, 12, 13]
    assert convergence_time_s(t, x, start_s=0, fair_share=10) == 3
    assert convergence_time_s(t, x, start_s=0, fair_share=10, sustain=2) == 5
    assert convergence_time_s(t, x, start_s=0, fair_share=20) is None
    # intervals ending before the start do not count
    assert convergence_time_s(t, x, start_s=3.5, fair_share=10) == pytest.approx(1.5)


def test_stability_cv_and_reno_share_edge_cases():
    assert stability_cv([1, 2], [5, 5]) == 0.0
    with pytest.raises(ValueError, match="warm-up"):
        stability_cv([1, 2], [5, 5], warmup_s=10)
    assert reno_share([1e6, 2e6], [False, False], 10e6) == 0.0
    with pytest.raises(ValueError):
        reno_share([1e6], [True, False], 10e6)


def test_summarize_uses_student_t_with_n_minus_1():
    s = summarize([1.0, 2.0, 3.0, 4.0])
    # s = sqrt(5/3) = 1.29099; t(0.975, 3) = 3.18245; half = 3.18245 * 1.29099 / 2 = 2.05426
    assert s.n == 4 and s.mean == 2.5
    assert s.std == pytest.approx(1.290994, rel=1e-6)
    assert s.half_width == pytest.approx(2.054266, rel=1e-5)
    assert s.low < s.mean < s.high
    assert math.isnan(summarize([3.0]).half_width)
    with pytest.raises(ValueError):
        summarize([1.0, float("nan")])


def test_mean_ci_skips_failed_runs_and_counts_the_rest():
    mean, half, n = mean_ci([1.0, float("nan"), 2.0, 3.0, float("inf"), 4.0])
    assert (mean, n) == (2.5, 4) and half == pytest.approx(2.054266, rel=1e-5)
    assert math.isnan(mean_ci([3.0])[1]) and mean_ci([3.0])[::2] == (3.0, 1)
    m, h, n = mean_ci([float("nan")])
    assert math.isnan(m) and math.isnan(h) and n == 0


def test_late_flow_converges_to_its_fair_share_and_aggregate_is_stable():
    # Two Reno flows on 20 Mb/s x 10 ms with a BDP-sized buffer; the second starts at 10 s.
    sc = fatpipe.Scenario.from_dict(
        {
            "duration": "60s",
            "topology": {"kind": "dumbbell", "pairs": 2,
                         "bottleneck": {"rate": "20Mbps", "delay": "10ms"}},
            "tcp": {"initial_window": 2},
            "flows": [{"pairs": [0]}, {"pairs": [1], "start": "10s"}],
            "monitor": {"interval": "100ms"},
        }
    )
    res = fatpipe.run(sc, seed=1)
    fs = res.to_pandas("flow_series")
    late = fs[fs.flow_id == 1]
    ends, bps = interval_throughput_bps(late.t_s, late.bytes_delivered, 1.0)
    share = fair_share_bps(20e6 * 1460 / 1500, 2)
    # Reno on a short-RTT path converges within a few congestion epochs (a few seconds), not never.
    # (A 10 % slack below the exact share: per-second samples straddle sawtooth phases.)
    tc = convergence_time_s(ends, bps, start_s=10.0, fair_share=0.9 * share)
    assert tc is not None and tc < 20.0, tc
    agg = fs.groupby("t_s")["bytes_delivered"].sum()
    ends, agg_bps = interval_throughput_bps(agg.index.to_numpy(), agg.to_numpy(), 1.0)
    # With a one-BDP buffer the aggregate stays near capacity: low cv after the start-up.
    assert stability_cv(ends, agg_bps, warmup_s=12.0) < 0.05
    assert stability_cv(ends, agg_bps) > stability_cv(ends, agg_bps, warmup_s=12.0)


def test_replications_give_a_confidence_interval_that_covers_each_seed_mean():
    sc = fatpipe.Scenario.dumbbell(pairs=4, rate="20Mbps", delay="20ms", buffer="40pkt", duration="20s",
                                   start_spread="1s", initial_window=2)
    agg = [fatpipe.run(sc, seed=s).summary["aggregate_goodput_bps"] for s in (1, 2, 3, 4, 5)]
    s = summarize(agg)
    assert s.n == 5
    assert s.half_width > 0, "different seeds must give different runs"
    assert s.low <= np.mean(agg) <= s.high
    assert s.high <= 20e6
