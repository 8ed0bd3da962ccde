"""Run a fatpipe plan in ns-2.35 (the ``ns`` binary) and return fatpipe-shaped results.

The plan format and the result columns are defined in ``docs/plan-and-results.md``. This module is
self-contained (standard library only) so it can be imported without the compiled core.

How a plan maps onto ns-2 (checked against the ns-2.35 sources and by running Debian's ``ns``):

Packets
    ns-2 one-way TCP agents (``useHeaders_ true``, the default) send data packets of
    ``packetSize_ + tcpip_base_hdr_size_ (+ ts_option_size_ with timestamps)`` bytes:
    ``packetSize_`` is the *payload*, not the wire size. We set ``packetSize_ = mss``,
    ``tcpip_base_hdr_size_ = header_bytes`` and ``ts_option_size_ = 0`` (``header_bytes`` covers
    options), so data packets are ``mss + header_bytes`` on the wire, as in the plan. ACKs are the
    sink's ``packetSize_`` = ``header_bytes``; the SACK sink adds 8 bytes per SACK block (fatpipe
    does not). ``syn_ false`` (fatpipe has no handshake; with ``syn_ true`` segment 0 is a
    header-only "SYN"). Quirk: ns-2 never adds headers to segment 0, so the first data packet of
    each flow is ``mss`` bytes on the wire. Finite transfers are whole segments (``advanceby
    ceil(size/mss)``); ``bytes_delivered`` is capped at ``size_bytes``.

TCP
    ``recovery == "sack"``: ``Agent/TCP/Linux`` + ``select_ca <cc>`` with ``Agent/TCPSink/Sack1``
    (``.../Sack1/DelAck`` when ``delayed_ack``). ``recovery == "newreno"``: ``Agent/TCP/Newreno``
    with ``Agent/TCPSink`` (``.../DelAck``), no SACK; only ``cc == "reno"`` exists there. That
    agent follows RFC 5681's window rules, which fatpipe selects with ``cwnd_growth = "per-ack"``
    and ``rto_ssthresh = "halve-again"``. TCP-Linux asks the module for ssthresh on every timeout
    (``rto_ssthresh = "every-timeout"``), enters recovery by rate halving down to the module's
    ``min_cwnd`` (``cwnd_reduction = "rate-halving"``), samples the RTT from every ACK it accepts,
    duplicates included (``rtt_samples = "every-ack"``), and in Loss finds lost retransmissions by
    SACK and starts a Recovery on any new loss (``loss_state = "ns2"``). The peer cannot change an
    agent's rules,
    so plans should choose the matching ones. RACK-TLP (``rack``,
    ``tlp``, RFC 8985; fatpipe's default, as Linux) does not exist in ns-2.35 (TCP-Linux takes
    only the congestion-control modules of 2.6.x kernels; recovery is its own SACK code): a plan
    with either on is refused with an error naming ``tcp.rack`` / ``tcp.tlp`` and the fix
    (``tcp.rack = false``, ``tcp.tlp = false``), so the peer never runs a different TCP than the
    plan asks for; a plan without the keys (hand-written, or older than RACK-TLP) means off. cc
    names are TCP-Linux module names (``NS2_LINUX_CCS``) after ``CC_ALIASES``; ``pacing`` is
    rejected (ns-2 has none) and ``cc_params`` are ignored with a warning. ``window_ =
    rwnd_bytes // mss`` (clamped to 2**30; it is also TCP-Linux's cwnd clamp and the initial
    ssthresh), ``windowInit_ = initial_window`` (``windowInitOption_ 1``), ``maxcwnd_ 0`` (no cap),
    ``minrto_``, ``maxrto_`` (``max_rto_ns`` or 60 s), ``rtxcur_init_ = initial_rto``,
    ``tcpTick_ 0.001`` (TCP-Linux forces 1 ms; NewReno gets the same). Timestamps on
    (``timestamps_ true``) so every ACK yields an RTT sample as in fatpipe; sinks echo per RFC
    7323 (``ts_echo_rfc1323_ true``). ``initial_ssthresh``: ``max_ssthresh_`` for TCP-Linux (there
    it only caps the initial ssthresh), ``set ssthresh_`` at the start time for NewReno. Delayed
    ACK: ns-2 ``DelAck`` sinks ACK every second in-order segment or after ``interval_ =
    delack_timeout``; out-of-order and gap-filling segments are ACKed at once. Bulk flows use
    ``Application/FTP`` ``start``/``stop`` (stop = send no new data). ``slow_start_restart_
    false``: plan flows never resume after going idle, and with ns-2's default the RTO timer of a
    finished or stopped flow keeps firing and counting a cwnd cut each time.

Voice, DCCP, UDP and CBR (fatpipe's message flows; docs/dccp.md, docs/scenarios.md)
    Voice (``kind = "voip"``) is ``Application/Traffic/Exponential`` (ns-2's EXPOO, the source
    fatpipe's voice imitates): ``burst_time_ = on_s``, ``idle_time_ = off_s``, ``packetSize_``
    and ``rate_`` such that the interval packet*8/rate and the burst lengths are the plan's.
    CBR (``kind = "cbr"``) is ``Application/Traffic/CBR`` (``random_ 0``; first packet at the
    start, as fatpipe's), its packet the plan's wire size. Transports:

    - ``dccp``: ``Agent/DCCP/TCPlike`` (CCID 2) or ``Agent/DCCP/TFRC`` (CCID 3), the same class as
      the sink, which ``listen``s from time 0 (the first author's script, seed 001 §3.7); the
      connection opens at the first ``sendmsg`` (fatpipe opens it at the flow's start, a silence
      earlier). ``packetSize_`` is the payload, ``sb_size_ = queue_packets``, CCID 2
      ``initial_cwnd_ = initial_window``, CCID 3 ``s_s_`` (sender) and ``r_s_`` (receiver, the
      first loss interval) ``= segment_bytes``. ns-2 cannot run some settings and the peer
      refuses them, naming the field: ``ack_ratio`` other than 2 (the agent resets Ack Ratio to 2
      when the connection opens), ``tfrc = "rfc5348"`` (the module is RFC 3448), ``header_bytes``
      other than 32 (fixed in the agent), and CCID 2 with ``restart_after_idle`` on (the module
      has no idle decay; docs/dccp.md). Wire sizes differ in the details fatpipe does not model:
      ns-2's data packets are DataAcks (8-12 bytes more) when the sender has an acknowledgement
      to send (most of CCID 3's), its acknowledgements carry Ack Vectors of varying length
      (40-60 bytes). Bulk DCCP (``kind = "bulk"``) is the agent's infinite send (``send -1``) of
      1000-byte payloads (fatpipe's 1032-byte packets), without a stop. ``data_packets_sent`` is
      ``num_data_pkt_ + num_dataack_pkt_``; ``app_packets`` and ``app_discards`` are None (ns-2
      discards from a full send buffer without counting).
    - ``udp``: ``Agent/UDP`` and ``Agent/Null``. ns-2's UDP adds no header, so the source writes
      datagrams of payload + 28 bytes (fatpipe's IPv4 + UDP) at a rate scaled alike.
    - ``tcp`` (voice): the TCP mapping above with an EXPOO source instead of FTP, one
      ``packetSize_`` (= the plan's mss, which fatpipe sets to the voice packet) segment per voice
      packet. ``restart_after_idle`` with ``idle_restart = "ns2"`` maps to ``slow_start_restart_``
      (one RTO after the last ACK, cwnd = ``windowInit_``, raised if below, ssthresh kept); with
      fatpipe's default ``"rfc2861"`` (halve per idle RTO down to min(IW, cwnd), ssthresh ≥ 3/4
      cwnd, as Linux) the plan is refused: ns-2.35 has no such rule.

Per-flow packets (``packets_dropped``, ``packets_delivered``, ``delay_mean_s``, ``jitter_s``)
    ``Trace`` connectors without a file whose Tcl callbacks count (no trace is written, so a 900 s
    ring of 48 voice flows costs a few seconds of Tcl, not gigabytes): a ``Trace/Drop`` on every
    link counts each flow's dropped data packets (every flow; ``fid_`` is the plan's flow id and
    ACK types are left out), a ``Trace/Enque`` on the first link of each message flow's path
    stamps its data packets' send times by uid, a ``Trace/Recv`` on the last link takes each
    arrival's one-way delay (the trace's 1 us resolution) and RFC 3550 jitter. DCCP and UDP
    flows' ``packets_delivered`` are those arrivals (DCCP never retransmits), TCP's the in-order
    segments (from the sink, as before); their delay counts every arriving data segment, as
    fatpipe's does.

Links and queues
    One ``simplex-link ... DropTail`` per directed link (ns-2 allows one per ordered node pair);
    ``kind = "red"`` is ``Queue/RED`` with every plan value set (see ``_red_tcl``). ns-2's queue
    monitor does not split RED's drops by reason: such rows give ``drops_total`` and None for
    the reasons and the marks. Flows with ``tcp.ecn`` are refused (ns-2's TCP agents answer ECE
    with their loss response).
    ns-2 ``DropTail`` drops an arrival when ``waiting + 1 >= limit_``, i.e. it holds at most
    ``limit_ - 1`` *waiting* packets (the packet being serialised has left the queue). The plan
    counts waiting packets, so ``limit_ = limit_packets + 1`` (``QUEUE_LIMIT_OFFSET``). Byte
    limits: ``queue_in_bytes_ true``, ``mean_pktsize_ 1``, ``limit_ = limit_bytes + 1``. ns-2
    enforces one limit only; if the plan gives both, the byte limit wins (with a warning).
    Routing: both simulators route by hop count, but break ties differently: fatpipe takes the
    outgoing link added first (plan order), ns-2's static routing (``RouteLogic::compute_routes``)
    the path through the lowest-numbered nodes. When no flow meets a tie (dumbbells, parking
    lots, any tree) the peer keeps ns-2's static routing. Otherwise (a ring's opposite LAN, a
    graph with equal-cost paths) it switches to ``$ns rtproto Manual`` and installs fatpipe's next
    hop (``fatpipe_routes``) at every node of every flow's path, both ways, for that flow's
    endpoint (``$node add-route <dst id> [[$ns link $node $next] head]``), so ns-2 sends every
    packet along the links fatpipe does.

Measurement (counters read at the end; optional sampler)
    ``bytes_delivered``: from the sink's ``bytes_`` (wire bytes of in-order data handed to the
    application; receiver-side and exact since all data packets have known sizes).
    ``completion_s``: absolute time the last segment of a finite transfer reached the receiving
    application (a Tcl ``recv`` hook, only for finite flows). ``data_packets_sent = ndatapack_``,
    ``bytes_sent = ndatapack_ * mss``, ``retransmits = nrexmitpack_``, ``timeouts = nrexmit_``
    (RTO expirations), ``fast_recoveries = ncwndcuts_ - nrexmit_`` (other cwnd cuts). Queues: a
    ``QueueMonitor`` per link (``monitor-queue`` without trace): ``parrivals_``, ``pdepartures_``,
    ``pdrops_``, ``bdepartures_`` (link ``tx_bytes``), ``bdrops_`` and the packet integrator (mean
    length). ns-2's byte counters are 32-bit; those that could wrap are read every
    0.9 * 2**32 bytes at their worst-case rate and unwrapped. ``packets_delivered`` is the sum over
    flows of in-order data packets delivered (the script also prints ``packets_delivered N``).
    ``rtt_*`` columns are None (not measured cheaply). Series (``flow_series``) cover TCP flows.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import time
import warnings
from collections import deque
from typing import Any

from ._common import flow_row, tail, work_directory

__all__ = [
    "NS_BINARY",
    "NS2_LINUX_CCS",
    "CC_ALIASES",
    "ns2_available",
    "fatpipe_routes",
    "plan_to_tcl",
    "run_plan",
]

NS_BINARY = "ns"

#: Congestion-control modules compiled into ns-2.35 TCP-Linux (``select_ca`` names).
NS2_LINUX_CCS = frozenset(
    {
        "reno",
        "bic",
        "cubic",
        "highspeed",
        "htcp",
        "hybla",
        "illinois",
        "lp",
        "scalable",
        "vegas",
        "veno",
        "westwood",
        "yeah",
        "compound",
        "naive_reno",
    }
)

#: fatpipe cc name -> TCP-Linux module name, where they differ.
CC_ALIASES = {"newreno": "reno", "highspeed-tcp": "highspeed", "hstcp": "highspeed", "ctcp": "compound"}

#: Added to a packet/byte queue limit: ns-2 DropTail keeps at most ``limit_ - 1`` waiting.
QUEUE_LIMIT_OFFSET = 1

_MAX_WINDOW_PKTS = 1 << 30
_FAST_HEADERS = ("IP", "TCP", "Flags")


def ns2_available() -> bool:
    """Whether the ns-2 binary (``ns``) is on PATH."""
    return shutil.which(NS_BINARY) is not None


def _secs(ns: int) -> str:
    """Exact decimal seconds for an integer nanosecond time."""
    ns = int(ns)
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def _tcl_word(s: str) -> str:
    if any(c in s for c in "{}\\\n"):
        raise ValueError(f"path not representable as a Tcl word: {s!r}")
    return "{" + s + "}"


def _ns2_cc(cc: str) -> str:
    name = CC_ALIASES.get(cc.lower(), cc.lower())
    if name not in NS2_LINUX_CCS:
        raise ValueError(f"cc {cc!r} has no ns-2 TCP-Linux equivalent (known: {sorted(NS2_LINUX_CCS)})")
    return name


def _red_tcl(w, k: int, link: dict) -> None:
    """Configure ``$q(k)``, an ns-2 ``Queue/RED``, as the plan's RED (docs/aqm.md): thresholds,
    ``linterm_ = 1/max_p``, ``q_weight_``, gentle, byte mode (``bytes_`` and ``queue_in_bytes_``
    together), ``mean_pktsize_``, ``wait_``, ``setbit_`` (ECN), Adaptive RED with the paper's
    constants (``bottom_`` set to 0.01: ns-2's default 0 means min(0.01, 80 kb / bandwidth)),
    ``use_mark_p_ false`` (ns-2.35's DCTCP marking rule, which also disables forced drops above
    2·max_th), and ``limit_`` = the plan's packet limit: RED drops when ``qlen >= limit_`` before
    the arrival joins, so it holds ``limit_`` waiting packets, as fatpipe's does (no offset)."""
    q = link.get("queue") or {}
    r = q.get("aqm") or {}
    lp, lb = q.get("limit_packets"), q.get("limit_bytes")
    if lb is not None or lp is None:
        raise ValueError(
            f"link {link.get('name')}: the ns-2 peer maps RED with a limit in packets only (ns-2's RED "
            f"counts its byte-mode limit in mean-size packets); give e.g. limit = \"200pkt\""
        )
    byte_mode = r.get("mode") == "bytes"
    settings = [
        ("thresh_", r["min_th"]),
        ("maxthresh_", r["max_th"]),
        ("linterm_", 1.0 / float(r["max_p"])),
        ("q_weight_", r["w_q"]),
        ("gentle_", "true" if r["gentle"] else "false"),
        ("bytes_", "true" if byte_mode else "false"),
        ("queue_in_bytes_", "true" if byte_mode else "false"),
        ("mean_pktsize_", int(r["mean_packet_bytes"])),
        ("wait_", "true" if r["wait"] else "false"),
        ("setbit_", "true" if r["ecn"] else "false"),
        ("use_mark_p_", "false"),
        ("adaptive_", 1 if r["adaptive"] else 0),
        ("alpha_", 0.01),
        ("beta_", 0.9),
        ("interval_", 0.5),
        ("top_", 0.5),
        ("bottom_", 0.01),
        ("limit_", int(lp)),
    ]
    for name, value in settings:
        w(f"$q({k}) set {name} {value}")


def _queue_limit(link: dict) -> tuple[str, int]:
    q = link.get("queue") or {}
    kind = q.get("kind", "droptail")
    if kind != "droptail":
        raise ValueError(f"link {link.get('name')}: queue kind {kind!r} not supported by the ns-2 peer")
    lp, lb = q.get("limit_packets"), q.get("limit_bytes")
    if lb is not None:
        if lp is not None:
            warnings.warn(
                f"link {link.get('name')}: ns-2 DropTail enforces one limit; using limit_bytes={lb} "
                f"and ignoring limit_packets={lp}",
                stacklevel=3,
            )
        return "bytes", int(lb)
    if lp is None:
        raise ValueError(f"link {link.get('name')}: queue has neither limit_packets nor limit_bytes")
    return "packets", int(lp)


def fatpipe_routes(plan: dict) -> tuple[dict[tuple[int, int], int], set[tuple[int, int]]]:
    """fatpipe's next hops for the plan's flows, and where they were a tie.

    Returns ``(next_link, ties)``: ``next_link[(u, d)]`` is the index (in ``plan["links"]``) of the
    link node ``u`` uses towards node ``d`` (indices in ``plan["nodes"]``), for every node on
    every flow's path, in both directions (data and ACKs); ``ties`` are the ``(u, d)`` among them
    where more than one outgoing link was equally short. The rule is fatpipe-net's
    (``routing.rs``): hop count; among the outgoing links whose far end is one hop closer to
    ``d``, the one added first, i.e. the lowest index in ``plan["links"]``.
    """
    names = [nd["name"] for nd in plan["nodes"]]
    idx = {name: i for i, name in enumerate(names)}
    ends = [(idx[lk["from"]], idx[lk["to"]]) for lk in plan["links"]]
    n = len(names)
    into: list[list[int]] = [[] for _ in range(n)]
    out: list[list[int]] = [[] for _ in range(n)]
    for k, (a, b) in enumerate(ends):
        into[b].append(k)
        out[a].append(k)
    dist_to: dict[int, list[int]] = {}

    def dist(d: int) -> list[int]:
        """Hops from every node to ``d`` (-1: unreachable)."""
        if d not in dist_to:
            ds = [-1] * n
            ds[d] = 0
            q = deque([d])
            while q:
                v = q.popleft()
                for k in into[v]:
                    u = ends[k][0]
                    if ds[u] < 0:
                        ds[u] = ds[v] + 1
                        q.append(u)
            dist_to[d] = ds
        return dist_to[d]

    next_link: dict[tuple[int, int], int] = {}
    ties: set[tuple[int, int]] = set()
    for f in plan["flows"]:
        s, d = idx[f["src"]], idx[f["dst"]]
        for a, b in ((s, d), (d, s)):
            ds = dist(b)
            if ds[a] < 0:
                raise ValueError(f"flow {f.get('id')}: no route from {names[a]} to {names[b]}")
            u = a
            while u != b:
                if (u, b) not in next_link:
                    cands = [k for k in out[u] if ds[ends[k][1]] >= 0 and ds[ends[k][1]] + 1 == ds[u]]
                    next_link[(u, b)] = min(cands)
                    if len(cands) > 1:
                        ties.add((u, b))
                u = ends[next_link[(u, b)]][1]
    return next_link, ties


def _wire(flow: dict) -> int:
    return int(flow.get("mss", 1460)) + int(flow.get("header_bytes", 40))


#: ns-2 packet types that carry no application data: TCP ACKs and DCCP's control packets. Every
#: other type on a flow's ``fid_`` is one of its data packets (``tcp``, ``exp`` for a voice
#: source's packets on TCP or UDP, ``DCCP_Data``, ``DCCP_DataAck``).
_CONTROL_TYPES = ("ack", "DCCP_Ack", "DCCP_Request", "DCCP_Response", "DCCP_Close", "DCCP_CloseReq", "DCCP_Reset")
#: Packet headers DCCP and UDP agents (and the trace monitor's formatting) need with ``fast_headers``.
_MESSAGE_HEADERS = (
    "RTP", "SRM", "DCCP", "DCCP_ACK", "DCCP_DATA", "DCCP_DATAACK", "DCCP_REQ", "DCCP_RESP", "DCCP_RESET",
    "DCCP_CLOSE", "DCCP_CLOSEREQ",
)
#: Header bytes of ns-2.35's DCCP data packets (IPv4 20 + DCCP 12; a DataAck carries 8-12 more),
#: fixed in the agent (``DCCPAgent::hdr_size_``).
NS2_DCCP_HEADER = 32
#: ns-2.35's DCCP agents start every connection with Ack Ratio 2 (``DCCPAgent::reset`` and the
#: feature negotiation overwrite a value set from Tcl).
NS2_DCCP_ACK_RATIO = 2
#: fatpipe's UDP header for message flows (IPv4 20 + UDP 8); ns-2's ``Agent/UDP`` adds none, so the
#: peer hands it datagrams of payload + this many bytes.
UDP_HEADER = 28
#: Payload of a bulk DCCP flow's packets when the plan gives no packet size (fatpipe: 1032-byte
#: packets on the wire).
_DCCP_BULK_WIRE = 1032


def _transport(flow: dict) -> str:
    """The flow's transport: the plan's ``transport``, else the kind's usual one."""
    t = flow.get("transport")
    if t:
        return str(t)
    return "udp" if flow.get("kind") in ("voip", "cbr") else "tcp"


def _is_message(flow: dict) -> bool:
    """Voice flows and flows on DCCP or UDP (fatpipe's message applications): measured per packet."""
    return flow.get("kind") == "voip" or _transport(flow) != "tcp"


def _dccp_header(flow: dict) -> int:
    return int((flow.get("dccp") or {}).get("header_bytes", NS2_DCCP_HEADER))


def _payload(flow: dict) -> int:
    """Application bytes in each data packet of a message flow."""
    if flow.get("kind") == "voip":
        return int(flow["voip"]["packet_bytes"])
    if flow.get("kind") == "cbr":
        # a CBR flow's packet is its size on the wire
        header = _dccp_header(flow) if _transport(flow) == "dccp" else UDP_HEADER
        return max(1, int(flow["packet_bytes"]) - header)
    if _transport(flow) == "dccp":
        wire = int(flow["packet_bytes"]) if flow.get("rate_bps") and flow.get("packet_bytes") else _DCCP_BULK_WIRE
        return max(1, wire - _dccp_header(flow))
    return int(flow.get("mss", 1460))


def _expoo(w, name: str, voip: dict, packet_bytes: int, rate_bps: float) -> None:
    """An ``Application/Traffic/Exponential`` (EXPOO: bursts of round(Exp(on/interval)) packets,
    each after an Exp(off) silence) with fatpipe's voice parameters; interval = size*8/rate."""
    w(f"set {name} [new Application/Traffic/Exponential]")
    w(f"${name} set packetSize_ {packet_bytes}")
    w(f"${name} set burst_time_ {float(voip['on_s'])!r}")
    w(f"${name} set idle_time_ {float(voip['off_s'])!r}")
    w(f"${name} set rate_ {float(rate_bps)!r}")


def _path_links(plan: dict, next_link: dict, src: int, dst: int) -> list[int]:
    """Indices of the links from node ``src`` to node ``dst`` along ``next_link``."""
    idx = {n["name"]: i for i, n in enumerate(plan["nodes"])}
    path, u = [], src
    while u != dst:
        k = next_link[(u, dst)]
        path.append(k)
        u = idx[plan["links"][k]["to"]]
    return path


def _message_flow_tcl(w, f: dict, src: int, dst: int, dur_ns: int) -> None:
    """A voice (or bulk DCCP) flow on DCCP or UDP: agent ``ag(i)``, sink ``sink(i)``, source ``app(i)``."""
    i = int(f["id"])
    kind = f.get("kind", "bulk")
    transport = _transport(f)
    payload = _payload(f)
    start, stop = int(f.get("start_ns", 0)), f.get("stop_ns")
    if kind not in ("voip", "bulk", "cbr"):
        raise ValueError(f"flow {i}: kind {kind!r} over {transport} is not mapped to ns-2 by this peer")
    if transport == "dccp":
        d = f.get("dccp") or {}
        ccid = int(d.get("ccid", 2))
        classes = {2: "Agent/DCCP/TCPlike", 3: "Agent/DCCP/TFRC"}
        if ccid not in classes:
            raise ValueError(f"flow {i}: dccp.ccid {ccid} has no ns-2.35 agent (2: Agent/DCCP/TCPlike, 3: Agent/DCCP/TFRC)")
        if ccid == 3 and d.get("tfrc", "rfc3448") != "rfc3448":
            raise ValueError(f"flow {i}: dccp.tfrc {d.get('tfrc')!r}: ns-2.35's Agent/DCCP/TFRC follows RFC 3448 "
                             "only; set dccp.tfrc = \"rfc3448\" to compare against ns-2")
        if int(d.get("ack_ratio", NS2_DCCP_ACK_RATIO)) != NS2_DCCP_ACK_RATIO:
            raise ValueError(f"flow {i}: dccp.ack_ratio {d.get('ack_ratio')}: ns-2.35's DCCP agent always starts "
                             f"with Ack Ratio {NS2_DCCP_ACK_RATIO} (a value set from Tcl is reset when the "
                             "connection opens)")
        if ccid == 2 and d.get("restart_after_idle", True):
            raise ValueError(f"flow {i}: dccp.restart_after_idle (CCID 2's window decay after an idle RTO, "
                             "RFC 4341 §5.1; on by default) has no equivalent in ns-2.35's Agent/DCCP/TCPlike, "
                             "whose window survives any silence; set dccp.restart_after_idle = false in the "
                             "scenario (or --set dccp.restart_after_idle=false) to compare against ns-2")
        if int(d.get("header_bytes", NS2_DCCP_HEADER)) != NS2_DCCP_HEADER:
            raise ValueError(f"flow {i}: dccp header_bytes {d.get('header_bytes')}: ns-2.35's DCCP data packets "
                             f"carry {NS2_DCCP_HEADER} header bytes, fixed in the agent")
        cls = classes[ccid]
        w(f"# flow {i}: {f['src']} -> {f['dst']} {cls} {kind}")
        w(f"set fp_proto({i}) ccid{ccid}")
        w(f"set ag({i}) [new {cls}]")
        settings = [("fid_", i), ("packetSize_", payload), ("sb_size_", int(d.get("queue_packets", 1000)))]
        if ccid == 2:
            settings.append(("initial_cwnd_", int(d.get("initial_window", 3))))
        else:
            settings.append(("s_s_", int(d.get("segment_bytes", 500))))
        for var, val in settings:
            w(f"$ag({i}) set {var} {val}")
        w(f"set sink({i}) [new {cls}]")
        w(f"$sink({i}) set fid_ {i}")
        if ccid == 3:
            # the receiver's s, used to invert the equation for the first loss interval
            w(f"$sink({i}) set r_s_ {int(d.get('segment_bytes', 500))}")
        app_bytes = payload  # what the source hands the agent per packet
    else:
        if kind == "bulk":
            raise ValueError(f"flow {i}: kind 'bulk' over udp is not mapped to ns-2 by this peer")
        w(f"# flow {i}: {f['src']} -> {f['dst']} Agent/UDP {kind}")
        w(f"set fp_proto({i}) udp")
        w(f"set ag({i}) [new Agent/UDP]")
        w(f"$ag({i}) set fid_ {i}")
        # ns-2's UDP adds no header: the source writes whole datagrams (payload + 28 bytes) at a
        # rate scaled alike, which keeps the voice interval and burst lengths
        app_bytes = payload + UDP_HEADER
        w(f"$ag({i}) set packetSize_ {app_bytes}")
        w(f"set sink({i}) [new Agent/Null]")
    w(f"$ns attach-agent $n({src}) $ag({i})")
    w(f"$ns attach-agent $n({dst}) $sink({i})")
    w(f"$ns connect $ag({i}) $sink({i})")
    if transport == "dccp":
        w(f'$ns at 0.0 "$sink({i}) listen"')
    if kind == "voip":
        v = f["voip"]
        _expoo(w, f"app({i})", v, app_bytes, float(v["rate_bps"]) * app_bytes / payload)
    elif kind == "cbr":
        # ns-2's CBR sends its first packet at the start, then one per size*8/rate (fatpipe's
        # CBR: the wire size at the wire rate)
        w(f"set app({i}) [new Application/Traffic/CBR]")
        w(f"$app({i}) set packetSize_ {app_bytes}")
        w(f"$app({i}) set rate_ {float(f['rate_bps']) * app_bytes / int(f['packet_bytes'])!r}")
        w(f"$app({i}) set random_ 0")
    if kind in ("voip", "cbr"):
        w(f"$app({i}) attach-agent $ag({i})")
        w(f'$ns at {_secs(start)} "$app({i}) start"')
        if stop is not None and int(stop) < dur_ns:
            w(f'$ns at {_secs(int(stop))} "$app({i}) stop"')
    else:
        # bulk DCCP: an always-full sender queue (ns-2's infinite send)
        if stop is not None and int(stop) < dur_ns:
            raise ValueError(f"flow {i}: a bulk DCCP flow cannot stop in ns-2 (infinite send); remove its stop")
        w(f'$ns at {_secs(start)} "$ag({i}) send -1"')


def plan_to_tcl(
    plan: dict,
    trace_dir: str,
    *,
    sample_interval_ns: int | None = None,
    fast_headers: bool = False,
) -> str:
    """Generate an ns-2 Tcl script for ``plan``; its outputs go to ``trace_dir``.

    Files written by the script: ``summary.txt`` (end-of-run counters), and when
    ``sample_interval_ns`` is given ``flow_series.txt`` (``t id cwnd ssthresh srtt_ticks8
    delivered_wire_bytes``) and ``queue_series.txt`` (``t link_index pkts bytes``).
    ``fast_headers`` keeps only the packet headers this setup needs (Common, IP, TCP, Flags).
    """
    nodes = [n["name"] for n in plan["nodes"]]
    idx = {name: i for i, name in enumerate(nodes)}
    links = plan["links"]
    flows = plan["flows"]
    dur_ns = int(plan["duration_ns"])
    if dur_ns <= 0:
        raise ValueError("duration_ns must be positive")
    for lk in links:
        if lk.get("loss"):
            raise ValueError(f"link {lk['name']}: random loss is not mapped to ns-2 by this peer yet")

    out: list[str] = []
    w = out.append
    w(f"# generated by fatpipe.peers.ns2 from plan {plan.get('name', '?')!r} (seed {plan.get('seed')})")
    if fast_headers:
        w("remove-all-packet-headers")
        w("add-packet-header " + " ".join(_FAST_HEADERS + (_MESSAGE_HEADERS if any(map(_is_message, plan["flows"])) else ())))
    w("set ns [new Simulator]")
    # ns-2's default RNG drives overhead_ (send jitter); seed it from the plan so runs differ by
    # seed as fatpipe's do (seed 0 would ask ns-2 for a time-based seed: never used).
    w(f"$defaultRNG seed {int(plan.get('seed', 0)) % 2_147_483_646 + 1}")
    # Equal-cost choices on the flows' paths: ns-2 would break them its own way (lowest node
    # ids), so route by hand along fatpipe's paths (see the module docstring).
    next_link, ties = fatpipe_routes(plan)
    if ties:
        w("$ns rtproto Manual")
    w(f"set fp_dir {_tcl_word(os.path.abspath(trace_dir))}")
    w(f"set fp_dur {_secs(dur_ns)}")
    w("")
    w("# nodes")
    for i, name in enumerate(nodes):
        w(f"set n({i}) [$ns node] ;# {name}")

    w("")
    w("# directed links: one queue each (DropTail or RED)")
    seen_pairs = set()
    in_rate = [0] * len(nodes)
    for k, link in enumerate(links):
        a, b = idx[link["from"]], idx[link["to"]]
        if (a, b) in seen_pairs:
            raise ValueError(f"ns-2 allows one simplex link per node pair; duplicate {link['from']}->{link['to']}")
        seen_pairs.add((a, b))
        rate = int(link["rate_bps"])
        in_rate[b] += rate
        lname = link.get("name") or f"{link['from']}->{link['to']}"
        w(f"# link {k}: {lname}")
        kind = (link.get("queue") or {}).get("kind", "droptail")
        qtype = {"droptail": "DropTail", "red": "RED"}.get(kind)
        if qtype is None:
            raise ValueError(f"link {lname}: queue kind {kind!r} not supported by the ns-2 peer (it maps droptail and red)")
        w(f"$ns simplex-link $n({a}) $n({b}) {rate} {_secs(int(link['delay_ns']))} {qtype}")
        w(f"set q({k}) [[$ns link $n({a}) $n({b})] queue]")
        if kind == "red":
            _red_tcl(w, k, link)
        else:
            mode, lim = _queue_limit(link)
            if mode == "bytes":
                w(f"$q({k}) set queue_in_bytes_ true")
                w(f"$q({k}) set mean_pktsize_ 1")
            w(f"$q({k}) set limit_ {lim + QUEUE_LIMIT_OFFSET}")
        w(f"set qm({k}) [$ns monitor-queue $n({a}) $n({b}) {{}}]")

    if ties:
        w("")
        w(f"# routes: fatpipe's next hops on every flow's path ({len(ties)} equal-cost choices, e.g. "
          f"{nodes[min(ties)[0]]} towards {nodes[min(ties)[1]]}: link {links[next_link[min(ties)]]['from']}->"
          f"{links[next_link[min(ties)]]['to']})")
        w("proc fp_route {u d v} { global ns n; $n($u) add-route [$n($d) id] [[$ns link $n($u) $n($v)] head] }")
        triples = [(u, d, idx[links[k]["to"]]) for (u, d), k in sorted(next_link.items())]
        for c in range(0, len(triples), 16):
            chunk = " ".join(f"{u} {d} {v}" for u, d, v in triples[c : c + 16])
            w(f"foreach {{u d v}} {{{chunk}}} {{ fp_route $u $d $v }}")

    w("")
    w("# flows")
    if any(f.get("size_bytes") is not None for f in flows):
        w(
            """Class Application/FpRecv -superclass Application
Application/FpRecv instproc init {} { $self next; $self set got_ 0 }
Application/FpRecv instproc recv {nbytes} {
    global ns fp_done
    $self instvar got_ need_ fid_
    incr got_ $nbytes
    if {$got_ >= $need_ && ![info exists fp_done($fid_)]} { set fp_done($fid_) [$ns now] }
}"""
        )
    flow_ids = []  # TCP connections (bulk, file, voice over TCP)
    wires = []
    mflows = []  # DCCP and UDP flows
    for f in flows:
        i = int(f["id"])
        kind = f.get("kind", "bulk")
        transport = _transport(f)
        if kind in ("web", "files", "relay"):
            raise ValueError(f"flow {i}: kind {kind!r} is not mapped to ns-2 by this peer yet (bulk, file, cbr and "
                             "voip flows only); compare such scenarios in fatpipe alone")
        if transport not in ("tcp", "dccp", "udp"):
            raise ValueError(f"flow {i}: transport {transport!r} has no ns-2 mapping (tcp, dccp, udp)")
        src, dst = idx[f["src"]], idx[f["dst"]]
        start = int(f.get("start_ns", 0))
        stop = f.get("stop_ns")
        if transport != "tcp":
            mflows.append(f)
            _message_flow_tcl(w, f, src, dst, dur_ns)
            continue
        flow_ids.append(i)
        mss = int(f.get("mss", 1460))
        hb = int(f.get("header_bytes", 40))
        wires.append(mss + hb)
        recovery = f.get("recovery", "sack")
        delack = bool(f.get("delayed_ack", False))
        if recovery == "sack":
            agent, cc = "Agent/TCP/Linux", _ns2_cc(f.get("cc", "reno"))
            sink = "Agent/TCPSink/Sack1/DelAck" if delack else "Agent/TCPSink/Sack1"
        elif recovery == "newreno":
            cc = CC_ALIASES.get(f.get("cc", "reno"), f.get("cc", "reno"))
            if cc != "reno":
                raise ValueError(f"flow {i}: recovery 'newreno' (Agent/TCP/Newreno) supports only cc 'reno'")
            agent, cc = "Agent/TCP/Newreno", None
            sink = "Agent/TCPSink/DelAck" if delack else "Agent/TCPSink"
        else:
            raise ValueError(f"flow {i}: unknown recovery {recovery!r}")
        if f.get("pacing"):
            raise ValueError(f"flow {i}: pacing is not available in ns-2 TCP-Linux/NewReno")
        on = [k for k in ("rack", "tlp") if f.get(k)]
        if on:
            keys = " and ".join(f"tcp.{k}" for k in on)
            fix = ", ".join(f"tcp.{k} = false" for k in on)
            raise ValueError(
                f"flow {i}: {keys} (RACK-TLP loss detection, RFC 8985; on by default as in Linux) "
                f"{'have' if len(on) > 1 else 'has'} no equivalent in ns-2.35, which would run a different TCP; set {fix} in the "
                f"scenario (or --set {' --set '.join(k.replace(' ', '') for k in fix.split(', '))}) "
                f"to compare against ns-2"
            )
        if f.get("ecn"):
            raise ValueError(
                f"flow {i}: tcp.ecn: ns-2.35's TCP agents answer ECN-Echo with their loss response "
                f"(TCP-Linux enters recovery), not the RFC 3168 window reduction fatpipe runs; the "
                f"peer cannot run it. Compare RED with drops (tcp.ecn = false)"
            )
        if f.get("cc_params"):
            warnings.warn(f"flow {i}: cc_params {f['cc_params']!r} are ignored by the ns-2 peer", stacklevel=2)
        rwnd = f.get("rwnd_bytes")
        window = _MAX_WINDOW_PKTS if rwnd is None else max(1, min(int(rwnd) // mss, _MAX_WINDOW_PKTS))
        voice = kind == "voip"
        # Voice over TCP goes idle between talk spurts: the plan's window restart after idle maps
        # onto ns-2's slow_start_restart_ (its rule differs from RFC 2861's; see the module
        # docstring). Bulk and file flows never resume after going idle.
        restart = voice and f.get("restart_after_idle", True)
        if restart and f.get("idle_restart", "rfc2861") != "ns2":
            raise ValueError(
                f"flow {i}: tcp.restart_after_idle with idle_restart = \"rfc2861\" (RFC 2861, fatpipe's default) has "
                "no equivalent in ns-2.35, whose slow_start_restart_ returns to the initial window; set "
                "tcp.idle_restart = \"ns2\" (or tcp.restart_after_idle = false) to compare against ns-2")
        t = f"tcp({i})"
        w(f"# flow {i}: {f['src']} -> {f['dst']} {agent} {cc or ''} {kind}")
        w(f"set {t} [new {agent}]")
        settings = [
            ("fid_", i),
            ("packetSize_", mss),
            ("tcpip_base_hdr_size_", hb),
            ("ts_option_size_", 0),
            ("timestamps_", "true"),
            ("syn_", "false"),
            # Agent/TCP defaults to delaying cwnd growth until the first ACK (a SYN-era rule;
            # TCP/Linux sets it false): fatpipe has no handshake, so the peer must not either.
            ("delay_growth_", "false"),
            ("slow_start_restart_", "true" if restart else "false"),
            ("window_", window),
            ("windowInit_", int(f.get("initial_window", 2))),
            ("windowInitOption_", 1),
            ("maxcwnd_", 0),
            ("maxburst_", 0),
            ("minrto_", _secs(int(f.get("min_rto_ns", 200_000_000)))),
            ("maxrto_", _secs(int(f.get("max_rto_ns", 60_000_000_000)))),
            ("rtxcur_init_", _secs(int(f.get("initial_rto_ns", 1_000_000_000)))),
            ("tcpTick_", "0.001"),
        ]
        jitter = int(f.get("send_jitter_ns", 0))
        if jitter > 0:
            # TcpAgent::send_much: wait U(0, overhead_) when the window opens, then send what it
            # allows (fatpipe's tcp.send_jitter has the same semantics).
            settings.append(("overhead_", _secs(jitter)))
        iss = f.get("initial_ssthresh")
        if iss is not None and recovery == "sack":
            settings.append(("max_ssthresh_", max(2, int(iss))))
        for var, val in settings:
            w(f"${t} set {var} {val}")
        w(f"$ns attach-agent $n({src}) ${t}")
        if cc is not None:
            w(f"${t} select_ca {cc}")
        s = f"sink({i})"
        w(f"set {s} [new {sink}]")
        w(f"${s} set fid_ {i}")
        w(f"${s} set packetSize_ {hb}")
        w(f"${s} set ts_echo_rfc1323_ true")
        if delack:
            w(f"${s} set interval_ {_secs(int(f.get('delack_timeout_ns', 40_000_000)))}")
        w(f"$ns attach-agent $n({dst}) ${s}")
        w(f"$ns connect ${t} ${s}")
        if voice:
            # one segment per voice packet: fatpipe sets the flow's mss to the voice packet
            if mss != int(f["voip"]["packet_bytes"]):
                raise ValueError(f"flow {i}: voice over TCP needs mss = voip.packet_bytes "
                                 f"({mss} != {f['voip']['packet_bytes']})")
            _expoo(w, f"app({i})", f["voip"], mss, float(f["voip"]["rate_bps"]))
        else:
            w(f"set app({i}) [new Application/FTP]")
        w(f"$app({i}) attach-agent ${t}")
        pre = ""
        if iss is not None and recovery == "newreno":
            pre = f"${t} set ssthresh_ {max(2, int(iss))}; "
        size = f.get("size_bytes")
        if size is None:
            w(f'$ns at {_secs(start)} "{pre}$app({i}) start"')
        else:
            npk = max(1, math.ceil(int(size) / mss))
            w(f'$ns at {_secs(start)} "{pre}${t} advanceby {npk}"')
            # receiver-side completion: the last segment handed to the application
            w(f"set rapp({i}) [new Application/FpRecv]")
            w(f"$rapp({i}) set fid_ {i}")
            w(f"$rapp({i}) set need_ {_delivered_wire_bytes(f, npk)}")
            w(f"$rapp({i}) attach-agent ${s}")
            w(f"$rapp({i}) start")
        if stop is not None and int(stop) < dur_ns:
            w(f'$ns at {_secs(int(stop))} "$app({i}) stop"')

    # Per-flow packet measurement: Trace connectors without a file whose callbacks count (no
    # trace is written). Every link's drop trace counts each flow's dropped data packets; the
    # first link of each message flow's path stamps its data packets' send times by uid, the last
    # link's receive trace takes the one-way delay and RFC 3550 jitter of each arrival. Only
    # message flows' packets pass through Tcl at send and receipt; other flows' only when dropped.
    measured = [f for f in flows if _is_message(f)]
    first_links: dict[int, list[int]] = {}
    last_links: dict[int, list[int]] = {}
    for f in measured:
        path = _path_links(plan, next_link, idx[f["src"]], idx[f["dst"]])
        first_links.setdefault(path[0], []).append(int(f["id"]))
        last_links.setdefault(path[-1], []).append(int(f["id"]))
    w("")
    w("# per-flow packet measurement (trace callbacks, no trace file)")
    w("array set fp_ctl {" + " ".join(f"{t} 1" for t in _CONTROL_TYPES) + "}")
    w("set fp_all_fids {" + " ".join(str(int(f["id"])) for f in flows) + "}")
    w("set fp_msr_fids {" + " ".join(str(int(f["id"])) for f in measured) + "}")
    w(
        """foreach i $fp_all_fids { set fp_ndrop($i) 0 }
foreach i $fp_msr_fids { set fp_nsent($i) 0; set fp_nrecv($i) 0; set fp_dsum($i) 0.0; set fp_jit($i) 0.0 }
proc fp_trace {a b type cb} {
    global ns n
    set l [$ns link $n($a) $n($b)]
    set t [new Trace/$type]
    $t set src_ [$n($a) id]
    $t set dst_ [$n($b) id]
    $t set callback_ 1
    $t proc handle {line} "$cb \\$line"
    switch $type {
        Enque { $l add-to-head $t }
        Recv { set ttl [$l set ttl_]; $t target [$ttl target]; $ttl target $t }
        Drop { set dh [$l set drophead_]; $t target [$dh target]; $dh target $t }
    }
}
proc fp_sent {l} {
    global fp_ctl fp_nsent fp_ts
    lassign $l ev t a b ty sz fl fid sa da sq uid
    if {[info exists fp_ctl($ty)] || ![info exists fp_nsent($fid)]} return
    incr fp_nsent($fid)
    set fp_ts($uid) $t
}
proc fp_recvd {l} {
    global fp_ctl fp_nrecv fp_ts fp_dsum fp_jit fp_last
    lassign $l ev t a b ty sz fl fid sa da sq uid
    if {[info exists fp_ctl($ty)] || ![info exists fp_nrecv($fid)] || ![info exists fp_ts($uid)]} return
    set d [expr {$t - $fp_ts($uid)}]
    unset fp_ts($uid)
    if {[incr fp_nrecv($fid)] > 1} {
        set fp_jit($fid) [expr {$fp_jit($fid) + (abs($d - $fp_last($fid)) - $fp_jit($fid)) / 16.0}]
    }
    set fp_last($fid) $d
    set fp_dsum($fid) [expr {$fp_dsum($fid) + $d}]
}
proc fp_dropped {l} {
    global fp_ctl fp_ndrop fp_ts
    lassign $l ev t a b ty sz fl fid sa da sq uid
    if {[info exists fp_ctl($ty)] || ![info exists fp_ndrop($fid)]} return
    incr fp_ndrop($fid)
    if {[info exists fp_ts($uid)]} { unset fp_ts($uid) }
}"""
    )
    for link in links:
        w(f"fp_trace {idx[link['from']]} {idx[link['to']]} Drop fp_dropped")
    for k in sorted(first_links):
        link = links[k]
        w(f"fp_trace {idx[link['from']]} {idx[link['to']]} Enque fp_sent ;# first link of flows {first_links[k]}")
    for k in sorted(last_links):
        link = links[k]
        w(f"fp_trace {idx[link['from']]} {idx[link['to']]} Recv fp_recvd ;# last link of flows {last_links[k]}")

    # ns-2's byte counters are 32-bit ints. Those that can pass 2**32 during the run are read
    # (and unwrapped) every `period` = 0.9 * 2**32 bytes at their worst-case rate: a sink's bytes_
    # grows at most at the total rate of the links into its node, a queue's bdepartures_ at most
    # at the link rate. Drop bytes are unwrapped from the packet count afterwards and arrival
    # bytes are not needed, so busy links cost a handful of reads per run.
    dur_s = dur_ns / 1e9
    periodic: dict[float, list[str]] = {}

    def _period(rate_bps: int) -> float | None:
        if rate_bps <= 0 or rate_bps / 8 * dur_s < 0.9 * 2**32:
            return None  # the end-of-run read alone is exact
        per = 0.9 * 2**32 * 8 / rate_bps
        return 2.0 ** math.floor(math.log2(per))  # few distinct groups

    tcp_flows = [f for f in flows if int(f["id"]) in set(flow_ids)]
    counters = []
    for f in tcp_flows:
        counters.append((f"s{int(f['id'])}", f"$sink({int(f['id'])})", "bytes_", in_rate[idx[f["dst"]]]))
    for k, link in enumerate(links):
        counters.append((f"bd{k}", f"$qm({k})", "bdepartures_", int(link["rate_bps"])))
    w("")
    w("# measurement")
    w(f"set fp_flows {{{' '.join(map(str, flow_ids))}}}")
    w(f"set fp_wires {{{' '.join(map(str, wires))}}}")
    w(f"set fp_msss {{{' '.join(str(int(f.get('mss', 1460))) for f in tcp_flows)}}}")
    w(f"set fp_mflows {{{' '.join(str(int(f['id'])) for f in mflows)}}}")
    w(f"set fp_links {{{' '.join(map(str, range(len(links))))}}}")
    for key, obj, var, rate in counters:
        w(f"set fp_cnt({key}) [list {obj} {var}]; set fp_prev({key}) 0; set fp_tot({key}) 0")
        per = _period(rate)
        if per is not None:
            periodic.setdefault(per, []).append(key)
    w(
        """proc fp_accum {keys} {
    global fp_cnt fp_prev fp_tot
    foreach key $keys {
        foreach {obj var} $fp_cnt($key) break
        set v [$obj set $var]
        set fp_tot($key) [expr {$fp_tot($key) + (($v - $fp_prev($key)) & 0xFFFFFFFF)}]
        set fp_prev($key) $v
    }
}
proc fp_acc_tick {keys dt} {
    global ns
    fp_accum $keys
    $ns at [expr {[$ns now] + $dt}] [list fp_acc_tick $keys $dt]
}"""
    )
    for per, keys in sorted(periodic.items()):
        w(f"$ns at {per!r} [list fp_acc_tick {{{' '.join(keys)}}} {per!r}]")
    w("set fp_sink_keys {" + " ".join(f"s{i}" for i in flow_ids) + "}")
    if sample_interval_ns is not None:
        si = int(sample_interval_ns)
        if si <= 0:
            raise ValueError("sample_interval_ns must be positive")
        w(f"set fp_dt {_secs(si)}")
        w("set fp_k 1")
        w("set fp_fs [open [file join $fp_dir flow_series.txt] w]")
        w("set fp_fq [open [file join $fp_dir queue_series.txt] w]")
        w(
            """proc fp_sample_write {} {
    global ns fp_flows fp_links tcp qm fp_tot fp_fs fp_fq fp_sink_keys
    fp_accum $fp_sink_keys
    set t [$ns now]
    foreach i $fp_flows {
        set a $tcp($i)
        puts $fp_fs "$t $i [$a set cwnd_] [$a set ssthresh_] [$a set srtt_] $fp_tot(s$i)"
    }
    foreach k $fp_links {
        puts $fp_fq "$t $k [$qm($k) set pkts_] [$qm($k) set size_]"
    }
}
proc fp_sample {} {
    global ns fp_k fp_dt fp_dur
    fp_sample_write
    incr fp_k
    set nt [expr {$fp_k * $fp_dt}]
    if {$nt < $fp_dur} { $ns at $nt fp_sample }
}
if {$fp_dt < $fp_dur} { $ns at $fp_dt fp_sample }"""
        )
    w("")
    w('$ns at $fp_dur "$ns halt"')
    w("set fp_t0 [clock microseconds]")
    w("$ns run")
    w("set fp_t1 [clock microseconds]")
    if sample_interval_ns is not None:
        # the sample due exactly at the end (if any) is scheduled after the halt event: write it here
        w("if {$fp_k * $fp_dt <= $fp_dur * (1 + 1e-12)} { fp_sample_write }")
        w("close $fp_fs")
        w("close $fp_fq")
    w(
        """fp_accum [array names fp_cnt]
set fp_sum [open [file join $fp_dir summary.txt] w]
puts $fp_sum "now [$ns now]"
puts $fp_sum "wall_run_s [expr {($fp_t1 - $fp_t0) / 1e6}]"
set fp_delivered 0
foreach i $fp_flows wire $fp_wires mss $fp_msss {
    set a $tcp($i)
    if {[info exists fp_done($i)]} { set d $fp_done($i) } else { set d -1 }
    puts $fp_sum "flow $i [$a set ndatapack_] [$a set nrexmitpack_] [$a set nrexmit_] [$a set ncwndcuts_] [$a set ack_] $fp_tot(s$i) $d [$a set cwnd_] [$a set ssthresh_]"
    if {$fp_tot(s$i) >= $mss} { incr fp_delivered [expr {($fp_tot(s$i) - $mss) / $wire + 1}] }
}
foreach i $fp_mflows {
    set a $ag($i)
    if {$fp_proto($i) == "udp"} {
        puts $fp_sum "mflow $i $fp_nsent($i) 0 0"
    } elseif {$fp_proto($i) == "ccid2"} {
        puts $fp_sum "mflow $i [expr {[$a set num_data_pkt_] + [$a set num_dataack_pkt_]}] [$a set cwnd_] [$a set ssthresh_]"
    } else {
        puts $fp_sum "mflow $i [expr {[$a set num_data_pkt_] + [$a set num_dataack_pkt_]}] [$a set s_x_] [$a set s_p_]"
    }
    incr fp_delivered $fp_nrecv($i)
}
foreach i $fp_msr_fids {
    puts $fp_sum "measured $i $fp_nsent($i) $fp_nrecv($i) $fp_dsum($i) $fp_jit($i)"
}
foreach i $fp_all_fids {
    puts $fp_sum "dropped $i $fp_ndrop($i)"
}
foreach k $fp_links {
    set m $qm($k)
    set pi [$m get-pkts-integrator]
    set bi [$m get-bytes-integrator]
    set now [$ns now]
    set psum [expr {[$pi set sum_] + [$pi set lasty_] * ($now - [$pi set lastx_])}]
    set bsum [expr {[$bi set sum_] + [$bi set lasty_] * ($now - [$bi set lastx_])}]
    puts $fp_sum "queue $k [$m set parrivals_] [$m set pdepartures_] [$m set pdrops_] [$m set bdrops_] $fp_tot(bd$k) $psum $bsum [$m set pkts_] [$m set size_]"
}
puts $fp_sum "packets_delivered $fp_delivered"
# ns's own peak memory (see fatpipe.peak_memory: its ru_maxrss would include its spawner's)
if {![catch {open /proc/self/status r} fp_st]} {
    while {[gets $fp_st fp_line] >= 0} {
        if {[string match "VmHWM:*" $fp_line]} { puts $fp_sum "peak_rss_kb [lindex $fp_line 1]" }
    }
    close $fp_st
}
close $fp_sum
puts "packets_delivered $fp_delivered"
puts "wall_run_s [expr {($fp_t1 - $fp_t0) / 1e6}]"
exit 0"""
    )
    return "\n".join(out) + "\n"


def _parse_summary(path: str) -> dict[str, Any]:
    res: dict[str, Any] = {"flows": {}, "queues": {}, "mflows": {}, "measured": {}, "dropped": {}}
    with open(path) as fh:
        for line in fh:
            p = line.split()
            if not p:
                continue
            if p[0] == "flow":
                res["flows"][int(p[1])] = {
                    "ndatapack": int(p[2]),
                    "nrexmitpack": int(p[3]),
                    "nrexmit": int(p[4]),
                    "ncwndcuts": int(p[5]),
                    "ack": int(p[6]),
                    "delivered_wire_bytes": int(p[7]),
                    "done_s": float(p[8]),
                    "cwnd": float(p[9]),
                    "ssthresh": float(p[10]),
                }
            elif p[0] == "queue":
                res["queues"][int(p[1])] = {
                    "parrivals": int(p[2]),
                    "pdepartures": int(p[3]),
                    "pdrops": int(p[4]),
                    "bdrops_raw": int(p[5]),
                    "bdepartures": int(p[6]),
                    "pkts_integral": float(p[7]),
                    "bytes_integral": float(p[8]),
                    "pkts": int(p[9]),
                    "bytes": int(p[10]),
                }
            elif p[0] == "mflow":
                res["mflows"][int(p[1])] = {"sent": int(p[2]), "state": (float(p[3]), float(p[4]))}
            elif p[0] == "measured":
                res["measured"][int(p[1])] = {
                    "sent": int(p[2]),
                    "received": int(p[3]),
                    "delay_sum_s": float(p[4]),
                    "jitter_s": float(p[5]),
                }
            elif p[0] == "dropped":
                res["dropped"][int(p[1])] = int(p[2])
            elif p[0] == "now":
                res["now"] = float(p[1])
            elif p[0] == "wall_run_s":
                res["wall_run_s"] = float(p[1])
            elif p[0] == "packets_delivered":
                res["packets_delivered"] = int(p[1])
            elif p[0] == "peak_rss_kb":
                res["peak_rss_bytes"] = int(p[1]) * 1024
    return res


def _delivered_wire_bytes(flow: dict, npkts: int) -> int:
    """Sink ``bytes_`` after ``npkts`` in-order segments (segment 0 carries no header in ns-2)."""
    return 0 if npkts <= 0 else int(flow.get("mss", 1460)) + (npkts - 1) * _wire(flow)


def _delivered_pkts(flow: dict, wire_bytes: int) -> int:
    mss = int(flow.get("mss", 1460))
    return 0 if wire_bytes < mss else (wire_bytes - mss) // _wire(flow) + 1


def _unwrap_drop_bytes(raw: int, pdrops: int, flows: list) -> int:
    """Recover a 32-bit-wrapped drop byte count from the drop packet count.

    Every packet is between ``min_size`` and ``max_size`` bytes, so the true count lies in
    ``[pdrops*min_size, pdrops*max_size]``; it is the value congruent to ``raw`` mod 2**32 there
    (unique up to ~2.9 million drops per link; beyond, the one nearest to all-data-packet drops).
    """
    if pdrops <= 0:
        return 0
    min_size = min(min(int(f.get("mss", 1460)), int(f.get("header_bytes", 40))) for f in flows) if flows else 1
    max_data = max((_wire(f) for f in flows), default=1500)
    max_size = max(max_data, max((int(f.get("header_bytes", 40)) + 8 * 3 for f in flows), default=64))
    lo, hi = pdrops * min_size, pdrops * max_size
    r = raw % (1 << 32)
    k0 = max(0, -(-(lo - r) // (1 << 32)))
    cands = []
    v = r + k0 * (1 << 32)
    while v <= hi:
        cands.append(v)
        v += 1 << 32
    if not cands:
        return r
    target = pdrops * max_data
    return min(cands, key=lambda c: abs(c - target))


def _payload_delivered(flow: dict, wire_bytes: int) -> int:
    mss = int(flow.get("mss", 1460))
    b = _delivered_pkts(flow, wire_bytes) * mss
    if flow.get("size_bytes") is not None:
        b = min(b, int(flow["size_bytes"]))
    return b


def _message_row(f: dict, dur_s: float, c: dict, m: dict, dropped: int | None,
                 delay: float | None, jitter: float | None) -> dict:
    """The result row of a DCCP or UDP flow: packets counted by the agent (DCCP: Data and DataAck
    packets) or at the flow's first link (UDP), delivered ones at its last link; bytes are those
    packets times the flow's payload."""
    payload = _payload(f)
    transport = _transport(f)
    sent = c["sent"]
    delivered = m["received"]
    # fatpipe's plain CBR rows (UDP, no transport given) count wire bytes sent
    legacy_cbr = f.get("kind") == "cbr" and not f.get("transport")
    row = flow_row(
        f, dur_s,
        bytes_sent=sent * (int(f["packet_bytes"]) if legacy_cbr else payload),
        bytes_delivered=delivered * payload,
        completion=None,
        data_packets_sent=sent,
        retransmits=0,
        timeouts=None,
        fast_recoveries=None,
        rtt_min_s=None,
        rtt_mean_s=None,
        rtt_max_s=None,
        completion_s=None,
        delay_mean_s=delay,
        jitter_s=jitter,
        # UDP sends what it is given; DCCP's send buffer discards silently (no counter in ns-2)
        app_packets=sent if transport == "udp" else None,
        app_discards=0 if transport == "udp" else None,
        packets_delivered=delivered,
        packets_dropped=dropped,
        # ns-2 extras
        data_packets_delivered=delivered,
    )
    if f.get("cc") == "ccid2":
        row["final_cwnd_pkts"], row["final_ssthresh_pkts"] = c["state"]
    elif f.get("cc") == "ccid3":
        row["final_x_bytes_per_s"], row["final_p"] = c["state"]
    return row


def run_plan(
    plan: dict,
    *,
    workdir: str | None = None,
    sample_interval_ns: int | None = None,
    fast_headers: bool = False,
    timeout_s: float = 600,
) -> dict:
    """Run ``plan`` in ns-2 and return fatpipe-shaped tables (lists of row dicts).

    Keys: ``flows``, ``queues``, ``links``, ``flow_series``, ``queue_series`` (empty without
    ``sample_interval_ns``), ``packets_delivered``, ``wall_s`` (the whole ``ns`` process),
    ``wall_run_s`` (``$ns run`` only), ``peak_rss_bytes`` (``ns``'s own peak resident set, None
    where ``/proc`` cannot say), ``sim_s``, ``events`` (None: ns-2 does not count them) and
    ``workdir``. The script and its outputs are kept in ``workdir`` when given, otherwise in a
    temporary directory that is removed.
    """
    if not ns2_available():
        raise RuntimeError("ns-2 binary 'ns' not found on PATH")
    with work_directory(workdir, "fatpipe-ns2-") as workdir:
        script = plan_to_tcl(plan, workdir, sample_interval_ns=sample_interval_ns, fast_headers=fast_headers)
        tcl_path = os.path.join(workdir, "plan.tcl")
        with open(tcl_path, "w") as fh:
            fh.write(script)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(
                [NS_BINARY, tcl_path], cwd=workdir, capture_output=True, text=True, timeout=timeout_s
            )
        except subprocess.TimeoutExpired as e:
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            raise RuntimeError(f"ns timed out after {timeout_s} s running {tcl_path}\n{tail(err)}") from e
        wall = time.perf_counter() - t0
        with open(os.path.join(workdir, "ns.stdout"), "w") as fh:
            fh.write(proc.stdout)
        with open(os.path.join(workdir, "ns.stderr"), "w") as fh:
            fh.write(proc.stderr)
        summary_path = os.path.join(workdir, "summary.txt")
        # Debian's ns reports a bad select_ca on stdout and carries on with exit status 0
        bad = [ln for ln in proc.stdout.splitlines() if ln.startswith("Error:")]
        if bad:
            raise RuntimeError(f"ns reported errors running {tcl_path}:\n" + "\n".join(bad[:10]))
        if proc.returncode != 0 or not os.path.exists(summary_path):
            raise RuntimeError(
                f"ns failed (exit {proc.returncode}) running {tcl_path}\n"
                f"--- stderr (tail) ---\n{tail(proc.stderr)}\n--- stdout (tail) ---\n{tail(proc.stdout, 1000)}"
            )
        return _collect(plan, workdir, _parse_summary(summary_path), sample_interval_ns, wall)


def _collect(plan: dict, workdir: str, summ: dict, sample_interval_ns: int | None, wall: float) -> dict:
    dur_s = int(plan["duration_ns"]) / 1e9
    flows_by_id = {int(f["id"]): f for f in plan["flows"]}

    flows = []
    for f in plan["flows"]:
        i = int(f["id"])
        m = summ["measured"].get(i)
        delay = jitter = None
        if m is not None and m["received"] > 0:
            delay, jitter = m["delay_sum_s"] / m["received"], m["jitter_s"]
        if i in summ["mflows"]:
            flows.append(_message_row(f, dur_s, summ["mflows"][i], m, summ["dropped"].get(i), delay, jitter))
            continue
        c = summ["flows"][i]
        mss = int(f.get("mss", 1460))
        completion = None
        if f.get("size_bytes") is not None and c["done_s"] >= 0:
            completion = c["done_s"]
        flows.append(
            flow_row(
                f, dur_s,
                bytes_sent=c["ndatapack"] * mss,
                bytes_delivered=_payload_delivered(f, c["delivered_wire_bytes"]),
                completion=completion,
                data_packets_sent=c["ndatapack"],
                retransmits=c["nrexmitpack"],
                timeouts=c["nrexmit"],
                fast_recoveries=max(0, c["ncwndcuts"] - c["nrexmit"]),
                rtt_min_s=None,
                rtt_mean_s=None,
                rtt_max_s=None,
                completion_s=completion,
                delay_mean_s=delay,
                jitter_s=jitter,
                app_packets=None,  # ns-2's TCP agent does not expose what the application wrote
                app_discards=None,
                packets_delivered=_delivered_pkts(f, c["delivered_wire_bytes"]),
                packets_dropped=summ["dropped"].get(i),
                # ns-2 extras
                data_packets_delivered=_delivered_pkts(f, c["delivered_wire_bytes"]),
                final_cwnd_pkts=c["cwnd"],
                final_ssthresh_pkts=c["ssthresh"],
            )
        )

    queue_series = []
    flow_series = []
    if sample_interval_ns is not None:
        tick = 0.001  # tcpTick_ for every agent we create; srtt_ is in ticks << 3
        prev: dict[int, tuple[float, int]] = {}
        fs_path = os.path.join(workdir, "flow_series.txt")
        if os.path.exists(fs_path):
            with open(fs_path) as fh:
                for line in fh:
                    p = line.split()
                    if len(p) < 6:
                        continue
                    t, i = float(p[0]), int(p[1])
                    f = flows_by_id[i]
                    b = _payload_delivered(f, int(p[5]))
                    # goodput over the sampling interval ending at t (the first one starts at 0)
                    pt, pb = prev.get(i, (0.0, 0))
                    gp = (b - pb) * 8 / (t - pt) if t > pt else 0.0
                    srtt_ticks8 = int(p[4])
                    prev[i] = (t, b)
                    flow_series.append(
                        {
                            "t_s": t,
                            "flow_id": i,
                            "cwnd_pkts": float(p[2]),
                            "ssthresh_pkts": float(p[3]),
                            "srtt_s": srtt_ticks8 / 8 * tick if srtt_ticks8 > 0 else math.nan,
                            "bytes_delivered": b,
                            "goodput_bps": gp,
                        }
                    )
        qs_path = os.path.join(workdir, "queue_series.txt")
        if os.path.exists(qs_path):
            with open(qs_path) as fh:
                for line in fh:
                    p = line.split()
                    if len(p) < 4:
                        continue
                    queue_series.append(
                        {
                            "t_s": float(p[0]),
                            "link": plan["links"][int(p[1])].get("name", f"{p[1]}"),
                            "len_pkts": int(p[2]),
                            "len_bytes": int(p[3]),
                        }
                    )

    max_len: dict[str, int] = {}
    for row in queue_series:
        max_len[row["link"]] = max(max_len.get(row["link"], 0), row["len_pkts"])

    queues, links = [], []
    for k, link in enumerate(plan["links"]):
        c = summ["queues"][k]
        name = link.get("name", f"{link['from']}->{link['to']}")
        red = (link.get("queue") or {}).get("kind") == "red"
        queues.append(
            {
                "link": name,
                "kind": (link.get("queue") or {}).get("kind", "droptail"),
                "enqueued": c["parrivals"] - c["pdrops"],
                "dequeued": c["pdepartures"],
                # ns-2's queue monitor counts RED's early and forced drops together: for a RED
                # link the reasons are unknown (None) and `drops_total` has them all.
                "drops_tail": None if red else c["pdrops"],
                "drops_aqm_early": None if red else 0,
                "drops_aqm_forced": None if red else 0,
                "drops_random": 0,
                "drops_total": c["pdrops"],
                "marks_aqm_early": None if red else 0,
                "marks_aqm_forced": None if red else 0,
                "dropped_bytes": _unwrap_drop_bytes(c["bdrops_raw"], c["pdrops"], plan["flows"]),
                "max_len_pkts": max_len.get(name) if sample_interval_ns is not None else None,
                "mean_len_pkts": c["pkts_integral"] / dur_s,
                # ns-2 extras
                "arrivals": c["parrivals"],
                "mean_len_bytes": c["bytes_integral"] / dur_s,
                "final_len_pkts": c["pkts"],
            }
        )
        links.append(
            {
                "link": name,
                "from": link["from"],
                "to": link["to"],
                "rate_bps": int(link["rate_bps"]),
                "delay_s": int(link["delay_ns"]) / 1e9,
                "tx_bytes": c["bdepartures"],
                "tx_packets": c["pdepartures"],
                "utilisation": c["bdepartures"] * 8 / (int(link["rate_bps"]) * dur_s),
            }
        )

    return {
        "flows": flows,
        "queues": queues,
        "links": links,
        "flow_series": flow_series,
        "queue_series": queue_series,
        "packets_delivered": summ.get("packets_delivered", sum(r["data_packets_delivered"] for r in flows)),
        "wall_s": wall,
        "wall_run_s": summ.get("wall_run_s"),
        "peak_rss_bytes": summ.get("peak_rss_bytes"),
        "sim_s": summ.get("now", dur_s),
        "events": None,
        "workdir": workdir,
    }
