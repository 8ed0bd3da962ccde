"""Shared by the ns-2 validation tests: run one plan in both simulators and read the results."""

from __future__ import annotations

import numpy as np

import fatpipe
from fatpipe.peers import ns2


def both(sc: fatpipe.Scenario, seed: int = 1):
    """(fatpipe Result, ns-2 result dict) for the same plan (ns-2 with fast headers)."""
    plan = sc.plan(seed)
    ours = fatpipe.run(sc, seed=seed)
    theirs = ns2.run_plan(plan, sample_interval_ns=plan["monitor"]["interval_ns"], fast_headers=True)
    return ours, theirs


def per_flow_goodput(ours, theirs):
    """Per-flow goodput arrays (fatpipe, ns-2), ordered by flow id."""
    f = ours.to_pandas("flows").sort_values("flow_id")["goodput_bps"].to_numpy()
    n = np.array([x["goodput_bps"] for x in sorted(theirs["flows"], key=lambda x: x["flow_id"])])
    return f, n


#: TCP settings every validation scenario needs: ns-2.35 has no RACK-TLP (RFC 8985), which
#: fatpipe turns on by default as Linux does; the ns-2 peer refuses plans with it on.
NS2_TCP = {"rack": False, "tlp": False}


def validation_dumbbell(pairs: int, duration: str, **tcp) -> fatpipe.Scenario:
    """The validation dumbbell: 100 Mb/s, 50 ms bottleneck with a 100-packet DropTail buffer,
    1 Gb/s x 1 ms access links, initial window 2, starts spread over the first second; RACK and
    TLP off (``NS2_TCP``) unless given."""
    return fatpipe.Scenario.dumbbell(
        pairs=pairs, rate="100Mbps", delay="50ms", buffer="100pkt", access_rate="1Gbps",
        duration=duration, initial_window=2, start_spread="1s", **{**NS2_TCP, **tcp},
    )
