"""Run a fatpipe plan in ns-3 3.44 (PyPI ``ns3``, cppyy bindings) and return fatpipe-shaped results.

The plan format and the result columns are defined in ``docs/plan-and-results.md``; the tables have
the same keys and columns as :mod:`fatpipe.peers.ns2`'s, so the same comparison helpers apply. This
module imports only the standard library; ns-3 is loaded in a child process (``python -m
fatpipe.peers.ns3``): cppyy's interpreter state is process-global, and importing ns-3 takes ~6 s and
~300 MB, which the caller should not carry.

The simulation itself is a C++ function (``_CPP`` below) that cppyy compiles at run time against
the wheel's ns-3 headers: the topology, the trace sinks and the sampler run at C++ speed, and the
Python side only writes a line-oriented spec and parses a line-oriented report.

How a plan maps onto ns-3 (checked against the ns-3.44 sources, ``src/internet/model``):

Links and queues
    ns-3 point-to-point links are full duplex with one propagation delay, so the plan's directed
    links must come in pairs ``a->b``/``b->a`` with equal ``delay_ns`` (rates may differ: the
    device's ``DataRate`` is per direction). A DropTail direction's queue is the device's
    ``DropTailQueue`` with ``MaxSize`` = ``limit_packets`` (``"Np"``) or ``limit_bytes``
    (``"NB"``). The traffic-control layer (a 1000-packet pfifo_fast per device by default) is
    removed and the device's flow control disabled (``PointToPointHelper::DisableFlowControl``),
    so the device queue is the only one and drops an arriving packet when full. ns-3's ``PointToPointNetDevice`` dequeues the
    packet it serialises, so ``MaxSize`` counts waiting packets, as the plan does (no offset,
    unlike ns-2). Routing: ns-3 global routing (shortest path, unit metrics).

AQM: CoDel and PIE (``queue.kind = "codel"`` / ``"pie"``; any other AQM kind is a ``ValueError``)
    The link direction gets ns-3's traffic-control layer: its device gets flow control (a
    ``NetDeviceQueueInterface`` aggregated to that device only: the helper would give it to both
    directions), its ``DropTailQueue`` shrinks to 1 packet and ``CoDelQueueDisc`` /
    ``PieQueueDisc`` is the root queue disc, with ``MaxSize`` = the plan's limit. ns-3's flow
    control wakes the queue disc as soon as the device queue has room, i.e. when the packet just
    handed over starts its transmission, so one more packet would always wait in the device
    queue where the AQM does not see it (1.2 ms at 10 Mb/s, a quarter of CoDel's target). The
    runner instead keeps the device's transmission queue stopped while the transmitter is busy
    (``PhyTxBegin``/``PhyTxEnd`` traces; its wake callback replaces the traffic-control layer's
    at t = 0) and wakes the queue disc when a transmission ends: the device takes a packet from
    the queue disc only when it can send it at once, as fatpipe's link does, the device queue
    is empty except for the instant a packet passes through it, and the AQM's sojourn time runs
    from its enqueue to the start of the transmission, as fatpipe's. The reported queue is the
    queue disc plus the device queue; the queue disc holds IP packets (the 2-byte PPP header is
    added in the device), so 2 bytes per packet are added back to its byte counts. Inside the AQM
    ns-3 counts those 2 bytes fewer per packet than fatpipe's wire bytes: a byte limit, CoDel's
    MAXPACKET test and PIE's ``DequeueThreshold`` see 1498 bytes for a 1500-byte packet. Drops
    and marks by reason as fatpipe's: the limit (``"Overlimit drop"``, ``"Forced drop"``) ->
    ``drops_tail``, PIE's ``"Unforced drop"`` -> ``drops_aqm_early``, CoDel's drops at dequeue ->
    ``drops_aqm_forced``, marks -> ``marks_aqm_early`` (PIE) / ``marks_aqm_forced`` (CoDel).
    PIE's random stream is fixed per link (``AssignStreams(link index)``): ns-3's automatic stream
    numbers go on counting across the plans of a batch, so a plan would otherwise not repeat.

    CoDel (``CoDelQueueDisc``, ns-3's port of Linux's ``codel``): ``target_ns`` -> ``Target``,
    ``interval_ns`` -> ``Interval``, ``ecn`` -> ``UseEcn``, ``mtu_bytes`` -> ``MinBytes`` =
    ``mtu_bytes + 1`` (ns-3 keeps the queue "below target" while bytes < MinBytes, RFC 8289 and
    fatpipe while bytes <= MAXPACKET); ``UseL4s`` false, ``CeThreshold`` unset (off). Other
    differences, read in the 3.44 sources (the effects measured are in docs/validation.md):
    - Time is in 1.024 us units (ns >> 10) in 32 bits: 5 ms is 4882 units (4.9992 ms).
    - The control law uses Linux's 16-bit reciprocal square root, kept by one Newton step per
      change of count, where fatpipe divides INTERVAL by sqrt(count) exactly (RFC 8289's
      pseudocode). Re-entering the dropping state with count = delta takes one Newton step from
      the value for the old, larger count, which leaves 1/sqrt(count) too small: from count 20
      to 10 it gives 0.2795 instead of 0.3162, the next drop 12 % early.
    - Dropping is allowed once now > first_above_time (RFC and fatpipe: >=; one time unit).
    - The count-reuse test computes now - drop_next in unsigned 32 bits and compares it as a
      64-bit signed number, so a drop_next still in the future counts as long ago and count
      restarts at 1; Linux and fatpipe compare the signed difference (recent). Re-entry before the
      drop_next scheduled when the state was left needs less than an interval above target
      after leaving it, so this hardly occurs.
    - A mark in the dropping state schedules the next at control_law(now); Linux and fatpipe at
      control_law(drop_next) (ECN only).
    - On an empty queue ns-3 leaves first_above_time as it is (as Linux; the RFC resets it); the
      dequeue that emptied the queue has already reset it (0 bytes left), so it changes nothing.

    PIE (``PieQueueDisc``, ported from ns-2.36's ``pie.cc``, with RFC 8033's options):
    ``target_ns`` -> ``QueueDelayReference``, ``t_update_ns`` -> ``Tupdate``, ``alpha`` -> ``A``,
    ``beta`` -> ``B``, ``max_burst_ns`` -> ``MaxBurstAllowance``, ``ecn`` -> ``UseEcn``,
    ``mark_ecnth`` -> ``MarkEcnThreshold``, ``derandomize`` -> ``UseDerandomization``,
    ``cap_drop`` -> ``UseCapDropAdjustment``, ``estimator = "dq_rate"`` ->
    ``UseDequeueRateEstimator``, ``dq_threshold_bytes`` -> ``DequeueThreshold``;
    ``ActiveThreshold`` unset (always active, as fatpipe's, which has no active/inactive switch),
    ``UseL4s`` false. Refused: ``limit_bytes`` (with a byte limit ns-3 scales the drop
    probability by packet size / ``MeanPktSize``; fatpipe does not scale) and a
    ``mean_packet_bytes`` other than the flows' data packet size (with a packet limit ns-3's
    safeguard lets arrivals in while at most 2 packets are queued, fatpipe's while at most
    2 x mean_packet bytes are: the same for a queue of data packets). Other differences:
    - Burst allowance: ns-3 keeps ns-2's state machine. The allowance is given at the first
      arrival and again only after drop_prob has stayed 0 with both delays below QDELAY_REF/2
      for 1.5 s (``BURST_RESET_TIMEOUT``), and while it lasts the update holds drop_prob at 0.
      RFC 8033 (and fatpipe) re-arm it at any arrival that finds drop_prob = 0 and both delays
      below QDELAY_REF/2, and update drop_prob during it (only the drops are suppressed).
    - Timestamp delay: ns-3 (and Linux's ``pie``) set qdelay to 0 when a dequeue leaves the
      queue empty; RFC 8033's Appendix A and fatpipe keep the last packet's sojourn time. ns-3's
      decay (x 0.98 when both delays are 0) and safeguard therefore act more often.
    - The first update is scheduled at construction (t = 0; ``Supdate`` is applied only after
      the constructor has scheduled it), then every Tupdate: fatpipe's instants k x T_UPDATE
      plus one at 0, which changes nothing. The random test is u <= p (fatpipe u < p).
    - Dequeue-rate estimator: ns-3 averages the rate (0.5 old + 0.5 new), RFC 8033 and fatpipe
      average dq_time with weight DQ_THRESHOLD/2^16 (0.25); ns-3 counts the packet whose dequeue
      starts a cycle (fatpipe the ones after it), restarts a cycle only above DQ_THRESHOLD (RFC:
      at or above), and forgets the average whenever both delays are below QDELAY_REF/2 with
      drop_prob 0; qdelay = bytes / rate, 0 until a first cycle ends.
    - With derandomisation, ns-3 does not reset accu_prob after an ECN mark (fatpipe does).

Packets
    ns-3 adds a 2-byte PPP header on point-to-point links and its TCP header is 20 bytes without
    options; the peer turns timestamps off (``Timestamp false``: fatpipe's timestamps only feed
    RTT samples, which ns-3 takes from its own send history) so a data packet on the wire is
    ``SegmentSize + 42`` bytes. ``SegmentSize = mss + header_bytes - 42`` makes it exactly the
    plan's ``mss + header_bytes`` (1458 for the default 1460 + 40), so serialisation times,
    buffer occupancy in packets and bytes, and the BDP in packets are the plan's. Delivered data
    is counted in *segments* and reported as ``segments * mss`` so goodput compares per delivered
    packet like the ns-2 peer's (the payload ns-3 actually carried is 2/1460 = 0.14 % smaller).
    ACKs are 42 bytes (+ SACK blocks), fatpipe's 40.

TCP (one ``TcpSocketBase`` per flow, ns-3's Linux-like sender)
    ``cc``: ``reno`` -> ``TcpLinuxReno``, ``cubic`` -> ``TcpCubic``, ``bbr`` -> ``TcpBbr``
    (``NS3_CCS``); the socket type is per node (``TcpL4Protocol::SocketType``), so flows leaving
    one node must share a cc. ``cc_params`` are translated to the ns-3 attributes where one
    exists and rejected (``ValueError`` naming ``flows[i].cc_params.KEY``) where ns-3 cannot do
    what fatpipe would (see ``_cc_attributes``): CUBIC ``beta``, ``c``, ``fast_convergence``,
    ``tcp_friendliness`` map to ``Beta``, ``C``, ``FastConvergence``, ``TcpFriendliness``;
    ``hystart`` must be ``"off"`` (-> ``HyStart false``): ns-3 3.44 has no RFC 9406 HyStart++,
    and its HyStart is not Linux's (the delay threshold is the min RTT clamped to 4 ms-1 s, not
    min RTT / 8 clamped to 4-16 ms). BBR: ns-3's ``TcpBbr`` is the Linux model with a 1 % pacing margin but no
    long-term (policer) sampling, so ``long_term_bw`` must be false and
    ``pacing_margin_percent`` 1; ``variant = "paper"`` is rejected. ``ack_aggregation = true``
    runs ns-3's allowance as it is, which 3.44 caps at about 3 packets (its
    ``AckEpochAckedResetThresh`` of 4096 is compared with *bytes*, Linux's 2^20 with packets,
    and the epoch length is truncated to whole seconds); ``false`` sets that threshold to 0, an
    allowance of at most one ACK's data (ns-3 has no switch for it).
    ``recovery = "sack"``: ``Sack true``; ``"newreno"``: ``Sack false``. ``cwnd_reduction``:
    ``"prr"`` -> ``TcpPrrRecovery`` (RFC 6937 with SSRB, as Linux), ``"at-once"`` (and plans
    without the field, from before fatpipe had PRR) -> ``TcpClassicRecovery`` (cwnd = ssthresh on
    entry, then the RFC 6675 pipe); ``"rate-halving"`` (ns-2) is rejected. Other per-flow settings: ``SegmentSize`` as above, ``InitialCwnd``,
    ``InitialSlowStartThreshold`` (``initial_ssthresh`` segments, else unlimited),
    ``DelAckCount`` 2 or 1 and ``DelAckTimeout``, ``MinRto``, ``ReTxThreshold`` (dupthresh),
    ``RcvBufSize = rwnd_bytes`` (window scaling on), ``SndBufSize`` 64 MiB (a bulk sender is
    never buffer-limited), ``DataRetries`` 100 (ns-3 closes a connection after 6 by default),
    ``ConnTimeout = initial_rto`` (the only RTO before the first RTT sample: the SYN's). These
    are ns-3 defaults (``Config::SetDefault``), so every flow must agree on them.
    Rules ns-3 has hard-wired, which the plan must select on fatpipe's side (else
    ``ValueError``): ``rto_estimator = "rfc6298"`` (ns-3: max(min_rto, SRTT + max(G, 4 RTTVAR))),
    ``rto_ssthresh = "halve-again"`` (ns-3 reduces ssthresh on a timeout in Recovery too),
    ``max_rto_ns`` = 60 s (ns-3's cap), ``lost_retransmit = false`` (ns-3 resends a lost
    retransmission only after an RTO), ``cwnd_growth = "segments"``, ``rto_restart =
    "advance"``, ``send_jitter_ns = 0`` (ns-3 has no ``overhead_``), ``pacing`` false except for
    BBR (which paces itself in both simulators).
    ECN: ``ecn`` -> ``UseEcn`` ``On`` (RFC 3168: ECT(0) on new data, not on retransmissions, as
    fatpipe), only with ``cwnd_reduction = "at-once"`` and a window-based cc: fatpipe answers
    ECN-Echo with cwnd = ssthresh at once, ns-3 through its recovery ops, so with
    ``TcpClassicRecovery`` the same (``TcpPrrRecovery`` reduces over a round trip, ``TcpBbr`` sets
    its own window). ns-3 then stays in CWR, without window growth, until the data outstanding
    at the reduction is acknowledged; fatpipe returns to Open at once and grows during that
    round trip.
    Connection set-up: ns-3 opens with a handshake and fatpipe does not, so each
    ``BulkSendApplication`` starts ``path_rtt_ns`` (the plan's unloaded path RTT) before the
    flow's ``start_ns`` (at 0 if that is earlier): its first data segment leaves at ``start_ns``.
    Bulk flows stop at ``stop_ns``; finite flows send ``ceil(size/mss)`` segments (``MaxBytes``).

Randomness
    ns-3 has no send jitter; runs differ by seed through the plan's start times (fatpipe draws
    them per seed, and the same plan goes to both sides) and ns-3's RNG run number
    (``RngSeedManager::SetRun(seed)``), which drives e.g. ``TcpBbr``'s random PROBE_BW phase.

Measurement
    Per flow: ``bytes_delivered`` from the ``PacketSink`` (in-order bytes handed to the
    application), counted in segments as above; ``data_packets_sent`` from the socket's ``Tx``
    trace (segments with payload), ``retransmits`` from ``Retransmission``, ``timeouts`` and
    ``fast_recoveries`` from ``CongState`` transitions to CA_LOSS and CA_RECOVERY; ``rtt_min_s``
    and ``rtt_max_s`` from ``LastRTT`` (a ``TracedValue``, which reports changes only, so
    ``rtt_mean_s`` is None; use ``srtt_s`` or the queue). Series every ``sample_interval_ns``: ``cwnd_pkts`` and
    ``ssthresh_pkts`` (bytes / SegmentSize, from ``CongestionWindow`` and
    ``SlowStartThreshold``), ``srtt_s`` from the ``RTT`` trace (smoothed), plus
    ``cwnd_min_pkts``/``cwnd_max_pkts``, the extremes of the window since the previous sample (a
    200 ms PROBE_RTT dip cannot fall between samples). Queues: ``Drop``/``Dequeue`` traces (64-bit
    counters) and the time integral of ``PacketsInQueue``/``BytesInQueue`` (with an AQM, of the
    queue disc's as well, see above).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from typing import Any

from ._common import flow_row, tail, work_directory
from ..peak_memory import vm_hwm_bytes

#: The rules ns-3 3.44 hard-wires, in fatpipe's names (``plan_to_spec`` refuses a plan that asks
#: for others): RFC 6298's RTO with halving on every first timeout and a 60 s cap, no
#: lost-retransmission detection, no RACK-TLP.
NS3_RULES = (
    'tcp.rto_estimator="rfc6298"',
    'tcp.rto_ssthresh="halve-again"',
    "tcp.lost_retransmit=false",
    "tcp.max_rto=60s",
    "tcp.rack=false",
    "tcp.tlp=false",
)

__all__ = ["NS3_CCS", "NS3_RULES", "ns3_available", "plan_to_spec", "run_plan", "run_plans"]

#: fatpipe cc name -> ns-3 TcpCongestionOps type.
NS3_CCS = {"reno": "ns3::TcpLinuxReno", "newreno": "ns3::TcpLinuxReno", "cubic": "ns3::TcpCubic", "bbr": "ns3::TcpBbr"}

#: IP (20) + TCP without options (20) + PPP (2): ns-3's per-packet overhead on a point-to-point link.
NS3_HEADER_BYTES = 42
NS3_MAX_RTO_NS = 60_000_000_000
_SND_BUF = 64 << 20


def ns3_available() -> bool:
    """Whether the ``ns3`` wheel is installed (without importing it: that takes seconds)."""
    import importlib.util

    return importlib.util.find_spec("ns") is not None and importlib.util.find_spec("cppyy") is not None


# --------------------------------------------------------------------------------------------
# plan -> spec (pure Python: every plan field ns-3 cannot honour is rejected here)


def _bool(v: Any) -> str:
    return "true" if v else "false"


def _cc_attributes(i: int, cc: str, params: dict) -> dict[str, str]:
    """ns-3 attribute defaults for ``cc`` with fatpipe ``cc_params``; ValueError where impossible."""
    where = f"flows[{i}].cc_params"
    p = dict(params or {})
    out: dict[str, str] = {}
    if cc == "cubic":
        variant = p.pop("variant", "linux")
        sets: dict[str, tuple[float, float, str]] = {
            "linux": (717 / 1024, 410 / 1024, "linux"),
            "rfc9438": (0.7, 0.4, "hystart++"),
        }
        if variant not in sets:
            raise ValueError(
                f"{where}.variant: {variant!r} cannot be run in ns-3's TcpCubic (Linux 6.x model: "
                "no max_increment clamp, no delayed-ACK ratio); use 'linux' or 'rfc9438'"
            )
        d_beta, d_c, d_hystart = sets[variant]
        beta = float(p.pop("beta", d_beta))
        c = float(p.pop("c", d_c))
        hystart = p.pop("hystart", d_hystart)
        fc = p.pop("fast_convergence", True)
        tf = p.pop("tcp_friendliness", True)
        p.pop("hystart_low_window", None)  # matters only with HyStart, which is off
        mi = float(p.pop("max_increment", 0))
        if mi != 0:
            raise ValueError(f"{where}.max_increment: ns-3's TcpCubic has no increment clamp (need 0)")
        if hystart != "off":
            # ns-3 3.44's HyStart is not Linux's either: its delay threshold is the min RTT
            # clamped to [HyStartDelayMin, HyStartDelayMax], Linux's min RTT / 8 clamped to 4-16 ms
            raise ValueError(
                f"{where}.hystart = {hystart!r}: ns-3 3.44 has neither RFC 9406 HyStart++ nor Linux's "
                "HyStart (its delay threshold is the min RTT, not min RTT / 8); set hystart = \"off\""
            )
        out.update(
            {
                "ns3::TcpCubic::Beta": repr(beta),
                "ns3::TcpCubic::C": repr(c),
                "ns3::TcpCubic::FastConvergence": _bool(fc),
                "ns3::TcpCubic::TcpFriendliness": _bool(tf),
                "ns3::TcpCubic::HyStart": "false",
            }
        )
    elif cc == "bbr":
        variant = p.pop("variant", "linux")
        if variant != "linux":
            raise ValueError(f"{where}.variant: ns-3's TcpBbr is the Linux model; {variant!r} is not available")
        checks = (("long_term_bw", True, False), ("pacing_margin_percent", 1, 1))
        for key, default, need in checks:
            v = p.pop(key, default)
            if v != need:
                what = {
                    "long_term_bw": "ns-3's TcpBbr has no long-term (policer) bandwidth sampling",
                    "pacing_margin_percent": "ns-3's TcpBbr paces 1 % below its estimate",
                }[key]
                raise ValueError(f"{where}.{key} = {v!r}: {what}; set {key} = {need!r}")
        if not p.pop("ack_aggregation", True):
            # ns-3 has no switch for it (m_extraAckedGain is 1); an epoch reset on every ACK
            # leaves an allowance of at most the one ACK's data
            out["ns3::TcpBbr::AckEpochAckedResetThresh"] = "0"
    elif cc in ("reno", "newreno"):
        pass
    if p:
        raise ValueError(f"{where}: {sorted(p)} not available in ns-3's {NS3_CCS[cc]}")
    return out


#: (plan field, value ns-3 behaves as, why) for rules ns-3 hard-wires.
_FIXED_RULES = (
    ("rto_estimator", "rfc6298", "ns-3's RTO is max(min_rto, SRTT + max(G, 4 RTTVAR)) (RFC 6298)"),
    ("rto_ssthresh", "halve-again", "ns-3 reduces ssthresh on any timeout that is not a repeat in Loss"),
    ("lost_retransmit", False, "ns-3 resends a lost retransmission only after a timeout"),
    ("cwnd_growth", "segments", "ns-3's congestion ops count the segments an ACK covers"),
    ("rto_restart", "advance", "ns-3 restarts the RTO timer on ACKs of new data only"),
    ("rack", False, "ns-3 3.44 has no RACK (RFC 8985); it marks losses by RFC 6675's DupThresh rules"),
    ("tlp", False, "ns-3 3.44 has no tail loss probe (RFC 8985 section 7)"),
)


#: plan ``cwnd_reduction`` -> ns-3 recovery ops (used by window-based algorithms only: ns-3 skips
#: them for ``HasCongControl`` ones such as TcpBbr, as Linux skips PRR for BBR).
_RECOVERY_OPS = {"prr": "ns3::TcpPrrRecovery", "at-once": "ns3::TcpClassicRecovery"}


def _per_flow_socket(i: int, f: dict) -> dict[str, str]:
    where = f"flows[{i}]"
    if f.get("kind") in ("cbr", "web", "files", "voip"):
        raise ValueError(f"{where}.kind = {f['kind']!r}: the ns-3 peer maps bulk and file TCP flows only")
    if f.get("transport"):
        raise ValueError(f"{where}.transport = {f['transport']!r}: ns-3 has no DCCP and the peer maps TCP flows only")
    for key, need, why in _FIXED_RULES:
        if key in f and f[key] != need:
            raise ValueError(f"{where}.{key} = {f[key]!r} cannot be honoured: {why}; set it to {need!r}")
    if int(f.get("send_jitter_ns", 0)) != 0:
        raise ValueError(f"{where}.send_jitter_ns: ns-3 has no send jitter (ns-2 overhead_); set it to 0")
    if int(f.get("max_rto_ns", NS3_MAX_RTO_NS)) != NS3_MAX_RTO_NS:
        raise ValueError(f"{where}.max_rto_ns = {f['max_rto_ns']}: ns-3 caps the RTO at 60 s; set max_rto to 60s")
    mss, hb = int(f.get("mss", 1460)), int(f.get("header_bytes", 40))
    seg = mss + hb - NS3_HEADER_BYTES
    if seg < 1:
        raise ValueError(f"{where}.header_bytes: mss + header_bytes must exceed ns-3's {NS3_HEADER_BYTES} header bytes")
    recovery = f.get("recovery", "sack")
    if recovery not in ("sack", "newreno"):
        raise ValueError(f"{where}.recovery: unknown {recovery!r}")
    reduction = f.get("cwnd_reduction", "at-once")  # plans before PRR had no field: cwnd = ssthresh
    if reduction not in _RECOVERY_OPS:
        raise ValueError(
            f"{where}.cwnd_reduction = {reduction!r}: ns-3 has PRR (TcpPrrRecovery) and cwnd = ssthresh "
            f"at once (TcpClassicRecovery) only; use one of {sorted(_RECOVERY_OPS)}"
        )
    ecn = bool(f.get("ecn", False))
    if ecn and (reduction != "at-once" or str(f.get("cc", "reno")).lower() == "bbr"):
        # fatpipe answers ECN-Echo with cwnd = ssthresh at once (docs/aqm.md); ns-3 enters CWR through
        # its recovery ops, which do that only as TcpClassicRecovery (TcpPrrRecovery reduces over an
        # RTT, as Linux does), and TcpBbr sets its window itself
        raise ValueError(
            f"{where}.ecn: ns-3 answers ECN-Echo as fatpipe does (cwnd = ssthresh at once) only with "
            "cwnd_reduction = 'at-once' and a window-based cc; "
            "set tcp.cwnd_reduction = \"at-once\" or tcp.ecn = false"
        )
    iss = f.get("initial_ssthresh")
    rwnd = f.get("rwnd_bytes")
    return {
        "ns3::TcpSocketBase::UseEcn": "On" if ecn else "Off",
        "ns3::TcpL4Protocol::RecoveryType": _RECOVERY_OPS[reduction],
        "ns3::TcpSocket::SegmentSize": str(seg),
        "ns3::TcpSocket::InitialCwnd": str(int(f.get("initial_window", 10))),
        "ns3::TcpSocket::InitialSlowStartThreshold": str(
            0xFFFFFFFF if iss is None else min(0xFFFFFFFF, max(2, int(iss)) * seg)
        ),
        "ns3::TcpSocket::DelAckCount": "2" if f.get("delayed_ack") else "1",
        "ns3::TcpSocket::DelAckTimeout": f"{int(f.get('delack_timeout_ns', 40_000_000))}ns",
        "ns3::TcpSocket::ConnTimeout": f"{int(f.get('initial_rto_ns', 1_000_000_000))}ns",
        "ns3::TcpSocket::DataRetries": "100",
        "ns3::TcpSocket::RcvBufSize": str(min(0xFFFFFFFF, int(rwnd) if rwnd is not None else _SND_BUF)),
        "ns3::TcpSocket::SndBufSize": str(_SND_BUF),
        "ns3::TcpSocketBase::MinRto": f"{int(f.get('min_rto_ns', 200_000_000))}ns",
        "ns3::TcpSocketBase::ReTxThreshold": str(int(f.get("dupthresh", 3))),
        "ns3::TcpSocketBase::Sack": _bool(recovery == "sack"),
        "ns3::TcpSocketBase::Timestamp": "false",
        "ns3::TcpSocketBase::WindowScaling": "true",
        "ns3::TcpSocketBase::LimitedTransmit": "true",
    }


def plan_to_spec(plan: dict) -> str:
    """The line-oriented spec the C++ runner reads. Raises ValueError for what ns-3 cannot honour."""
    nodes = [n["name"] for n in plan["nodes"]]
    idx = {name: i for i, name in enumerate(nodes)}
    dur = int(plan["duration_ns"])
    if dur <= 0:
        raise ValueError("duration_ns must be positive")
    # ns-3's global routing breaks equal-cost ties its own way; rather than a silently different
    # run, refuse plans where a flow's path meets a tie (rings; fatpipe's tie rule: docs/ring.md).
    from fatpipe.peers.ns2 import fatpipe_routes

    _, ties = fatpipe_routes(plan)
    if ties:
        u, d = min(ties)
        raise ValueError(f"routes: {len(ties)} equal-cost choices on the flows' paths (e.g. {nodes[u]} towards "
                         f"{nodes[d]}); the ns-3 peer cannot force fatpipe's choice, compare with the ns-2 peer")
    # device MTU (IP packet) large enough for the largest data packet: wire size - PPP header
    mtu = max([1500] + [int(f.get("mss", 1460)) + int(f.get("header_bytes", 40)) - 2 for f in plan["flows"]])
    lines = [f"run {dur} {int(plan.get('seed', 0)) % 2_147_483_646 + 1} {mtu}"]

    defaults: dict[str, str] = {}
    sock_type: dict[int, str] = {}
    for f in plan["flows"]:
        i = int(f["id"])
        if f.get("kind") == "relay":
            raise ValueError(f"flows[{i}].kind = 'relay': the ns-3 peer has no depots (relay chains run in "
                             "fatpipe alone)")
        cc = str(f.get("cc", "reno")).lower()
        if cc not in NS3_CCS:
            raise ValueError(f"flows[{i}].cc: {cc!r} has no ns-3 3.44 equivalent here (known: {sorted(NS3_CCS)})")
        if f.get("pacing") and cc != "bbr":
            raise ValueError(f"flows[{i}].pacing: ns-3's pacing rates differ from fatpipe's; use pacing = false")
        want = _per_flow_socket(i, f)
        want.update(_cc_attributes(i, cc, f.get("cc_params") or {}))
        for attr, v in want.items():
            if attr in defaults and defaults[attr] != v:
                raise ValueError(
                    f"flows[{i}]: ns-3 sets {attr} once for all flows (Config::SetDefault); "
                    f"{v} here, {defaults[attr]} for an earlier flow"
                )
            defaults[attr] = v
        src = idx[f["src"]]
        if sock_type.get(src, NS3_CCS[cc]) != NS3_CCS[cc]:
            raise ValueError(f"flows[{i}].cc: ns-3 sets the socket type per node; node {f['src']} has flows with different cc")
        sock_type[src] = NS3_CCS[cc]
    lines += [f"default {k} {v}" for k, v in sorted(defaults.items())]
    for n, t in sorted(sock_type.items()):
        lines.append(f"socktype {n} {t}")
    for name in nodes:
        lines.append(f"node {name}")

    links = plan["links"]
    for lk in links:
        if lk.get("loss"):
            raise ValueError(f"link {lk['name']}: random loss is not mapped to ns-3 by this peer yet")
    by_pair = {}
    for k, l in enumerate(links):
        key = (l["from"], l["to"])
        if key in by_pair:
            raise ValueError(f"links[{k}]: a second {l['from']}->{l['to']} link (ns-3 peer: one per node pair)")
        by_pair[key] = k
    done: set[int] = set()
    for k, l in enumerate(links):
        if k in done:
            continue
        rk = by_pair.get((l["to"], l["from"]))
        if rk is None:
            raise ValueError(
                f"links[{k}] ({l['from']}->{l['to']}): ns-3 point-to-point links are full duplex; "
                "the reverse link is missing"
            )
        r = links[rk]
        if int(l["delay_ns"]) != int(r["delay_ns"]):
            raise ValueError(
                f"links[{rk}].delay_ns: ns-3 point-to-point links have one delay for both directions "
                f"({l['delay_ns']} vs {r['delay_ns']})"
            )
        done.update((k, rk))
        q1, q2 = _queue(k, l, plan["flows"]), _queue(rk, r, plan["flows"])
        lines.append(
            f"link {k} {rk} {idx[l['from']]} {idx[l['to']]} {int(l['rate_bps'])} {int(r['rate_bps'])} "
            f"{int(l['delay_ns'])} {q1} {q2}"
        )

    for f in plan["flows"]:
        i = int(f["id"])
        mss = int(f.get("mss", 1460))
        seg = mss + int(f.get("header_bytes", 40)) - NS3_HEADER_BYTES
        start = int(f.get("start_ns", 0))
        app_start = max(0, start - int(f.get("path_rtt_ns", 0)))
        stop = f.get("stop_ns")
        stop = dur if stop is None else min(dur, int(stop))
        size = f.get("size_bytes")
        maxbytes = 0 if size is None else max(1, math.ceil(int(size) / mss)) * seg
        lines.append(f"flow {i} {idx[f['src']]} {idx[f['dst']]} {app_start} {stop} {maxbytes} {seg}")
    return "\n".join(lines) + "\n"


def _limit(k: int, q: dict, what: str) -> str:
    lp, lb = q.get("limit_packets"), q.get("limit_bytes")
    if lp is not None and lb is not None:
        raise ValueError(f"links[{k}].queue: ns-3's {what} has one limit; give limit_packets or limit_bytes")
    if lp is not None:
        return f"{int(lp)}p"
    if lb is not None:
        return f"{int(lb)}B"
    raise ValueError(f"links[{k}].queue: neither limit_packets nor limit_bytes")


def _ns(v: Any) -> str:
    return f"{int(v)}ns"


def _codel(k: int, q: dict, aqm: dict, flows: list[dict]) -> list[str]:
    """ns-3 ``CoDelQueueDisc`` attributes for a plan's CoDel (see the module docstring)."""
    where = f"links[{k}].queue.aqm"
    a = dict(aqm)
    a.pop("kind", None)
    attrs = [
        f"MaxSize={_limit(k, q, 'CoDelQueueDisc')}",
        f"Target={_ns(a.pop('target_ns', 5_000_000))}",
        f"Interval={_ns(a.pop('interval_ns', 100_000_000))}",
        # ns-3 keeps the queue "below" while bytes < MinBytes, RFC 8289 and fatpipe while bytes <= MTU
        f"MinBytes={int(a.pop('mtu_bytes', 1500)) + 1}",
        f"UseEcn={_bool(a.pop('ecn', False))}",
        "UseL4s=false",
    ]
    if a:
        raise ValueError(f"{where}: {sorted(a)} not available in ns-3's CoDelQueueDisc")
    return ["ns3::CoDelQueueDisc", *attrs]


def _pie(k: int, q: dict, aqm: dict, flows: list[dict]) -> list[str]:
    """ns-3 ``PieQueueDisc`` attributes for a plan's PIE (see the module docstring)."""
    where = f"links[{k}].queue"
    if q.get("limit_bytes") is not None:
        raise ValueError(
            f"{where}.limit_bytes: ns-3's PieQueueDisc with a byte limit scales the drop probability by "
            "packet size / MeanPktSize (fatpipe's PIE does not); give limit_packets"
        )
    a = dict(aqm)
    a.pop("kind", None)
    mean = int(a.pop("mean_packet_bytes", 1500))
    sizes = sorted({int(f.get("mss", 1460)) + int(f.get("header_bytes", 40)) for f in flows})
    if sizes and sizes != [mean]:
        raise ValueError(
            f"{where}.aqm.mean_packet_bytes = {mean}: ns-3's PieQueueDisc with a packet limit lets every "
            "arrival in while at most 2 packets are queued, fatpipe's while at most 2 * mean_packet bytes "
            f"are: the same only when mean_packet is the data packet size ({sizes} here)"
        )
    estimator = a.pop("estimator", "timestamp")
    if estimator not in ("timestamp", "dq_rate"):
        raise ValueError(f"{where}.aqm.estimator: unknown {estimator!r}")
    attrs = [
        f"MaxSize={_limit(k, q, 'PieQueueDisc')}",
        f"QueueDelayReference={_ns(a.pop('target_ns', 15_000_000))}",
        f"Tupdate={_ns(a.pop('t_update_ns', 15_000_000))}",
        f"A={float(a.pop('alpha', 0.125))!r}",
        f"B={float(a.pop('beta', 1.25))!r}",
        f"MaxBurstAllowance={_ns(a.pop('max_burst_ns', 150_000_000))}",
        f"UseEcn={_bool(a.pop('ecn', False))}",
        f"MarkEcnThreshold={float(a.pop('mark_ecnth', 0.1))!r}",
        f"UseDerandomization={_bool(a.pop('derandomize', False))}",
        f"UseCapDropAdjustment={_bool(a.pop('cap_drop', True))}",
        f"UseDequeueRateEstimator={_bool(estimator == 'dq_rate')}",
        f"DequeueThreshold={int(a.pop('dq_threshold_bytes', 16384))}",
        # only read in byte mode (refused above); set for the record
        f"MeanPktSize={mean}",
        "UseL4s=false",
    ]
    if a:
        raise ValueError(f"{where}.aqm: {sorted(a)} not available in ns-3's PieQueueDisc")
    return ["ns3::PieQueueDisc", *attrs]


#: plan queue kind -> the ns-3 queue disc mapping (DropTail is the device queue itself).
_AQMS = {"codel": _codel, "pie": _pie}


def _queue(k: int, link: dict, flows: list[dict]) -> str:
    """The spec's queue token: ``<limit>`` (the device's DropTailQueue) or
    ``<limit>|<queue disc TypeId>|Attr=value|...`` (a root queue disc, the device queue 1 packet)."""
    q = link.get("queue") or {}
    kind = q.get("kind", "droptail")
    if kind == "droptail":
        return _limit(k, q, "DropTailQueue")
    if kind not in _AQMS:
        raise ValueError(
            f"links[{k}].queue.kind: {kind!r} is not supported by the ns-3 peer (droptail, {', '.join(_AQMS)})"
        )
    aqm = q.get("aqm") or {}
    if aqm.get("kind", kind) != kind:
        raise ValueError(f"links[{k}].queue.aqm.kind: {aqm['kind']!r} under a {kind!r} queue")
    parts = _AQMS[kind](k, q, aqm, flows)
    for p in parts:
        if any(c.isspace() for c in p) or "|" in p:
            raise ValueError(f"links[{k}].queue: {p!r} cannot be written to the ns-3 spec")
    return "1p|" + "|".join(parts)


# --------------------------------------------------------------------------------------------
# the C++ runner (compiled by cppyy in the child process)

_CPP = r"""
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace fpns3
{
using namespace ns3;

struct Flow
{
    int id = 0, src = 0, dst = 0;
    uint32_t seg = 1;
    uint64_t maxBytes = 0;
    Ptr<BulkSendApplication> app;
    Ptr<PacketSink> sink;
    bool hooked = false;
    double cwnd = 0, ssth = 0, cmin = 0, cmax = 0, srtt = NAN;
    uint64_t txData = 0, retx = 0, rto = 0, frec = 0, rttN = 0;
    double rttSum = 0, rttMin = INFINITY, rttMax = 0, done = -1;
};

// PPP header bytes: a queue disc holds IP packets, the device queue and the wire PPP frames
static const uint32_t kPpp = 2;

struct Link
{
    int k = 0;
    Ptr<Queue<Packet>> q;     // the device queue
    Ptr<QueueDisc> qd;        // the AQM, if any (then the device queue stays empty, see OnWake)
    Ptr<NetDeviceQueue> txq;  // the device's transmission queue (flow control), with qd only
    bool pie = false, busy = false;
    double lastT = 0, pk = 0, by = 0, qdP = 0, qdB = 0, intP = 0, intB = 0;
    uint64_t txP = 0, txB = 0, dropP = 0, dropB = 0, enq = 0, maxP = 0;
    uint64_t dropEarly = 0, dropForced = 0, markEarly = 0, markForced = 0;

    uint64_t Packets() const { return q->GetNPackets() + (qd ? qd->GetNPackets() : 0); }
    uint64_t Bytes() const
    {
        return q->GetNBytes() + (qd ? qd->GetNBytes() + kPpp * qd->GetNPackets() : 0);
    }
};

static std::vector<Flow*> g_flows;
static std::vector<Link*> g_links;
static std::ostringstream g_out;
static double g_dt = 0, g_dur = 0;
static int g_k = 0;

static void OnCwnd(Flow* f, uint32_t, uint32_t v)
{
    f->cwnd = v;
    if (v < f->cmin) f->cmin = v;
    if (v > f->cmax) f->cmax = v;
}
static void OnSsth(Flow* f, uint32_t, uint32_t v) { f->ssth = v; }
static void OnSrtt(Flow* f, Time, Time v) { f->srtt = v.GetSeconds(); }
static void OnLastRtt(Flow* f, Time, Time v)
{
    double s = v.GetSeconds();
    if (s <= 0) return;
    f->rttN++;
    f->rttSum += s;
    if (s < f->rttMin) f->rttMin = s;
    if (s > f->rttMax) f->rttMax = s;
}
static void OnCong(Flow* f, TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t n)
{
    if (n == TcpSocketState::CA_LOSS && o != TcpSocketState::CA_LOSS) f->rto++;
    if (n == TcpSocketState::CA_RECOVERY && o != TcpSocketState::CA_RECOVERY) f->frec++;
}
static void OnTx(Flow* f, Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0) f->txData++;
}
static void OnRetx(Flow* f, Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                   Ptr<const TcpSocketBase>)
{
    f->retx++;
}
static void OnRx(Flow* f, Ptr<const Packet>, const Address&)
{
    if (f->maxBytes > 0 && f->done < 0 && f->sink->GetTotalRx() >= f->maxBytes)
        f->done = Simulator::Now().GetSeconds();
}

static void Hook(Flow* f)
{
    Ptr<Socket> s = f->app->GetSocket();
    if (!s)
    {
        Simulator::Schedule(MicroSeconds(10), &Hook, f);
        return;
    }
    f->hooked = true;
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, f));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsth, f));
    s->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnSrtt, f));
    s->TraceConnectWithoutContext("LastRTT", MakeBoundCallback(&OnLastRtt, f));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCong, f));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetx, f));
}

static void Integrate(Link* l)
{
    double t = Simulator::Now().GetSeconds();
    l->intP += (l->pk + l->qdP) * (t - l->lastT);
    l->intB += (l->by + l->qdB + kPpp * l->qdP) * (t - l->lastT);
    l->lastT = t;
}
static void OnQP(Link* l, uint32_t, uint32_t v)
{
    Integrate(l);
    l->pk = v;
    if (v + l->qdP > l->maxP) l->maxP = v + l->qdP;
}
static void OnQB(Link* l, uint32_t, uint32_t v)
{
    Integrate(l);
    l->by = v;
}
static void OnQdP(Link* l, uint32_t, uint32_t v)
{
    Integrate(l);
    l->qdP = v;
    if (v + l->pk > l->maxP) l->maxP = v + l->pk;
}
static void OnQdB(Link* l, uint32_t, uint32_t v)
{
    Integrate(l);
    l->qdB = v;
}
static void OnQdEnq(Link* l, Ptr<const QueueDiscItem>) { l->enq++; }
static void OnQdDropBefore(Link* l, Ptr<const QueueDiscItem> item, const char* reason)
{
    // PIE's random drop is "Unforced drop"; its limit ("Forced drop") and CoDel's ("Overlimit
    // drop") are tail drops
    if (l->pie && std::strcmp(reason, PieQueueDisc::UNFORCED_DROP) == 0)
        l->dropEarly++;
    else
        l->dropP++;
    l->dropB += item->GetSize() + kPpp;
}
static void OnQdDropAfter(Link* l, Ptr<const QueueDiscItem> item, const char*)
{
    l->dropForced++;  // CoDel's control law drops at the head
    l->dropB += item->GetSize() + kPpp;
}
static void OnQdMark(Link* l, Ptr<const QueueDiscItem>, const char*)
{
    if (l->pie)
        l->markEarly++;
    else
        l->markForced++;
}

// The queue disc is the only queue: the device takes a packet from it only when its transmitter
// is idle. ns-3's flow control wakes the queue disc as soon as the device queue has room, i.e.
// when the packet just handed over starts its transmission, so one more packet would wait in
// the device queue, unseen by the AQM. Instead the transmission queue stays stopped while the
// transmitter is busy and is woken when it finishes.
static void OnTxBegin(Link* l, Ptr<const Packet>) { l->busy = true; }
static void WakeTxq(Link* l) { l->txq->Wake(); }
static void OnTxEnd(Link* l, Ptr<const Packet>)
{
    l->busy = false;
    // after TransmitComplete has returned (it looks at the device queue, which is empty)
    Simulator::ScheduleNow(&WakeTxq, l);
}
static void OnWake(Link* l)
{
    if (l->busy)
    {
        l->txq->Stop();
        return;
    }
    l->qd->Run();
}
static void SetWake(Link* l)
{
    // after TrafficControlLayer::ScanDevices (at node initialisation) set its own callback
    l->txq->SetWakeCallback(MakeBoundCallback(&OnWake, l));
}
static void OnDeq(Link* l, Ptr<const Packet> p)
{
    l->txP++;
    l->txB += p->GetSize();
}
static void OnEnq(Link* l, Ptr<const Packet>) { l->enq++; }
static void OnDrop(Link* l, Ptr<const Packet> p)
{
    l->dropP++;
    l->dropB += p->GetSize();
}

static void WriteSample()
{
    double t = Simulator::Now().GetSeconds();
    for (Flow* f : g_flows)
    {
        g_out << "fs " << t << " " << f->id << " " << f->cwnd / f->seg << " " << f->ssth / f->seg
              << " " << f->srtt << " " << f->sink->GetTotalRx() << " " << f->cmin / f->seg << " "
              << f->cmax / f->seg << "\n";
        f->cmin = f->cmax = f->cwnd;
    }
    for (Link* l : g_links)
        g_out << "qs " << t << " " << l->k << " " << l->Packets() << " " << l->Bytes() << "\n";
}

static void Sample()
{
    WriteSample();
    g_k++;
    double nt = g_k * g_dt;
    if (nt < g_dur - 1e-12) Simulator::Schedule(Seconds(nt) - Simulator::Now(), &Sample);
}

std::string Run(const std::string& spec, double sampleDt)
{
    // fresh state: several plans may run one after another in one process (run_plans)
    for (Flow* f : g_flows) delete f;
    for (Link* l : g_links) delete l;
    g_flows.clear();
    g_links.clear();
    g_out.str("");
    g_out.clear();
    g_out.precision(10);
    Config::Reset();
    Ipv4AddressGenerator::Reset();
    std::istringstream in(spec);
    std::string line;
    NodeContainer nodes;
    std::vector<std::string> names;
    std::vector<std::pair<int, std::string>> socktypes;
    struct LinkSpec
    {
        int k, rk, a, b;
        uint64_t rab, rba, delay;
        std::string qa, qb;
    };
    std::vector<LinkSpec> links;
    struct FlowSpec
    {
        int id, src, dst;
        uint64_t start, stop, maxBytes;
        uint32_t seg;
    };
    std::vector<FlowSpec> flows;
    uint64_t dur = 0, seed = 1, mtu = 1500;
    while (std::getline(in, line))
    {
        std::istringstream ls(line);
        std::string kw;
        ls >> kw;
        if (kw == "run")
            ls >> dur >> seed >> mtu;
        else if (kw == "default")
        {
            std::string k, v;
            ls >> k >> v;
            Config::SetDefault(k, StringValue(v));
        }
        else if (kw == "socktype")
        {
            int n;
            std::string t;
            ls >> n >> t;
            socktypes.emplace_back(n, t);
        }
        else if (kw == "node")
        {
            std::string n;
            ls >> n;
            names.push_back(n);
        }
        else if (kw == "link")
        {
            LinkSpec s;
            ls >> s.k >> s.rk >> s.a >> s.b >> s.rab >> s.rba >> s.delay >> s.qa >> s.qb;
            links.push_back(s);
        }
        else if (kw == "flow")
        {
            FlowSpec s;
            ls >> s.id >> s.src >> s.dst >> s.start >> s.stop >> s.maxBytes >> s.seg;
            flows.push_back(s);
        }
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    nodes.Create(names.size());
    InternetStackHelper stack;
    stack.Install(nodes);
    for (auto& st : socktypes)
        nodes.Get(st.first)->GetObject<TcpL4Protocol>()->SetAttribute(
            "SocketType", TypeIdValue(TypeId::LookupByName(st.second)));

    Ipv4AddressHelper addr;
    std::vector<Ipv4Address> nodeAddr(names.size());
    std::vector<bool> hasAddr(names.size(), false);
    NetDeviceContainer all;
    int subnet = 0;
    // "<device queue size>" or "<device queue size>|<queue disc TypeId>|Attr=value|..."
    auto split = [](const std::string& s) {
        std::vector<std::string> out;
        std::string cur;
        for (char c : s)
        {
            if (c == '|')
            {
                out.push_back(cur);
                cur.clear();
            }
            else
                cur += c;
        }
        out.push_back(cur);
        return out;
    };
    std::vector<Ptr<NetDevice>> aqmDevs;
    for (auto& s : links)
    {
        PointToPointHelper p2p;
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(s.delay)));
        p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
        // no flow control: a full device queue drops the arriving packet itself (with it, the
        // traffic-control layer would drop it in front of a stopped queue, per node)
        p2p.DisableFlowControl();
        NetDeviceContainer d = p2p.Install(nodes.Get(s.a), nodes.Get(s.b));
        DynamicCast<PointToPointNetDevice>(d.Get(0))->SetDataRate(DataRate(s.rab));
        DynamicCast<PointToPointNetDevice>(d.Get(1))->SetDataRate(DataRate(s.rba));
        Ptr<Queue<Packet>> qa = DynamicCast<PointToPointNetDevice>(d.Get(0))->GetQueue();
        Ptr<Queue<Packet>> qb = DynamicCast<PointToPointNetDevice>(d.Get(1))->GetQueue();
        std::vector<std::string> ta = split(s.qa), tb = split(s.qb);
        qa->SetMaxSize(QueueSize(ta[0]));
        qb->SetMaxSize(QueueSize(tb[0]));
        Ptr<QueueDisc> qds[2];
        Ptr<NetDeviceQueue> txqs[2];
        for (int j = 0; j < 2; j++)
        {
            std::vector<std::string>& t = j == 0 ? ta : tb;
            if (t.size() < 2) continue;
            // flow control on this device only (the helper would give it to both directions)
            Ptr<NetDevice> dev = d.Get(j);
            Ptr<NetDeviceQueueInterface> ndqi = CreateObject<NetDeviceQueueInterface>();
            ndqi->GetTxQueue(0)->ConnectQueueTraces(j == 0 ? qa : qb);
            dev->AggregateObject(ndqi);
            ObjectFactory fac;
            fac.SetTypeId(t[1]);
            for (size_t i = 2; i < t.size(); i++)
            {
                size_t eq = t[i].find('=');
                fac.Set(t[i].substr(0, eq), StringValue(t[i].substr(eq + 1)));
            }
            qds[j] = fac.Create<QueueDisc>();
            // PIE's random drops: a stream fixed by the plan's link index, so that a plan gives
            // the same run alone or anywhere in a batch (automatic stream numbers would go on
            // counting from the previous plans in the process)
            if (Ptr<PieQueueDisc> pie = DynamicCast<PieQueueDisc>(qds[j]))
                pie->AssignStreams(j == 0 ? s.k : s.rk);
            dev->GetNode()->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(dev, qds[j]);
            txqs[j] = ndqi->GetTxQueue(0);
            aqmDevs.push_back(dev);
        }
        std::ostringstream base;
        base << "10." << (subnet / 256) << "." << (subnet % 256) << ".0";
        subnet++;
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifc = addr.Assign(d);
        if (!hasAddr[s.a]) { nodeAddr[s.a] = ifc.GetAddress(0); hasAddr[s.a] = true; }
        if (!hasAddr[s.b]) { nodeAddr[s.b] = ifc.GetAddress(1); hasAddr[s.b] = true; }
        all.Add(d);
        for (int j = 0; j < 2; j++)
        {
            Link* l = new Link();
            l->k = j == 0 ? s.k : s.rk;
            l->q = j == 0 ? qa : qb;
            l->q->TraceConnectWithoutContext("PacketsInQueue", MakeBoundCallback(&OnQP, l));
            l->q->TraceConnectWithoutContext("BytesInQueue", MakeBoundCallback(&OnQB, l));
            l->q->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnDeq, l));
            l->q->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDrop, l));
            if (qds[j])
            {
                l->qd = qds[j];
                l->txq = txqs[j];
                l->pie = (j == 0 ? ta : tb)[1] == "ns3::PieQueueDisc";
                l->qd->TraceConnectWithoutContext("PacketsInQueue", MakeBoundCallback(&OnQdP, l));
                l->qd->TraceConnectWithoutContext("BytesInQueue", MakeBoundCallback(&OnQdB, l));
                l->qd->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnQdEnq, l));
                l->qd->TraceConnectWithoutContext("DropBeforeEnqueue",
                                                  MakeBoundCallback(&OnQdDropBefore, l));
                l->qd->TraceConnectWithoutContext("DropAfterDequeue",
                                                  MakeBoundCallback(&OnQdDropAfter, l));
                l->qd->TraceConnectWithoutContext("Mark", MakeBoundCallback(&OnQdMark, l));
                d.Get(j)->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnTxBegin, l));
                d.Get(j)->TraceConnectWithoutContext("PhyTxEnd", MakeBoundCallback(&OnTxEnd, l));
                Simulator::Schedule(Seconds(0), &SetWake, l);
            }
            else
                l->q->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnEnq, l));
            g_links.push_back(l);
        }
    }
    // the device queue is the only queue (no traffic-control layer in front of it), except
    // where the plan has an AQM, whose queue disc is then the only queue (OnWake)
    // (without flow control the address helper installs no queue disc; remove any that is there)
    TrafficControlHelper tch;
    for (uint32_t j = 0; j < all.GetN(); j++)
    {
        Ptr<NetDevice> dev = all.Get(j);
        if (std::find(aqmDevs.begin(), aqmDevs.end(), dev) != aqmDevs.end()) continue;
        Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
        if (tc && tc->GetRootQueueDiscOnDevice(dev)) tch.Uninstall(dev);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5000;
    for (auto& s : flows)
    {
        Flow* f = new Flow();
        f->id = s.id;
        f->src = s.src;
        f->dst = s.dst;
        f->seg = s.seg;
        f->maxBytes = s.maxBytes;
        uint16_t p = port++;
        PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), p));
        ApplicationContainer sa = sh.Install(nodes.Get(s.dst));
        sa.Start(Seconds(0));
        f->sink = DynamicCast<PacketSink>(sa.Get(0));
        BulkSendHelper bh("ns3::TcpSocketFactory", InetSocketAddress(nodeAddr[s.dst], p));
        bh.SetAttribute("MaxBytes", UintegerValue(s.maxBytes));
        bh.SetAttribute("SendSize", UintegerValue(s.seg * 64));
        ApplicationContainer ba = bh.Install(nodes.Get(s.src));
        ba.Start(NanoSeconds(s.start));
        ba.Stop(NanoSeconds(s.stop));
        f->app = DynamicCast<BulkSendApplication>(ba.Get(0));
        f->sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, f));
        Simulator::Schedule(NanoSeconds(s.start), &Hook, f);
        g_flows.push_back(f);
    }

    g_dur = dur / 1e9;
    g_dt = sampleDt;
    g_k = 1;
    if (sampleDt > 0 && sampleDt < g_dur) Simulator::Schedule(Seconds(sampleDt), &Sample);
    Simulator::Stop(NanoSeconds(dur));
    auto w0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto w1 = std::chrono::steady_clock::now();
    if (sampleDt > 0 && g_k * g_dt <= g_dur * (1 + 1e-12)) WriteSample();
    for (Link* l : g_links) Integrate(l);
    for (Flow* f : g_flows)
        g_out << "flow " << f->id << " " << f->sink->GetTotalRx() << " " << f->txData << " "
              << f->retx << " " << f->rto << " " << f->frec << " " << f->rttN << " " << f->rttSum
              << " " << (f->rttN ? f->rttMin : 0.0) << " " << f->rttMax << " " << f->done << " "
              << f->cwnd / f->seg << " " << f->ssth / f->seg << " " << f->hooked << "\n";
    for (Link* l : g_links)
        g_out << "queue " << l->k << " " << l->enq << " " << l->txP << " " << l->txB << " "
              << l->dropP << " " << l->dropB << " " << l->intP << " " << l->intB << " " << l->maxP
              << " " << l->Packets() << " " << l->dropEarly << " " << l->dropForced << " "
              << l->markEarly << " " << l->markForced << "\n";
    g_out << "now " << Simulator::Now().GetSeconds() << "\n";
    g_out << "wall_run_s " << std::chrono::duration<double>(w1 - w0).count() << "\n";
    Simulator::Destroy();
    return g_out.str();
}
} // namespace fpns3
"""


def _child(jobs: list[tuple[str, str, float]]) -> None:
    """Child process body: compile the runner once, then run each (spec, report, dt) in turn."""
    t0 = time.perf_counter()
    from ns import ns  # noqa: F401  (loads the ns-3 libraries and headers into cppyy)
    import cppyy

    t1 = time.perf_counter()
    cppyy.cppdef(_CPP)
    t2 = time.perf_counter()
    for spec_path, out_path, sample_dt in jobs:
        t3 = time.perf_counter()
        with open(spec_path) as fh:
            spec = fh.read()
        report = str(cppyy.gbl.fpns3.Run(spec, float(sample_dt)))
        t4 = time.perf_counter()
        with open(out_path + ".part", "w") as fh:
            fh.write(report)
            fh.write(f"wall_import_s {t1 - t0}\nwall_compile_s {t2 - t1}\nwall_sim_s {t4 - t3}\n")
            # This child's own peak so far (see fatpipe.peak_memory): ns-3, the runner, Python.
            peak = vm_hwm_bytes()
            if peak is not None:
                fh.write(f"peak_rss_bytes {peak}\n")
        os.replace(out_path + ".part", out_path)


def run_plan(
    plan: dict,
    *,
    workdir: str | None = None,
    sample_interval_ns: int | None = None,
    timeout_s: float = 900,
) -> dict:
    """Run ``plan`` in ns-3 and return fatpipe-shaped tables (lists of row dicts).

    Keys as :func:`fatpipe.peers.ns2.run_plan`: ``flows``, ``queues``, ``links``, ``flow_series``,
    ``queue_series`` (empty without ``sample_interval_ns``), ``packets_delivered``, ``wall_s``
    (the whole child process, ~6 s of it importing ns-3 and compiling the runner),
    ``wall_run_s`` (``Simulator::Run`` only), ``peak_rss_bytes`` (the child's own peak resident
    set, a batch's largest so far), ``sim_s``, ``events`` (None), ``workdir``.
    Raises ValueError (before starting anything) when the plan asks for something ns-3 cannot do.
    """
    return run_plans([plan], workdir=workdir, sample_interval_ns=sample_interval_ns, timeout_s=timeout_s, jobs=1)[0]


def run_plans(
    plans: list[dict],
    *,
    workdir: str | None = None,
    sample_interval_ns: int | None = None,
    timeout_s: float = 900,
    jobs: int = 1,
) -> list[dict]:
    """Run several plans, in ``jobs`` child processes that each import ns-3 once (saving ~6 s of
    import and compilation per plan) and run their share one after another. Results in order.
    Each run starts from fresh ns-3 state (``Config::Reset``, a new node list, the address
    generator reset, ``RngSeedManager::SetRun(seed)``), so a plan gives the same numbers alone
    or in a batch (tests/validation/test_ns3_bbr_cubic.py checks it)."""
    specs = [plan_to_spec(p) for p in plans]
    if sample_interval_ns is not None and int(sample_interval_ns) <= 0:
        raise ValueError("sample_interval_ns must be positive")
    if not ns3_available():
        raise RuntimeError("ns-3 Python bindings not installed (pip install ns3==3.44.post0)")
    with work_directory(workdir, "fatpipe-ns3-") as workdir:
        dt = 0.0 if sample_interval_ns is None else int(sample_interval_ns) / 1e9
        paths = []
        for k, (plan, spec) in enumerate(zip(plans, specs)):
            sp, op = os.path.join(workdir, f"plan{k}.spec"), os.path.join(workdir, f"report{k}.txt")
            with open(sp, "w") as fh:
                fh.write(spec)
            with open(os.path.join(workdir, f"plan{k}.json"), "w") as fh:
                json.dump(plan, fh)
            paths.append((sp, op, dt))
        n = max(1, min(int(jobs), len(plans)))
        shares = [paths[j::n] for j in range(n)]
        procs = []
        t0 = time.perf_counter()
        for j, share in enumerate(shares):
            jf = os.path.join(workdir, f"jobs{j}.json")
            with open(jf, "w") as fh:
                json.dump(share, fh)
            err = open(os.path.join(workdir, f"child{j}.stderr"), "w+")
            procs.append((subprocess.Popen([sys.executable, "-m", "fatpipe.peers.ns3", jf], cwd=workdir,
                                           stdout=subprocess.DEVNULL, stderr=err), err))
        deadline = t0 + timeout_s * max(len(s) for s in shares)
        failed = []
        for (p, err), share in zip(procs, shares):
            rc: int | str
            try:
                rc = p.wait(timeout=max(1.0, deadline - time.perf_counter()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rc = "timeout"
            if rc != 0 or not all(os.path.exists(op) for _, op, _ in share):
                err.seek(0)
                failed.append(f"ns-3 child failed ({rc}) on {[sp for sp, _, _ in share]}\n{tail(err.read())}")
            err.close()
        wall = time.perf_counter() - t0
        if failed:
            raise RuntimeError("\n".join(failed))
        out = []
        for plan, (_, op, _) in zip(plans, paths):
            with open(op) as fh:
                out.append(_collect(plan, fh.read(), sample_interval_ns, wall, workdir))
        return out


def _collect(plan: dict, report: str, sample_interval_ns: int | None, wall: float, workdir: str) -> dict:
    dur_s = int(plan["duration_ns"]) / 1e9
    fl: dict[int, list[str]] = {}
    qu: dict[int, list[str]] = {}
    fs_rows: list[list[str]] = []
    qs_rows: list[list[str]] = []
    misc: dict[str, float] = {}
    for line in report.splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "fs":
            fs_rows.append(p)
        elif p[0] == "qs":
            qs_rows.append(p)
        elif p[0] == "flow":
            fl[int(p[1])] = p
        elif p[0] == "queue":
            qu[int(p[1])] = p
        else:
            misc[p[0]] = float(p[1])

    by_id = {int(f["id"]): f for f in plan["flows"]}

    def seg_of(f: dict) -> int:
        return int(f.get("mss", 1460)) + int(f.get("header_bytes", 40)) - NS3_HEADER_BYTES

    def delivered(f: dict, rx: int) -> tuple[int, int]:
        """(segments, plan payload bytes) for ``rx`` ns-3 payload bytes."""
        mss, seg = int(f.get("mss", 1460)), seg_of(f)
        pk = rx // seg
        b = pk * mss + (rx - pk * seg)
        if f.get("size_bytes") is not None:
            b = min(b, int(f["size_bytes"]))
        return pk, b

    flows = []
    total_pk = 0
    for f in plan["flows"]:
        i = int(f["id"])
        c = fl[i]
        rx, tx, retx, rto, frec, rn = (int(x) for x in c[2:8])
        rsum, rmin, rmax, done, cwnd, ssth = (float(x) for x in c[8:14])
        mss = int(f.get("mss", 1460))
        pk, b = delivered(f, rx)
        total_pk += pk
        completion = done if (f.get("size_bytes") is not None and done >= 0) else None
        flows.append(
            flow_row(
                f, dur_s,
                bytes_sent=tx * mss,
                bytes_delivered=b,
                completion=completion,
                data_packets_sent=tx,
                retransmits=retx,
                timeouts=rto,
                fast_recoveries=frec,
                rtt_min_s=rmin if rn else None,
                # LastRTT is a TracedValue: it reports changes only, so a mean over its
                # reports would weight samples wrongly (min and max are right)
                rtt_mean_s=None,
                rtt_max_s=rmax if rn else None,
                completion_s=completion,
                # ns-3 extras
                data_packets_delivered=pk,
                final_cwnd_pkts=cwnd,
                final_ssthresh_pkts=ssth,
            )
        )

    flow_series, queue_series = [], []
    if sample_interval_ns is not None:
        prev: dict[int, tuple[float, int]] = {}
        for p in fs_rows:
            t, i = float(p[1]), int(p[2])
            f = by_id[i]
            _, b = delivered(f, int(p[6]))
            pt, pb = prev.get(i, (0.0, 0))
            prev[i] = (t, b)
            srtt = float(p[5])
            flow_series.append(
                {
                    "t_s": t,
                    "flow_id": i,
                    "cwnd_pkts": float(p[3]),
                    "ssthresh_pkts": float(p[4]),
                    "srtt_s": srtt if srtt > 0 else math.nan,
                    "bytes_delivered": b,
                    "goodput_bps": (b - pb) * 8 / (t - pt) if t > pt else 0.0,
                    "cwnd_min_pkts": float(p[7]),
                    "cwnd_max_pkts": float(p[8]),
                }
            )
        for p in qs_rows:
            k = int(p[2])
            queue_series.append(
                {
                    "t_s": float(p[1]),
                    "link": plan["links"][k].get("name", f"{k}"),
                    "len_pkts": int(p[3]),
                    "len_bytes": int(p[4]),
                }
            )

    queues, links = [], []
    for k, link in enumerate(plan["links"]):
        c = qu[k]
        enq, txp, txb, dp, db = (int(x) for x in c[2:7])
        ip, ib = float(c[7]), float(c[8])
        maxp, final = int(c[9]), int(c[10])
        d_early, d_forced, m_early, m_forced = (int(x) for x in c[11:15])
        name = link.get("name", f"{link['from']}->{link['to']}")
        queues.append(
            {
                "link": name,
                "kind": (link.get("queue") or {}).get("kind", "droptail"),
                "enqueued": enq,
                "dequeued": txp,
                "drops_tail": dp,
                "drops_aqm_early": d_early,
                "drops_aqm_forced": d_forced,
                "drops_random": 0,
                "marks_aqm_early": m_early,
                "marks_aqm_forced": m_forced,
                "dropped_bytes": db,
                "max_len_pkts": maxp,
                "mean_len_pkts": ip / dur_s,
                # ns-3 extras
                "arrivals": enq + dp + d_early,
                "mean_len_bytes": ib / dur_s,
                "final_len_pkts": final,
            }
        )
        links.append(
            {
                "link": name,
                "from": link["from"],
                "to": link["to"],
                "rate_bps": int(link["rate_bps"]),
                "delay_s": int(link["delay_ns"]) / 1e9,
                "tx_bytes": txb,
                "tx_packets": txp,
                "utilisation": txb * 8 / (int(link["rate_bps"]) * dur_s),
            }
        )

    return {
        "flows": flows,
        "queues": queues,
        "links": links,
        "flow_series": flow_series,
        "queue_series": queue_series,
        "packets_delivered": total_pk,
        "wall_s": wall,
        "wall_run_s": misc.get("wall_run_s"),
        "wall_import_s": misc.get("wall_import_s"),
        "wall_compile_s": misc.get("wall_compile_s"),
        "peak_rss_bytes": int(misc["peak_rss_bytes"]) if "peak_rss_bytes" in misc else None,
        "sim_s": misc.get("now", dur_s),
        "events": None,
        "workdir": workdir,
    }


if __name__ == "__main__":  # the child process (see run_plans)
    with open(sys.argv[1]) as _fh:
        _child([tuple(j) for j in json.load(_fh)])
