"""Start the userspace link emulator (``fatpipe-linkem``) on a layout's emulated links.

One process in the layout's emulator namespace serves every emulated link with the plan's own
link and queue values (docs/link-emulator.md). On a machine with two CPUs or more it is pinned
to one CPU and the hosts' receive processing is steered to the others (``placement``)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from fatpipe.binaries import binary
from fatpipe.exceptions import FatpipeError
from fatpipe.testbed.bulk import popen_ns
from fatpipe.testbed.layout import Layout
from fatpipe.testbed.placement import emulator_cpu, steer_receives

__all__ = ["emulator_config", "start_linkem"]

def emulator_config(lay: Layout, seed: int, stats: Path, cpu: int | None = None) -> dict[str, Any]:
    """The emulator's configuration file for the layout's emulated links."""
    def side(d: dict[str, Any]) -> dict[str, Any]:
        return {"rate_bps": d["rate_bps"], "delay_ns": d["delay_ns"], "loss": d.get("loss", 0.0), "queue": d["queue"]}

    return {"seed": seed, "stats_path": str(stats), "links": [
        {"name": s.ab["name"], "a": {"netns": lay.emu_ns, "ifname": f"a{s.index}"},
         "b": {"netns": lay.emu_ns, "ifname": f"b{s.index}"}, "ab": side(s.ab), "ba": side(s.ba)}
        for s in lay.links if s.emulated],
        "tuning": {"cpu": cpu} if cpu is not None else {}}


def start_linkem(lay: Layout, seed: int, tmp: Path) -> tuple[subprocess.Popen[str], Path, dict[str, Any] | None]:
    """Start the emulator and wait until it is ready. Returns the process, where it writes its
    statistics when stopped (SIGTERM), and the CPU placement (None on a one-CPU machine)."""
    cpu = emulator_cpu()
    placement = steer_receives(lay, cpu) if cpu is not None else None
    cfg, stats = tmp / "linkem.json", tmp / "linkem-stats.json"
    cfg.write_text(json.dumps(emulator_config(lay, seed, stats, cpu)))
    emu = popen_ns(lay.emu_ns, [binary("fatpipe-linkem"), str(cfg)], stdout=subprocess.PIPE)
    assert emu.stdout is not None
    if emu.stdout.readline().strip() != "ready":
        emu.kill()
        emu.wait()
        raise FatpipeError("fatpipe-linkem did not start (see its message above)")
    return emu, stats, placement
