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
from fatpipe.testbed.tuning import RUN_KEYS, TUNING_KEYS, base_tuning, host_tunings, run_options
from fatpipe.testbed.layout import Layout, layout_of
from fatpipe.testbed.linkem import start_linkem
from fatpipe.testbed.system import check_available, prefix_for, sweep_orphans, teardown

__all__ = ["run_testbed", "kernel_algorithms", "load_module", "binary"]

#: Flows the testbed runs: TCP bulk and finite transfers (the kernel's own TCP).
KINDS = ("bulk", "file")
#: Flows the http driver runs (fatpipe.testbed.http, imported on use: it needs fatpipe.testbed.depot,
#: which imports this module).
HTTP_KINDS = ("file", "relay")


def kernel_algorithms() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def load_module(cc: str) -> str:
    """Try to load the kernel's congestion-control module ``tcp_<cc>`` (as the 2006 dissertation's
    script did with ``modprobe``); returns what happened, for the error message and the record.
    Never raises: a kernel without modules (or without ``modprobe``) simply keeps what it offers."""
    if cc in kernel_algorithms():
        return "built in or loaded"
    exe = shutil.which("modprobe")
    if exe is None:
        return "modprobe is not installed"
    r = subprocess.run([exe, f"tcp_{cc}"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"modprobe tcp_{cc} failed: {(r.stderr or r.stdout).strip() or 'exit status ' + str(r.returncode)}"
    return "loaded by modprobe" if cc in kernel_algorithms() else f"modprobe tcp_{cc} ran but the kernel does not list {cc}"


def _check_flows(plan: dict[str, Any], driver: str = "fatpipe-bulk") -> dict[str, str]:
    """Refuse flows the testbed cannot run; returns, per congestion control, how it is available
    (a missing one is first asked of ``modprobe``)."""
    modules: dict[str, str] = {}
    for f in plan["flows"]:
        where = f"flows[{f['id']}]"
        if f.get("kind") == "relay" and driver != "http":
            raise FatpipeError(f"{where}: a relay flow runs on the testbed through real depots: set "
                               '[testbed] driver = "http"')
        kinds = HTTP_KINDS if driver == "http" else KINDS
        if f.get("kind") not in kinds or f.get("transport"):
            raise FatpipeError(f"{where}: kind {f.get('kind')!r} over {f.get('transport') or 'tcp'}: the testbed's "
                               f"{driver} driver runs TCP {' and '.join(kinds)} flows only")
        parts = (f.get("relay") or {}).get("segments") or [f]
        for i, seg in enumerate(parts):
            cc = seg["cc"]
            field = f"{where}.segments[{i}].cc" if f.get("relay") else f"{where}.cc"
            if cc not in modules:
                modules[cc] = load_module(cc)
            if cc not in kernel_algorithms():
                raise FatpipeError(f"{field} = {cc!r}: this kernel offers {', '.join(kernel_algorithms())} "
                                   f"(/proc/sys/net/ipv4/tcp_available_congestion_control); {modules[cc]}")
    return modules



def _start_watchdog(prefix: str) -> subprocess.Popen[str]:
    w = subprocess.Popen([sys.executable, "-m", "fatpipe.testbed.watchdog", prefix, str(os.getpid())],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert w.stdout is not None
    if w.stdout.readline().strip() != "watching":
        raise FatpipeError("the testbed watchdog did not start")
    return w


def _socket_buffers(reports: Mapping[int, tuple[dict[str, Any], dict[str, Any] | None]]) -> list[dict[str, Any]]:
    """Per flow, what the kernel made of the socket buffers (Linux doubles SO_SNDBUF/SO_RCVBUF),
    the largest window the receiver advertised, and the time the connection was limited by the
    receiver's window or its own send buffer (TCP_INFO)."""
    out = []
    for fid, (snd, rcv) in sorted(reports.items()):
        wnds = [int(s.get("snd_wnd", 0)) for s in snd.get("samples", [])]
        out.append({"flow_id": fid, "sndbuf_bytes": snd.get("sndbuf_bytes"),
                    "rcvbuf_bytes": (rcv or {}).get("rcvbuf_bytes"),
                    "snd_wnd_max_bytes": max(wnds) if wnds and max(wnds) > 0 else None,
                    "rwnd_limited_s": snd.get("rwnd_limited_us", 0) * 1e-6,
                    "sndbuf_limited_s": snd.get("sndbuf_limited_us", 0) * 1e-6,
                    "busy_s": snd.get("busy_time_us", 0) * 1e-6})
    return out



def run_testbed(scenario: Any, seed: int | None = None, *, emulate: bool = True,
                tuning: Mapping[str, Any] | None = None, interval_s: float | None = None) -> "Any":
    """Run ``scenario`` (a :class:`fatpipe.Scenario`) on the testbed; see the module docstring.
    ``tuning`` overrides keys of the scenario's ``[testbed]`` table: tuning keys on every host,
    and ``sndbuf``, ``rcvbuf``, ``close``, ``driver``, ``emulator``."""
    from fatpipe import __version__
    from fatpipe.result import Result

    unknown = sorted(set(tuning or {}) - set(TUNING_KEYS) - set(RUN_KEYS))
    if unknown:
        raise FatpipeError(f"tuning: unknown key(s) {', '.join(unknown)}; allowed: "
                           f"{', '.join([*TUNING_KEYS, *RUN_KEYS])} (the keys of a scenario's [testbed] table)")
    check_available()
    sweep_orphans()
    plan = scenario.plan(seed)
    opts = run_options(plan, tuning)
    driver = opts.get("driver", "fatpipe-bulk")
    modules = _check_flows(plan, driver)
    if driver == "http" and (opts.get("sndbuf") or opts.get("rcvbuf")):
        raise FatpipeError("testbed.sndbuf/rcvbuf: the http driver's programs (curl, fatpipe-depot) take the hosts' "
                           "buffers: set testbed.rmem/wmem (sysctl, as seed 002's Section 5.5) instead")
    emulator = qdisc.choose(plan, opts.get("emulator", "auto")) if emulate else "none"
    prefix = prefix_for()
    lay = layout_of(plan, prefix, emulate=emulator == "linkem")
    hosts = host_tunings(plan, tuning)
    interval = interval_s or plan["monitor"]["interval_ns"] * 1e-9
    duration = plan["duration_ns"] * 1e-9
    watchdog = _start_watchdog(prefix)
    procs: list[subprocess.Popen[str]] = []
    tmp = Path(tempfile.mkdtemp(prefix="fatpipe-testbed-"))
    try:
        offloads = build(lay, host_tuning=hosts, offloads_off=emulator != "none")
        emu_stats = None
        placement: dict[str, Any] | None = None
        if emulator == "qdisc":
            qdisc.apply(lay)
        elif emulator == "linkem" and any(s.emulated for s in lay.links):
            emu, emu_stats, placement = start_linkem(lay, int(plan["seed"]), tmp)
            procs.append(emu)
        # The run's clock starts once every receiver listens (a slack per flow).
        t0 = time.clock_gettime(time.CLOCK_MONOTONIC) + 0.5 + 0.05 * len(plan["flows"])
        http_records: list[dict[str, Any]] | None = None
        if driver == "http":
            from fatpipe.testbed import http

            key = tmp / "depot.key"
            subprocess.run([binary("fatpipe-depot"), "keygen", str(key)], check=True, capture_output=True)
            rows, seg_rows, http_records = http.run_http_flows(plan, lay, t0, duration, tmp, key,
                                                               base_tuning(plan, tuning), kernel_algorithms())
            reports = {}
        elif driver == "iperf3":
            reports = iperf3.run_flows(plan, lay, t0, duration, interval, procs, opts)
        else:
            reports = bulk.run_flows(plan, lay, t0, duration, interval, procs, binary("fatpipe-bulk"), opts)
        stats = None
        if emu_stats is not None:
            procs[0].send_signal(signal.SIGTERM)
            procs[0].wait(timeout=10)
            stats = json.loads(emu_stats.read_text()) if emu_stats.is_file() else None
        flows = {int(f["id"]): f for f in plan["flows"]}
        if http_records is None:
            rows = [tables.flow_row(flows[fid], s, rcv, t0, duration) for fid, (s, rcv) in sorted(reports.items())]
            seg_rows = []
        series = [row for fid, (s, _) in sorted(reports.items()) for row in tables.flow_series_table(fid, s["samples"], t0)]
        engine = {"backend": "testbed", "kernel": platform.release(), "emulated": emulator != "none",
                  "emulator_kind": emulator, "driver": driver, "events": 0,
                  "packets_delivered": sum(r["packets_delivered"] for r in rows),
                  "tuning": base_tuning(plan, tuning), "host_tuning": hosts, "modules": modules, "socket_buffers": _socket_buffers(reports),
                  "offloads_off": offloads, "testbed": opts,
                  "wall_s": time.clock_gettime(time.CLOCK_MONOTONIC) - t0,
                  "emulator": stats, "emulator_placement": placement, "sim_s": duration}
        if http_records is not None:
            engine["http"] = http_records
        extra = {"segments": tables.segments_table(seg_rows)} if seg_rows else {}
        return Result(flows=tables.flows_table(rows), flow_series=tables.series_table(series),
                      queues=tables.empty("queues"), queue_series=tables.empty("queue_series"),
                      links=tables.empty("links"), engine=engine, plan=plan, seed=int(plan["seed"]),
                      version=__version__, **extra)
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
