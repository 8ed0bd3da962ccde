"""The ns-2 peer's RED mapping: every plan value reaches `Queue/RED`, limits it cannot map and ECN
flows are refused (the behaviour itself is validated in tests/validation/test_ns2_red.py)."""

from __future__ import annotations

import pytest

import fatpipe
from fatpipe.peers import ns2


def test_red_queues_map_every_value_and_ecn_flows_are_refused():
    sc = fatpipe.Scenario.from_toml('''
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "red", limit = "80pkt", min_th = 10, max_th = 30, max_p = 0.05, w_q = 0.004, mode = "bytes", adaptive = true } }
[tcp]
rack = false
tlp = false
''')
    plan = sc.plan(1)
    tcl = ns2.plan_to_tcl(plan, "/tmp")
    k = next(i for i, l in enumerate(plan["links"]) if l["name"] == "r0->r1")
    for line in (f"set q({k}) [[$ns link $n(1) $n(2)] queue]", f"$q({k}) set thresh_ 10.0", f"$q({k}) set maxthresh_ 30.0",
                 f"$q({k}) set linterm_ 20.0", f"$q({k}) set q_weight_ 0.004", f"$q({k}) set bytes_ true",
                 f"$q({k}) set queue_in_bytes_ true", f"$q({k}) set adaptive_ 1", f"$q({k}) set use_mark_p_ false",
                 f"$q({k}) set limit_ 80"):
        assert line in tcl, line
    # Both directions of the bottleneck run RED; the access links keep DropTail.
    assert tcl.count(" RED\n") == 2 and tcl.count(" DropTail\n") == 4
    # A byte limit cannot be mapped (ns-2's RED counts its limit in mean-size packets).
    plan["links"][k]["queue"]["limit_packets"], plan["links"][k]["queue"]["limit_bytes"] = None, 100_000
    with pytest.raises(ValueError, match="limit in packets"):
        ns2.plan_to_tcl(plan, "/tmp")
    # ECN: ns-2's agents answer ECE with their loss response, not RFC 3168's reduction.
    plan = sc.with_overrides("tcp.ecn=true").plan(1)
    with pytest.raises(ValueError, match="tcp.ecn"):
        ns2.plan_to_tcl(plan, "/tmp")
