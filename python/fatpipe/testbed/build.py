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

__all__ = ["build", "TUNING_SYSCTLS", "SOCKET_KEYS", "tuning_sysctls"]

#: Host tuning of the 2006 dissertation (seed 004 §3) as scenario options -> sysctl keys. Each
#: is per network namespace in Linux (net.ipv4.tcp_* live in struct netns_ipv4).
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


#: Tuning keys that are not sysctls: the hosts' interface queue, and the socket buffers and the
#: way a timed flow ends (``[testbed]`` sndbuf, rcvbuf, close), given to fatpipe-bulk.
SOCKET_KEYS = ("txqueuelen", "sndbuf", "rcvbuf", "close")


def tuning_sysctls(tuning: Mapping[str, Any]) -> dict[str, str]:
    """``{"sack": False, "rmem": [4096, 87380, 33554432]}`` -> sysctl assignments; unknown keys are
    an error naming the key."""
    out = {}
    for k, v in tuning.items():
        if k in SOCKET_KEYS:
            continue
        if k not in TUNING_SYSCTLS:
            raise ValueError(f"testbed.tuning.{k}: unknown; allowed: {', '.join([*TUNING_SYSCTLS, *SOCKET_KEYS])}")
        if isinstance(v, bool):
            out[TUNING_SYSCTLS[k]] = "1" if v else "0"
        elif isinstance(v, (list, tuple)) and len(v) == 3 and all(isinstance(x, int) and x > 0 for x in v):
            out[TUNING_SYSCTLS[k]] = " ".join(str(x) for x in v)
        else:
            raise ValueError(f"testbed.tuning.{k}: give true/false (or three positive byte counts for rmem/wmem)")
    return out


def build(lay: Layout, tuning: Mapping[str, Any] | None = None) -> list[str]:
    """Create the layout; returns the interfaces whose segmentation offloads were switched off."""
    tuning = dict(tuning or {})
    sysctls = tuning_sysctls(tuning)
    glob = [f"netns add {ns}" for ns in lay.namespaces()]
    per_ns: dict[str, list[str]] = {ns: ["link set lo up"] for ns in lay.namespaces()}
    for s in lay.links:
        na, nb = lay.ns(s.a), lay.ns(s.b)
        if s.emulated:
            emu = lay.emu_ns
            glob.append(f"link add {s.a_if} netns {na} type veth peer name a{s.index} netns {emu}")
            glob.append(f"link add {s.b_if} netns {nb} type veth peer name b{s.index} netns {emu}")
            per_ns[emu] += [f"link set a{s.index} up", f"link set b{s.index} up"]
        else:
            glob.append(f"link add {s.a_if} netns {na} type veth peer name {s.b_if} netns {nb}")
        per_ns[na] += [f"addr add {s.a_ip}/30 dev {s.a_if}", f"link set {s.a_if} up"]
        per_ns[nb] += [f"addr add {s.b_ip}/30 dev {s.b_if}", f"link set {s.b_if} up"]
        if "txqueuelen" in tuning:
            q = int(tuning["txqueuelen"])
            per_ns[na].append(f"link set {s.a_if} txqueuelen {q}")
            per_ns[nb].append(f"link set {s.b_if} txqueuelen {q}")
    for node, routes in lay.routes.items():
        for dst, via in routes:
            if dst != via:
                per_ns[lay.ns(node)].append(f"route add {dst}/32 via {via}")
    ip_batch(glob)
    for ns, lines in per_ns.items():
        ip_batch(lines, ns)
    for node, kind in lay.nodes.items():
        kv = dict(sysctls) if kind == "host" else {}
        if kind == "router":
            kv["net.ipv4.ip_forward"] = "1"
        if kv:
            in_ns(lay.ns(node), "sysctl", "-q", *[a for k, v in kv.items() for a in ("-w", f"{k}={v}")])
    return _offloads_off(lay)


def _offloads_off(lay: Layout) -> list[str]:
    """Segmentation offloads hand the emulator 64 kB super-frames that no wire carries: switch
    them off on every emulated link's interfaces (ethtool; without it the emulator sees what the
    kernel gives it and counts oversize frames as such)."""
    done: list[str] = []
    if not any(s.emulated for s in lay.links) or shutil.which("ethtool") is None:
        return done
    for s in lay.links:
        if not s.emulated:
            continue
        for ns, dev, node in ((lay.ns(s.a), s.a_if, s.a), (lay.ns(s.b), s.b_if, s.b), (lay.emu_ns, f"a{s.index}", "emu"),
                              (lay.emu_ns, f"b{s.index}", "emu")):
            r = subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"],
                               capture_output=True)
            if r.returncode == 0:
                done.append(f"{node}:{dev}")
    return done
