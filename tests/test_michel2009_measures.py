"""Study metrics on a tiny real run: main flows by role, Reno share, RTT groups, convergence."""

from __future__ import annotations

import math
import sys

import pytest

import fatpipe
from fatpipe.experiments.run_metrics import METRICS, compute
from fatpipe.metrics import jain_index
from fatpipe.studies.michel2009 import measures as M


@pytest.fixture(scope="module")
def run():
    sc = fatpipe.Scenario.from_dict({
        "duration": "30s",
        "topology": {"kind": "dumbbell", "pairs": 4, "extra_delay": ["0ms", "1ms", "60ms", "62ms"],
                     "bottleneck": {"rate": "20Mbps", "delay": "10ms"}},
        "tcp": {"initial_window": 2},
        "flows": [{"pairs": [0], "tcp": {"cc": "cubic"}}, {"pairs": [1]}, {"pairs": [2], "tcp": {"cc": "libra"}},
                  {"pairs": [3], "start": "5s"}],
        "monitor": {"interval": "100ms"},
    })
    return fatpipe.run(sc, seed=1)


def test_registered_and_cheap_to_import():
    for name in ("main_utilisation", "reno_share_main", "goodput_bps_highspeed", "rtt_long_jain",
                 "convergence_time_s", "main_stability_cv"):
        assert name in METRICS
    assert "matplotlib" not in sys.modules or True  # matplotlib may come from other tests; see below
    import importlib
    import subprocess

    code = "import fatpipe, sys; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
    importlib.import_module("fatpipe.studies.michel2009.figures")


def test_metrics_on_a_real_run(run):
    f = run.to_pandas("flows")
    vals = compute(run)
    assert vals["main_jain"] == pytest.approx(jain_index(f["goodput_bps"]))
    window = 30.0 - f["start_s"].min()
    reno_bits = f[f.cc == "reno"]["bytes_delivered"].sum() * 8
    assert vals["reno_share_main"] == pytest.approx(reno_bits / window / 20e6)
    assert 0.9 < vals["main_utilisation"] <= 1460 / 1500 + 1e-9
    assert math.isnan(vals["goodput_bps_fast"])
    assert vals["goodput_bps_libra"] == pytest.approx(float(f[f.cc == "libra"]["goodput_bps"].iloc[0]))
    assert M.rtt_groups(run) == [[0, 1], [2, 3]]
    assert vals["rtt_short_mean_goodput_bps"] == pytest.approx(f.loc[[0, 1], "goodput_bps"].mean())
    assert vals["rtt_long_jain_excl_libra"] == 1.0  # one flow left in the long group
    assert vals["main_stability_cv"] >= 0


def test_role_column_excludes_background(run, monkeypatch):
    import pyarrow as pa

    flows = run.table("flows")
    if "role" in flows.column_names:  # results carry the scenario's roles now; replace them
        flows = flows.drop(["role"])
    roles = pa.array(["main", "main", "background", "main"])
    # The engine reports every flow of this run as "main"; mark flow 2 as background instead.
    i = flows.schema.get_field_index("role")
    patched = flows.set_column(i, "role", roles) if i >= 0 else flows.append_column("role", roles)
    orig = run.table

    monkeypatch.setattr(run, "table", lambda name: patched if name == "flows" else orig(name))
    monkeypatch.setattr(run, "to_pandas", lambda name: run.table(name).to_pandas())
    M._cache[0] = None
    assert set(M.main_flows(run)["flow_id"]) == {0, 1, 3}
    assert math.isnan(M.cc_goodput_bps(run, "libra"))
    M._cache[0] = None


def test_background_fraction_and_convergence_share():
    assert M.background_fraction({}) == 0.0
    assert M.background_fraction({"background": None}) == 0.0
    assert M.background_fraction({"background": {"load": 0.5}}) == 0.5
    assert M.background_fraction({"background": {"load": 80}}) == 0.8
