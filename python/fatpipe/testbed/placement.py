"""Where the link emulator and the hosts' receive processing run (CPU placement).

``fatpipe-linkem`` sends every frame into a veth, and by default the receiving host's whole
network stack (IP, TCP, socket wake-up) then runs inside the emulator's ``sendmmsg``, on its
core: at 1 Gb/s of 1514-byte frames that is most of a core, and a SCHED_FIFO emulator that keeps
its core busy meets the kernel's real-time throttle and is suspended for tens of milliseconds
(docs/link-emulator.md, "Accuracy and ceiling"). So, on a machine with at least two CPUs, the
emulator is pinned to the last CPU this process may use, and receive packet steering (RPS) on the
hosts' interfaces that face it hands their receive processing to the other CPUs. Measured on the
2-core machine, saturated 1 Gb/s, 50 ms: departure error p99 20-28 µs instead of 7-9 ms.
"""
from __future__ import annotations

import os
from typing import Any

from fatpipe.testbed.layout import Layout
from fatpipe.testbed.system import in_ns

__all__ = ["emulator_cpu", "rps_mask", "steer_receives"]


def emulator_cpu(cpus: set[int] | None = None) -> int | None:
    """The CPU for the emulator: the last of ``cpus`` (default: this process's affinity), or
    None with fewer than two (nothing to steer to)."""
    cpus = set(os.sched_getaffinity(0)) if cpus is None else set(cpus)
    return max(cpus) if len(cpus) >= 2 else None


def rps_mask(cpus: set[int]) -> str:
    """``cpus`` as the kernel's ``rps_cpus`` bitmap: hexadecimal, in comma-separated 32-bit
    groups, most significant first (``/sys/class/net/IF/queues/rx-N/rps_cpus``)."""
    if not cpus:
        return "0"
    bits = sum(1 << c for c in cpus)
    groups = []
    while bits:
        groups.append(f"{bits & 0xFFFFFFFF:08x}")
        bits >>= 32
    return ",".join(reversed(groups)).lstrip("0") or "0"


def steer_receives(lay: Layout, emu_cpu: int, cpus: set[int] | None = None) -> dict[str, Any]:
    """Set RPS on every host-side interface of an emulated link to the CPUs other than
    ``emu_cpu``. Best effort: RPS only moves work between CPUs, so an interface whose setting
    the kernel refuses (no RPS support, read-only sysfs) is listed under ``not_steered`` and the
    run goes on. Returns what was done, for the run's record."""
    cpus = set(os.sched_getaffinity(0)) if cpus is None else set(cpus)
    mask = rps_mask(cpus - {emu_cpu})
    devices, refused = [], []
    for s in lay.links:
        if not s.emulated:
            continue
        for node, dev in ((s.a, s.a_if), (s.b, s.b_if)):
            # Every receive queue of the veth (one by default).
            r = in_ns(lay.ns(node), "sh", "-c",
                      f"for q in /sys/class/net/{dev}/queues/rx-*; do echo {mask} > $q/rps_cpus || exit 1; done",
                      check=False)
            (devices if r.returncode == 0 else refused).append(f"{node}:{dev}")
    return {"emulator_cpu": emu_cpu, "rps_cpus": mask, "devices": devices, "not_steered": refused}
