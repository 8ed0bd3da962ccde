"""Shared by the ns-2 validation tests: run one plan in both simulators and read the results."""

from __future__ import annotations

import numpy as np

import fatpipe
from fatpipe.peers import ns2
from fatpipe.peers.ns3 import NS3_RULES


#: fatpipe's fast-recovery rule for ns-2 comparisons. fatpipe defaults to Linux's PRR (RFC 6937);
#: every ns-2 validation was measured with cwnd = ssthresh at once ("at-once", fatpipe's rule
#: before PRR; with NewReno's dupack counting it is Agent/TCP/Newreno's inflation). ns-2's
#: Agent/TCP/Linux halves the rate instead (`send_much` with `next_pkts_in_flight_`), which
#: fatpipe has as "rate-halving"; selecting it here leaves the Reno one-flow and many-flow results
#: within their bounds but moves BIC's 4-flow mean Jain (seeds 1-5) to 0.76 against ns-2's 0.89
#: (at once: 0.85) -- a move within the seed noise of that comparison (per-run standard deviation
#: 0.10-0.16, docs/validation.md), so the rule the validations were measured with stays.
NS2_CWND_REDUCTION = "at-once"


def both(sc: fatpipe.Scenario, seed: int = 1):
    """(fatpipe Result, ns-2 result dict) for the same plan (ns-2 with fast headers); fatpipe's
    side runs `NS2_CWND_REDUCTION`."""
    sc = sc.with_overrides(f"tcp.cwnd_reduction={NS2_CWND_REDUCTION}")
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
