"""Run a scenario on the testbed: real Linux TCP between network namespaces.

``run_testbed(scenario)`` builds the plan's topology (:mod:`~fatpipe.testbed.layout`,
:mod:`~fatpipe.testbed.build`), starts a watchdog that tears everything down if this process
dies, starts the link emulator (``fatpipe-linkem``) on every link, one ``fatpipe-bulk recv`` per
flow in its destination and one ``fatpipe-bulk send`` in its source at the flow's start time,
and returns a :class:`fatpipe.result.Result` with the simulator's tables, tagged
``engine.backend = "testbed"`` and the kernel version. Whatever happens, the namespaces, their
interfaces and every process in them are gone when it returns or raises.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping

from fatpipe.binaries import binary
from fatpipe.exceptions import FatpipeError
from fatpipe.testbed import bulk, iperf3, qdisc, tables
from fatpipe.testbed.build import build
from fatpipe.testbed.bulk import popen_ns
from fatpipe.testbed.tuning import host_tunings
from fatpipe.testbed.layout import Layout, layout_of
from fatpipe.testbed.system import check_available, prefix_for, sweep_orphans, teardown

__all__ = ["run_testbed", "kernel_algorithms", "binary"]

#: Flows the testbed runs: TCP bulk and finite transfers (the kernel's own TCP).
KINDS = ("bulk", "file")


def kernel_algorithms() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def _check_flows(plan: dict[str, Any]) -> None:
    avail = kernel_algorithms()
    for f in plan["flows"]:
        where = f"flows[{f['id']}]"
        if f.get("kind") not in KINDS or f.get("transport"):
            raise FatpipeError(f"{where}: kind {f.get('kind')!r} over {f.get('transport') or 'tcp'}: the testbed runs "
                               "TCP bulk and file flows only")
        if f["cc"] not in avail:
            raise FatpipeError(f"{where}.cc = {f['cc']!r}: this kernel offers {', '.join(avail)} "
                               "(/proc/sys/net/ipv4/tcp_available_congestion_control; `modprobe tcp_<name>` "
                               "loads a module the kernel ships)")


def _start_watchdog(prefix: str) -> subprocess.Popen[str]:
    w = subprocess.Popen([sys.executable, "-m", "fatpipe.testbed.watchdog", prefix, str(os.getpid())],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert w.stdout is not None
    if w.stdout.readline().strip() != "watching":
        raise FatpipeError("the testbed watchdog did not start")
    return w


def _emulator_config(lay: Layout, seed: int, stats: Path) -> dict[str, Any]:
    def side(d: dict[str, Any]) -> dict[str, Any]:
        return {"rate_bps": d["rate_bps"], "delay_ns": d["delay_ns"], "loss": d.get("loss", 0.0), "queue": d["queue"]}

    return {"seed": seed, "stats_path": str(stats), "links": [
        {"name": s.ab["name"], "a": {"netns": lay.emu_ns, "ifname": f"a{s.index}"},
         "b": {"netns": lay.emu_ns, "ifname": f"b{s.index}"}, "ab": side(s.ab), "ba": side(s.ba)}
        for s in lay.links if s.emulated]}


def run_testbed(scenario: Any, seed: int | None = None, *, emulate: bool = True,
                tuning: Mapping[str, Any] | None = None, interval_s: float | None = None) -> "Any":
    """Run ``scenario`` (a :class:`fatpipe.Scenario`) on the testbed; see the module docstring.
    ``tuning`` overrides the scenario's ``[testbed.tuning]`` on every host."""
    from fatpipe import __version__
    from fatpipe.result import Result

    check_available()
    sweep_orphans()
    plan = scenario.plan(seed)
    _check_flows(plan)
    tb = plan.get("testbed") or {}
    driver = tb.get("driver", "fatpipe-bulk")
    emulator = qdisc.choose(plan, tb.get("emulator", "auto")) if emulate else "none"
    prefix = prefix_for()
    lay = layout_of(plan, prefix, emulate=emulator == "linkem")
    hosts = host_tunings(plan, tuning)
    interval = interval_s or plan["monitor"]["interval_ns"] * 1e-9
    duration = plan["duration_ns"] * 1e-9
    watchdog = _start_watchdog(prefix)
    procs: list[subprocess.Popen[str]] = []
    tmp = Path(tempfile.mkdtemp(prefix="fatpipe-testbed-"))
    try:
        build(lay, host_tuning=hosts, offloads_off=emulator != "none")
        emu_stats = None
        if emulator == "qdisc":
            qdisc.apply(lay)
        elif emulator == "linkem" and any(s.emulated for s in lay.links):
            cfg = tmp / "linkem.json"
            emu_stats = tmp / "linkem-stats.json"
            cfg.write_text(json.dumps(_emulator_config(lay, int(plan["seed"]), emu_stats)))
            emu = popen_ns(lay.emu_ns, [binary("fatpipe-linkem"), str(cfg)], stdout=subprocess.PIPE)
            procs.append(emu)
            assert emu.stdout is not None
            if emu.stdout.readline().strip() != "ready":
                raise FatpipeError("fatpipe-linkem did not start (see its message above)")
        # The run's clock starts once every receiver listens (a slack per flow).
        t0 = time.clock_gettime(time.CLOCK_MONOTONIC) + 0.5 + 0.05 * len(plan["flows"])
        if driver == "iperf3":
            reports = iperf3.run_flows(plan, lay, t0, duration, interval, procs)
        else:
            reports = bulk.run_flows(plan, lay, t0, duration, interval, procs, binary("fatpipe-bulk"))
        stats = None
        if emu_stats is not None:
            procs[0].send_signal(signal.SIGTERM)
            procs[0].wait(timeout=10)
            stats = json.loads(emu_stats.read_text()) if emu_stats.is_file() else None
        flows = {int(f["id"]): f for f in plan["flows"]}
        rows = [tables.flow_row(flows[fid], s, rcv, t0, duration) for fid, (s, rcv) in sorted(reports.items())]
        series = [row for fid, (s, _) in sorted(reports.items()) for row in tables.flow_series_table(fid, s["samples"], t0)]
        engine = {"backend": "testbed", "kernel": platform.release(), "emulated": emulator != "none",
                  "emulator_kind": emulator, "driver": driver, "events": 0,
                  "packets_delivered": sum(r["packets_delivered"] for r in rows),
                  "tuning": hosts, "wall_s": time.clock_gettime(time.CLOCK_MONOTONIC) - t0,
                  "emulator": stats, "sim_s": duration}
        return Result(flows=tables.flows_table(rows), flow_series=tables.series_table(series),
                      queues=tables.empty("queues"), queue_series=tables.empty("queue_series"),
                      links=tables.empty("links"), engine=engine, plan=plan, seed=int(plan["seed"]),
                      version=__version__)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        teardown(prefix)
        watchdog.terminate()
        try:
            watchdog.wait(timeout=10)
        except subprocess.TimeoutExpired:
            watchdog.kill()
        shutil.rmtree(tmp, ignore_errors=True)
