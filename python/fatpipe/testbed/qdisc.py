"""Link emulation with the kernel's own queueing disciplines, where the kernel has them.

Each direction of a link a->b is emulated on the egress of a's interface by the chain netem's
documentation gives for a delayed, rate-limited link (netem(8), "rate control"; the netem wiki's
netem + tbf example):

    root  netem  delay D loss P  limit <packets in flight>     propagation delay, random loss
      └─ tbf   rate R burst <one frame> limit <bytes>          serialisation at the link rate
           └─ pfifo limit L                                      the plan's DropTail queue

netem's loss happens as a packet enters (before the queue, as fatpipe-linkem and the
simulator's ``loss``), its delay holds the packet for D, and tbf then serialises frames at R
out of a pfifo of the plan's L packets, so a packet waits D + queueing + serialisation as on the
simulator's link (the delay comes first here and last in the simulator; for a constant delay
the queue sees the same arrivals shifted by D). netem alone (``rate`` and ``limit``) would not
do: its limit counts the packets held for the delay too, so a 20 ms link at 1 Gb/s would need
a limit of the BDP plus the queue, and the queue's own limit would be lost.

Only DropTail queues in packets are expressed this way (an AQM's parameters do not map one to
one onto Linux's sch_red / sch_codel / sch_pie, and byte limits would need bfifo with other
semantics): ``emulator = "auto"`` falls back to fatpipe-linkem for any other link, and
``emulator = "qdisc"`` refuses it naming the link. Many cloud kernels (this project's
development machine among them) ship neither sch_netem nor the AQMs, which is why
fatpipe-linkem exists; ``available()`` probes the running kernel.
"""

from __future__ import annotations

import functools
import os
import subprocess
from typing import Any

from fatpipe.exceptions import FatpipeError
from fatpipe.testbed.layout import Layout

__all__ = ["available", "unsupported", "link_commands", "choose", "NEEDED"]

#: The qdiscs this emulation uses.
NEEDED = ("netem", "tbf", "pfifo")

#: tbf's bucket: one full frame (1514 B) and a little slack, so it never sends a burst the
#: link would not (tbf needs burst >= the largest packet).
TBF_BURST_BYTES = 1600


@functools.lru_cache(maxsize=1)
def available() -> frozenset[str]:
    """The qdiscs of :data:`NEEDED` this kernel accepts, probed on a veth in a scratch namespace."""
    ns = f"fpq{os.getpid()}-probe"
    found = set()
    try:
        subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
        subprocess.run(["ip", "-n", ns, "link", "add", "q0", "type", "veth", "peer", "name", "q1"],
                       check=True, capture_output=True)
        probes = {"netem": ["netem", "delay", "1ms"], "tbf": ["tbf", "rate", "1mbit", "burst", "1600", "limit", "3000"],
                  "pfifo": ["pfifo", "limit", "10"]}
        for name, args in probes.items():
            r = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", "q0", "root", *args],
                               capture_output=True)
            if r.returncode == 0:
                found.add(name)
    except (OSError, subprocess.CalledProcessError):
        pass
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return frozenset(found)


def unsupported(direction: dict[str, Any]) -> str | None:
    """Why a plan link direction cannot be a qdisc chain, or None."""
    q = direction["queue"]
    if q["kind"] != "droptail":
        return f"its queue is {q['kind']} (the qdisc emulator maps DropTail only)"
    if q.get("limit_packets") is None:
        return "its queue limit is in bytes (the qdisc emulator maps packet limits only)"
    return None


def _chain(dev: str, d: dict[str, Any]) -> list[list[str]]:
    rate, delay_us = int(d["rate_bps"]), d["delay_ns"] / 1000.0
    limit = int(d["queue"]["limit_packets"])
    loss = float(d.get("loss") or 0.0)
    # Packets held for the delay: the link's rate x delay in the smallest frames (64 B), plus the
    # queue, so netem never drops what the link would carry.
    in_flight = int(rate * d["delay_ns"] * 1e-9 / (64 * 8)) + limit + 1000
    netem = ["tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "netem", "delay", f"{delay_us:.3f}us",
             "limit", str(in_flight)]
    if loss > 0:
        netem += ["loss", f"{loss * 100:.10g}%"]
    tbf = ["tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "tbf", "rate", f"{rate}bit",
           "burst", str(TBF_BURST_BYTES), "limit", str(limit * 1514 + TBF_BURST_BYTES)]
    fifo = ["tc", "qdisc", "add", "dev", dev, "parent", "10:1", "handle", "100:", "pfifo", "limit", str(limit)]
    return [netem, tbf, fifo]


def link_commands(lay: Layout) -> list[tuple[str, list[str]]]:
    """(namespace, tc argv) for every link of ``lay``, both directions."""
    out = []
    for s in lay.links:
        for node, dev, d in ((s.a, s.a_if, s.ab), (s.b, s.b_if, s.ba)):
            out += [(lay.ns(node), argv) for argv in _chain(dev, d)]
    return out


def choose(plan: dict[str, Any], requested: str) -> str:
    """``"qdisc"`` or ``"linkem"`` for this plan, as ``[testbed] emulator`` asks."""
    if requested == "linkem":
        return "linkem"
    why = next(((l["name"], w) for l in plan["links"] if (w := unsupported(l))), None)
    missing = [q for q in NEEDED if q not in available()]
    if requested == "qdisc":
        if why:
            raise FatpipeError(f"testbed.emulator = \"qdisc\": link {why[0]} cannot be emulated by qdiscs: {why[1]}; "
                               "use emulator = \"linkem\" or \"auto\"")
        if missing:
            raise FatpipeError(f"testbed.emulator = \"qdisc\": this kernel has no {', '.join(missing)} qdisc; "
                               "use emulator = \"linkem\" or \"auto\"")
        return "qdisc"
    return "linkem" if why or missing else "qdisc"


def apply(lay: Layout) -> None:
    for ns, argv in link_commands(lay):
        r = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True)
        if r.returncode != 0:
            raise FatpipeError(f"tc in {ns} failed: {' '.join(argv)}: {r.stderr.strip()}")
