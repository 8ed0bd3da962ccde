"""Create a :class:`~fatpipe.testbed.layout.Layout` on this machine, and host tuning.

Namespaces, veth pairs, addresses, routes and per-namespace sysctls, in a handful of
``ip -batch`` calls. Routers forward (``net.ipv4.ip_forward = 1``); the emulator's namespace has
no addresses, so the kernel there neither answers nor forwards: only the emulator moves frames.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any, Mapping

from fatpipe.testbed.layout import Layout
from fatpipe.testbed.system import in_ns, ip_batch

__all__ = ["build", "TUNING_SYSCTLS", "tuning_sysctls"]

#: Host tuning of the 2006 dissertation (seed 004 §3, Table A.1) as scenario options
#: (``[testbed]``, ``[testbed.hosts.NODE]``) -> sysctl keys. Each is per network
#: namespace in Linux (net.ipv4.tcp_* live in struct netns_ipv4). ``net.core.rmem_max`` /
#: ``wmem_max`` and ``netdev_max_backlog``, which the dissertation also set, are the host's
#: (read-only in a namespace) and are not changed by the testbed; fatpipe-bulk asks for socket
#: buffers with SO_SNDBUFFORCE / SO_RCVBUFFORCE, which they do not cap.
TUNING_SYSCTLS = {
    "window_scaling": "net.ipv4.tcp_window_scaling",
    "timestamps": "net.ipv4.tcp_timestamps",
    "sack": "net.ipv4.tcp_sack",
    "dsack": "net.ipv4.tcp_dsack",
    "no_metrics_save": "net.ipv4.tcp_no_metrics_save",
    "no_ssthresh_metrics_save": "net.ipv4.tcp_no_ssthresh_metrics_save",
    "moderate_rcvbuf": "net.ipv4.tcp_moderate_rcvbuf",
    "rmem": "net.ipv4.tcp_rmem",
    "wmem": "net.ipv4.tcp_wmem",
}


def tuning_sysctls(tuning: Mapping[str, Any]) -> dict[str, str]:
    """``{"sack": False, "rmem": [4096, 87380, 33554432]}`` -> sysctl assignments; unknown keys are
    an error naming the key."""
    out = {}
    for k, v in tuning.items():
        if k == "txqueuelen":  # an interface setting, applied with the links
            continue
        if k not in TUNING_SYSCTLS:
            raise ValueError(f"testbed.{k}: unknown; allowed: {', '.join([*TUNING_SYSCTLS, 'txqueuelen'])}")
        if v is None:
            continue
        if isinstance(v, bool):
            out[TUNING_SYSCTLS[k]] = "1" if v else "0"
        elif isinstance(v, (list, tuple)) and len(v) == 3 and all(isinstance(x, int) and x > 0 for x in v):
            out[TUNING_SYSCTLS[k]] = " ".join(str(x) for x in v)
        else:
            raise ValueError(f"testbed.{k}: give true/false (or three positive byte counts for rmem/wmem)")
    return out


def build(lay: Layout, tuning: Mapping[str, Any] | None = None,
          host_tuning: Mapping[str, Mapping[str, Any]] | None = None, offloads_off: bool = True) -> list[str]:
    """Create the layout; ``tuning`` applies to every host, ``host_tuning[node]`` replaces it for
    one node (already merged with ``tuning``, as the plan's ``testbed.hosts`` is). With
    ``offloads_off``, links carry wire-sized frames (see :func:`_offloads_off`). Returns the
    interfaces (``node:device``) whose segmentation offloads were switched off."""
    tuning = dict(tuning or {})
    host_tuning = dict(host_tuning or {})
    sysctls = tuning_sysctls(tuning)
    per_host = {node: tuning_sysctls(t) for node, t in host_tuning.items()}
    glob = [f"netns add {ns}" for ns in lay.namespaces()]
    per_ns: dict[str, list[str]] = {ns: ["link set lo up"] for ns in lay.namespaces()}
    mtu = f"mtu {lay.mtu}"  # both ends of every pair: the plan's largest packet (layout.link_mtu)
    for s in lay.links:
        na, nb = lay.ns(s.a), lay.ns(s.b)
        if s.emulated:
            emu = lay.emu_ns
            glob.append(f"link add {s.a_if} {mtu} netns {na} type veth peer name a{s.index} {mtu} netns {emu}")
            glob.append(f"link add {s.b_if} {mtu} netns {nb} type veth peer name b{s.index} {mtu} netns {emu}")
            per_ns[emu] += [f"link set a{s.index} up", f"link set b{s.index} up"]
        else:
            glob.append(f"link add {s.a_if} {mtu} netns {na} type veth peer name {s.b_if} {mtu} netns {nb}")
        per_ns[na] += [f"addr add {s.a_ip}/30 dev {s.a_if}", f"link set {s.a_if} up"]
        per_ns[nb] += [f"addr add {s.b_ip}/30 dev {s.b_if}", f"link set {s.b_if} up"]
        for node, ns, dev in ((s.a, na, s.a_if), (s.b, nb, s.b_if)):
            q = host_tuning.get(node, tuning).get("txqueuelen")
            if q is not None and lay.nodes[node] == "host":
                per_ns[ns].append(f"link set {dev} txqueuelen {int(q)}")
    for node, routes in lay.routes.items():
        for dst, via in routes:
            if dst != via:
                per_ns[lay.ns(node)].append(f"route add {dst}/32 via {via}")
    ip_batch(glob)
    for ns, lines in per_ns.items():
        ip_batch(lines, ns)
    for node, kind in lay.nodes.items():
        kv = dict(per_host.get(node, sysctls)) if kind == "host" else {}
        if kind == "router":
            kv["net.ipv4.ip_forward"] = "1"
        if kv:
            in_ns(lay.ns(node), "sysctl", "-q", *[a for k, v in kv.items() for a in ("-w", f"{k}={v}")])
    return _offloads_off(lay) if offloads_off else []


def _offloads_off(lay: Layout) -> list[str]:
    """Segmentation offloads hand an emulator 64 kB super-frames that no wire carries: switch
    them off on every link's interfaces (ethtool; without it fatpipe-linkem sees what the kernel
    gives it and counts oversize frames as such, and the qdiscs serialise super-frames)."""
    done: list[str] = []
    if shutil.which("ethtool") is None:
        return done
    for s in lay.links:
        devs = [(lay.ns(s.a), s.a_if, s.a), (lay.ns(s.b), s.b_if, s.b)]
        if s.emulated:
            devs += [(lay.emu_ns, f"a{s.index}", "emu"), (lay.emu_ns, f"b{s.index}", "emu")]
        for ns, dev, node in devs:
            r = subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"],
                               capture_output=True)
            if r.returncode == 0:
                done.append(f"{node}:{dev}")
    return done
