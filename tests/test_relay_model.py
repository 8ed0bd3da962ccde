"""Relay chains in the simulator against seed 002's model (``fatpipe.models.logistics``).

The regime the model covers (§3 of the paper): every connection in congestion avoidance, limited
by random loss well below its links' capacity, no slow start to speak of. Here: a line of N
links, each 1 Gb/s with 10 ms one way and random loss 1e-3 on the data direction, so every
segment of a relay has the same RTT (20 ms) and loss, and the direct connection across the line
has N times the RTT and the N losses combined (Eq. 4). Reno with SACK (RACK-TLP off, as the
model's AIMD), a bulk transfer for 400 s: a segment carries about 23 Mb/s, 2 % of its links.

The model's gain (relay over direct) is N √(p_direct / p_segment) (Eq. 3 with Eq. 4's loss
split): 2.83 for N = 2 and 5.19 for N = 3. Mathis' constant cancels in the ratio as long as both
sides are in the same regime. Measured over seeds 1-5: N = 2 gains 2.72-2.90, mean 2.79 (-1.3 %
from the model); N = 3 gains 4.73-5.30, mean 5.09 (-2.0 %); the standard deviation of the mean is
1.1 % and 1.9 %. Tolerance: the mean within 8 % of the model, four standard deviations of the mean
for N = 3, which leaves room for the few per cent by which Reno's constant differs between the
segments' p = 1e-3 and the direct path's 2-3e-3 (the direct flow measured C = 1.33 at 200 s,
the segments 1.25; crates/fatpipe-scenario/tests/loss.rs finds 1.24-1.32 at 1e-3). With 200 s
runs the means were 5.7 % and 4.2 % below the model: the runs are as long as they are for that.
"""

from __future__ import annotations

import statistics

import pytest

import fatpipe
from fatpipe.models import logistics as lg

SEEDS = range(1, 6)


def line(n: int, relay: bool, duration: str = "400s") -> fatpipe.Scenario:
    names = ["src"] + [f"d{i}" for i in range(1, n)] + ["dst"]
    links = ",\n".join(
        f'  {{ between = ["{a}", "{b}"], rate = "1Gbps", delay = "10ms", loss = 0.001 }}'
        for a, b in zip(names, names[1:]))
    nodes = ", ".join(f'{{ name = "{x}" }}' for x in names)
    depots = ", ".join(f'"{x}"' for x in names[1:-1])
    flow = f'kind = "relay"\ndepots = [{depots}]' if relay else 'kind = "bulk"'
    return fatpipe.Scenario.from_toml(f"""
duration = "{duration}"
[topology]
kind = "graph"
nodes = [{nodes}]
links = [
{links}
]
[tcp]
cc = "reno"
rack = false
tlp = false
[[flows]]
src = "src"
dst = "dst"
{flow}
[monitor]
interval = "10s"
""")


@pytest.mark.parametrize("n", [2, 3])
def test_a_relay_gains_what_the_model_predicts_over_a_direct_transfer(n):
    relay, direct = line(n, True), line(n, False)
    model = lg.chain_from_plan(relay.plan()).gain_over(lg.chain_from_plan(direct.plan()))
    assert model == pytest.approx(n * (lg.combine_loss(*[1e-3] * n) / 1e-3) ** 0.5)
    gains = []
    for seed in SEEDS:
        r = fatpipe.run(relay, seed=seed)
        d = fatpipe.run(direct, seed=seed)
        gp_relay = r.flows.column("goodput_bps")[0].as_py()
        gains.append(gp_relay / d.flows.column("goodput_bps")[0].as_py())
        # The pipeline runs at its slowest segment (Eq. 1): end to end within 3 % of the
        # slowest segment's goodput, every depot within its buffer.
        seg = r.segments.to_pandas()
        assert gp_relay <= seg.goodput_bps.min() * 1.0001
        assert gp_relay >= 0.97 * seg.goodput_bps.min(), seg.goodput_bps.tolist()
        assert (seg.buffer_max_bytes <= seg.buffer_bytes).all()
    mean = statistics.fmean(gains)
    assert abs(mean / model - 1) < 0.08, f"N={n}: gains {gains}, mean {mean:.3f}, model {model:.3f}"
