"""A plan's topology as network namespaces, veth pairs, addresses and routes (pure: no system calls).

Every plan node becomes a namespace ``<prefix><node>``. Every full-duplex link (the plan lists it
as two directed links, ``a->b`` and ``b->a``) becomes either

- a **direct veth pair** ``a:e<k> <-> b:e<k>`` (the kernel moves frames at memory speed, with no
  delay: only for links the emulator is told to leave alone), or
- an **emulated link**: ``a:e<k> <-> emu:a<k>`` and ``emu:b<k> <-> b:e<k>``, where the link emulator
  (``fatpipe-linkem``, one process in the namespace ``<prefix>emu``) forwards frames between
  ``a<k>`` and ``b<k>`` with the plan's rate, delay and queue for each direction.

Link k is the subnet 10.(k >> 6).((k & 63) << 2).0/30: ``a`` is .1, ``b`` is .2 (16 384 links).
Every veth carries the plan's largest segment: its MTU is the largest ``mss`` plus the 40 bytes
of IPv4 and TCP headers (the kernel's MSS excludes both, RFC 879), and never below Ethernet's 1500
bytes. So a scenario with the default 1460-byte MSS gets the standard 1500, and jumbo segments such
as ``tcp.mss = "8960B"`` get a 9000-byte MTU, which the emulator reads from its interfaces. (The
scenario's ``header`` is the simulator's wire accounting and may include link-layer bytes, so it
does not set the MTU.)

Routes are static /32 routes to every host along the simulator's own rule: shortest path in
hops, ties to the link added first (the plan's link order), so the testbed carries each flow
over the path the simulator does.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Layout", "LinkSpec", "layout_of", "link_mtu", "MAX_LINKS", "ETHERNET_MTU"]

MAX_LINKS = 1 << 14
#: The standard Ethernet payload (IEEE 802.3): the least MTU a testbed link gets.
ETHERNET_MTU = 1500
#: The largest MTU a veth accepts (ETH_MAX_MTU in the kernel's if_ether.h).
VETH_MAX_MTU = 65535
#: IPv4 and TCP headers without options (RFC 791, RFC 793): an MTU carries ``mss`` plus these.
IP_TCP_HEADERS = 40


@dataclass(frozen=True)
class LinkSpec:
    index: int
    a: str
    b: str
    a_ip: str
    b_ip: str
    #: The plan's directed links (a->b, b->a): rate_bps, delay_ns, queue.
    ab: dict[str, Any]
    ba: dict[str, Any]
    emulated: bool

    @property
    def a_if(self) -> str:
        return f"e{self.index}"

    @property
    def b_if(self) -> str:
        return f"e{self.index}"


@dataclass
class Layout:
    prefix: str
    nodes: dict[str, str]  # node -> kind ("host", "router")
    links: list[LinkSpec]
    #: node -> [(destination ip, next-hop ip)]
    routes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: host -> its address (on its first link)
    host_ip: dict[str, str] = field(default_factory=dict)
    #: every interface's MTU (IP packet bytes), see :func:`link_mtu`
    mtu: int = ETHERNET_MTU

    def ns(self, node: str) -> str:
        return f"{self.prefix}{node}"

    @property
    def emu_ns(self) -> str:
        return f"{self.prefix}emu"

    def namespaces(self) -> list[str]:
        out = [self.ns(n) for n in self.nodes]
        if any(l.emulated for l in self.links):
            out.append(self.emu_ns)
        return out


def _subnet(k: int) -> tuple[str, str]:
    hi, lo = k >> 6, (k & 63) << 2
    return f"10.{hi}.{lo}.1", f"10.{hi}.{lo}.2"


def link_mtu(plan: dict[str, Any]) -> int:
    """The MTU that carries every flow's full segment (``mss`` + :data:`IP_TCP_HEADERS`), at
    least :data:`ETHERNET_MTU`, at most what a veth accepts."""
    sizes = [int(f["mss"]) + IP_TCP_HEADERS for f in plan.get("flows", []) if f.get("mss")]
    return min(max([ETHERNET_MTU, *sizes]), VETH_MAX_MTU)


def layout_of(plan: dict[str, Any], prefix: str, emulate: bool = True) -> Layout:
    """The layout of ``plan`` with namespace names starting with ``prefix``."""
    nodes = {n["name"]: n.get("kind", "host") for n in plan["nodes"]}
    directed = {(l["from"], l["to"]): l for l in plan["links"]}
    links: list[LinkSpec] = []
    seen: set[frozenset[str]] = set()
    for l in plan["links"]:
        a, b = l["from"], l["to"]
        key = frozenset((a, b))
        if key in seen:
            continue
        seen.add(key)
        back = directed.get((b, a))
        if back is None:
            raise ValueError(f"link {l['name']}: the testbed needs full-duplex links, {b}->{a} is missing")
        k = len(links)
        if k >= MAX_LINKS:
            raise ValueError(f"the testbed addresses at most {MAX_LINKS} links")
        a_ip, b_ip = _subnet(k)
        links.append(LinkSpec(k, a, b, a_ip, b_ip, l, back, emulate))
    lay = Layout(prefix, nodes, links, mtu=link_mtu(plan))
    # Neighbours in link order (the simulator's tie-break: the link added first wins).
    adj: dict[str, list[tuple[str, str]]] = {n: [] for n in nodes}
    for s in links:
        adj[s.a].append((s.b, s.b_ip))
        adj[s.b].append((s.a, s.a_ip))
    for s in links:
        for node, ip in ((s.a, s.a_ip), (s.b, s.b_ip)):
            if nodes[node] == "host" and node not in lay.host_ip:
                lay.host_ip[node] = ip
    for src in nodes:
        lay.routes[src] = _routes_from(src, adj, lay.host_ip)
    return lay


def _routes_from(src: str, adj: dict[str, list[tuple[str, str]]], host_ip: dict[str, str]) -> list[tuple[str, str]]:
    """BFS from ``src``: for every host, the next hop's address on the first shortest path."""
    first_hop: dict[str, str] = {}
    seen = {src}
    q: deque[str] = deque()
    for nb, ip in adj[src]:
        if nb not in seen:
            seen.add(nb)
            first_hop[nb] = ip
            q.append(nb)
    while q:
        n = q.popleft()
        for nb, _ in adj[n]:
            if nb not in seen:
                seen.add(nb)
                first_hop[nb] = first_hop[n]
                q.append(nb)
    return [(host_ip[h], first_hop[h]) for h in sorted(host_ip) if h != src and h in first_hop]
