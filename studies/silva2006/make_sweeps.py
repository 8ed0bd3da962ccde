"""Write the da Silva (2006) sweep files (sweeps/<role>-<mode>.toml) from the settings below.

This file is the single source of the study's settings: the dissertation's numbers (Tables
3.2, 4.1-4.5, the Appendix C script's get_queue, buffer sizing and durations), every inferred
parameter with its reason (README "Inferred parameters"), and what quick mode scales down.
fatpipe.studies.silva2006 imports it for the analysis and the arithmetic targets.

Roles (study.toml):

- ``sim.<loss>``  the simulated delay x loss grid at 1 Gb/s, the five protocols (Figs 4.14-4.18);
- ``emu.testbed`` the emulated grid on the testbed: the kernel's algorithms, host tuning from
  Appendices D.1/E.1, ``tcp_no_metrics_save`` ON and OFF (Figs 4.5-4.13), at a tenth of the rate;
- ``emu.replica`` the simulator's replica of exactly those runs (emulated vs simulated);
- ``real.sim`` / ``real.testbed`` / ``real.replica``  the replicas of the real environment's
  point (RTT 13.6 ms, loss 1e-7; Fig 4.3): the real environment itself cannot be reproduced;
- ``fair.rtt`` / ``fair.same`` / ``fair.inter``  the fairness experiments on the RedClara/CERN
  topology (Tables 4.4/4.5, Figs 4.19-4.21);
- ``cwnd``        the cwnd traces of Figs 2.2-2.6 (1 Gb/s, RTT 200 ms, overflow losses only).

Run from anywhere: ``python studies/silva2006/make_sweeps.py``; the files are committed and
tests/test_silva2006_study.py checks they are what this script writes.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---- the dissertation's numbers (seed note 004) ------------------------------------------------

#: The path: Gigabit Ethernet (§3.1).
CAPACITY_BPS = 1e9
#: Table 3.2's divisor: payload bytes per segment (queue = BDP / 1460).
TABLE_PACKET_BYTES = 1460
#: Table 3.2's round-trip times, ms.
TABLE_3_2_RTTS_MS = (10, 25, 50, 75, 100, 150, 200)
#: Table 4.1: added one-way delays (ms) and uniform loss rates (0.1 % ... 0.00001 %).
DELAYS_MS = (0, 2, 5, 10, 25, 50, 75, 100, 150, 200)
LOSS_RATES = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7)
#: Table 4.2 (and the script's get_dura_repete): loss rate -> (seconds per run, runs).
SCHEDULE = {1e-3: (30, 20), 1e-4: (50, 20), 1e-5: (100, 20), 1e-6: (500, 20), 1e-7: (3600, 10)}
#: The script's `sleep 10` between runs.
PAUSE_S = 10
#: The script sizes buffers for the delay plus 0.3 ms (the LAN's own round trip).
BASE_RTT_MS = 0.3
#: The five protocols (§2.6), fatpipe's names.
THESIS_PROTOCOLS = ("reno", "highspeed", "scalable", "htcp", "bic")
#: The real environment's point (§4.2.1, Fig 4.3): RTT 13.6 ms on the contingency route, loss
#: below 1e-7 (ICMP), 10-minute netperf runs, 20 of them.
REAL_RTT_MS = 13.6
REAL_LOSS = 1e-7
REAL_SCHEDULE = (600, 20)
#: Appendices D.1 and E.1: the hosts' tuning (as the plan's [testbed] table; sizes in bytes).
TUNING_D1_E1 = {
    "moderate_rcvbuf": False, "dsack": False, "no_metrics_save": True, "timestamps": True,
    "window_scaling": True, "sack": True,
    "rmem": (4096, 3125000, 26000000), "wmem": (4096, 3125000, 26000000),
}
#: E.1's net.core.rmem_max / wmem_max.
CORE_MAX_BYTES = 26000000
#: Table 4.4 (different RTTs): each sender's link T_i -- Ro1 "RTT", ms (Brasília ... Mexico City);
#: Ro1 -- Ro2 (São Paulo - Madrid) 56 ms; Ro2 -- R_i (Madrid - Geneva) 6 ms.
REDCLARA_ACCESS_RTT_MS = (6, 10, 12, 18, 20, 22, 28, 28, 30, 50)
REDCLARA_CORE_RTT_MS = 56
REDCLARA_EDGE_RTT_MS = 6
#: Table 4.5 (same RTT): every sender's link is Mexico City's, 50 ms.
REDCLARA_SAME_RTT_MS = 50
#: Start times uniform in [0.1, 4] s (§3.4).
FAIR_START_S, FAIR_START_SPREAD_S = 0.1, 3.9


def get_queue(delay_ms: float) -> int:
    """The Appendix C script's get_queue: packets for txqueuelen, netdev_max_backlog and netem's
    limit, from the added delay (Table 4.3, plus the script's own <= 20 ms step)."""
    for bound, limit in ((10, 1000), (20, 2000), (25, 3000), (50, 5000), (75, 7000), (100, 10000),
                         (150, 13000), (200, 18000)):
        if delay_ms <= bound:
            return limit
    raise ValueError(f"delay {delay_ms} ms: the script accepts at most 200 ms")


def table_3_2(rtt_ms: float) -> tuple[float, int]:
    """Table 3.2: (BDP in MB, queue in packets) of a 1 Gb/s path: BDP / 1460, rounded."""
    bdp_bytes = CAPACITY_BPS * rtt_ms / 1000 / 8
    return bdp_bytes / 1e6, round(bdp_bytes / TABLE_PACKET_BYTES)


def socket_buffer_bytes(delay_ms: float, capacity_bps: float = CAPACITY_BPS) -> int:
    """netperf's -s/-S: BDP = (RETARDO + .3) x 1000000/8 bytes at 1 Gb/s, a delay of 0 counting
    as 1 ms as the script's comment gives it (0 -> 162 500 bytes); scaled with the capacity."""
    d = max(delay_ms, 1.0) if delay_ms == 0 else delay_ms
    return round((d + BASE_RTT_MS) * capacity_bps / 8 / 1000)


def schedule_seconds(protocols: int = 5, delays: int = len(DELAYS_MS)) -> int:
    """Table 4.2's run time including the 10 s pauses, for one ON/OFF setting (29.22 days)."""
    per_delay = sum((d + PAUSE_S) * n for d, n in SCHEDULE.values())
    return per_delay * delays * protocols


# ---- inferred parameters (README "Inferred parameters": each with its reason) ------------------

#: Linux stores twice what SO_SNDBUF/SO_RCVBUF are given, and 2.6.13 advertised 3/4 of the
#: receive buffer (tcp_adv_win_scale = 2): the window a netperf -S X receiver offered was 1.5 X.
#: The simulated grid's receiver window is that factor times the script's buffer, so it differs
#: from the emulated environment by the environment only. Alternatives: "as-given" (1.0),
#: "doubled" (2.0) and "unlimited" (None: the thesis's ns-2 set window_ above any cwnd).
SOCKET_BUFFER_RULES = {"as-given": 1.0, "doubled": 2.0, "linux-2.6.13": 1.5, "unlimited": None}
SOCKET_BUFFER_RULE = "linux-2.6.13"
#: The testbed's kernel (Linux 6.18 here) advertises at most 1.25 X for netperf's -S X (twice X
#: times its measured payload/truesize ratio; measured: 1 567 200 bytes for X = 1 253 750), and
#: never more than the window scale it chose at the handshake allows (linux_advertised_window):
#: the replica of the emulated runs gets that window, and target 3 compares it with what the
#: testbed's receivers advertised (advertised_window_bytes).
EMU_REPLICA_RWND_FACTOR = 1.25


def linux_advertised_window(x: int) -> int:
    """The largest window a Linux 6.x receiver with SO_RCVBUF = x advertises: 1.25 x, capped by
    its window scale, chosen at the handshake (tcp_select_initial_window) from the buffer's space
    at the default scaling ratio of 1/2 (2x stored, half of it): wscale = ilog2(x) - 15, so
    65535 << wscale (measured: 131 070 bytes for x = 128 750, where 1.25 x would be 160 938)."""
    wscale = min(max(int(math.floor(math.log2(x))) - 15, 0), 14)
    return min(round(EMU_REPLICA_RWND_FACTOR * x), 65535 << wscale)
#: The queue model: the script's get_queue as a DropTail at the sender's interface (netem's
#: `limit` also counted the packets in its delay line; ns-2's DropTail does not; README).
#: ns-2 TCP-Linux (the dissertation's simulator, May 2006): Linux's congestion-control modules on
#: ns-2's base agent; fatpipe's ns-2 TCP-Linux rules (docs/validation.md), windowInit_ 2, no
#: RACK-TLP (2006), no delayed ACKs (TCPSink/Sack1, the patch's instructions), 1460-byte segments
#: with 40 bytes of headers (Table 3.2's divisor).
SIM_TCP = {
    "mss": "1460B", "header": "40B", "initial_window": 2, "delayed_ack": False, "rack": False, "tlp": False,
    "rto_restart": "every-ack", "rto_estimator": "ns2-linux", "cwnd_reduction": "rate-halving",
    "rto_ssthresh": "every-timeout", "rtt_samples": "every-ack", "loss_state": "ns2",
}
#: The modules' parameters: Linux's (2.6.22.6, the ns-2.35 TCP-Linux set fatpipe implements);
#: BIC's max_increment 16 is the thesis's S_max (Table 2.5; the 2.6.14 stable fix [73]).
PROTOCOL_PARAMS = {
    "reno": {}, "highspeed": {"variant": "linux"}, "scalable": {"variant": "linux"}, "htcp": {},
    "bic": {"variant": "linux", "max_increment": 16},
}
#: The emulated grid's scale: a tenth of the rate, which fatpipe-linkem emulates faithfully on
#: 2 cores (docs/link-emulator.md: p99 departure error 2 us at a saturated 100 Mb/s; a saturated
#: 1 Gb/s exceeds one core). Queues and socket buffers scale with it (the same BDP fractions).
EMU_SCALE = 0.1
#: Linux's framing on the emulated wire (fatpipe.testbed.compare.linux_framing): 1448 bytes of
#: payload and 66 bytes of headers; the testbed's TCP_MAXSEG is 1460 (its segments carry the
#: 12-byte timestamp option).
EMU_MSS, EMU_REPLICA_MSS, EMU_REPLICA_HEADER = 1460, 1448, 66
#: The replica's receiver ACKs every second full segment, as Linux's does.
EMU_REPLICA_DELAYED_ACK = True
#: Connections back to back on the same hosts in one testbed run (the script's runs), so that the
#: kernel's metrics cache (tcp_no_metrics_save = 0, "OFF") can carry from one to the next; the
#: cache is only written on an orderly close, hence `close = "graceful"`.
#: Fairness: the per-link "RTT" of Tables 4.4/4.5 is that link's round trip, so each direction
#: gets half, and a path's RTT is the sum (68-112 ms; 112 ms for every flow in Table 4.5).
#: The bottleneck buffer is the thesis's own rule, get_queue, at the longest path RTT (112 ms:
#: 13 000 packets, 1.4 BDP); the thesis does not state it.
#: 5 Reno + 5 X: Reno on T1-T5 (unstated; under Table 4.5 every sender's path is the same).
FAIR_RENO_SENDERS = 5
#: The cwnd traces (Figs 2.2-2.6): RTT 200 ms, buffer get_queue(200) = 18 000 packets, no receiver
#: window (losses from overflow only).
TRACE_RTT_MS = 200

MODES = {
    # The dissertation's scale: Table 4.1's grid, Table 4.2's durations and runs; the emulated grid
    # with every kernel algorithm, ON and OFF, as many back-to-back runs as Table 4.2; fairness
    # 600 s (unstated; Fig 4.21 reads 125 s of connection time); cwnd traces 1 h (Reno's ~50 min).
    "full": dict(
        sim_delays=DELAYS_MS, sim_losses=LOSS_RATES, sim_schedule=SCHEDULE, protocols=THESIS_PROTOCOLS,
        emu_algorithms=("reno", "cubic", "bbr"), emu_delays=DELAYS_MS, emu_losses=LOSS_RATES,
        emu_schedule=SCHEDULE, emu_pause_s=PAUSE_S, emu_nms=(True, False),
        real_sim_schedule=REAL_SCHEDULE, real_emu_schedule=REAL_SCHEDULE, real_algorithms=("reno", "cubic", "bbr"),
        fair_duration_s=600, fair_reps=5, trace_scale=1.0, trace_duration_s=3600,
    ),
    # Within 10 minutes on 2 cores: five delays (the two shortest, 50 ms, and two above Scalable's
    # 140 ms), shorter runs, one replication; the emulated grid with reno and cubic at two delays
    # and the two highest loss rates, two 5 s connections per run; fairness 130 s (past Fig 4.21's
    # 125 s); cwnd traces at a
    # tenth of the rate (Reno's recovery time in RTTs is proportional to the window, so the
    # analysis scales it back by 10).
    "quick": dict(
        sim_delays=(2, 10, 50, 150, 200), sim_losses=LOSS_RATES,
        sim_schedule={1e-3: (20, 1), 1e-4: (20, 1), 1e-5: (20, 1), 1e-6: (25, 1), 1e-7: (30, 1)},
        protocols=THESIS_PROTOCOLS,
        emu_algorithms=("reno", "cubic"), emu_delays=(10, 100), emu_losses=(1e-3, 1e-4),
        emu_schedule={1e-3: (5, 2), 1e-4: (5, 2)}, emu_pause_s=1.5, emu_nms=(True, False),
        real_sim_schedule=(30, 1), real_emu_schedule=(5, 2), real_algorithms=("reno",),
        fair_duration_s=130, fair_reps=1, trace_scale=0.1, trace_duration_s=900,
    ),
}


# ---- TOML helpers ------------------------------------------------------------------------------

def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def _ms(x: float) -> str:
    return f"{round(x, 6):g}ms"


def loss_tag(p: float) -> str:
    return f"{p:.0e}".replace("e-0", "e-")


def _sweep(name: str, desc: str, scenario: str, sets: list[str], vary: list[dict], reps: int,
           metrics: list[str], backend: str = "simulator", comment: str = "") -> str:
    lines = [f"# {desc}", "# Generated by ../make_sweeps.py; edit that, not this file."]
    if comment:
        lines += [f"# {c}" for c in comment.splitlines()]
    lines += [f'name = "{name}"', f"description = {_toml(desc)}", f'scenario = "../{scenario}"']
    if backend != "simulator":
        lines.append(f'backend = "{backend}"')
    lines.append("set = [")
    lines += [f"  {_toml(s)}," for s in sets]
    lines += ["]", f"replications = {reps}", "metrics = " + _toml(metrics), ""]
    for g in vary:
        lines.append("[[vary]]")
        lines += [f"{_toml(k)} = {_toml(v)}" for k, v in g.items()]
        lines.append("")
    return "\n".join(lines)


def _cc_group(protocols) -> dict:
    return {"tcp.cc": list(protocols), "tcp.cc_params": [PROTOCOL_PARAMS.get(p, {}) for p in protocols]}


# ---- the single-flow grids ---------------------------------------------------------------------

#: Per-run metrics of the single-flow grids (fatpipe.studies.silva2006.measures).
#: Every registered metric is stored with each run; these are the ones each sweep's own page plots
#: (the analysis reads its numbers from the stored runs).
GRID_METRICS = ["netperf_mbps", "retransmits"]
#: The emulated grid's: ON/OFF shows in the later connections; and the testbed's own fidelity.
EMU_METRICS = ["netperf_mbps", "netperf_later_mbps", "emu_delay_p99_ms"]


def rwnd_bytes(delay_ms: float, capacity_bps: float = CAPACITY_BPS, factor: float | None = -1.0) -> int | None:
    """The simulator's receiver window: the socket buffer times SOCKET_BUFFER_RULE's factor (or
    ``factor``); None for "unlimited"."""
    f = SOCKET_BUFFER_RULES[SOCKET_BUFFER_RULE] if factor == -1.0 else factor
    return None if f is None else round(f * socket_buffer_bytes(delay_ms, capacity_bps))


def _rwnd(delay_ms: float, capacity_bps: float, factor: float | None = -1.0) -> str:
    b = rwnd_bytes(delay_ms, capacity_bps, factor)
    return "auto" if b is None else f"{b}B"


def replica_rwnd_bytes(delay_ms: float, capacity_bps: float) -> int:
    """The replica's receiver window: what the testbed's Linux advertises for netperf's -S."""
    return linux_advertised_window(socket_buffer_bytes(delay_ms, capacity_bps))


def lan_delays(delay_ms: float) -> tuple[str, str]:
    """(forward, reverse) one-way delays of the link: the added delay on the sender's egress,
    plus half the base round trip each way."""
    return _ms(delay_ms + BASE_RTT_MS / 2), _ms(BASE_RTT_MS / 2)


def _delay_group(delays, scale: float = 1.0, testbed: bool = False) -> dict:
    g = {
        "topology.links.0.delay": [lan_delays(d)[0] for d in delays],
        "topology.links.0.queue.limit": [f"{max(round(get_queue(d) * scale), 1)}pkt" for d in delays],
        "tcp.rwnd": [f"{replica_rwnd_bytes(d, CAPACITY_BPS * scale)}B" if testbed else _rwnd(d, CAPACITY_BPS * scale)
                     for d in delays],
    }
    if testbed:
        g["testbed.sndbuf"] = [f"{socket_buffer_bytes(d, CAPACITY_BPS * scale)}B" for d in delays]
        g["testbed.rcvbuf"] = list(g["testbed.sndbuf"])
        g["testbed.txqueuelen"] = [max(round(get_queue(d) * scale), 1) for d in delays]
    return g


def connections(n: int, seconds: float, pause_s: float) -> list[dict]:
    """n connections back to back on snd -> rcv, each `seconds` long, `pause_s` apart."""
    out = []
    for i in range(n):
        start = i * (seconds + pause_s)
        out.append({"src": "snd", "dst": "rcv", "start": f"{start:g}s", "stop": f"{start + seconds:g}s",
                    "start_spread": "0s"})
    return out


def connections_duration(n: int, seconds: float, pause_s: float) -> float:
    return n * seconds + (n - 1) * pause_s


def sim_grid(mode: str, m: dict | None = None) -> dict[str, str]:
    m = MODES[mode] if m is None else m
    out = {}
    for p in m["sim_losses"]:
        secs, runs = m["sim_schedule"][p]
        tag = loss_tag(p)
        out[f"sim.{tag}"] = _sweep(
            f"silva2006-sim-{tag}-{mode}",
            f"da Silva (2006) simulated grid, loss {p:g}: five protocols x delays at 1 Gb/s (Figs 4.14-4.18)",
            "lan.toml",
            [f"topology.links.0.loss={p!r}", f"duration={secs}s"],
            [_cc_group(m["protocols"]), _delay_group(m["sim_delays"])], runs, GRID_METRICS,
            comment=f"Table 4.2: {SCHEDULE[p][0]} s x {SCHEDULE[p][1]} runs at this loss rate; {mode}: {secs} s x {runs}.",
        )
    return out


def _emu_sets(p: float, secs: float, n: int, pause: float, replica: bool) -> list[str]:
    sets = [f"topology.links.0.loss={p!r}", f"duration={connections_duration(n, secs, pause):g}s",
            "flows=" + _toml(connections(n, secs, pause))]
    if replica:
        sets += [f'tcp.mss="{EMU_REPLICA_MSS}B"', f'tcp.header="{EMU_REPLICA_HEADER}B"',
                 f"tcp.delayed_ack={_toml(EMU_REPLICA_DELAYED_ACK)}"]
    return sets


def emu_grid(mode: str, m: dict | None = None) -> dict[str, str]:
    """One testbed sweep and its simulator replica per loss rate (each its own duration)."""
    m = MODES[mode] if m is None else m
    out = {}
    for p in m["emu_losses"]:
        secs, n = m["emu_schedule"][p]
        tag = loss_tag(p)
        for replica in (False, True):
            vary = [{"tcp.cc": list(m["emu_algorithms"])}, _delay_group(m["emu_delays"], EMU_SCALE, testbed=True)]
            if not replica:
                vary.append({"testbed.no_metrics_save": list(m["emu_nms"])})
            role = f"emu.{'replica' if replica else 'testbed'}.{tag}"
            out[role] = _sweep(
                f"silva2006-emu-{'replica' if replica else 'testbed'}-{tag}-{mode}",
                (f"da Silva (2006) emulated grid at {EMU_SCALE * CAPACITY_BPS / 1e6:g} Mb/s, loss {p:g}: "
                 + ("the simulator's replica of the testbed runs (Linux framing)" if replica else
                    "the kernel's algorithms on the testbed, tcp_no_metrics_save ON and OFF (Figs 4.5-4.13)")),
                "lan-emulated.toml", _emu_sets(p, secs, n, m["emu_pause_s"], replica), vary, 1,
                GRID_METRICS if replica else EMU_METRICS, backend="simulator" if replica else "testbed",
                comment=f"{n} connections of {secs:g} s back to back ({m['emu_pause_s']:g} s apart) per run.",
            )
    return out


def real_replicas(mode: str, m: dict | None = None) -> dict[str, str]:
    """Fig 4.3's point: RTT 13.6 ms, loss 1e-7, simulated at 1 Gb/s and emulated at a tenth."""
    m = MODES[mode] if m is None else m
    d = REAL_RTT_MS - BASE_RTT_MS
    secs, runs = m["real_sim_schedule"]
    out = {"real.sim": _sweep(
        f"silva2006-real-sim-{mode}", "da Silva (2006) real environment's replica in the simulator: RTT 13.6 ms, loss 1e-7 (Fig 4.3)",
        "lan.toml", [f"topology.links.0.loss={REAL_LOSS!r}", f"duration={secs}s"],
        [_cc_group(m["protocols"]), _delay_group([d])], runs, GRID_METRICS)}
    secs, n = m["real_emu_schedule"]
    for replica in (False, True):
        role = f"real.{'replica' if replica else 'testbed'}"
        out[role] = _sweep(
            f"silva2006-real-{'replica' if replica else 'testbed'}-{mode}",
            ("da Silva (2006) real environment's replica " + ("in the simulator, Linux framing" if replica else "on the testbed")
             + f" at {EMU_SCALE * CAPACITY_BPS / 1e6:g} Mb/s: RTT 13.6 ms, loss 1e-7 (Fig 4.3)"),
            "lan-emulated.toml", _emu_sets(REAL_LOSS, secs, n, m["emu_pause_s"], replica),
            [{"tcp.cc": list(m["real_algorithms"])}, _delay_group([d], EMU_SCALE, testbed=True)], 1,
            GRID_METRICS if replica else EMU_METRICS, backend="simulator" if replica else "testbed")
    return out


# ---- fairness (RedClara/CERN) ------------------------------------------------------------------

FAIR_METRICS = ["jain"]


def fair_queue_pkts() -> int:
    """get_queue at the longest path RTT of Table 4.4 (T10: 50 + 56 + 6 = 112 ms)."""
    return get_queue(max(REDCLARA_ACCESS_RTT_MS) + REDCLARA_CORE_RTT_MS + REDCLARA_EDGE_RTT_MS)


def fairness(mode: str, m: dict | None = None) -> dict[str, str]:
    m = MODES[mode] if m is None else m
    secs, reps = m["fair_duration_s"], m["fair_reps"]
    same = [f"topology.links.{i}.delay={_toml(_ms(REDCLARA_SAME_RTT_MS / 2))}" for i in range(10)]
    base = [f"duration={secs}s"]
    out = {
        "fair.rtt": _sweep(f"silva2006-fair-rtt-{mode}",
                           "da Silva (2006) intra-protocol fairness, different RTTs (Table 4.4, Fig 4.19)",
                           "redclara.toml", base, [_fair_cc(m["protocols"], range(10))], reps, FAIR_METRICS),
        "fair.same": _sweep(f"silva2006-fair-same-{mode}",
                            "da Silva (2006) intra-protocol fairness, same RTT (Table 4.5, Fig 4.20)",
                            "redclara.toml", base + same, [_fair_cc(m["protocols"], range(10))], reps, FAIR_METRICS),
        # Reno is in the list too: 10 Reno flows are the Reno-alone reference of Fig 4.21 (the same
        # plan as fair.same's Reno point, so the store runs it once).
        "fair.inter": _sweep(f"silva2006-fair-inter-{mode}",
                             "da Silva (2006) inter-protocol fairness: 5 Reno + 5 X, same RTT (Table 4.5, Fig 4.21)",
                             "redclara.toml", base + same,
                             [_fair_cc(m["protocols"], range(FAIR_RENO_SENDERS, 10))], reps, FAIR_METRICS),
    }
    return out


def _fair_cc(protocols, groups) -> dict:
    g = {}
    for i in groups:
        g[f"flows.{i}.tcp.cc"] = list(protocols)
        g[f"flows.{i}.tcp.cc_params"] = [PROTOCOL_PARAMS.get(p, {}) for p in protocols]
    return g


# ---- cwnd traces -------------------------------------------------------------------------------

TRACE_METRICS = ["retransmits"]


def trace_queue_pkts(scale: float) -> int:
    return round(get_queue(TRACE_RTT_MS) * scale)


def cwnd_traces(mode: str, m: dict | None = None) -> dict[str, str]:
    m = MODES[mode] if m is None else m
    s = m["trace_scale"]
    rate = f"{CAPACITY_BPS * s / 1e6:g}Mbps"
    return {"cwnd": _sweep(
        f"silva2006-cwnd-{mode}", f"da Silva (2006) cwnd traces (Figs 2.2-2.6): one flow, {rate}, RTT 200 ms, overflow losses only",
        "lan.toml",
        [f"duration={m['trace_duration_s']}s", f'topology.links.0.rate="{rate}"', f'topology.links.0.delay="{TRACE_RTT_MS}ms"',
         'topology.links.0.delay_reverse="0ms"', "topology.links.0.loss=0.0",
         f'topology.links.0.queue.limit="{trace_queue_pkts(s)}pkt"', 'tcp.rwnd="auto"', 'monitor.interval="100ms"'],
        [_cc_group(m["protocols"])], 1, TRACE_METRICS,
        comment=f"Scale {s:g} of the thesis's 1 Gb/s (the analysis scales times back).")}


# ---- all files ---------------------------------------------------------------------------------

def sweeps(mode: str, m: dict | None = None) -> dict[str, str]:
    """role -> sweep file text, for one of MODES or, with ``m``, a mode of the caller's (tests)."""
    return {**sim_grid(mode, m), **emu_grid(mode, m), **real_replicas(mode, m), **fairness(mode, m),
            **cwnd_traces(mode, m)}


def file_name(role: str, mode: str) -> str:
    return f"{role}-{mode}.toml"


def all_files() -> dict[Path, str]:
    return {HERE / "sweeps" / file_name(r, mode): text for mode in MODES for r, text in sweeps(mode).items()}


def study_sweeps(mode: str) -> dict[str, str]:
    """role -> sweep file (relative to the study), as study.toml lists them."""
    return {r: f"sweeps/{file_name(r, mode)}" for r in sweeps(mode)}


def main() -> int:
    d = HERE / "sweeps"
    d.mkdir(exist_ok=True)
    files = all_files()
    for old in d.glob("*.toml"):
        if old not in files:
            old.unlink()
    for path, text in files.items():
        path.write_text(text)
    print(f"wrote {len(files)} sweep files under {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
