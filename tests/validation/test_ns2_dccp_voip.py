"""DCCP and VoIP on seed 001's ring against ns-2.35 (`Agent/DCCP/TCPlike`, `Agent/DCCP/TFRC`,
`Agent/TCP/Linux select_ca cubic|compound`, voice from `Application/Traffic/Exponential`).

Scenario: seed 001's four-router ring (docs/ring.md), scaled to keep `make test` short: 3 senders
and 3 receivers per LAN instead of 12, and the ring links scaled with them, 250 kb/s instead of
1 Mb/s, so each shared link is loaded as in the paper: ns-2's routes ("ns2" tie-break) put 2S
voice flows on each shared link, 6 x 31.0 kb/s = 186 kb/s of payload (223 kb/s with the 32-byte
DCCP headers) on 250 kb/s, the paper's 24 x 31.0 = 744 kb/s on 1 Mb/s. The queues hold 75
packets, the same 0.46 s of the link's time as the paper's 300 packets at 1 Mb/s. 25 ms per ring
link (base RTT 104 ms), 300 s instead of 900 s. Each run pairs two protocols as the first
author's script splits them: LANs r1 and r2 (pairs 0-5) run the first, r3 and r4 (pairs 6-11)
the second, so each shared link carries three flows of each. Voice: 1.004 s / 1.587 s on/off,
80 kb/s, 160-byte packets (seed 001 §3.3). All six pairings of CCID 2, CCID 3, CUBIC
(`variant = "paper2008"`, ns-2's 2.6.22 module) and Compound (`variant = "ns2"`).

Same rules on both sides. DCCP: `dccp.restart_after_idle = false` (ns-2's CCID 2 has no idle
decay; docs/dccp.md), ns-2's defaults otherwise (s = 500 B). TCP: no RACK-TLP, ns-2's timer rules
(`rto_restart = "every-ack"` as test_ns2_many_flows, and `rto_estimator = "ns2-linux"`,
`LinuxTcpAgent::rtt_update`'s RFC 6298 form with Linux's damping of a falling RTT), and
`Agent/TCP/Linux`'s own recovery: `cwnd_reduction = "rate-halving"` (rate halving down to the
module's min_cwnd, ssthresh/2 for Compound; moderation on leaving recovery), `rto_ssthresh =
"every-timeout"` (`enter_loss` asks the module on every timeout), `rtt_samples = "every-ack"`
(`time_processing` feeds the RTO estimator the echo of every ACK, duplicates included) and
`loss_state = "ns2"` (in Loss a lost retransmission is found by SACK and any new loss starts a
Recovery). The pairings run with
`tcp.restart_after_idle = false` (ns-2 slow_start_restart_ false); the restart, ns-2's default,
is checked apart with `idle_restart = "ns2"` (`test_tcp_restart_after_idle_by_ns2s_rule_agrees`).

Randomness. The voice sources draw from each simulator's own RNG, so runs are compared only
through means over seeds: 20 seeds per pairing, 6 flows per protocol. ns-2.35's CCID 2 aborts
when its Ack Vector no longer fits one option (`DCCPAckVector::sendAckVector`, "Failed to add
ack vector to option", 254 bytes), which heavy-loss runs hit now and then (5 of 45 runs of CCID 2
vs CUBIC and vs Compound); such seeds are skipped on both sides, and the next seed is taken, so
every pairing has 20 complete seeds (deterministic: the same seeds every time; skipped with
seeds 1-24: 4, 11, 19, 23 of CCID 2 vs CUBIC, 1 of CCID 2 vs Compound). fatpipe's runs of those
seeds are independent draws and leave its sample unbiased; ns-2's sample loses a few heavy-loss
runs.

Metrics per protocol, means over its 120 flows (20 seeds x 6): throughput = delivered packets x
160 B x 8 / 300 s (seed 001's definition); packets sent and dropped per flow; delivery rate =
delivered / sent (pooled); mean one-way delay of delivered data packets, weighted by packets
(a CCID 3 flow that collapses after a loss sends a few dozen packets, nearly all in the first
seconds' queue, and would weigh as much as one that sent 2 000 in a flow average).

Tolerances. Each is set from the spread of the 20-seed means (the standard error, SE, of the
difference of two such means) and from the effects the study reports (measured values in
docs/validation.md):
- Throughput and packets sent per flow: 5 % for the protocols that carry their offered load or
  most of it (SE ~1 %: the offered load itself varies by ~4 % per flow and run; the study's
  differences are 10-20 %, e.g. CUBIC 20 % above CCID 2 at 100 ms). 30 % for CCID 3: its flows
  either hold one packet per RTT (~2 200 packets) or collapse to one per 64 s after a loss
  (ns-2.35's loss intervals, docs/dccp.md), so a run's mean varies by 30-40 % and the SE of the
  difference is ~10 %; the bound is 3 SE. The failures it guards against are larger: a CCID 3
  flow that never collapses sends ~70 % more than the mean, and fatpipe's CCID 3 on RFC 5348's
  rules sends twice as much (2 576 against 1 331 packets per flow beside CCID 2, 10 seeds).
- Drops per flow: within 25 % or 2 packets, whichever is larger. Where flows lose hundreds of
  packets the SE is ~2 %, and fatpipe's rendering of TCP-Linux's recovery is not ns-2's packet
  for packet (its FACK scoreboard and the scoreboard clear, docs/validation.md), so TCP drop
  counts in this heavy-loss regime may differ by up to ~20 % (measured: Compound 129 vs 109 per
  flow beside CCID 2); the study's drop comparisons are factors of 3-7 (seed target 5). Where
  flows lose a handful, counts are Poisson-like: 2 packets is about two SE.
- Delivery rate: within 1 percentage point (93-100 % on both sides; SE 0.1-0.2 points).
- Mean one-way delay: within 10 % or 5 ms (52 ms of propagation, queueing adds 20-230 ms; SE
  ~1 ms). Measured differences are up to 5 ms either way; ns-2's packets carry 0.6 % more bytes
  over the ring links (SACK blocks on TCP ACKs, Ack Vector options on DCCP acknowledgements,
  CCID 2 senders' DataAcks; counted from a trace of r1-r2, CCID 2 vs Compound).
- CCID 3 at s = 500 B alone on a quiet 1 Mb/s path sends one packet per RTT on both sides:
  packets sent within 2 % of duration / RTT and of each other; with s = 160 B both carry the
  offered load.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import fatpipe
from conftest import ns2_available
from fatpipe.peers import ns2
#: ns-2.35 Agent/TCP/Linux's recovery (tcp-linux.cc tcp_fastretrans_alert, enter_loss).
CWND_REDUCTION = "rate-halving"

pytestmark = [
    pytest.mark.validation,
    pytest.mark.skipif(not ns2_available(), reason="ns-2 (Debian package ns2) is not installed; `make setup` installs it"),
    # the variants chosen mirror ns-2's modules, which take no parameters
    pytest.mark.filterwarnings("ignore:flow .*cc_params .* are ignored by the ns-2 peer:UserWarning"),
]

DURATION_S = 300.0
SEEDS = 20
PAYLOAD = 160
PROTOCOLS = {
    "ccid2": 'transport = "dccp"\ndccp = { ccid = 2 }',
    "ccid3": 'transport = "dccp"\ndccp = { ccid = 3 }',
    "cubic": 'transport = "tcp"\ntcp = { cc = "cubic", cc_params = { variant = "paper2008" } }',
    "compound": 'transport = "tcp"\ntcp = { cc = "compound", cc_params = { variant = "ns2" } }',
}
PAIRINGS = [
    ("ccid2", "ccid3"),
    ("ccid2", "cubic"),
    ("ccid2", "compound"),
    ("ccid3", "cubic"),
    ("ccid3", "compound"),
    ("compound", "cubic"),
]
#: ns-2.35's CCID 2 abort (see the module docstring).
NS2_ACKV_ABORT = "Failed to add ack vector to option"


def ring(a: str, b: str, tcp_restart: bool = False) -> fatpipe.Scenario:
    half = ", ".join(map(str, range(6)))
    other = ", ".join(map(str, range(6, 12)))
    return fatpipe.Scenario.from_toml(f"""
name = "voip-ring-{a}-{b}"
duration = "{int(DURATION_S)}s"
[topology]
kind = "ring"
routers = 4
senders = 3
receivers = 3
[topology.ring]
rate = "250kbps"
delay = "25ms"
queue = {{ kind = "droptail", limit = "75pkt" }}
[tcp]
rack = false
tlp = false
rto_restart = "every-ack"
rto_estimator = "ns2-linux"
cwnd_reduction = "{CWND_REDUCTION}"
rto_ssthresh = "every-timeout"
rtt_samples = "every-ack"
loss_state = "ns2"
restart_after_idle = {str(tcp_restart).lower()}
idle_restart = "ns2"
[dccp]
restart_after_idle = false
[[flows]]
kind = "voip"
pairs = [{half}]
{PROTOCOLS[a]}
[[flows]]
kind = "voip"
pairs = [{other}]
{PROTOCOLS[b]}
""")


def _both(sc: fatpipe.Scenario, seed: int):
    """(fatpipe flow rows, ns-2 flow rows), or None where ns-2's CCID 2 aborts."""
    try:
        theirs = ns2.run_plan(sc.plan(seed), fast_headers=True)
    except RuntimeError as e:
        if NS2_ACKV_ABORT in str(e):
            return None
        raise
    ours = fatpipe.run(sc, seed=seed).to_pandas("flows").to_dict("records")
    return ours, theirs["flows"]


def _summary(rows: list[dict], proto: str) -> dict[str, float]:
    rs = [r for r in rows if r["cc"] == proto]
    sent = np.array([r["data_packets_sent"] for r in rs], dtype=float)
    deliv = np.array([r["packets_delivered"] for r in rs], dtype=float)
    drops = np.array([r["packets_dropped"] for r in rs], dtype=float)
    delay = np.array([r["delay_mean_s"] if deliv[k] > 0 else 0.0 for k, r in enumerate(rs)], dtype=float)
    return {
        "kbps": deliv.mean() * PAYLOAD * 8 / DURATION_S / 1000,
        "sent": sent.mean(),
        "drops": drops.mean(),
        "delivery_pct": 100 * deliv.sum() / sent.sum(),
        "delay_ms": 1000 * (delay * deliv).sum() / deliv.sum(),
    }


@functools.lru_cache(maxsize=None)
def pairing(a: str, b: str, tcp_restart: bool = False) -> dict:
    """Per protocol and side ("fatpipe", "ns2"): each metric's per-seed values, over the first
    `SEEDS` seeds where ns-2 completes; and the seeds skipped."""
    sc = ring(a, b, tcp_restart)
    out: dict = {"skipped": []}
    seeds = list(range(1, SEEDS + 1))
    done: list[tuple] = []
    with ThreadPoolExecutor(2) as pool:
        while len(done) < SEEDS:
            runs = list(pool.map(lambda s: (s, _both(sc, s)), seeds))
            for s, r in runs:
                if r is None:
                    out["skipped"].append(s)
                else:
                    done.append(r)
            nxt = max(seeds) + 1
            seeds = list(range(nxt, nxt + SEEDS - len(done)))
    for proto in (a, b):
        for side, k in (("fatpipe", 0), ("ns2", 1)):
            per_seed = [_summary(r[k], proto) for r in done[:SEEDS]]
            out[(proto, side)] = {m: np.array([x[m] for x in per_seed]) for m in per_seed[0]}
    return out


def mean(r: dict, proto: str, side: str, metric: str) -> float:
    return float(r[(proto, side)][metric].mean())


def cases():
    for a, b in PAIRINGS:
        for p in (a, b):
            yield pytest.param(a, b, p, id=f"{a}-vs-{b}:{p}")


def _rel(f: float, n: float) -> float:
    return abs(f - n) / abs(n)


@pytest.mark.parametrize("a,b,proto", list(cases()))
def test_throughput_and_packets_sent_match_ns2(a, b, proto):
    r = pairing(a, b)
    bound = 0.30 if proto == "ccid3" else 0.05
    for metric in ("kbps", "sent"):
        f, n = mean(r, proto, "fatpipe", metric), mean(r, proto, "ns2", metric)
        assert _rel(f, n) < bound, (proto, metric, f, n)


@pytest.mark.parametrize("a,b,proto", list(cases()))
def test_drops_per_flow_match_ns2(a, b, proto):
    r = pairing(a, b)
    f, n = mean(r, proto, "fatpipe", "drops"), mean(r, proto, "ns2", "drops")
    assert abs(f - n) <= max(0.25 * n, 2.0), (proto, f, n)


@pytest.mark.parametrize("a,b,proto", list(cases()))
def test_delivery_rate_matches_ns2(a, b, proto):
    r = pairing(a, b)
    f, n = mean(r, proto, "fatpipe", "delivery_pct"), mean(r, proto, "ns2", "delivery_pct")
    assert abs(f - n) < 1.0, (proto, f, n)


@pytest.mark.parametrize("a,b,proto", list(cases()))
def test_mean_one_way_delay_matches_ns2(a, b, proto):
    r = pairing(a, b)
    f, n = mean(r, proto, "fatpipe", "delay_ms"), mean(r, proto, "ns2", "delay_ms")
    assert abs(f - n) <= max(0.10 * n, 5.0), (proto, f, n)


QUIET_CCID3 = """
duration = "300s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "1Mbps", delay = "50ms", queue = { limit = "300pkt" } }
access = { rate = "10Mbps", delay = "1ms" }
[dccp]
ccid = 3
[[flows]]
kind = "voip"
transport = "dccp"
"""


def test_ccid3_sends_one_voice_packet_per_rtt_with_ns2s_segment_size():
    # docs/dccp.md: with s_s_ = 500 B and 160-byte packets, 2 X_recv = 320/R stays under the
    # slow-start floor s/R, so X = s/R and t_ipi = R: one packet per RTT (here 2 x 53.15 ms
    # with serialisation), the 1000-packet queue full; with s = 160 B the source's load passes.
    sc = fatpipe.Scenario.from_toml(QUIET_CCID3)
    for seed in (1, 2):
        ours, theirs = _both(sc, seed)
        rtt = float(np.mean([r["rtt_mean_s"] for r in ours]))
        for f, n in zip(ours, theirs):
            assert abs(f["data_packets_sent"] / (DURATION_S / rtt) - 1) < 0.02, (f, rtt)
            assert abs(f["data_packets_sent"] / n["data_packets_sent"] - 1) < 0.02, (f, n)
            assert f["app_discards"] > 0
            # ns-2's rate is exactly s/R
            assert abs(n["final_x_bytes_per_s"] * rtt / 500 - 1) < 0.01, n
    sc = sc.with_overrides("dccp.segment=160B")
    offered = DURATION_S * 80_000 / (PAYLOAD * 8) * 1.004 / (1.004 + 1.587)
    got = {"fatpipe": [], "ns2": []}
    for seed in (1, 2):
        ours, theirs = _both(sc, seed)
        got["fatpipe"] += [r["packets_delivered"] for r in ours]
        got["ns2"] += [r["packets_delivered"] for r in theirs]
        assert all(r["app_discards"] == 0 for r in ours)
    # 4 flows of ~116 on/off cycles each: the mean is within ~10 % of the offered load
    for side, xs in got.items():
        assert abs(np.mean(xs) / offered - 1) < 0.15, (side, xs, offered)


def test_tcp_restart_after_idle_by_ns2s_rule_agrees():
    """Voice over CUBIC beside CCID 3 with ns-2's window restart on both sides (its
    slow_start_restart_, TcpAgent::timeout with nothing outstanding: one RTO after a talk spurt's
    last ACK cwnd = windowInit_, raised if below, ssthresh kept; fatpipe's `idle_restart =
    "ns2"`). CUBIC's drops within the pairings' bound (25 % or 2 packets), CCID 3's packets sent
    within its 30 %."""
    r = pairing("ccid3", "cubic", True)
    f, n = mean(r, "cubic", "fatpipe", "drops"), mean(r, "cubic", "ns2", "drops")
    assert abs(f - n) <= max(0.25 * n, 2.0), (f, n)
    f, n = mean(r, "ccid3", "fatpipe", "sent"), mean(r, "ccid3", "ns2", "sent")
    assert abs(f / n - 1) <= 0.30, (f, n)
