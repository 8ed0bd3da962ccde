"""The agreement rule of `fatpipe compare` on made-up replications (no root needed)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fatpipe.testbed.compare import TOLERANCES, judge, run_metrics


def _run(goodputs, retrans=10.0, rtt=0.05):
    f = pd.DataFrame({"flow_id": range(len(goodputs)), "goodput_bps": goodputs,
                      "retransmits": [retrans] * len(goodputs), "rtt_mean_s": [rtt] * len(goodputs)})
    return run_metrics(f)


def test_equal_back_ends_agree_on_every_metric():
    runs = [_run([50e6, 40e6]), _run([48e6, 42e6]), _run([51e6, 39e6])]
    vs = judge(runs, runs)
    assert all(v.agrees for v in vs) and len(vs) == 5  # aggregate, 2 shares, retransmits, RTT


def test_a_difference_beyond_tolerance_and_noise_differs():
    sim = [_run([60e6, 40e6], rtt=0.05) for _ in range(5)]
    tb = [_run([50e6, 50e6], rtt=0.05) for _ in range(5)]
    v = {x.metric: x for x in judge(sim, tb)}
    assert v["aggregate_goodput_bps"].agrees  # both 100 Mb/s
    assert not v["flow 0 share"].agrees  # 0.6 vs 0.5: +20 % > 10 %, no spread between replications
    assert abs(v["flow 0 share"].rel_diff - 0.2) < 1e-12


def test_a_difference_inside_the_noise_is_not_called_a_disagreement():
    sim = [_run([100e6], retrans=r) for r in (2, 30, 5, 40, 3)]
    tb = [_run([100e6], retrans=r) for r in (10, 12, 9, 11, 8)]
    v = {x.metric: x for x in judge(sim, tb)}["retransmits_per_flow"]
    assert abs(v.sim - 16.0) < 1e-9 and abs(v.testbed - 10.0) < 1e-9
    assert v.sim - v.testbed > TOLERANCES["retransmits_per_flow"] * v.testbed  # beyond 50 % ...
    assert v.agrees  # ... but within the CIs


def test_linux_framing_gives_the_simulator_the_kernels_segments():
    """A 1460-byte TCP_MAXSEG with timestamps is 1448 bytes of payload in a 1514-byte frame, and
    a pure ACK a 66-byte frame: the simulator gets those sizes, the testbed keeps the scenario."""
    import fatpipe
    from fatpipe.testbed.compare import linux_framing

    root = Path(__file__).resolve().parents[2]
    sc = fatpipe.Scenario.load(root / "scenarios" / "compare-small.toml")
    f = linux_framing(sc).plan(1)["flows"][0]
    assert (f["mss"], f["header_bytes"]) == (1448, 66)
    assert f["mss"] + f["header_bytes"] == 1514
    assert sc.plan(1)["flows"][0]["mss"] == 1460


def test_linux_framing_refuses_flows_with_different_mss():
    import fatpipe
    from fatpipe.testbed.compare import linux_framing

    root = Path(__file__).resolve().parents[2]
    text = (root / "scenarios" / "compare-small.toml").read_text()
    text += '\n[[flows]]\npairs = [1]\ntcp = { mss = "1000B" }\n'
    two = fatpipe.Scenario.from_toml(text)
    with pytest.raises(fatpipe.ScenarioError, match="tcp.mss"):
        linux_framing(two)
