"""The testbed's http driver without root: what it reads from `ss`, and the flows it refuses
(docs/testbed.md). Its runs through real depots are in tests/test_augusto2008_study.py (the tiny
reproduction) and tests/testbed/test_depot_*.py."""

from __future__ import annotations

import math

import pytest

import fatpipe
from fatpipe.exceptions import FatpipeError
from fatpipe.testbed.http import parse_ss
from fatpipe.testbed.run import _check_flows

# `ss -tinH state established` in a depot's namespace during a transfer (Linux 6.18).
SS = """0      1224936 10.0.0.2:9001 10.0.0.1:42172
\t reno wscale:7,7 rto:224 rtt:23.767/22.38 ato:40 mss:1448 cwnd:262 bytes_sent:1272445 bytes_retrans:6192 bytes_acked:1266253 busy:956ms rwnd_limited:904ms(94.6%) retrans:0/5 dsack_dups:5 minrtt:4.058
0      0      10.0.4.1:51234 10.0.4.2:8080
\t cubic wscale:7,7 rto:204 rtt:4.1/0.5 mss:1448 cwnd:10 bytes_sent:420 bytes_acked:421 bytes_received:9000000
"""


def test_ss_lines_give_each_sockets_algorithm_rtt_and_retransmissions():
    socks = parse_ss(SS, ("reno", "cubic", "bbr"))
    assert [(s["local"], s["lport"], s["peer"], s["pport"]) for s in socks] == [
        ("10.0.0.2", 9001, "10.0.0.1", 42172), ("10.0.4.1", 51234, "10.0.4.2", 8080)]
    a, b = socks
    assert (a["cc"], a["bytes_acked"], a["retrans"]) == ("reno", 1266253, 5)
    assert math.isclose(a["rtt_s"], 0.023767) and b["cc"] == "cubic" and b["retrans"] == 0
    assert parse_ss("", ("reno",)) == []


def _relay_plan(driver: str | None):
    tb = f'[testbed]\ndriver = "{driver}"\n' if driver else ""
    return fatpipe.Scenario.from_toml(
        'duration = "5s"\n[topology]\nkind = "graph"\nnodes = [{ name = "s" }, { name = "d", kind = "router" }, '
        '{ name = "c" }]\nlinks = [{ between = ["s", "d"], rate = "10Mbps", delay = "1ms" }, '
        '{ between = ["d", "c"], rate = "10Mbps", delay = "1ms" }]\n[tcp]\ncc = "reno"\n'
        '[[flows]]\nkind = "relay"\nsrc = "s"\ndst = "c"\ndepots = ["d"]\nsize = "1MB"\n' + tb).plan()


def test_a_relay_needs_the_http_driver_and_runs_with_it():
    with pytest.raises(FatpipeError, match='driver = "http"'):
        _check_flows(_relay_plan(None), "fatpipe-bulk")
    assert "reno" in _check_flows(_relay_plan("http"), "http")
