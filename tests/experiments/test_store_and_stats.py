"""The results store (content addressing, reuse, --force, metadata to rerun, the CLI) and the
per-point statistics."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

import fatpipe
from fatpipe.experiments import CorruptResultError, Sweep, open_store, run_sweep, summarize_sweep
from experiments.sweeps_common import write_sweep


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("store")
    sw = Sweep.load(write_sweep(tmp, reps=3))
    out = run_sweep(sw, tmp / "store", workers=2)
    assert out.ok and out.ran == 6
    return sw, tmp / "store", out


def test_rerun_reuses_everything_and_force_reruns_identically(filled):
    sw, store, first = filled
    again = run_sweep(sw, store, workers=2)
    assert (again.ran, again.reused) == (0, 6)
    before = first.runs().set_index("key")
    forced = run_sweep(sw, store, workers=2, force=True)
    assert forced.ran == 6
    after = forced.runs().set_index("key")
    # Same keys, bit-identical metrics (determinism across processes).
    m = list(sw.metrics)
    pd.testing.assert_frame_equal(before.sort_index()[m], after.sort_index()[m], check_exact=True)
    # Every run present exactly once in the catalogue and on disk.
    st_ = open_store(store)
    assert len(st_.runs()) == 6 and st_.runs()["key"].is_unique
    assert len(list((store / "runs").glob("*/*"))) == 6


def test_key_changes_with_parameter_and_seed_only(filled):
    sw, store, out = filled
    df = out.runs()
    assert df["key"].is_unique
    from fatpipe.experiments.store import run_key

    sc = fatpipe.Scenario.load(sw.scenario.source).with_overrides(*sw.scenario.overrides)
    k = run_key(sc.with_overrides('topology.bottleneck.queue.limit="20pkt"').plan(seed=1), fatpipe.__version__)
    assert k in set(df["key"])
    # The same run spelt differently (a unit written another way) has the same key.
    k2 = run_key(sc.with_overrides('topology.bottleneck.queue.limit="20 pkt"').plan(seed=1), fatpipe.__version__)
    assert k2 == k
    assert run_key(sc.plan(seed=1), "0.0.0-other") != run_key(sc.plan(seed=1), fatpipe.__version__)


def test_metadata_reruns_to_identical_tables(filled):
    _, store, out = filled
    st_ = open_store(store)
    key = out.runs()["key"].iloc[0]
    meta = st_.metadata(key)
    sc = fatpipe.Scenario.from_toml(meta["scenario_toml"], meta["overrides"])
    again = fatpipe.run(sc, seed=meta["seed"])
    stored = st_.load(key)
    for t in ("flows", "queues", "links", "flow_series"):
        # NaN-aware and exact: the stored run is the run.
        pd.testing.assert_frame_equal(stored.to_pandas(t), again.to_pandas(t), check_exact=True)


def test_statistics_per_point_match_scipy(filled):
    sw, store, out = filled
    runs = out.runs()
    summ = out.summary()
    for (point, metric), row in summ.set_index(["point", "metric"]).iterrows():
        x = runs[runs.point == point][metric].to_numpy(dtype=float)
        assert row["n"] == len(x) == 3
        assert row["mean"] == pytest.approx(x.mean())
        assert row["std"] == pytest.approx(x.std(ddof=1))
        hw = st.t.ppf(0.975, 2) * x.std(ddof=1) / math.sqrt(3)
        assert row["half_width"] == pytest.approx(hw, abs=1e-12)


def test_nan_values_are_excluded_and_n_reduced():
    df = pd.DataFrame({"point": [0, 0, 0, 0], "p": [1, 1, 1, 1], "m": [1.0, np.nan, 3.0, 5.0]})
    row = summarize_sweep(df, ["p"], ["m"]).iloc[0]
    assert row["n"] == 3 and row["mean"] == pytest.approx(3.0)
    row = summarize_sweep(pd.DataFrame({"point": [0], "p": [1], "m": [np.nan]}), ["p"], ["m"]).iloc[0]
    assert row["n"] == 0 and math.isnan(row["mean"])


def cli(*args):
    return subprocess.run([sys.executable, "-m", "fatpipe.cli", *args], capture_output=True, text=True)


def test_results_cli_ls_show_export(filled, tmp_path):
    sw, store, out = filled
    r = cli("results", "--store", str(store), "ls")
    assert r.returncode == 0 and sw.name in r.stdout and "6" in r.stdout
    r = cli("results", "--store", str(store), "ls", "--sweep", sw.name)
    assert r.returncode == 0 and r.stdout.count("\n") == 7  # header + 6 runs
    key = out.runs()["key"].iloc[0]
    r = cli("results", "--store", str(store), "show", key[:10], "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["key"] == key
    r = cli("results", "--store", str(store), "show", "zzzz")
    assert r.returncode == 2 and "zzzz" in r.stderr
    for fmt in ("csv", "parquet", "json"):
        dest = tmp_path / f"x.{fmt}"
        r = cli("results", "--store", str(store), "export", sw.name, "--out", str(dest))
        assert r.returncode == 0, r.stderr
        df = {"csv": pd.read_csv, "parquet": pd.read_parquet, "json": pd.read_json}[fmt](dest)
        assert len(df) == 6 and "utilisation" in df
    r = cli("results", "--store", str(store), "export", sw.name, "--summary")
    assert r.returncode == 0 and "half_width" in r.stdout.splitlines()[0]


def test_open_store_returns_pandas(filled):
    _, store, _ = filled
    st_ = open_store(store)
    assert isinstance(st_.runs(), pd.DataFrame) and isinstance(st_.sweeps(), pd.DataFrame)
    with pytest.raises(FileNotFoundError):
        open_store(store / "missing", create=False)
    with pytest.raises(CorruptResultError):
        st_.load("0" * 64)


def test_utilisation_steady_is_the_second_half_goodput_on_the_wire():
    """Checked against fatpipe.metrics.interval_throughput_bps over two 5 s intervals: the second
    interval's goodput summed over flows, scaled by wire/payload size, over the capacity."""
    from fatpipe.experiments.run_metrics import compute
    from fatpipe.metrics import interval_throughput_bps

    sc = fatpipe.Scenario.dumbbell(pairs=3, rate="10Mbps", delay="20ms", buffer="30pkt", duration="10s",
                                   start_spread="500ms")
    r = fatpipe.run(sc, seed=2)
    fs = r.to_pandas("flow_series")
    second_half = 0.0
    for _, g in fs.groupby("flow_id"):
        _, bps = interval_throughput_bps(g["t_s"].to_numpy(), g["bytes_delivered"].to_numpy(), 5.0)
        second_half += bps[1]
    expected = second_half * (1500 / 1460) / 10e6
    got = compute(r)["utilisation_steady"]
    assert got == pytest.approx(expected, rel=1e-9)
    assert 0.5 < got <= 1.0  # saturated after the start-up, and never above capacity
